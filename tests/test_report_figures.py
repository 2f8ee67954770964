"""The figures beside a row's rate in every report format (MFU, energy per image or token, mean power, peak
memory, time to first step: suite/rows/row_figures.py), ⚠ only for warnings about the rate
(warning_kinds.py), the page's marks linked to their notes (page_links.py), and a row that says the days,
commits and hosts it pools (run_span.py)."""

from __future__ import annotations

import csv
import io
import itertools
import json
import re
import sys

import pytest
from conftest import ROOT
from test_report import SEED, make_record

from suite.cli import main
from suite.reporting.render import render
from suite.rows import warning_kinds
from suite.rows.build import build_rows

SHORT_WINDOWS = (
    "windows lasted 842 ms (median), under the cuda backend's minimum of 1 s: power and energy per image "
    "cover too little time; a warm-up step took 11.7 ms, a timed one 9.79 ms: consider more --warmup, or "
    "--steps 103"
)
NOISY = "windows vary widely (cv 10.3%): results may be noisy; close other programs, or use more --steps / --windows"


def measured(rate, run, *, mfu=None, energy_j=None, peak_bytes=None, first_step_s=None, **kwargs) -> dict:
    """A record of `rate` img/h over 3 windows of 1 s each, with the figures beside the rate given (MFU
    from a FLOP count and a peak that agree, as run_record/derived.py checks)."""
    record = make_record(rate, run=run, **kwargs)
    metrics = record["metrics"]
    metrics.update(images_timed=rate / 3600 * 3, time_timed_s=3.0, time_to_first_step_s=first_step_s)
    if mfu is not None:
        peak = 100.0
        tflops = mfu * peak
        metrics.update(
            flops_per_image=tflops * 1e12 / metrics["images_per_second"],
            model_tflops_per_second=tflops,
            mfu=mfu,
            mfu_peak_tflops=peak,
        )
    if energy_j is not None:
        metrics.update(energy_per_image_j=energy_j, energy_method="device energy counter at window edges")
    if peak_bytes is not None:
        record["memory"] = {"peak_memory_bytes": peak_bytes}
    return record


def three_runs() -> list[dict]:
    return [
        measured(3_600_000, "a", mfu=0.30, energy_j=0.020, peak_bytes=2 * 2**30, first_step_s=10.0),
        measured(3_960_000, "b", mfu=0.33, energy_j=0.018, peak_bytes=2 * 2**30, first_step_s=12.0),
        measured(3_240_000, "c", mfu=0.27, energy_j=0.022, peak_bytes=3 * 2**30, first_step_s=20.0),
    ]


def test_each_figure_is_the_median_of_the_rows_runs_and_power_agrees_with_energy():
    (row,) = build_rows(three_runs(), SEED)
    assert row["runs"] == 3 and row["images_per_hour"] == pytest.approx(3_600_000)
    assert row["mfu"] == pytest.approx(0.30) and row["energy_per_image_j"] == pytest.approx(0.020)
    assert row["peak_memory_bytes"] == 2 * 2**30 and row["time_to_first_step_s"] == pytest.approx(12.0)
    # Power is the energy's own method, run by run: J per image × images ÷ the windows' time (1,000 img/s
    # × 20 mJ = 20 W; 1,100 × 18 mJ = 19.8 W; 900 × 22 mJ = 19.8 W), then the median, as every figure.
    assert row["mean_power_w"] == pytest.approx(19.8)
    # a figure no run records is none, not 0
    (bare,) = build_rows([make_record(3_600_000)], SEED)
    assert bare["mfu"] is None and bare["mean_power_w"] is None and bare["peak_memory_bytes"] is None


