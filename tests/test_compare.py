"""`suite compare`: verdicts on synthetic runs of known throughput, matching by the report's row key, output."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import statistics

import pytest

from suite import run_record
from suite.cli import main
from suite.compare import comparison as compare
from suite.compare import matching as compare_match
from suite.compare import significance as compare_stats
from suite.prices.catalog import load_catalog
from suite.rows import identity

SEED = load_catalog("seed-2022")


def record(images_per_second, run, *, threads=None, instance=None, status="ok", **config) -> dict:
    values = {
        "workload": "dcgan64",
        "backend": "cpu",
        "batch_size": 8,
        "precision": "fp32",
        "data": "synthetic",
        "threads": threads,
        "instance": instance,
        **config,
    }
    rec = run_record.new_record(f"run-{run}", {"utc_time": "2026-01-01T00:00:00Z"}, values)
    device = {
        "name": "Test CPU",
        "count": 1,
        "threads": threads or 2,
    }  # the threads it ran, as the backend records
    rec.update(status=status, device=device, data={"source": "synthetic"})
    if images_per_second is not None:
        rec["metrics"] = {
            "images_per_second": images_per_second,
            "images_per_hour": images_per_second * 3600,
        }
    return rec


def side(rates, prefix, **fields) -> list[tuple[str, dict]]:
    return [(f"{prefix}/{i}.json", record(rate, f"{prefix}{i}", **fields)) for i, rate in enumerate(rates)]


def test_welch_matches_the_textbook_values():
    # Reference: scipy.stats.ttest_ind([1..5], [2,4,..,10], equal_var=False) -> p 0.10753119, df 5.88235,
    # 95% interval of the difference (-0.887742, 6.887742).
    test = compare_stats.welch([1, 2, 3, 4, 5], [2, 4, 6, 8, 10])
    assert test.p_value == pytest.approx(0.10753119493062728, rel=1e-9)
    assert test.df == pytest.approx(5.882352941176471)
    assert (test.ci_low, test.ci_high) == pytest.approx((-0.887741643736975, 6.887741643736975), rel=1e-9)


# (baseline img/s, candidate img/s, --min-change, verdict)
UNDECIDED = compare_stats.UNDECIDED
CASES = [
    pytest.param([100, 101, 99], [120, 121, 119], 0.0, "faster", id="faster"),
    pytest.param([100, 101, 99], [80, 81, 79], 0.0, "slower", id="slower"),
    pytest.param([100, 101, 99], [104, 103, 106], 0.0, "faster", id="small-but-clear-speedup"),
    # significant, 4 % from 1, but its interval reaches 7.5 %: not shown to be within 5 %
    pytest.param([100, 101, 99], [104, 103, 106], 0.05, UNDECIDED, id="inside-min-change-but-not-shown"),
    pytest.param(
        [100, 100.2, 99.8], [101, 101.2, 100.8], 0.05, "no change (< 5%)", id="shown-within-min-change"
    ),
    pytest.param([100, 100.5, 99.5], [100.2, 99.7, 100.4], 0.0, UNDECIDED, id="no-margin-no-difference"),
    pytest.param(
        [100, 100.5, 99.5], [100.2, 99.7, 100.4], 0.03, "no change (< 3%)", id="equivalent-within-3%"
    ),
    pytest.param([80, 100, 120], [60, 100, 140], 0.0, UNDECIDED, id="equal-medians-wide-spread"),
    pytest.param([80, 100, 120], [60, 100, 140], 0.10, UNDECIDED, id="wide-spread-cannot-show-10%"),
    pytest.param([90, 100, 130], [95, 100, 140], 0.0, UNDECIDED, id="overlapping-noisy"),
    pytest.param([100, 101], [120, 121, 119], 0.0, compare_stats.TOO_FEW, id="two-runs-a-side-too-few"),
    pytest.param([100, 101, 99], [120], 0.0, compare_stats.TOO_FEW, id="one-candidate-run-too-few"),
    # no spread on either side: the noise is unknown, no test (it used to be p = 0, "faster")
    pytest.param([100, 100, 100], [100, 100, 100], 0.0, UNDECIDED, id="identical-no-spread"),
    pytest.param([100, 100, 100], [110, 110, 110], 0.0, UNDECIDED, id="different-no-spread"),
    pytest.param([100] * 3, [100.0001] * 3, 0.0, UNDECIDED, id="a-millionth-apart-no-spread"),
]


@pytest.mark.parametrize("baseline, candidate, min_change, verdict", CASES)
def test_verdicts_on_known_distributions(baseline, candidate, min_change, verdict):
    decided = compare_stats.decide(baseline, candidate, min_change)
    assert decided["verdict"] == verdict
    assert decided["baseline_median"] == pytest.approx(statistics.median(baseline))
    if verdict == compare_stats.TOO_FEW:
        assert decided["ratio"] is None  # never a bare ratio without a verdict
        return
    assert decided["ci_low"] <= decided["ratio"] <= decided["ci_high"]
    if verdict in ("faster", "slower"):  # the verdict and the interval agree
        assert (decided["ci_low"] > 1) == (verdict == "faster") and (decided["ci_high"] < 1) == (
            verdict == "slower"
        )
    if verdict == UNDECIDED and min_change == 0 and decided["se_log"]:
        assert decided["ci_low"] <= 1 <= decided["ci_high"]  # without a margin: exactly "not significant"
    if verdict.startswith("no change"):  # its 90 % interval inside the margin
        low, high = decided["log_ci90"]
        assert math.log(1 - min_change) < low and high < math.log(1 + min_change)
    if decided["se_log"] == 0:
        assert decided["p_equivalent"] is None and decided["detectable"] is None


def test_ratio_and_interval_are_of_geometric_means():
    decided = compare_stats.decide([100, 101, 99], [104, 103, 106])
    # Reference: scipy.stats.ttest_ind(log b, log a, equal_var=False): p 0.0183886, exp(CI) 1.01256 … 1.07497
    assert decided["p_value"] == pytest.approx(0.018388583828307978, rel=1e-6)
    assert (decided["ci_low"], decided["ci_high"]) == pytest.approx((1.0125554, 1.0749653), rel=1e-6)
    assert decided["ratio"] == pytest.approx((104 * 103 * 106) ** (1 / 3) / (100 * 101 * 99) ** (1 / 3))


def test_matching_uses_the_reports_row_key():
    assert compare_match.row_key is identity.row_key  # one definition of "the same configuration"
    base = side([100, 101, 99], "a") + side([50, 51, 49], "b", batch_size=16)
    cand = side([120, 121, 119], "c") + side([60, 61, 59], "d", precision="bf16")
    result = compare.compare(base, cand)
    assert [c["metrics"]["images_per_second"]["verdict"] for c in result["comparisons"]] == ["faster"]
    assert [u["configuration"] for u in result["unmatched"]["baseline"]] == [
        "dcgan64 · cpu (Test CPU) · batch 16 · fp32 · synthetic"
    ]
    assert [u["configuration"] for u in result["unmatched"]["candidate"]] == [
        "dcgan64 · cpu (Test CPU) · batch 8 · bf16 · synthetic"
    ]


def test_failed_and_profiled_runs_are_not_samples_but_are_noted():
    base = side([100, 101, 99], "a")
    cand = side([120, 121], "c") + [("c/x.json", record(None, "cx", status="oom"))]
    profiled = record(500, "cp")
    profiled["profile"] = {"top": []}
    cand.append(("c/p.json", profiled))
    (comparison,) = compare.compare(base, cand)["comparisons"]
    assert comparison["metrics"]["images_per_second"]["verdict"] == compare_stats.TOO_FEW
    assert comparison["candidate"]["runs"] == 2
    notes = " ".join(comparison["notes"])
    assert "2 vs 3" not in notes and "3 vs 2 runs: need ≥ 3 a side" in notes
    assert (
        "suite run --workload dcgan64 --backend cpu --batch-size 8 --precision fp32 --repeat 3 "
        "--against workload=dcgan64 --out interleaved" in notes
    )
    assert "candidate: 1 oom, 1 profiled run(s) not counted" in notes


def test_by_threads_matches_across_the_field():
    base = side([100, 101, 99], "a", threads=1)
    cand = side([180, 185, 178], "c", threads=2)
    assert compare.compare(base, cand)["comparisons"] == []  # threads is part of the row key
    result = compare.compare(base, cand, by="threads")
    (comparison,) = result["comparisons"]
    assert comparison["configuration"] == "dcgan64 · cpu (Test CPU) · batch 8 · fp32 · synthetic"
    assert (comparison["baseline"]["value"], comparison["candidate"]["value"]) == ("threads=1", "threads=2")
    assert comparison["metrics"]["images_per_second"]["verdict"] == "faster"
    assert not result["unmatched"]["baseline"] and not result["unmatched"]["candidate"]


def v100(loaded):
    """Runs on the instance's own accelerator (the report prices a run only on the device it rents)."""
    for _, rec in loaded:
        rec["device"] = {"name": "Tesla V100-SXM2-16GB", "count": 1}
    return loaded


