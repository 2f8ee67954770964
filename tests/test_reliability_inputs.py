"""One bad file never takes down the rest: damaged records are skipped with one line naming the file and
the field, prices are finite and in range, and undecodable user files are one line naming the file."""

from __future__ import annotations

import json
import re

import pytest

from suite import run_record
from suite.cli import main
from suite.inputs.errors import UserError


def good_record(run_id="good", images_per_second=100.0):
    record = run_record.new_record(run_id, {"utc_time": "2026-01-01T00:00:00Z"}, {})
    record.update(status="ok", device={"name": "cpu", "count": 1})
    record["config"] = {
        "workload": "dcgan64",
        "backend": "cpu",
        "precision": "fp32",
        "batch_size": 2,
        "world_size": 1,
        "model_overrides": {"ngf": 8},
    }
    record["metrics"] = {
        "images_per_second": images_per_second,
        "images_per_hour": images_per_second * 3600,
        "window_time_s": [1.0, 1.0],
    }
    return record


# -- 4: a damaged record is skipped, the report goes on ---------------------------------------------------

# (name, how the record is damaged, the field the one-line message names); records are written as JSON
# text, so NaN and Infinity are what json.dumps writes for them (Python's json reads them back).
DAMAGES = [
    (
        "nan-throughput",
        lambda r: r["metrics"].update(images_per_second=float("nan")),
        "metrics.images_per_second",
    ),
    (
        "inf-throughput",
        lambda r: r["metrics"].update(images_per_hour=float("inf")),
        "metrics.images_per_hour",
    ),
    ("negative-rate", lambda r: r["metrics"].update(images_per_second=-5.0), "metrics.images_per_second"),
    ("string-number", lambda r: r["metrics"].update(images_per_hour="fast"), "metrics.images_per_hour"),
    ("string-batch", lambda r: r["config"].update(batch_size="two"), "config.batch_size"),
    ("bool-batch", lambda r: r["config"].update(batch_size=True), "config.batch_size"),
    ("zero-world", lambda r: r["config"].update(world_size=0), "config.world_size"),
    ("metrics-list", lambda r: r.update(metrics=[1, 2]), "metrics"),
    ("config-text", lambda r: r.update(config="dcgan64"), "config"),
    ("device-list", lambda r: r.update(device=["cpu"]), "device"),
    ("device-name-list", lambda r: r["device"].update(name=["cpu"]), "device.name"),
    (
        "unhashable-setting",
        lambda r: r["config"].update(model_overrides={"ngf": [8, 16]}),
        "config.model_overrides.ngf",
    ),
    ("overrides-list", lambda r: r["config"].update(model_overrides=[1]), "config.model_overrides"),
    ("instance-number", lambda r: r["config"].update(instance=3), "config.instance"),
    ("unknown-status", lambda r: r.update(status="great"), "status"),
    (
        "window-nan",
        lambda r: r["metrics"].update(window_time_s=[1.0, float("nan")]),
        "metrics.window_time_s[1]",
    ),
    ("error-text", lambda r: r.update(status="error", error="boom"), "error"),
    ("no-workload", lambda r: r["config"].pop("workload"), "config.workload"),
    ("diagnosis-list", lambda r: r.update(diagnosis=["loader"]), "diagnosis"),
    ("tf32-text", lambda r: r["config"].update(tf32="yes"), "config.tf32"),
]


@pytest.mark.parametrize("name,damage,field", DAMAGES, ids=[d[0] for d in DAMAGES])
def test_a_damaged_record_is_skipped_naming_the_file_and_field(tmp_path, capsys, name, damage, field):
    run_record.write_record(good_record(), str(tmp_path))
    bad = good_record("bad")
    damage(bad)
    (tmp_path / "bad.json").write_text(json.dumps(bad))  # json.dumps writes NaN as NaN, as old suites did
    assert main(["report", str(tmp_path), "--format", "json"]) == 0
    captured = capsys.readouterr()
    rows = json.loads(captured.out)["rows"]
    assert len(rows) == 1 and rows[0]["images_per_hour"] == 360000.0  # the good one is reported
    warnings = [line for line in captured.err.splitlines() if "bad.json" in line]
    assert len(warnings) == 1 and f"field {field}:" in warnings[0], captured.err


def test_records_the_suite_writes_pass_the_check(tmp_path):
    record = good_record()
    record["metrics"]["final_loss"] = [float("nan")]
    record.update(status="diverged", error={"type": "diverged", "message": "loss is not finite"})
    path = run_record.write_record(record, str(tmp_path))
    assert run_record.check_record(run_record.read_record(path))["status"] == "diverged"


@pytest.mark.slow
def test_a_real_tiny_run_record_passes_the_check(tmp_path, tiny):
    from suite.measurement.runner import execute, plan_run

    record = execute(plan_run(tiny()))
    path = run_record.write_record(record, str(tmp_path))
    assert run_record.check_record(run_record.read_record(path)) and record["status"] == "ok"


# -- 5: prices are finite, in range, and keys are unique --------------------------------------------------


def catalog_text(on_demand="3.06", spot="0.918", extra=""):
    return f"""name: mine
source: test
as_of: "2026-01-01"
instances:
  p3.2xlarge:
    provider: aws
    region: us-east-1
    accelerator: V100
    accelerator_count: 1
    accelerator_memory_gib: 16
    vcpus: 8
    ram_gib: 61
    on_demand_usd_per_hour: {on_demand}
    spot_usd_per_hour: {spot}
{extra}"""


