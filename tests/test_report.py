"""Cost reports from run records: the seed's Table 2.1 arithmetic, aggregation, honesty marks, bad input."""

from __future__ import annotations

import csv
import io
import json
import os

import pytest
from conftest import ROOT, TINY, TINY_RUN

from suite import run_record
from suite.cli import main
from suite.prices.catalog import load_catalog
from suite.reporting.render import render
from suite.rows.build import build_rows
from suite.rows.cells import nearest
from suite.rows.gather import load_records
from suite.run_record.facts import other_device

SEED = load_catalog("seed-2022")


def make_record(
    images_per_hour=None,
    *,
    workload="dcgan64",
    instance="p3.2xlarge",
    status="ok",
    batch=256,
    backend="cuda",
    device="Tesla V100-SXM2-16GB",
    precision="amp",
    run="a",
    used=None,
    windows=(1.0, 1.01, 0.99),
    diagnosis=None,
    data="imagefolder",
) -> dict:
    config = {
        "workload": workload,
        "backend": backend,
        "batch_size": batch,
        "precision": precision,
        "data": "synthetic" if data == "synthetic" else "/data/msls",
        "instance": instance,
        "accelerators_used": used,
    }
    record = run_record.new_record(f"run-{run}", {"utc_time": "2026-01-01T00:00:00Z"}, config)
    source = (
        {"source": data} if data == "synthetic" else {"source": data, "path": "/data/msls", "images": 1000}
    )
    record.update(status=status, device={"name": device, "count": 1}, data=source)
    if images_per_hour is not None:
        per_s = images_per_hour / 3600
        record["metrics"] = {
            "images_per_hour": images_per_hour,
            "images_per_second": per_s,
            "window_images_per_second": [per_s * w for w in windows],
            "window_time_s": [1.0] * len(windows),
        }
    if status != "ok":
        record["error"] = {
            "type": status,
            "message": {"oom": "CUDA out of memory", "diverged": "loss became NaN/inf at step 7"}.get(
                status, "boom"
            ),
        }
    if diagnosis:
        record["diagnosis"] = {"verdict": diagnosis}
    return record


# The seed's Table 2.1 (reference): model run, instance, images/hour -> images per $, spot images per $.
SEED_TABLE = [
    ("dcgan64", "p2.8xlarge", 7_780_000, 1_080_556, 3_601_852),
    ("dcgan64", "p3.2xlarge", 5_830_000, 1_905_229, 6_336_957),
    ("dcgan64-safe", "p3.2xlarge", 1_225_000, 400_327, 1_331_522),
    ("dcgan64-safe", "p3.8xlarge", 6_605_504, 539_665, 1_799_865),
]


def test_seed_table_2_1_images_per_dollar_to_the_image():
    # The seed measured each instance as a whole (all its GPUs), so each record used all of them.
    records = [
        make_record(
            rate,
            workload=w,
            instance=i,
            run=i + w,
            used=SEED.get(i).accelerator_count,
            device="Tesla K80" if i.startswith("p2") else "Tesla V100-SXM2-16GB",
        )
        for w, i, rate, _, _ in SEED_TABLE
    ]
    rows = build_rows(records, SEED)
    assert len(rows) == 4
    by_run = {(r["model_run"], r["instance"]): r for r in rows}
    for workload, instance, rate, per_usd, spot_per_usd in SEED_TABLE:
        row = by_run[(workload, instance)]
        assert row["images_per_hour"] == rate
        assert nearest(row["images_per_usd"]) == per_usd
        assert nearest(row["spot_images_per_usd"]) == spot_per_usd
        assert row["extrapolated_factor"] is None and not any("used" in n for n in row["notes"])
        # Its p2 and p3 instances are retired: priced all the same (the table is reproduced), marked.
        assert row["retired"] and any(
            n.startswith(f"RETIRED: {instance} is no longer rented") for n in row["notes"]
        )
    assert by_run[("dcgan64", "p2.8xlarge")]["retired"] == "date not found"
    text = render(rows, SEED, "md", columns="seed")
    assert "| p3.8xlarge (retired) |" in text and "Kept as history: the seed write-up's 2022 prices" in text
    for _, _, rate, per_usd, spot_per_usd in SEED_TABLE:
        assert f"| {rate:,} | " in text and f"| {per_usd:,} | " in text and f"| {spot_per_usd:,} | " in text
    assert (
        "| Model Run | Instance | Average Throughput (Imgs/Hr) | Rate ($) | Throughput / $ | Spot Rate ($) "
        "| Spot Throughput / $ |" in text
    )
    assert "assumed 0.30 × on-demand" in text and "seed-2022 (USD/hour), as of 2022" in text


