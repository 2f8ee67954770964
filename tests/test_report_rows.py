"""What a row of `suite report` is: the row key audited field by field, defaults normalised, sub-runs left
out, prices only where they hold, and every figure traced to its runs."""

from __future__ import annotations

import copy
import csv
import io
import json

import pytest
from test_report import SEED, make_record, write_json

from suite import run_record
from suite.cli import main
from suite.reporting.render import render
from suite.rows.build import build_rows
from suite.rows.identity import (
    CONFIG_KEYED,
    CONFIG_NOT_KEYED,
    NOT_KEYED,
    RESULT_SECTIONS,
    SETTING_FIELDS,
    pool_fields,
    row_key,
)
from suite.spec import RunSpec


@pytest.fixture(scope="module")
def real_record():
    """A real tiny CPU run's record, with an image-folder data section like a real-data run's."""
    from conftest import tiny_config

    from suite.measurement.runner import execute, plan_run

    record = execute(plan_run(tiny_config(windows=2, steps_per_window=1)))
    assert record["status"] == "ok"
    record["data"] = {
        "source": "imagefolder",
        "path": "/data/a",
        "images": 1000,
        "classes": 2,
        "dataset_bytes": 123_456,
        "source_image_size": [480, 360],
        "image_size": 64,
        "batches_per_epoch": 500,
        "workers": 2,
        "pin_memory": False,
        "prefetch": 2,
        "rank": 0,
        "world_size": 1,
        "transform": "Resize, CenterCrop",
        "loader": "torch DataLoader",
        "cache": {"source_fingerprint": "abc", "created_utc": "2026-01-01T00:00:00Z"},
    }
    return record


