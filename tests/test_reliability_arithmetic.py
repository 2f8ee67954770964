"""Arithmetic at the edges: any rate the schema accepts (finite, > 0: 5e-324 img/h as much as 1e300)
goes through compare, the report and a sweep's knob effects without log(0), an overflowing exp or a
ratio that is no float; ratios and geometric means are computed in log space."""

from __future__ import annotations

import json
import math

import pytest
from test_compare import SEED, record, side

from suite import run_record, stats
from suite.cli import main
from suite.compare import comparison as compare
from suite.compare import host_load as compare_load
from suite.compare import significance as compare_stats
from suite.run_record import write_record

TINY, SUBNORMAL, HUGE, LARGEST = 5e-324, 1e-320, 1e300, 1.7e308

# (baseline images/hour, candidate images/hour, verdict)
EXTREMES = [
    pytest.param(TINY, HUGE, "faster", id="5e-324-to-1e300"),
    pytest.param(HUGE, TINY, "slower", id="1e300-to-5e-324"),
    pytest.param(1e-300, HUGE, "faster", id="1e-300-to-1e300"),
    pytest.param(TINY, SUBNORMAL, "faster", id="both-subnormal"),
    pytest.param(HUGE, LARGEST, "faster", id="both-near-the-largest-float"),
    pytest.param(LARGEST, LARGEST, compare_stats.UNDECIDED, id="the-largest-float-twice"),
]


def hourly(rate_per_hour: float, run: str) -> dict:
    made = record(1.0, run)
    made["metrics"] = {"images_per_hour": rate_per_hour}  # the rate per second may be no float
    return made


def write_sides(tmp_path, base: float, cand: float):
    for name, rate in (("a", base), ("b", cand)):
        for i, spread in enumerate((1.0, 1.001, 0.999)):
            write_record(hourly(min(rate * spread, LARGEST), f"{name}{i}"), str(tmp_path / name))


def strict(text: str):
    return json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in JSON output"))


@pytest.mark.parametrize("base,cand,verdict", EXTREMES)
def test_compare_decides_extreme_rates_in_every_format(tmp_path, capsys, base, cand, verdict):
    write_sides(tmp_path, base, cand)
    folders = [str(tmp_path / "a"), str(tmp_path / "b")]
    assert main(["compare", *folders, "--format", "json"]) == 0
    (metric,) = strict(capsys.readouterr().out)["comparisons"][0]["metrics"].values()
    assert metric["verdict"] == verdict
    expected = math.log(cand) - math.log(base)
    assert metric["log_ratio"] == pytest.approx(expected, rel=1e-3, abs=2e-3)
    if abs(expected) > 709:
        assert metric["ratio"] is None  # no float holds it; log_ratio does
    for fmt in ("md", "csv"):
        assert main(["compare", *folders, "--format", fmt]) == 0
        out = capsys.readouterr().out
        assert "inf" not in out.lower() and "nan" not in out.lower()
    assert main(["report", *folders, "--format", "json"]) == 0
    strict(capsys.readouterr().out)


def test_a_ratio_past_the_largest_float_is_written_as_a_number():
    assert stats.format_log_ratio(math.log(HUGE) - math.log(TINY)) == "2.02e+623"
    assert stats.format_log_ratio(math.log(TINY) - math.log(HUGE)) == "4.94e-624"
    assert stats.format_log_ratio(math.log(3.0)) == "3.000"
    assert stats.from_log(800.0) is None and stats.from_log(-800.0) is None
    assert stats.from_log(0.0) == 1.0


def test_decide_takes_the_ratio_from_logs_not_from_a_quotient():
    decided = compare_stats.decide([TINY] * 3, [HUGE, HUGE * 1.01, HUGE * 0.99])
    assert decided["verdict"] == "faster" and decided["ratio"] is None
    assert decided["log_ratio"] == pytest.approx(math.log(HUGE / 1e300) + math.log(1e300) - math.log(TINY))
    assert decided["baseline_median"] == TINY and decided["candidate_median"] == HUGE


@pytest.mark.parametrize(
    "log_ratio,verdict", [(1500.0, "faster"), (-1500.0, "slower"), (0.01, "no change (< 5%)")]
)
def test_verdicts_and_the_load_rule_read_the_log_ratio(log_ratio, verdict):
    decided = {"log_ratio": log_ratio, "se_log": 0.01, "p_equivalent": 0.001}
    assert compare_stats.verdict(decided, 0.001, 0.05) == verdict
    busy = {"load_per_cpu": 2.0, "others_cpu_percent": 90.0, "cpu_mhz": 0.0}
    quiet = {"load_per_cpu": 0.0, "others_cpu_percent": 0.0, "cpu_mhz": 0.0}
    metric = {"log_ratio": log_ratio, "ratio": stats.from_log(log_ratio), "p_adjusted": 0.001}
    # the slower side ran busier: the call is withheld, naming the ratio (which is no float)
    note = compare_load.withhold(metric, *((busy, quiet) if log_ratio > 0 else (quiet, busy)))
    assert note and "×" in note and ("e+651" in note or "e-652" in note or "1.010" in note), note