def test_by_instance_decides_speed_and_images_per_dollar_apart():
    # dl1.24xlarge ($13.11/h) is 3× faster than p3.2xlarge ($3.06/h) but 4.3× dearer: faster, and costlier.
    base = v100(side([1000, 1010, 990], "a", instance="p3.2xlarge", backend="cuda"))
    cand = side([3000, 3030, 2970], "c", instance="dl1.24xlarge", backend="hpu")
    for _, rec in cand:  # the whole dl1: all 8 of its Gaudis, priced as the instance
        rec["device"] = {"name": "GAUDI", "count": 8}
        rec["config"]["accelerators_used"] = 8
    (comparison,) = compare.compare(base, cand, by="instance", catalog=SEED)["comparisons"]
    speed, per_usd = comparison["metrics"]["images_per_second"], comparison["metrics"]["images_per_usd"]
    assert speed["verdict"] == "faster" and speed["ratio"] == pytest.approx(3.0, rel=1e-3)
    assert per_usd["verdict"] == "costlier"
    assert per_usd["ratio"] == pytest.approx(3.0 * 3.06 / 13.11, rel=1e-3)
    assert per_usd["baseline_median"] == pytest.approx(1000 * 3600 / 3.06)
    assert (comparison["baseline"]["value"], comparison["candidate"]["value"]) == (
        "p3.2xlarge",
        "dl1.24xlarge",
    )


