"""Identity and consistency of run records: a run id counts once wherever records are gathered, derived
figures agree with what they are derived from, and every text in a record is valid Unicode."""

from __future__ import annotations

import json
import statistics

import pytest

from suite import run_record
from suite.cli import main
from suite.exploring import grid
from suite.reporting.render import FORMATS
from suite.rows.gather import load_records
from suite.run_record.windows import window_metrics


def made(run_id: str, windows=(10.0, 10.5, 9.5), images_per_window=100, **metrics) -> dict:
    """A record as the suite writes it: its metrics from `windows.window_metrics`, then any overridden."""
    record = run_record.new_record(
        run_id,
        {"utc_time": "2026-01-01T00:00:00Z"},
        {"workload": "dcgan64", "backend": "cpu", "batch_size": 8, "precision": "fp32", "data": "synthetic"},
    )
    times = [images_per_window / rate for rate in windows]
    record.update(status="ok", device={"name": "Test CPU", "count": 1}, data={"source": "synthetic"})
    record["metrics"] = {**window_metrics(images_per_window, 4, times).to_json(), "steps_per_window": 4}
    record["metrics"].update(metrics)
    return record


def put(folder, record: dict, name: str | None = None) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (name or f"{record['run_id']}.json")
    path.write_text(json.dumps(record))
    return str(path)


def refusal(record: dict) -> str:
    with pytest.raises(run_record.BadRecord) as caught:
        run_record.check_record(json.loads(json.dumps(record)))
    return str(caught.value)


# -- a run id counts once --------------------------------------------------------------------------------


def test_copies_of_one_record_count_as_one_run_with_a_warning(tmp_path):
    record = made("run-a")
    for folder in ("one", "two", "three"):
        put(tmp_path / folder, record)
    put(tmp_path / "one", made("run-b", windows=(20.0,)))
    said = []
    loaded = load_records([str(tmp_path)], warn=said.append)
    assert sorted(r["run_id"] for _, r in loaded) == ["run-a", "run-b"]
    assert len(said) == 1 and "dropped 2 duplicate record(s)" in said[0] and "run-a" in said[0]


def test_a_copied_record_cannot_make_compare_call_a_difference(tmp_path, capsys):
    for i, rate in enumerate((100.0, 101.0, 99.0)):
        put(tmp_path / "base", made(f"base-{i}", windows=(rate,)))
    lone = made("cand-0", windows=(200.0,))
    for name in ("a.json", "b.json", "c.json"):  # one run, three files: no spread, p = 0 if counted thrice
        put(tmp_path / "cand", lone, name)
    assert main(["compare", str(tmp_path / "base"), str(tmp_path / "cand"), "--format", "json"]) == 0
    captured = capsys.readouterr()
    [comparison] = json.loads(captured.out)["comparisons"]
    rate = comparison["metrics"]["images_per_second"]
    assert (rate["baseline_runs"], rate["candidate_runs"]) == (3, 1)
    assert rate["verdict"] == "too few runs" and rate["p_value"] is None
    assert "dropped 2 duplicate record(s)" in captured.err


def test_two_different_records_under_one_run_id_are_both_refused(tmp_path):
    first = put(tmp_path / "x", made("run-a"))
    second = put(tmp_path / "y", made("run-a", windows=(50.0,)))
    put(tmp_path / "x", made("run-b"))
    said = []
    loaded = load_records([str(tmp_path)], warn=said.append)
    assert [r["run_id"] for _, r in loaded] == ["run-b"]
    assert len(said) == 1 and "run id run-a has different records" in said[0]
    assert first in said[0] and second in said[0]


def test_the_same_record_in_two_files_is_equal_whatever_its_key_order(tmp_path):
    record = made("run-a")
    put(tmp_path, record, "a.json")
    (tmp_path / "b.json").write_text(json.dumps(dict(reversed(list(record.items())))))
    assert len(load_records([str(tmp_path)], warn=lambda _: None)) == 1