def test_the_wide_table_csv_and_json_show_every_figure():
    rows = build_rows(three_runs(), SEED)
    wide = render(rows, SEED, "md", wide=True)
    header, _, line = wide.split("\n")[:3]
    for name in ("MFU", "Energy (mJ/image)", "Mean power (W)", "Peak memory (GiB)", "First step (s)"):
        assert f"| {name} |" in header
    assert "| 30.0% | 20.0 | 20 | 2.00 | 12.0 |" in line  # 19.8 W shown whole
    assert "the median over the row's runs in the median that record it, as the throughput is" in wide
    parsed = next(csv.DictReader(io.StringIO(render(rows, SEED, "csv"))))
    assert float(parsed["mfu"]) == pytest.approx(0.30) and float(
        parsed["energy_per_image_j"]
    ) == pytest.approx(0.02)
    assert float(parsed["mean_power_w"]) == pytest.approx(19.8)
    assert float(parsed["peak_memory_bytes"]) == 2 * 2**30 and float(parsed["time_to_first_step_s"]) == 12.0
    row = json.loads(render(rows, SEED, "json"))["rows"][0]
    assert row["mfu"] == pytest.approx(0.30) and row["mean_power_w"] == pytest.approx(19.8)
    # the default table keeps the buyer's columns
    assert "MFU" not in render(rows, SEED, "md").split("\n")[0]


def test_a_token_row_shows_its_energy_per_token():
    record = measured(3_600, "t", energy_j=2.6, peak_bytes=16 * 2**30, workload="gpt2-small", batch=16)
    record["metrics"].update(unit="tokens", tokens_per_sample=1024)
    rows = build_rows([record], SEED)
    assert rows[0]["energy_per_token_j"] == pytest.approx(2.6 / 1024)
    wide = render(rows, SEED, "md", wide=True)
    header = next(line for line in wide.splitlines() if line.startswith("| # | Workload"))
    assert "| Energy (mJ/token) |" in header and "| Peak memory (GiB) |" in header
    assert "| 2.54 |" in next(line for line in wide.splitlines() if line.startswith("| T1 "))
    parsed = next(csv.DictReader(io.StringIO(render(rows, SEED, "csv"))))
    assert float(parsed["energy_per_token_j"]) == pytest.approx(2.6 / 1024)