def test_by_instance_cheaper_but_not_significantly_faster():
    base = v100(side([1000, 1100, 900], "a", instance="p3.8xlarge", backend="cuda"))  # $12.24/h
    for _, rec in base:  # all 4 of its V100s (one of them would be priced as p3.2xlarge)
        rec["config"]["accelerators_used"] = 4
    cand = v100(side([1050, 950, 1000], "c", instance="p3.2xlarge", backend="cuda"))  # $3.06/h
    (comparison,) = compare.compare(base, cand, by="instance", catalog=SEED)["comparisons"]
    assert comparison["metrics"]["images_per_second"]["verdict"] == compare_stats.UNDECIDED
    assert comparison["metrics"]["images_per_usd"]["verdict"] == "cheaper"


def test_same_price_shows_speed_only():
    result = compare.compare(
        v100(side([100, 101, 99], "a", instance="p3.2xlarge", backend="cuda")),
        v100(side([120, 121, 119], "c", instance="p3.2xlarge", backend="cuda")),
        catalog=SEED,
    )
    assert list(result["comparisons"][0]["metrics"]) == ["images_per_second"]


def test_bad_by_and_min_change_are_user_errors():
    from suite.inputs.errors import UserError

    with pytest.raises(UserError, match="--by 'colour' is not a field of a run"):
        compare.parse_by("colour")
    assert compare.parse_by("threads, precision") == ("threads", "precision")
    assert compare.parse_min_change("3%") == pytest.approx(0.03)
    assert compare.parse_min_change("2.5") == pytest.approx(0.025)
    for bad in ("fast", "-1%", "100%"):
        with pytest.raises(UserError, match="--min-change must be a percentage"):
            compare.parse_min_change(bad)


# -- the command -------------------------------------------------------------------------------------------