def test_a_sweep_folder_counts_each_run_once(tmp_path):
    record = made("run-a")
    put(tmp_path, record, "a.json")
    put(tmp_path, record, "b.json")
    said = []
    assert [r["run_id"] for r in grid.existing_records(str(tmp_path), warn=said.append)] == ["run-a"]
    assert any("dropped 1 duplicate record(s)" in line for line in said)


def test_a_fleet_folder_counts_each_run_once(tmp_path):
    from suite.reporting.fleet_report import fleet_rows

    record = made("run-a", windows=(10.0,))
    record["config"]["instance"] = "p3.2xlarge"
    put(tmp_path, record, "a.json")
    put(tmp_path / "again", record, "a.json")
    rows, _, _ = fleet_rows(str(tmp_path))
    assert [row["runs"] for row in rows] == [1]


# -- derived figures agree with their sources -------------------------------------------------------------


def test_a_record_made_as_the_suite_makes_it_passes():
    run_record.check_record(json.loads(json.dumps(made("run-a"))))
    run_record.check_record(json.loads(json.dumps(made("run-b", windows=(7.0,)))))  # one window: no spread


@pytest.mark.parametrize(
    "metrics, field",
    [
        ({"images_per_hour": 9.9e12}, "metrics.images_per_hour"),  # 10 img/s shown as 9.9e12 img/h
        ({"images_per_second": 1000.0, "images_per_hour": 3.6e6}, "metrics.images_per_second"),
        ({"images_per_second_mean": 50.0}, "metrics.images_per_second_mean"),
        ({"images_per_second_max": 99.0}, "metrics.images_per_second_max"),
        ({"images_per_second_stdev": 0.0}, "metrics.images_per_second_stdev"),
        ({"images_per_second_cv": 0.9}, "metrics.images_per_second_cv"),
        ({"step_time_s": 1e-6}, "metrics.step_time_s"),
        ({"images_timed": 1}, "metrics.images_timed"),
        ({"time_timed_s": 1e6}, "metrics.time_timed_s"),
        ({"window_images_per_second": [10.0, 10.5, 950.0]}, "metrics.window_images_per_second[2]"),
        ({"window_images_per_second": [10.0]}, "metrics.window_images_per_second"),
    ],
)
def test_a_derived_figure_that_disagrees_with_its_sources_is_refused(metrics, field):
    assert refusal(made("run-a", **metrics)).startswith(f"field {field}: must be ")


def test_mfu_is_checked_against_the_flops_and_the_peak():
    good = made("run-a", windows=(10.0,))
    flops = 3e9
    good["metrics"].update(
        flops_per_image=flops, mfu_peak_tflops=100.0, model_tflops_per_second=flops * 10 / 1e12
    )
    good["metrics"]["mfu"] = good["metrics"]["model_tflops_per_second"] / 100.0
    run_record.check_record(json.loads(json.dumps(good)))
    assert "field metrics.mfu: must be " in refusal({**good, "metrics": {**good["metrics"], "mfu": 0.9}})
    tflops = {**good["metrics"], "model_tflops_per_second": 1.0}
    assert "field metrics.model_tflops_per_second: must be " in refusal({**good, "metrics": tflops})
    orphan = {**good["metrics"], "flops_per_image": None}
    assert "field metrics.mfu: must be null" in refusal({**good, "metrics": orphan})
    # two ranks: the rate is both devices', MFU one device's
    pair = {**good, "config": {**good["config"], "world_size": 2}}
    assert "field metrics.model_tflops_per_second" in refusal(pair)