def test_the_committed_h200_records_give_readmes_first_gpu_figures(capsys):
    assert main(["report", f"{ROOT}/results/gpu", "--wide", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    fp32 = next(r for r in rows if r["model_run"] == "resnet50" and r["precision"] == "fp32" and r["mfu"])
    assert float(fp32["mfu"]) == pytest.approx(0.386, abs=5e-4)
    assert float(fp32["energy_per_image_j"]) * 1000 == pytest.approx(600.0, abs=0.05)
    assert float(fp32["peak_memory_bytes"]) / 2**30 == pytest.approx(20.95, abs=0.005)
    assert float(fp32["time_to_first_step_s"]) == pytest.approx(26.5, abs=0.05)
    assert float(fp32["mean_power_w"]) > 0


def test_a_numerics_checks_memory_is_not_the_configurations_peak():
    plain = measured(3_600_000, "plain", peak_bytes=2**30)
    checked = measured(3_600_000, "checked", peak_bytes=5 * 2**30)
    checked["numerics"] = {"verdict": "pass"}
    (row,) = build_rows([plain, checked], SEED)
    assert row["peak_memory_bytes"] == 2**30
    assert any(n.startswith("peak memory: of the 1 run(s) without a numerics check") for n in row["notes"])
    (alone,) = build_rows([checked], SEED)
    assert alone["peak_memory_bytes"] == 5 * 2**30
    assert any("includes a numerics check" in n for n in alone["notes"])


# -- ⚠: only what touches the rate ---------------------------------------------------------------------


def test_a_short_energy_window_marks_the_energy_not_the_rate():
    record = measured(3_600_000, "short", energy_j=0.02)
    record["warnings"] = [SHORT_WINDOWS]
    (row,) = build_rows([record], SEED)
    assert row["rate_warnings"] == [] and list(row["other_warnings"]) == [warning_kinds.ENERGY]
    default = render([row], SEED, "md")
    assert "⚠" not in default.split("Notes:")[0]  # neither on the row nor in the marks' legend
    assert (
        "Warnings about other figures" in default
        and f"- #1 energy and power: run-short: {SHORT_WINDOWS}" in default
    )
    wide = render([row], SEED, "md", wide=True)
    line = wide.split("\n")[2]
    assert "⚠" not in line and "| 20.0 † | 20 † |" in line  # the energy and the power, not the rate
    parsed = next(csv.DictReader(io.StringIO(render([row], SEED, "csv"))))
    assert parsed["rate_warnings"] == "" and parsed["other_warnings"].startswith(
        "energy and power: run-short:"
    )


def test_a_noisy_run_still_marks_the_rate():
    record = measured(3_600_000, "noisy")
    record["warnings"] = [NOISY, SHORT_WINDOWS]
    (row,) = build_rows([record], SEED)
    assert row["rate_warnings"] == [f"run-noisy: {NOISY}"]
    text = render([row], SEED, "md")
    assert "⚠" in text.split("\n")[2] and "⚠ Warnings about the rate" in text
    assert f"- #1 run-noisy: {NOISY}" in text


def _window_metrics(rates):
    from suite.run_record.windows import window_metrics

    return window_metrics(100, 10, [100 / r for r in rates])


def test_every_warning_the_suite_writes_is_classified_as_meant():
    """The classifier reads the sentences the suite writes: each producer's sentence, made here by the
    producer itself, lands where it should (a reworded warning that would slip to another figure fails)."""
    from suite.workloads.user_code import Guard

    from suite.data.loader_bench import measure_loader
    from suite.measurement import profiling, window_length
    from suite.prices.catalog import device_mismatch_warning
    from suite.run_record.windows import spread_warnings

    noisy = spread_warnings(_window_metrics([1000.0, 10.0, 100.0]))  # σ over the value, and a wide cv
    slow_first = spread_warnings(_window_metrics([50.0, 100.0, 100.0, 100.0]))
    length = window_length.WindowLength(
        steps=10, chosen_by=window_length.GIVEN, default_steps=10, max_steps=1000, min_window_s=1.0
    )
    short = window_length.short_window_warnings(length, [0.5, 0.5], "cuda")
    mismatch = device_mismatch_warning(
        {"config": {"instance": "p5.48xlarge"}, "device": {"name": "AMD EPYC 7R13 Processor"}}
    )
    guard = Guard()
    guard.note_debugger("breakpoint()", sys._getframe())
    guard.note_fork(sys._getframe())
    grown = measure_loader(
        itertools.repeat(([0] * 4, None)), batches=1, windows=2, warmup_batches=0, min_window_s=0.01
    )
    about_rate = [
        *noisy,
        *slow_first,
        mismatch,
        profiling.PERTURBED,
        guard.notes[1],
        "a warning of a later version",
    ]
    assert len(noisy) == 2 and any("first window was much slower" in w for w in slow_first) and mismatch
    assert [warning_kinds.concerns(w) for w in about_rate] == [warning_kinds.RATE] * len(about_rate)
    assert warning_kinds.concerns(short[0]) == warning_kinds.ENERGY
    assert warning_kinds.concerns(f"copy 1: {short[0]}") == warning_kinds.ENERGY  # a per-device copy's
    assert warning_kinds.concerns(guard.notes[0]) == warning_kinds.NO_FIGURE  # the debugger, switched off
    assert [warning_kinds.concerns(w) for w in grown["warnings"] if "grown" in w] == [warning_kinds.NO_FIGURE]
    assert warning_kinds.concerns("telemetry 'nvml' off: NVMLError: gone") == warning_kinds.TELEMETRY
    assert warning_kinds.concerns("FLOP count failed, MFU left blank: boom") == warning_kinds.MFU


# -- the page: each mark links to its note ------------------------------------------------------------


def _page(tmp_path, records: list[dict], *extra) -> str:
    folder = tmp_path / "results"
    folder.mkdir(exist_ok=True)
    for record in records:
        (folder / f"{record['run_id']}.json").write_text(json.dumps(record))
    out = tmp_path / "report.html"
    args = ["report", str(folder), "--prices", "seed-2022", "--format", "html", "--out", str(out), *extra]
    assert main(args) == 0
    return out.read_text(encoding="utf-8")


def _linked_records() -> list[dict]:
    noisy = measured(3_600_000, "noisy", energy_j=0.02, data="synthetic")
    noisy["warnings"] = [NOISY, SHORT_WINDOWS]
    other = measured(1_800_000, "other", energy_j=0.02, batch=128, instance="p3.8xlarge", used=1)
    other["warnings"] = [SHORT_WINDOWS]
    token = make_record(3_600, run="t", workload="gpt2-small", batch=16, data="synthetic")
    token["metrics"].update(unit="tokens", tokens_per_sample=1024)
    token["warnings"] = [NOISY]
    return [noisy, other, token]


def _row_of(text: str, table_id: str, number: str) -> str:
    table = text.split(f'id="{table_id}"', 1)[1].split("</table>", 1)[0]
    return next(row for row in table.split("<tr") if f'<td class="num">{number}</td>' in row)


@pytest.mark.parametrize("extra", [(), ("--wide",)])
def test_every_mark_on_the_page_links_to_an_item_that_is_there(tmp_path, extra):
    text = _page(tmp_path, _linked_records(), *extra)
    ids = set(re.findall(r'id="([^"]+)"', text))
    links = re.findall(r'href="#([^"]+)"', text)
    assert links and set(links) <= ids, sorted(set(links) - ids)
    noisy, other = _row_of(text, "rows", "1"), _row_of(text, "rows", "2")  # p3.2xlarge, then p3.8xlarge
    # ⚠ on the noisy row links to its warning about the rate; the other row's warning is not about its rate
    assert '<a href="#warn-1">⚠</a>' in noisy and "⚠" not in other
    assert '<li id="warn-1">#1 run-noisy: windows vary widely' in text
    assert '<li id="other-2">#2 energy and power: run-other: windows lasted' in text
    token = _row_of(text, "token-rows", "T1")
    assert '<a href="#warn-T1">⚠</a>' in token and '<li id="warn-T1">T1 run-t: windows vary widely' in text
    assert '<a href="#token-mark-synth">synth</a>' in token and 'id="token-mark-synth"' in text
    if extra:  # the wide table: † beside the energy links to the row's other warnings; notes by number
        assert '<a href="#other-2">†</a>' in other
        assert re.search(r'<a href="#note-\d+">\d+</a>', other)
    else:  # the default table: marks to their legend entries, numbers to their notes
        assert '<a href="#mark-synth">synth</a>' in noisy and 'id="mark-synth"' in text
        assert '<a href="#mark-part">1/4</a>' in other
        assert re.search(r'<a href="#note-(\d+)">\1</a>', other)


# -- the days, commits and hosts a row pools ------------------------------------------------------------


def _on(record: dict, day: str, commit: str, host: str) -> dict:
    record["context"] = {"utc_time": f"{day}T10:00:00Z", "git_commit": commit, "host": host}
    return record


def test_a_row_of_several_days_commits_and_hosts_says_so():
    runs = [
        _on(measured(3_600_000, "a"), "2026-11-26", "cbac25db" + "0" * 32, "vm"),
        _on(measured(3_700_000, "b"), "2026-11-27", "d625b944" + "0" * 32, "other"),
        _on(measured(3_500_000, "c"), "2026-11-27", "d625b944" + "0" * 32, "vm"),
    ]
    (row,) = build_rows(runs, SEED)
    assert row["run_days"] == ["2026-11-26", "2026-11-27"] and row["run_hosts"] == ["vm", "other"]
    assert [c[:7] for c in row["run_commits"]] == ["cbac25d", "d625b94"]
    note = (
        "Pools runs of 2 days (2026-11-26, 2026-11-27), 2 commits (cbac25d, d625b94) and 2 host names (vm, "
        "other): the day, the commit and the host are not part of a configuration"
    )
    assert any(n.startswith(note) for n in row["notes"])
    assert "Pools runs of 2 days" in render([row], SEED, "md")
    parsed = next(csv.DictReader(io.StringIO(render([row], SEED, "csv"))))
    assert parsed["run_days"] == "2026-11-26 2026-11-27" and parsed["run_hosts"] == "vm other"
    assert json.loads(render([row], SEED, "json"))["rows"][0]["run_days"] == ["2026-11-26", "2026-11-27"]
    (one,) = build_rows([_on(measured(3_600_000, "d"), "2026-11-26", "c" * 40, "vm")], SEED)
    assert one["run_days"] == ["2026-11-26"] and not any(n.startswith("Pools runs") for n in one["notes"])


def test_the_committed_leases_pool_two_days_and_three_commits(capsys):
    assert main(["report", f"{ROOT}/results/gpu", f"{ROOT}/results/gpu-2026-11-27", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    amp = next(r for r in rows if r["model_run"] == "dcgan64" and r["precision"] == "amp")
    assert amp["run_days"] == ["2026-11-26", "2026-11-27"] and len(amp["run_commits"]) == 3
    assert any(n.startswith("Pools runs of 2 days (2026-11-26, 2026-11-27), 3 commits") for n in amp["notes"])