def test_images_per_dollar_of_extreme_rates_is_decided_in_log_space():
    base = side([1.0, 1.001, 0.999], "a", instance="p3.2xlarge", backend="cuda")
    cand = side([1.0, 1.001, 0.999], "c", instance="dl1.24xlarge", backend="hpu")
    for (_, rec), rate in zip(base, (TINY, TINY, TINY)):
        rec["device"] = {"name": "Tesla V100-SXM2-16GB", "count": 1}
        rec["metrics"] = {"images_per_hour": rate}
    for (_, rec), spread in zip(cand, (1.0, 0.999, 0.998)):  # a spread: identical runs decide nothing
        rec["device"] = {"name": "GAUDI", "count": 8}
        rec["config"]["accelerators_used"] = 8  # the whole dl1, priced as the instance
        rec["metrics"] = {"images_per_hour": LARGEST * spread}
    (comparison,) = compare.compare(base, cand, by="instance", catalog=SEED)["comparisons"]
    per_usd = comparison["metrics"]["images_per_usd"]
    assert per_usd["verdict"] == "cheaper" and per_usd["ratio"] is None
    assert per_usd["log_ratio"] == pytest.approx(
        math.log(LARGEST) - math.log(TINY) + math.log(3.06) - math.log(13.11)
    )
    assert per_usd["candidate_median"] is None or math.isfinite(per_usd["candidate_median"])


@pytest.mark.parametrize(
    "rates,expected",
    [
        ([(TINY, "2"), (HUGE, "4")], "2.02e+623×"),
        ([(HUGE, "2"), (TINY, "4")], "4.94e-624×"),
        ([(LARGEST, "2"), (LARGEST, "4")], "+0%"),
        ([(1.0, "2"), (3.0, "4")], "3.00×"),
    ],
)
def test_sweep_knob_effects_of_extreme_rates(rates, expected):
    from suite.exploring import sweep_table

    lines = sweep_table.knob_effects({"batch_size": ["2", "4"]}, [({"batch_size": b}, r) for r, b in rates])
    assert lines == [f"batch_size 2→4: {expected}"]


@pytest.mark.parametrize(
    "metrics,field",
    [
        ({"images_per_hour": 0.0}, "metrics.images_per_hour"),
        ({"images_per_hour": -1e-300}, "metrics.images_per_hour"),
        ({"images_per_second": 0}, "metrics.images_per_second"),
        ({"images_per_second": 1e308}, "metrics.images_per_second"),  # ×3600 is no float
        ({"images_per_hour": float("inf")}, "metrics.images_per_hour"),
    ],
)
def test_the_schema_refuses_rates_the_arithmetic_cannot_take(metrics, field):
    made = record(1.0, "r")
    made["metrics"] = metrics
    with pytest.raises(run_record.BadRecord, match=f"field {field}:"):
        run_record.check_record(made)


def test_spread_figures_of_rates_near_the_largest_float():
    assert stats.cv([LARGEST, LARGEST, 1e308]) == pytest.approx(stats.cv([1.7, 1.7, 1.0]))
    assert stats.relative_range([LARGEST, 1e308]) == pytest.approx(stats.relative_range([1.7, 1.0]))


@pytest.mark.parametrize("rate", [TINY, SUBNORMAL, HUGE, LARGEST])
def test_the_schema_accepts_every_finite_positive_hourly_rate(rate):
    assert run_record.check_record(hourly(rate, "r"))


def test_the_median_of_rates_near_the_largest_float_is_a_number():
    assert stats.median([LARGEST, 1.79e308]) == pytest.approx(1.745e308)
    assert stats.median([1.0, 3.0]) == 2.0 and stats.median([3.0, 1.0, 2.0]) == 2.0


@pytest.mark.parametrize("rate", [TINY, HUGE, LARGEST])
@pytest.mark.parametrize("fmt", ["md", "csv", "json"])
def test_a_report_priced_and_extrapolated_from_extreme_rates(tmp_path, capsys, rate, fmt):
    for i in range(4):  # an even count: the median averages two rates
        made = record(1.0, f"r{i}", instance="p3.2xlarge", prices="seed-2022")
        made["device"] = {"name": "Tesla V100-SXM2-16GB", "count": 1}
        made["metrics"] = {"images_per_hour": rate, "window_images_per_second": [rate / 3600] * 2}
        write_record(made, str(tmp_path))
    argv = ["report", str(tmp_path), "--prices", "seed-2022", "--instance", "p3.8xlarge", "--extrapolate"]
    assert main([*argv, "--format", fmt, "--wide"]) == 0
    out = capsys.readouterr().out
    if fmt == "json":
        strict(out)
    assert " inf" not in out and "nan," not in out.lower()