def test_a_per_device_sum_is_checked_against_its_copies():
    record = made("run-a")
    record["metrics"] = {"images_per_second": 30.0, "images_per_hour": 30.0 * 3600}
    record["metrics"]["images_per_second_per_device"] = [10.0, 20.0]
    record["per_device"] = {"copies": 2, "images_per_second_sum": 30.0}
    run_record.check_record(json.loads(json.dumps(record)))
    record["metrics"]["images_per_second_per_device"] = [10.0, 10.0]
    assert "field metrics.images_per_second: must be the sum" in refusal(record)
    record["metrics"]["images_per_second_per_device"] = [10.0, 20.0]
    record["per_device"]["images_per_second_sum"] = 3e6
    assert "field per_device.images_per_second_sum" in refusal(record)


def test_a_window_of_no_time_with_a_rate_is_refused():
    record = made("run-a")
    record["metrics"]["window_time_s"][0] = 0.0
    assert "field metrics.window_time_s[0]: must be > 0" in refusal(record)


def test_the_report_names_the_file_of_an_inconsistent_record_and_goes_on(tmp_path, capsys):
    bad = put(tmp_path, made("run-bad", windows=(10.0,), images_per_hour=9.9e12))
    put(tmp_path, made("run-good", windows=(12.0,)))
    assert main(["report", str(tmp_path), "--format", "csv"]) == 0
    captured = capsys.readouterr()
    assert f"skipped {bad}: field metrics.images_per_hour: must be images_per_second × 3600" in captured.err
    assert "run-good" in captured.out and "run-bad" not in captured.out
    assert "9.9e+12" not in captured.out and "9,900,000,000,000" not in captured.out


def test_extreme_rates_keep_reading():
    tiny = made("run-a", windows=(1e-300,), images_per_window=1)
    huge = made("run-b", windows=(1e300, 1.2e300), images_per_window=10**6)
    for record in (tiny, huge):
        run_record.check_record(json.loads(json.dumps(record)))
    assert statistics.median([1e300, 1.2e300]) == huge["metrics"]["images_per_second"]


# -- text is valid Unicode ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "where, change",
    [
        ("run_id", lambda r: r.update(run_id="run-\udc80")),
        ("config.workload", lambda r: r["config"].update(workload="dcgan\ud800")),
        ("warnings[0]", lambda r: r.update(warnings=["slow \udfff"])),
        ("error.message", lambda r: r.update(error={"type": "X", "message": "\ud83d"})),
        ("telemetry.series[0].name", lambda r: r.update(telemetry={"series": [{"name": "\udc80"}]})),
        ("telemetry (a field's name)", lambda r: r.update(telemetry={"gauge\udc80": 1})),
    ],
)
def test_a_lone_surrogate_anywhere_is_refused_by_the_schema(where, change):
    record = made("run-a")
    change(record)
    # JSON's escape is how such a text reaches a file: json.dumps writes it, json.loads reads it back
    assert (
        refusal(record)
        == f"field {where}: must be valid Unicode text (no lone surrogate), got "
        + repr(next(s for s in _texts(record) if any("\ud800" <= c <= "\udfff" for c in s)))[:60]
    )


def _texts(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _texts(key)
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


def test_a_pair_of_surrogates_is_one_character_and_reads():
    record = made("run-a")
    record["warnings"] = ["\U0001f600 fine"]  # JSON writes it as "\ud83d\ude00", which reads back whole
    assert "\\ud83d\\ude00" in json.dumps(record)
    run_record.check_record(json.loads(json.dumps(record)))


@pytest.mark.parametrize("form", FORMATS)
def test_every_report_format_skips_a_record_with_a_lone_surrogate(tmp_path, capsys, form):
    bad = made("run-\udc80")
    (tmp_path / "bad.json").write_text(json.dumps(bad))  # ASCII: the surrogate as JSON's \\udc80 escape
    put(tmp_path, made("run-good"))
    out = (
        tmp_path / "report" / f"report.{form}"
    )  # a file is written as UTF-8: a surrogate ended in a traceback
    out.parent.mkdir()
    assert main(["report", str(tmp_path), "--format", form, "--out", str(out)]) == 0
    assert "bad.json: field run_id: must be valid Unicode text" in capsys.readouterr().err
    assert "run-good" in out.read_text(encoding="utf-8")