def test_repeated_runs_become_one_row_with_median_count_and_spread():
    records = [make_record(r, run=str(n)) for n, r in enumerate([5_000_000, 6_000_000, 5_500_000])]
    records.append(make_record(2_000_000, batch=128, run="other-batch"))
    rows = build_rows(records, SEED)
    assert len(rows) == 2
    main_row = next(r for r in rows if r["batch_size"] == 256)
    assert main_row["runs"] == 3 and main_row["images_per_hour"] == 5_500_000
    assert main_row["spread"] == pytest.approx(1_000_000 / 5_500_000)
    assert next(r for r in rows if r["batch_size"] == 128)["spread"] is None
    text = render(rows, SEED, "md", wide=True)
    assert "| 3 | 18.2% |" in text


def test_dollars_per_million_images_and_per_epoch():
    row = build_rows([make_record(3_600_000)], SEED, dataset_size=1_800_000)[0]
    assert row["usd_per_million_images"] == pytest.approx(3.06 / 3.6)
    assert row["spot_usd_per_million_images"] == pytest.approx(0.92 / 3.6)
    assert row["epoch_hours"] == pytest.approx(0.5)
    assert row["epoch_usd"] == pytest.approx(1.53) and row["spot_epoch_usd"] == pytest.approx(0.46)
    assert build_rows([make_record(3_600_000)], SEED)[0]["epoch_hours"] == pytest.approx(1_200_000 / 3.6e6)


def test_failed_and_diverged_runs_are_shown_not_dropped():
    records = [
        make_record(None, status="oom", batch=4096, run="o"),
        make_record(1_000_000, status="diverged", precision="fp16", run="d"),
        make_record(5_000_000, run="ok1"),
        make_record(None, status="oom", run="ok-but-one-oom"),
    ]
    rows = build_rows(records, SEED)
    by_status = {(r["batch_size"], r["precision"]): r for r in rows}
    oom = by_status[(4096, "amp")]
    assert oom["status"] == "oom" and oom["images_per_hour"] is None and oom["images_per_usd"] is None
    diverged = by_status[(256, "fp16")]
    assert diverged["status"] == "diverged" and diverged["images_per_hour"] is None
    mixed = by_status[(256, "amp")]
    assert mixed["runs"] == 1 and mixed["runs_not_ok"] == {"oom": 1}
    assert "1 oom run(s) not in the median" in mixed["notes"]
    text = render(rows, SEED, "md", wide=True)
    assert "FAILED (out of memory)" in text and "DIVERGED" in text and "loss became NaN/inf at step 7" in text
    text = render(rows, SEED, "md")  # the default table: the status in the img/s cell, the error in a note
    assert (
        "| OOM |" in text and "| DIVERGED |" in text and ". diverged: loss became NaN/inf at step 7" in text
    )