@pytest.mark.parametrize(
    "on_demand,spot,expected",
    [
        (".nan", "0.9", "on_demand_usd_per_hour must be a number, got '.nan'"),
        (".inf", "0.9", "on_demand_usd_per_hour must be a number, got '.inf'"),
        ("3.06", ".nan", "spot_usd_per_hour must be a number, got '.nan'"),
        ("3.06", "-.inf", "spot_usd_per_hour must be a number, got '-.inf'"),
        ("3060000", "0.9", "on_demand_usd_per_hour is 3060000, above 10000"),
    ],
)
def test_non_finite_or_absurd_prices_are_refused(tmp_path, on_demand, spot, expected):
    from suite.prices.catalog import load_catalog

    path = tmp_path / "c.yaml"
    path.write_text(catalog_text(on_demand, spot))
    with pytest.raises(UserError, match=expected.replace(".", r"\.")):
        load_catalog(str(path))


def test_an_absurd_count_is_refused(tmp_path):
    from suite.prices.catalog import load_catalog

    path = tmp_path / "c.yaml"
    path.write_text(catalog_text().replace("accelerator_count: 1", "accelerator_count: 100000"))
    with pytest.raises(UserError, match="accelerator_count is 100000, above 1024"):
        load_catalog(str(path))


def test_spot_above_on_demand_is_warned(tmp_path, capsys):
    from suite.prices.catalog import load_catalog

    path = tmp_path / "c.yaml"
    path.write_text(catalog_text("1.0", "2.5"))
    assert load_catalog(str(path)).instances["p3.2xlarge"].spot_usd_per_hour == 2.5
    assert "spot_usd_per_hour 2.5 is above on_demand_usd_per_hour 1" in capsys.readouterr().err


def test_a_duplicate_instance_key_is_refused(tmp_path):
    from suite.prices.catalog import load_catalog

    twice = catalog_text().split("instances:\n")[1]
    path = tmp_path / "c.yaml"
    path.write_text(catalog_text(extra=twice.replace("3.06", "0.01")))
    with pytest.raises(UserError, match="key 'p3.2xlarge' appears twice"):
        load_catalog(str(path))
    path.write_text("instances: {p3.2xlarge: {on_demand_usd_per_hour: 3}, p3.2xlarge: {}}\n")
    with pytest.raises(UserError, match=r"key 'p3.2xlarge' appears twice \(line 1\)"):  # one flow mapping
        load_catalog(str(path))


@pytest.mark.parametrize("value", ["inf", "Infinity", "nan", "-1", "0", "1e400"])
def test_scale_usd_per_hour_must_be_positive_and_finite(capsys, value):
    assert main(["scale", "--nproc", "1", "--usd-per-hour", value]) == 2
    assert (
        f"--usd-per-hour must be a price in $ per hour from 0.0001 to 10,000, got {value!r}"
        in capsys.readouterr().err
    )


@pytest.mark.parametrize("price", ["inf", "Infinity", "nan", "1e999"])
def test_prices_import_never_writes_infinity(tmp_path, capsys, price):
    from suite.prices.importer import import_file, to_yaml

    source = tmp_path / "instances.json"
    item = {
        "instance_type": "p3.2xlarge",
        "vCPU": 8,
        "memory": 61,
        "GPU": 1,
        "GPU_model": "V100",
        "GPU_memory": 16,
        "pricing": {"us-east-1": {"linux": {"ondemand": "3.06", "spot_avg": price}}},
    }
    other = {**item, "instance_type": "p3.8xlarge", "pricing": {"us-east-1": {"linux": {"ondemand": price}}}}
    source.write_text(json.dumps([item, other]))
    catalog, unpriced = import_file(str(source))
    text = to_yaml(catalog)
    assert not re.search(r":\s*-?\.(inf|nan)\b", text, re.IGNORECASE)
    assert catalog["instances"]["p3.2xlarge"]["spot_usd_per_hour"] is None  # no quote, not infinity
    assert "p3.8xlarge" not in catalog["instances"] and unpriced == 1


# -- 6: files that are not UTF-8 -------------------------------------------------------------------------

LATIN1 = "name: caf\xe9\n".encode("latin-1")


def test_a_catalog_that_is_not_utf8_is_one_line(tmp_path, capsys):
    path = tmp_path / "c.yaml"
    path.write_bytes(LATIN1)
    assert main(["prices", "list", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and "not UTF-8" in err


def test_a_price_list_to_import_that_is_not_utf8_is_one_line(tmp_path, capsys):
    path = tmp_path / "vms.csv"
    path.write_bytes(b"InstanceType,Price\n\xff\xfe,1\n")
    assert main(["prices", "import", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and "not UTF-8" in err


def test_a_stray_non_utf8_json_in_a_results_folder_is_skipped_by_name(tmp_path, capsys):
    run_record.write_record(good_record(), str(tmp_path))
    (tmp_path / "stray.json").write_bytes(b'{"schema": "suite.run", "x": "\xff"}')
    assert main(["report", str(tmp_path), "--format", "csv"]) == 0
    err = capsys.readouterr().err
    assert "stray.json: not UTF-8 text" in err


def test_a_cache_manifest_that_is_not_utf8_is_one_line(tmp_path):
    from suite.data.cache import open_cache

    (tmp_path / "manifest.json").write_bytes(b'{"format": "\xff"}')
    with pytest.raises(UserError, match="cannot read manifest.json"):
        open_cache(str(tmp_path))


def test_sweep_resume_skips_a_non_utf8_json(tmp_path):
    from suite.exploring.grid import existing_records

    run_record.write_record(good_record(), str(tmp_path))
    (tmp_path / "stray.json").write_bytes(b"\xff\xfe{}")
    assert [r["run_id"] for r in existing_records(str(tmp_path))] == ["good"]


def test_a_catalog_given_as_a_folder_says_so(tmp_path, capsys):
    assert main(["prices", "list", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err