def _changed(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value * 2 + 1
    if isinstance(value, list):
        return [*value, 1]
    if isinstance(value, dict):
        return {**value, "changed": 1}
    return f"{value}-other"


def _leaves(record: dict):
    for section in NOT_KEYED:
        for name, value in (record.get(section) or {}).items():
            if isinstance(value, dict) and section != "config":
                for sub in value:
                    yield section, (name, sub)
            else:
                yield section, (name,)


def test_every_record_config_field_is_keyed_or_says_why_not():
    fields = set(RunSpec().to_record_config())
    keyed = (set(CONFIG_KEYED) | set(SETTING_FIELDS)) - set(CONFIG_NOT_KEYED)
    assert keyed | set(CONFIG_NOT_KEYED) == fields
    assert all(len(why) > 10 for why in CONFIG_NOT_KEYED.values())


def test_row_key_audited_against_every_field_of_a_real_record(real_record):
    base = row_key(real_record)
    # every top-level section is either identity (audited below) or a result
    assert set(real_record) <= {"config", *NOT_KEYED, *RESULT_SECTIONS}
    for name in RESULT_SECTIONS:
        other = copy.deepcopy(real_record)
        other[name] = _changed(other.get(name, "x"))
        assert row_key(other) == base, f"{name} is a result, it must not split a row"
    checked = 0
    for name in RunSpec().to_record_config():
        other = copy.deepcopy(real_record)
        value = other["config"].get(name)
        other["config"][name] = _changed(value if value is not None else 3)
        if name == "threads":
            other["device"]["threads"] = other["config"]["threads"]  # what ran follows what was asked
        split = row_key(other) != base
        assert split == (name not in CONFIG_NOT_KEYED), f"config.{name}"
        checked += 1
    for section, path in _leaves(real_record):
        other = copy.deepcopy(real_record)
        holder = other[section]
        for part in path[:-1]:
            holder = holder[part]
        holder[path[-1]] = _changed(holder[path[-1]])
        name = ".".join(path)
        split = row_key(other) != base
        assert split == (name not in NOT_KEYED[section]), f"{section}.{name}"
        checked += 1
    assert checked > 60


def test_unlike_runs_never_merge_two_datasets_or_two_hosts(real_record):
    small = copy.deepcopy(real_record)
    large = copy.deepcopy(real_record)
    large["data"].update(path="/data/b", source_image_size=[1920, 1080], dataset_bytes=9_999_999)
    large["run_id"] = "large"
    other_host = copy.deepcopy(real_record)
    other_host["run_id"] = "host64"
    other_host["context"].update(
        cpu_cores_logical=64, cpu_cores_physical=32, torch="2.1.0", suite_version="0.1"
    )
    other_host["device"].update(cores_logical=64, cores_physical=32, threads=64)
    rows = build_rows([small, large, other_host], SEED)
    assert len(rows) == 3 and all(r["runs"] == 1 for r in rows)
    notes = ["; ".join(r["notes"]) for r in rows]
    # Alike in every column, each says in words what tells it apart from the others
    assert any("64 logical CPUs" in n and "torch 2.1.0" in n for n in notes)
    assert any("data from /data/b" in n and "source image size 1920×1080" in n for n in notes)
    assert not any("=" in n for n in notes), notes  # never `cpu_cores_logical=64`
    # asked to pool across the host, the row says so
    names = ["cpu_cores_logical", "cpu_cores_physical", "cores_logical", "cores_physical", "threads", "torch"]
    pool = pool_fields([*names, "suite_version"], [small])
    assert "config.threads" in pool and "device.threads" in pool  # a short name pools it everywhere
    (row,) = build_rows([small, other_host], SEED, pool=pool)
    notes = "; ".join(row["notes"])
    assert row["runs"] == 2 and "pooled across cpu_cores_logical: " in notes and "'2.1.0'" in notes
    assert row["pooled"]


def test_a_default_spelled_out_does_not_split_a_row(real_record):
    run = copy.deepcopy(real_record)
    run["config"]["nnodes"] = None
    scaled = copy.deepcopy(real_record)
    scaled["config"]["nnodes"] = 1
    scaled["run_id"] = "scaled"
    threads = copy.deepcopy(real_record)
    threads["config"]["threads"] = threads["device"]["threads"]  # asking for what torch picked anyway
    (row,) = build_rows([run, scaled, threads], SEED)
    assert row["runs"] == 3 and "nnodes" not in "; ".join(row["notes"])


def test_pin_memory_on_the_cpu_is_dropped_at_the_source(tmp_path):
    from conftest import tiny_config

    from suite.data import loader_settings
    from suite.measurement.runner import plan_run

    plan = plan_run(tiny_config())
    settings = loader_settings(plan.spec.replace(pin_memory=True), plan.backend, 2)
    assert settings["pin_memory"] is False  # no copy to a device: pinning is a no-op, so it is not done


def test_a_runs_own_noise_and_warnings_reach_the_row():
    noisy = make_record(3_600_000, windows=(6.7, 1.7, 4.0), run="noisy")
    noisy["metrics"]["images_per_second_cv"] = 0.83
    noisy["warnings"] = ["windows vary widely (cv 83.0%)"]
    (row,) = build_rows([noisy], SEED)
    assert row["window_cv_max"] == pytest.approx(0.83)
    assert row["warnings"] == ["run-noisy: windows vary widely (cv 83.0%)"]
    text = render([row], SEED, "md", wide=True)
    assert "windows cv 83% ⚠" in text and "- #1 run-noisy: windows vary widely (cv 83.0%)" in text
    assert "⚠ |" in text.split("\n")[2]
    text = render([row], SEED, "md")  # the default table: the mark, and the warning listed at the end
    assert (
        "| ⚠ retired 1-3 |" in text.split("\n")[2]
        and "- #1 run-noisy: windows vary widely (cv 83.0%)" in text
    )
    parsed = list(csv.DictReader(io.StringIO(render([row], SEED, "csv"))))[0]
    assert float(parsed["window_cv_max"]) == pytest.approx(0.83) and "cv 83.0%" in parsed["warnings"]


def test_sub_runs_are_left_out_unless_included(tmp_path, capsys):
    folder = tmp_path / "results"
    (folder / "batch-size").mkdir(parents=True)
    write_json(folder / "own.json", make_record(5_830_000, run="own"))
    probe = make_record(None, status="oom", batch=4096, run="probe")
    probe["origin"] = "batch-size"
    write_json(folder / "batch-size" / "probe.json", probe)
    point = make_record(1_000_000, batch=8, run="point")
    point["origin"] = "sweep"
    write_json(folder / "point.json", point)
    assert main(["report", str(folder), "--prices", "seed-2022"]) == 0
    out, err = capsys.readouterr()
    assert "run-own" in out and "OOM" not in out and "run-point" not in out
    assert "left out 2 sub-run record(s) (1 batch-size, 1 sweep)" in err
    assert main(["report", str(folder), "--prices", "seed-2022", "--include", "sweep,probes"]) == 0
    out, _ = capsys.readouterr()
    assert "| OOM |" in out and "run-point" in out and "run-probe" in out
    assert main(["report", str(folder), "--include", "nope"]) == 2
    assert "--include 'nope' is not a kind of sub-run" in capsys.readouterr().err


def test_a_record_names_the_command_that_made_it(monkeypatch):
    assert run_record.new_record("r", {}, {})["origin"] == "run"
    monkeypatch.setenv(run_record.ORIGIN_ENV, "sweep")
    assert run_record.new_record("r", {}, {})["origin"] == "sweep"


def test_a_profiled_run_alone_is_a_profiled_row_not_a_failure():
    traced = make_record(500_000, run="t")
    traced["profile"] = {"trace_dir": "traces"}
    (row,) = build_rows([traced], SEED)
    assert row["status"] == "profiled" and row["profiled_images_per_hour"] == 500_000
    text = render([row], SEED, "md", wide=True)
    assert "500,000 (profiled: perturbed, not priced)" in text and "FAILED" not in text
    text = render([row], SEED, "md")
    assert "| profiled |" in text and "profiled: 500,000 img/h, perturbed by the profiler, not priced" in text
    assert "FAILED" not in text


def test_extrapolation_and_default_pricing_only_for_the_instances_own_device():
    cpu = make_record(
        26_000,
        backend="cpu",
        device="Intel(R) Xeon(R) Platinum",
        precision="fp32",
        instance="dl1.24xlarge",
        used=1,
    )
    (row,) = build_rows([cpu], SEED, extrapolate=True)
    assert row["images_per_hour"] == 26_000 and row["extrapolated_factor"] is None
    assert row["images_per_usd"] is None and row["device_matches_instance"] is False
    (row,) = build_rows([cpu], SEED, extrapolate=True, price_as_if=True)
    assert row["extrapolated_factor"] is None and row["hypothetical"] is True
    # 1 of the dl1's 8 Gaudis, and the seed's catalog has no 1-Gaudi instance: an eighth of its price
    assert row["price_basis"] == "per accelerator" and row["usd_per_hour"] == pytest.approx(13.11 / 8)
    assert row["images_per_usd"] == pytest.approx(26_000 / (13.11 / 8))
    assert row["instance_images_per_usd"] == pytest.approx(26_000 / 13.11)
    assert "(hypothetical: another device)" in render([row], SEED, "md", wide=True)
    assert "| hyp 1/8 " in render([row], SEED, "md") and "HYPOTHETICAL: measured on" in render(
        [row], SEED, "md"
    )
    parsed = list(csv.DictReader(io.StringIO(render([row], SEED, "csv"))))[0]
    assert parsed["device_matches_instance"] == "False" and parsed["hypothetical"] == "True"
    data = json.loads(render([row], SEED, "json"))
    assert data["rows"][0]["device_matches_instance"] is False


def test_report_reprices_against_several_instances_without_rerunning(tmp_path, capsys):
    write_json(tmp_path / "v100.json", make_record(3_600_000, instance="p3.2xlarge", run="v"))
    argv = [
        "report",
        str(tmp_path),
        "--prices",
        "seed-2022",
        "--instance",
        "p3.2xlarge,p3.8xlarge",
        "--format",
        "json",
    ]
    assert main(argv) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    by_instance = {r["instance"]: r for r in rows}
    assert set(by_instance) == {"p3.2xlarge", "p3.8xlarge"}
    assert by_instance["p3.2xlarge"]["images_per_usd"] == pytest.approx(3_600_000 / 3.06)
    # The run used one V100: as 1 of p3.8xlarge's 4 it is priced as the catalog's 1-V100 instance, p3.2xlarge,
    # and the whole p3.8xlarge's figure (if its other 3 sit idle) stands beside it.
    eight = by_instance["p3.8xlarge"]
    assert (eight["priced_as"], eight["images_per_usd"]) == ("p3.2xlarge", pytest.approx(3_600_000 / 3.06))
    assert eight["spot_images_per_usd"] == pytest.approx(3_600_000 / 0.92)
    assert eight["instance_images_per_usd"] == pytest.approx(3_600_000 / 12.24)
    assert eight["instance_spot_images_per_usd"] == pytest.approx(3_600_000 / 3.67)
    # a K80 instance is not this run's device: left out, said so
    assert main(["report", str(tmp_path), "--prices", "seed-2022", "--instance", "p3.2xlarge,p2.xlarge"]) == 0
    out, err = capsys.readouterr()
    assert "p2.xlarge" not in out


def test_a_run_keeps_the_catalog_it_was_accepted_against(tmp_path, capsys):
    record = make_record(1_000_000, instance="p2.xlarge", device="Tesla K80", run="k80")
    record["config"]["prices"] = "seed-2022"
    write_json(tmp_path / "k80.json", record)
    assert main(["report", str(tmp_path), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (row,) = data["rows"]
    assert row["prices_catalog"] == "seed-2022" and row["images_per_usd"] == pytest.approx(1_000_000 / 0.90)
    assert [c["name"] for c in data["catalogs"]] == ["seed-2022"]


def test_synthetic_rows_are_marked_as_upper_bounds():
    (row,) = build_rows([make_record(5_000_000, data="synthetic")], SEED)
    assert row["upper_bound"] is True
    assert "synthetic (compute-only ceiling)" in render([row], SEED, "md", wide=True)
    assert "| synth " in render([row], SEED, "md")
    parsed = list(csv.DictReader(io.StringIO(render([row], SEED, "csv"))))[0]
    assert parsed["upper_bound"] == "True"
    (real,) = build_rows([make_record(5_000_000)], SEED)
    assert real["upper_bound"] is False


def test_every_row_names_its_runs_and_keeps_the_measured_figure():
    runs = [make_record(r, instance="p3.8xlarge", used=1, run=str(n)) for n, r in enumerate((1e6, 1.2e6))]
    (row,) = build_rows(runs, SEED, extrapolate=True)
    assert row["run_ids"] == ["run-0", "run-1"]
    assert row["measured_images_per_hour"] == pytest.approx(1.1e6) and row[
        "images_per_hour"
    ] == pytest.approx(4.4e6)
    text = render([row], SEED, "md")
    assert "- #1: run-0, run-1" in text and "measured 1,100,000 img/h" in text
    assert "from 1,100,000" in render([row], SEED, "md", wide=True)
    parsed = list(csv.DictReader(io.StringIO(render([row], SEED, "csv"))))[0]
    assert parsed["run_ids"] == "run-0 run-1" and float(parsed["measured_images_per_hour"]) == pytest.approx(
        1.1e6
    )
    assert json.loads(render([row], SEED, "json"))["rows"][0]["run_ids"] == ["run-0", "run-1"]


def test_columns_say_what_they_are_and_the_seeds_names_stay_behind_a_flag():
    rows = build_rows([make_record(3_600_000)], SEED)
    exact = render(rows, SEED, "md", wide=True)
    header = exact.split("\n")[0]
    for name in (
        "Median throughput (img/h)",
        "On-demand ($/h)",
        "Images per $",
        "Region",
        "Spot ($/h) (assumed)",
        "Epoch ($)",
    ):
        assert name in header
    assert "Rate ($)" not in header
    assert "| us-east-1 |" in exact and "Spot: interruptible capacity" in exact
    seed = render(rows, SEED, "md", columns="seed").split("\n")[0]
    assert "Average Throughput (Imgs/Hr) | Rate ($) | Throughput / $" in seed


def test_notes_carry_no_stray_ok_and_imported_prices_no_float_noise():
    from suite.prices.importer import _combine_zones

    plain = make_record(1_000_000, run="a")
    traced = make_record(500_000, run="b")
    traced["profile"] = {"trace_dir": "traces"}
    (row,) = build_rows([plain, traced], SEED)
    assert not any(n.strip() == "ok" for n in row["errors"])
    assert "; ok" not in render([row], SEED, "md")
    zones = [{"Price": "1", "SpotPrice": p} for p in ("0.71", "0.77", "0.74")]
    assert _combine_zones(zones, "mean")[1] == 0.74


def test_plots_carry_the_tables_caveats_and_say_when_one_is_skipped(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from suite.reporting import plots

    row = build_rows([make_record(1_000_000, instance="p3.8xlarge", used=1)], SEED)[0]
    assert plots._caveats(row) == ["1 of 4 accelerators"]
    cpu = make_record(
        26_000, backend="cpu", device="Intel Xeon", instance="dl1.24xlarge", used=1, data="synthetic"
    )
    (hypo,) = build_rows([cpu], SEED, price_as_if=True)
    assert plots._caveats(hypo) == [
        "hypothetical: ran on Intel Xeon",
        "1 of 8 accelerators",
        "synthetic: ceiling",
    ]
    assert "batch 256" in plots._run_label(cpu) and "b256" not in plots._run_label(cpu)
    write_json(tmp_path / "cpu.json", cpu)
    assert (
        main(["report", str(tmp_path / "cpu.json"), "--prices", "seed-2022", "--plot", str(tmp_path / "p")])
        == 0
    )
    err = capsys.readouterr().err
    assert "suite: images_per_dollar.png not drawn: no row has a price" in err