def test_part_of_an_instance_is_marked_and_extrapolated_only_when_asked():
    record = make_record(1_000_000, instance="p3.8xlarge", used=1)
    row = build_rows([record], SEED)[0]
    assert row["images_per_hour"] == 1_000_000 and row["extrapolated_factor"] is None
    # Priced for the one V100 it used: as the seed catalog's 1-V100 instance, the whole p3.8xlarge beside.
    assert (row["price_basis"], row["priced_as"], row["usd_per_hour"]) == (
        "instance of that size",
        "p3.2xlarge",
        3.06,
    )
    assert row["images_per_usd"] == pytest.approx(1_000_000 / 3.06)
    assert row["instance_images_per_usd"] == pytest.approx(1_000_000 / 12.24)
    assert any(
        n.startswith("priced as p3.2xlarge ($3.06/h)") and "1 of p3.8xlarge's 4" in n for n in row["notes"]
    )
    row = build_rows([record], SEED, extrapolate=True)[0]
    assert row["images_per_hour"] == 4_000_000 and row["extrapolated_factor"] == 4
    # The rate is the whole instance's, and so is its price.
    assert (row["accelerators_priced"], row["price_basis"], row["usd_per_hour"]) == (
        4,
        "whole instance",
        12.24,
    )
    assert "EXTRAPOLATED ×4 from 1 of 4 accelerators" in "; ".join(row["notes"])
    assert "4,000,000 (extrapolated ×4 from 1,000,000)" in render([row], SEED, "md", wide=True)
    default = render([row], SEED, "md")  # the whole instance's img/s, marked, the factor in a note
    assert "| 1,111 |" in default and "| ext retired 1-4 |" in default and "EXTRAPOLATED ×4 from 1" in default
    assert row["measured_images_per_hour"] == 1_000_000
    # a run that used the whole instance is never touched
    whole = build_rows([make_record(1_000_000, instance="p3.8xlarge", used=4)], SEED, extrapolate=True)[0]
    assert whole["images_per_hour"] == 1_000_000 and whole["extrapolated_factor"] is None


def test_world_size_counts_as_accelerators_used_when_not_recorded():
    record = make_record(1_000_000, instance="p3.8xlarge")
    record["config"].pop("accelerators_used")
    record["config"]["world_size"] = 4
    row = build_rows([record], SEED)[0]
    assert row["accelerators_used"] == 4 and not any("used" in n for n in row["notes"])


def test_a_run_on_another_device_than_the_instances_is_marked():
    cpu = make_record(10_000, backend="cpu", device="Intel(R) Xeon(R) Processor", precision="fp32")
    row = build_rows([cpu], SEED)[0]
    assert (
        "measured on Intel(R) Xeon(R) Processor, not on the instance's NVIDIA V100: not priced "
        "(--price-as-if prices it hypothetically)" in row["notes"]
    )
    gpu = build_rows([make_record(10_000)], SEED)[0]
    assert not any("measured on" in n for n in gpu["notes"])
    assert not other_device("GAUDI", "Habana Gaudi (HL-205)")
    assert other_device("NVIDIA A100-SXM4-40GB", "NVIDIA V100")


def test_no_instance_or_an_instance_missing_from_the_catalog_gives_no_price():
    rows = build_rows(
        [make_record(1_000, instance=None, run="x"), make_record(1_000, instance="g6.xlarge", run="y")], SEED
    )
    none, g6 = sorted(rows, key=lambda r: r["instance"] is not None)
    assert none["usd_per_hour"] is None and "no --instance recorded: no price" in none["notes"]
    assert g6["images_per_usd"] is None and "g6.xlarge is not in the seed-2022 catalog" in "; ".join(
        g6["notes"]
    )


def test_bottleneck_column_only_when_some_record_has_a_verdict():
    plain = render(build_rows([make_record(1_000)], SEED), SEED, "md", wide=True)
    assert "Bottleneck" not in plain
    rows = build_rows([make_record(1_000), make_record(1_000, batch=8, diagnosis="data loader")], SEED)
    text = render(rows, SEED, "md", wide=True)
    assert "| Bottleneck |" in text and "| data loader |" in text
    assert "bottleneck: data loader" in render(rows, SEED, "md")  # the default table: a note