def write_side(folder, rates, prefix, **fields) -> None:
    os.makedirs(folder, exist_ok=True)
    for _, rec in side(rates, prefix, **fields):
        run_record.write_record(rec, str(folder))


@pytest.fixture
def folders(tmp_path):
    write_side(tmp_path / "base", [100, 101, 99], "a")
    write_side(tmp_path / "base", [50, 51, 49], "b", batch_size=16)  # only in the baseline
    write_side(tmp_path / "cand", [80, 81, 79], "c")
    return tmp_path / "base", tmp_path / "cand"


def test_cli_markdown_lists_verdicts_and_unmatched(folders, capsys):
    base, cand = folders
    assert main(["compare", str(base), str(cand)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| Configuration | Compared | Metric | Baseline (median) | Candidate (median) |")
    (line,) = [row for row in out.splitlines() if "**slower**" in row]
    assert "| 100 | 80 | 3 / 3 | 0.800 (" in line
    assert "- only in the baseline: dcgan64 · cpu (Test CPU) · batch 16 · fp32 · synthetic (3 run(s))" in out
    assert "Welch's t-test" in out


def test_cli_fail_on_slower_exits_1(folders, capsys):
    base, cand = folders
    assert main(["compare", str(base), str(cand), "--fail-on", "slower"]) == 1
    err = capsys.readouterr().err
    assert "suite: fail (slower): dcgan64" in err and "suite: --fail-on slower: fail" in err
    assert main(["compare", str(cand), str(base), "--fail-on", "slower"]) == 0  # the other way: faster


def test_cli_csv_and_json(folders, capsys, tmp_path):
    base, cand = folders
    assert main(["compare", str(base), str(cand), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["metric"], r["verdict"]) for r in rows] == [
        ("img/s", "slower"),
        ("img/s", "unmatched (baseline only)"),
    ]
    assert float(rows[0]["ratio"]) == pytest.approx(0.8, rel=1e-3)
    out = tmp_path / "c.json"
    assert main(["compare", str(base), str(cand), "--format", "json", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["comparisons"][0]["metrics"]["images_per_second"]["verdict"] == "slower"
    assert data["comparisons"][0]["candidate"]["images_per_second"] == pytest.approx([80, 81, 79])
    assert len(data["unmatched"]["baseline"]) == 1


def test_cli_glob_and_too_few(tmp_path, capsys):
    write_side(tmp_path / "r", [100, 101], "a", threads=1)
    write_side(tmp_path / "s", [150, 151, 149], "c", threads=2)
    pattern = str(tmp_path / "r" / "*.json")
    # a gate that cannot decide is not a pass: it is undecided, exit status 4
    assert main(["compare", pattern, str(tmp_path / "s"), "--by", "threads", "--fail-on", "slower"]) == 4
    captured = capsys.readouterr()
    out = captured.out
    assert "suite: undecided (too few runs): dcgan64" in captured.err
    assert "**too few runs**" in out
    assert "2 vs 3 runs: need ≥ 3 a side for a verdict; measure both sides again, interleaved" in out
    assert f"--threads 1 --repeat 3 --against threads=2 --out {tmp_path / 'interleaved'}" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--format", "xml"], "unknown --format 'xml'"),
        (["--fail-on", "faster"], "unknown --fail-on verdict 'faster'"),
        (["--correction", "sidak"], "unknown --correction 'sidak'"),
        (["--by", "colour"], "--by 'colour' is not a field"),
        (["--min-change", "lots"], "--min-change must be a percentage"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(folders, capsys, argv, message):
    base, cand = folders
    assert main(["compare", str(base), str(cand), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("suite: error: ") and message in err and "Traceback" not in err


def test_cli_missing_or_empty_side(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    write_side(tmp_path / "b", [1, 2, 3], "a")
    assert main(["compare", str(tmp_path / "b"), str(tmp_path / "empty")]) == 2
    assert "no suite run records found for the candidate" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "nope*.json"), str(tmp_path / "b")]) == 2
    assert "no file or folder matches" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["--help"], ["compare", "--help"]])
def test_help_texts_render(argv, capsys):
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 0
    assert "compare" in capsys.readouterr().out