def test_csv_and_json_carry_the_numbers_and_the_catalog():
    rows = build_rows([make_record(5_830_000)], SEED)
    parsed = list(csv.DictReader(io.StringIO(render(rows, SEED, "csv"))))
    assert float(parsed[0]["images_per_usd"]) == pytest.approx(5_830_000 / 3.06)
    assert parsed[0]["prices_catalog"] == "seed-2022" and parsed[0]["prices_as_of"] == "2022-02"
    assert parsed[0]["prices_as_of_note"].startswith("the write-up is dated 2022-02-08")
    data = json.loads(render(rows, SEED, "json", dataset_size=1000))
    assert data["catalog"]["name"] == "seed-2022" and data["dataset_size"] == 1000
    assert data["rows"][0]["spot_usd_per_hour"] == 0.92


def write_json(path, data) -> None:
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)


def test_report_skips_corrupt_foreign_and_old_files_with_a_warning_naming_each(tmp_path, capsys):
    folder = tmp_path / "results"
    folder.mkdir()
    write_json(folder / "good.json", make_record(5_830_000))
    write_json(folder / "corrupt.json", '{"schema": "suite.run", "sch')
    write_json(folder / "foreign.json", {"name": "package.json of something else"})
    old = make_record(1_234_567, run="old")
    old["schema_version"] = 0
    write_json(folder / "old.json", old)
    (folder / "binary.json").write_bytes(b"\xff\xfe\x00junk")
    assert main(["report", str(folder), "--prices", "seed-2022"]) == 0
    out, err = capsys.readouterr()
    assert "| 1,619 |" in out and "run-old" not in out  # 5,830,000 img/h
    assert f"skipped {folder / 'corrupt.json'}: not valid JSON" in err
    assert f"skipped {folder / 'foreign.json'}: not a suite run record" in err
    assert f"skipped {folder / 'old.json'}: schema version 0, this suite reads version 1" in err
    assert f"skipped {folder / 'binary.json'}" in err


def test_the_projects_own_results_draw_no_warning_from_a_plain_report(tmp_path, capsys):
    # The committed results alone (a checkout's results/ may hold a person's own runs too): the run records
    # and, beside them, the bare loop's and the timm peer's results (results/gpu-bench), the suite's own.
    import shutil
    import subprocess

    listed = subprocess.run(["git", "ls-files", "results"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0 or not listed.stdout:
        pytest.skip("not a git checkout: the committed results cannot be told from others")
    for name in listed.stdout.split():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(os.path.join(ROOT, name), tmp_path / name)
    assert any(name.startswith("results/gpu-bench/") for name in listed.stdout.split())
    assert main(["report", str(tmp_path / "results")]) == 0
    err = capsys.readouterr().err
    assert "warning" not in err and "skipped" not in err, err


def test_report_bad_input_is_one_line_exit_2(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["report", str(empty)]) == 2
    assert "no suite run records found" in capsys.readouterr().err
    write_json(tmp_path / "r.json", make_record(1_000))
    for argv, message in [
        (["--format", "xls"], "unknown --format 'xls' (known: md, csv, json, html)"),
        (["--dataset-size", "many"], "--dataset-size must be a positive integer, got 'many'"),
        (["--prices", "nope"], "unknown price catalog 'nope'"),
        (["--out", str(tmp_path / "no" / "such" / "r.md")], "cannot be written"),
    ]:
        assert main(["report", str(tmp_path / "r.json"), *argv]) == 2
        err = capsys.readouterr().err
        assert err.startswith("suite: error: ") and message in err and "Traceback" not in err
    assert main(["report", str(tmp_path / "missing")]) == 2
    assert "no such file or folder" in capsys.readouterr().err


def test_report_writes_out_file_and_accepts_commas_in_dataset_size(tmp_path, capsys):
    write_json(tmp_path / "r.json", make_record(3_600_000))
    out = tmp_path / "report.md"
    assert (
        main(
            [
                "report",
                str(tmp_path / "r.json"),
                "--prices",
                "seed-2022",
                "--dataset-size",
                "3,600,000",
                "--out",
                str(out),
                "--wide",
            ]
        )
        == 0
    )
    assert "| 1.00 |" in out.read_text() and "Epoch: 3,600,000 images." in out.read_text()


def test_plots_are_drawn_as_png(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    folder = tmp_path / "results"
    folder.mkdir()
    write_json(folder / "a.json", make_record(5_830_000, run="a"))
    write_json(folder / "b.json", make_record(1_000_000, instance="p3.8xlarge", used=1, run="b"))
    write_json(folder / "c.json", make_record(None, status="oom", run="c", batch=9999))
    plots = tmp_path / "plots"
    assert main(["report", str(folder), "--prices", "seed-2022", "--plot", str(plots)]) == 0
    for name in ("throughput_over_run.png", "images_per_dollar.png"):
        data = (plots / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_a_real_cpu_run_on_an_instance_is_reported(tmp_path):
    from suite.measurement.plan import resolve_run_instance
    from suite.measurement.runner import execute, plan_run
    from suite.spec import RunSpec

    config = RunSpec().replace(
        backend="cpu",
        batch_size=2,
        warmup_steps=1,
        steps_per_window=1,
        windows=2,
        model_overrides=TINY["dcgan64"],
        instance="p5.48xlarge",
    )
    plan = plan_run(config)
    plan.spec = resolve_run_instance(plan.spec, plan.world_size)
    record = execute(plan)
    path = run_record.write_record(record, str(tmp_path))
    assert record["config"]["instance"] == "p5.48xlarge" and record["config"]["accelerators_used"] == 1
    loaded = load_records([path])
    today = load_catalog()
    rows = build_rows([r for _, r in loaded], today)
    assert rows[0]["images_per_hour"] == pytest.approx(record["metrics"]["images_per_hour"])
    # a CPU is not the instance's H100: not priced unless asked, then visibly hypothetical
    assert rows[0]["images_per_usd"] is None and rows[0]["device_matches_instance"] is False
    assert any("not on the instance's NVIDIA H100 80GB: not priced" in n for n in rows[0]["notes"])
    (priced,) = build_rows([r for _, r in loaded], today, price_as_if=True)
    # priced for the one accelerator it stood for: as p5.4xlarge (one H100), the whole p5.48xlarge beside
    assert priced["images_per_usd"] == pytest.approx(record["metrics"]["images_per_hour"] / 6.88)
    assert priced["instance_images_per_usd"] == pytest.approx(record["metrics"]["images_per_hour"] / 55.04)
    assert priced["hypothetical"] is True
    from suite.prices.catalog import device_mismatch_warning

    assert "--instance p5.48xlarge has NVIDIA H100 80GB" in device_mismatch_warning(record)


def test_run_on_another_device_than_its_instance_warns_at_run_time(tmp_path, capsys):
    assert main([*TINY_RUN, "--instance", "p5en.48xlarge", "--out", str(tmp_path), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert any("--instance p5en.48xlarge has NVIDIA H200 141GB" in w for w in record["warnings"])


def test_loader_only_records_are_not_training_rows(tmp_path, capsys):
    folder = tmp_path / "results"
    folder.mkdir()
    write_json(folder / "train.json", make_record(5_830_000))
    loader = make_record(9_999_999, run="loader")
    loader["kind"] = "loader"
    write_json(folder / "loader.json", loader)
    assert main(["report", str(folder), "--prices", "seed-2022"]) == 0
    out, err = capsys.readouterr()
    assert "| 1,619 |" in out and "run-loader" not in out and "skipped" not in err


def test_the_suites_other_records_are_left_out_quietly(tmp_path, capsys):
    folder = tmp_path / "results"
    folder.mkdir()
    write_json(folder / "train.json", make_record(5_830_000))
    write_json(folder / "search.json", {"schema": "suite.batch-size-search", "schema_version": 1})
    assert main(["report", str(folder), "--prices", "seed-2022"]) == 0
    out, err = capsys.readouterr()
    assert "| 1,619 |" in out and "skipped" not in err


def test_runs_that_differ_in_a_knob_are_separate_rows_that_say_so():
    four = make_record(4_000_000, run="w4")
    four["config"]["workers"] = four["data"]["workers"] = 4  # `--workers 4`
    one = make_record(1_000_000, run="w1")
    one["config"]["workers"] = one["data"]["workers"] = 1
    last = make_record(2_000_000, run="cl")
    last["config"]["channels_last"] = True
    rows = build_rows([four, one, last], SEED)
    assert sorted(r["images_per_hour"] for r in rows) == [1_000_000, 2_000_000, 4_000_000]
    settings = {r["images_per_hour"]: r["settings"] for r in rows}
    assert settings == {4_000_000: ["4 workers"], 1_000_000: ["1 worker"], 2_000_000: ["channels-last"]}
    flags = {r["images_per_hour"]: r["setting_flags"] for r in rows}
    assert flags == {4_000_000: ["--workers 4"], 1_000_000: ["--workers 1"], 2_000_000: ["--channels-last"]}
    text = render(rows, SEED, "md")
    assert "| Settings |" in text and "| channels-last |" in text and "| 4 workers |" in text
    assert "settings:" not in text and "channels_last" not in text  # words in a column, never a dump
    # A loader setting the runs did not ask for is its default (for the data, for the host): no setting,
    # but where it is all that tells two rows apart, a note says it
    one["config"]["workers"] = four["config"]["workers"] = None
    notes = {r["images_per_hour"]: r["notes"] for r in build_rows([four, one], SEED)}
    assert "told apart from the row(s) alike in every column by: 4 loader workers" in notes[4_000_000]


def test_a_profiled_run_is_shown_but_never_in_the_median():
    plain = make_record(1_000_000, run="a")
    traced = make_record(500_000, run="b")
    traced["profile"] = {"trace_dir": "traces"}
    (row,) = build_rows([plain, traced], SEED)
    assert row["images_per_hour"] == 1_000_000 and row["runs"] == 1
    assert "1 profiled run(s) not in the median" in "; ".join(row["notes"])


def test_extrapolation_scales_the_spread_with_the_median():
    runs = [
        make_record(r, instance="p3.8xlarge", run=str(r), used=1) for r in (1_000_000, 1_200_000, 1_100_000)
    ]
    (row,) = build_rows(runs, SEED, extrapolate=True)
    assert row["images_per_hour"] == pytest.approx(4_400_000)
    assert (row["images_per_hour_min"], row["images_per_hour_max"]) == pytest.approx((4_000_000, 4_800_000))


def test_a_multi_node_run_is_priced_as_one_instance_per_node():
    record = make_record(10_000_000, instance="p3.8xlarge")
    record["config"].update(world_size=8, nnodes=2)
    (row,) = build_rows([record], SEED)
    assert row["accelerators_used"] == 4  # per node: the instance is used whole
    assert row["usd_per_hour"] == pytest.approx(2 * 12.24)
    assert row["images_per_usd"] == pytest.approx(10_000_000 / 24.48)
    assert "priced as 2 × p3.8xlarge (one per node)" in row["notes"]


def test_gaudi_runs_with_different_op_lists_are_two_rows():
    """Every backend option that changes a number keeps runs apart (the op lists change what runs in bf16)."""
    records = []
    for run, ops in (("a", "bf16-a.txt"), ("b", "bf16-b.txt")):
        record = make_record(3_600_000, backend="hpu", device="HL-205", precision="bf16", run=run)
        record["config"]["hpu_bf16_ops"] = ops
        records.append(record)
    fp32 = make_record(3_600_000, backend="hpu", device="HL-205", precision="bf16", run="c")
    fp32["config"]["hpu_fp32_ops"] = "fp32.txt"
    records.append(fp32)
    assert len(build_rows(records, SEED)) == 3
