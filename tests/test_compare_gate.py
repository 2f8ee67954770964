"""`suite compare --fail-on` decides or says it cannot: a gate passes only where the runs rule out a change
for the worse beyond --min-change (the lower of two one-sided tests), fails on a significant one, and is
undecided (exit status 4) otherwise; every comparison says the smallest change its runs could detect and
the runs a side --min-change needs. Seeded simulations measure the gate's error rates."""

from __future__ import annotations

import math
import random
import statistics

import mpmath
import pytest
from test_compare import SEED, side, v100, write_side

from suite.cli import main
from suite.compare import comparison as compare
from suite.compare import gate as compare_gate
from suite.compare import significance as compare_stats

QUIET = {"others_cpu_percent": None, "load_per_cpu": None, "cpu_mhz": None}


def spread_out(n: int, sigma: float) -> list[float]:
    """N log-normal draws' stand-ins with log standard deviation exactly SIGMA: the normal's quantiles."""
    z = [statistics.NormalDist().inv_cdf((i + 0.5) / n) for i in range(n)]
    scale = sigma / statistics.stdev(z)
    return [math.exp(x * scale) for x in z]


def issue_sides():
    """A real 10 % slowdown measured with 8 runs a side on a host whose runs spread σ = 0.525 (log): the
    interval comes out 0.49 … 1.51, as on the saturated 2-core machine this was first seen on."""
    factors = spread_out(8, 0.525)
    return [100 * f for f in factors], [86.2 * f for f in reversed(factors)]


# -- the statistics, against published implementations ---------------------------------------------------


def test_two_one_sided_tests_match_statsmodels_ttost_ind():
    # Reference: statsmodels 0.15.0, ttost_ind(log cand, log base, log(1 − m), log(1 + m), usevar="unequal")
    base, cand = [math.log(x) for x in (100, 101, 99)], [math.log(x) for x in (104, 103, 106)]
    test = compare_stats.welch(base, cand)
    for m, p, p_low in (
        (0.05, 0.2844540533796087, 0.0006879036116513949),
        (0.10, 0.004594984132034444, 0.0001422503380069193),
    ):
        found = compare_stats.equivalence(test, m)
        assert found["p_equivalent"] == pytest.approx(p, rel=1e-9)
        assert found["p_not_worse"] == pytest.approx(p_low, rel=1e-9)
    base, cand = [math.log(x) for x in (100, 100.5, 99.5)], [math.log(x) for x in (100.2, 99.7, 100.4)]
    found = compare_stats.equivalence(compare_stats.welch(base, cand), 0.03)
    assert found["p_equivalent"] == pytest.approx(0.0009679529189287158, rel=1e-9)


def test_runs_needed_match_statsmodels_power_and_the_detectable_change_is_close():
    # Reference: statsmodels TTestIndPower().solve_power(effect_size=d, alpha=0.05, power=0.8): 63.77,
    # 393.41, 433.98 runs a side (rounded up: 64, 394, 434), from the noncentral t.
    m = 0.10
    for effect, runs in ((0.5, 64), (0.2, 394), (0.1904, 434)):
        spread = math.log1p(m) / effect
        assert compare_stats.runs_needed([-spread, 0, spread], [-spread, 0, spread], m) == runs
    # The detectable change (in standard deviations) against solve_power(nobs1=n): 3.0709 (n 3), 1.5066 (8)
    for n, exact in ((3, 3.070892269599019), (8, 1.5066342476563057)):
        logs = [math.log(x) for x in spread_out(n, 1.0)]
        assert compare_stats.detectable(compare_stats.welch(logs, logs)) == pytest.approx(exact, rel=0.012)
    assert compare_stats.runs_needed([0.1, 0.2, 0.3], [0.1, 0.2, 0.3], 0.0) is None  # no margin, no number


def test_students_t_in_floats_matches_mpmath_to_1e_11():
    worst = 0.0
    with mpmath.workdps(40):
        for df in (1.0, 1.7, 3.3, 12.5, 99.0, 1000.0):
            for t in (0.0, 1e-9, 0.3, 1.0, 2.2, 4.5, 12.0, 80.0, 1e5):
                exact = mpmath.betainc(
                    mpmath.mpf(df) / 2, 0.5, 0, df / (df + mpmath.mpf(t) ** 2), regularized=True
                )
                found = compare_stats._t_two_sided_p(t, df)
                if exact == 0 or float(exact) < 1e-300:  # past the floats: both are (nearly) 0
                    assert found < 1e-300
                    continue
                worst = max(worst, abs(found - float(exact)) / float(exact))
    assert worst < 1e-11


# -- the issue's cases -----------------------------------------------------------------------------------


def test_an_underpowered_slowdown_is_undecided_not_a_pass(tmp_path, capsys):
    base, cand = issue_sides()
    write_side(tmp_path / "a", base, "a")
    write_side(tmp_path / "b", cand, "b")
    folders = [str(tmp_path / "a"), str(tmp_path / "b")]
    assert main(["compare", *folders, "--fail-on", "slower", "--min-change", "10%"]) == 4  # it was 0
    captured = capsys.readouterr()
    assert "0.862 (0.491 … 1.514)" in captured.out and "**undecided**" in captured.out
    assert "10%: 478 runs a side" in captured.out  # the runs a 10 % margin needs at this spread
    assert "could detect only a ratio outside ×0.453 … ×2.205 (80% power)" in captured.out
    assert "slower by more than 10% not ruled out (the 90% interval reaches ×0.543)" in captured.err
    assert "suite: --fail-on slower: undecided" in captured.err
    # without a margin only a proven improvement passes, and the gate says to give one
    assert main(["compare", *folders, "--fail-on", "slower"]) == 4
    assert "give the change the gate accepts" in capsys.readouterr().err


def test_a_gate_passes_where_the_runs_rule_out_a_slowdown_beyond_the_margin(tmp_path, capsys):
    write_side(tmp_path / "a", [100 * f for f in spread_out(6, 0.01)], "a")
    write_side(tmp_path / "b", [99.5 * f for f in spread_out(6, 0.01)], "b")
    folders = [str(tmp_path / "a"), str(tmp_path / "b")]
    assert main(["compare", *folders, "--fail-on", "slower", "--min-change", "3%"]) == 0
    captured = capsys.readouterr()
    assert (
        "**no change (< 3%)**" in captured.out
        and "Gate --fail-on slower: **pass** (exit status 0)" in captured.out
    )
    assert (
        main(["compare", *folders, "--fail-on", "slower", "--min-change", "0.2%"]) == 4
    )  # 0.5 % slower: not within 0.2 %


def test_costlier_is_judged_where_both_sides_pay_one_price(tmp_path, capsys):
    # A 20 % slowdown on one instance type: images per $ falls by as much, and the gate sees it.
    base = v100(side([100, 101, 99], "a", instance="p3.2xlarge", backend="cuda"))
    cand = v100(side([80, 81, 79], "c", instance="p3.2xlarge", backend="cuda"))
    result = compare.compare(base, cand, catalog=SEED)
    gate = compare_gate.gate(result, "costlier")
    assert gate["status"] == "fail" and gate["exit_status"] == 1  # it was a pass: per $ was never computed
    assert "both sides cost $3.06/h, so images per $ is judged by img/s: slower" in gate["findings"][0]["why"]
    assert list(result["comparisons"][0]["metrics"]) == ["images_per_second"]  # no second test in the family


def test_costlier_without_a_price_is_undecided(tmp_path, capsys):
    write_side(tmp_path / "a", [100, 101, 99], "a")
    write_side(tmp_path / "b", [80, 81, 79], "b")
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--fail-on", "costlier"]) == 4
    err = capsys.readouterr().err
    assert "images per $ cannot be computed: the baseline and the candidate has no price" in err


def test_identical_runs_on_both_sides_are_no_evidence(tmp_path, capsys):
    write_side(tmp_path / "a", [100, 100, 100], "a")
    write_side(tmp_path / "b", [100.0001] * 3, "b")
    assert (
        main(
            ["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--fail-on", "slower", "--min-change", "5%"]
        )
        == 4
    )
    captured = capsys.readouterr()
    assert "**undecided**" in captured.out and "**faster**" not in captured.out  # it was faster, p = 0
    assert "the runs on both sides are identical, so their noise cannot be estimated" in captured.out
    assert "no run-to-run spread on either side" in captured.err


def test_a_pass_the_baselines_load_could_explain_is_undecided():
    metric = compare_stats.decide([100, 100.2, 99.8], [100.1, 99.9, 100.2], 0.05)
    busy = {"others_cpu_percent": 90.0, "load_per_cpu": 2.0, "cpu_mhz": None}
    calm = {"others_cpu_percent": 0.0, "load_per_cpu": 0.1, "cpu_mhz": None}
    comparison = {
        "metrics": {"images_per_second": metric},
        "baseline": {"load": busy},
        "candidate": {"load": calm},
    }
    status, why = compare_gate.judge(comparison, "slower")
    assert (
        status == "undecided" and "the baseline ran busier: its load could hide a change for the worse" in why
    )
    comparison["baseline"]["load"], comparison["candidate"]["load"] = calm, busy
    assert compare_gate.judge(comparison, "slower")[0] == "pass"  # a busier candidate that keeps up


# -- seeded simulations: how often the gate is wrong -------------------------------------------------------


def gate_outcomes(seed: int, trials: int, runs: int, sigma: float, true_ratio: float, margin: float) -> dict:
    """TRIALS comparisons of RUNS a side, log-normal noise SIGMA, the candidate TRUE_RATIO × the baseline:
    how many the `--fail-on slower` gate passed, failed and left undecided."""
    rng = random.Random(seed)
    counts = {"pass": 0, "fail": 0, "undecided": 0}
    for _ in range(trials):
        base = [100 * rng.lognormvariate(0, sigma) for _ in range(runs)]
        cand = [100 * true_ratio * rng.lognormvariate(0, sigma) for _ in range(runs)]
        metric = compare_stats.decide(base, cand, margin)
        comparison = {
            "metrics": {"images_per_second": metric},
            "baseline": {"load": QUIET},
            "candidate": {"load": QUIET},
        }
        counts[compare_gate.judge(comparison, "slower")[0]] += 1
    return counts


def test_seeded_at_the_margin_the_gate_passes_at_most_alpha():
    # The candidate exactly 5 % slower, the margin 5 %: every pass is a false pass. Two one-sided tests at
    # α = 0.05 keep that near 5 % (a binomial's 200 trials: ≤ 18 is within 3 standard deviations).
    found = gate_outcomes(seed=1, trials=200, runs=6, sigma=0.03, true_ratio=0.95, margin=0.05)
    assert found["pass"] <= 18, found


def test_seeded_an_underpowered_10_percent_slowdown_is_mostly_undecided_never_a_pass():
    # The issue's noise (σ 0.5) and 8 runs a side, a real 10 % slowdown, a 5 % margin: the old gate passed
    # every trial it did not call slower; this one may not pass a slowdown beyond the margin.
    found = gate_outcomes(seed=2, trials=150, runs=8, sigma=0.5, true_ratio=0.90, margin=0.05)
    assert found["undecided"] >= 135 and found["pass"] <= 8, found


def test_seeded_a_powered_10_percent_slowdown_fails_and_no_change_passes():
    slowed = gate_outcomes(seed=3, trials=100, runs=8, sigma=0.03, true_ratio=0.90, margin=0.05)
    assert slowed["fail"] >= 95 and slowed["pass"] == 0, slowed
    same = gate_outcomes(seed=4, trials=100, runs=8, sigma=0.02, true_ratio=1.0, margin=0.05)
    assert same["pass"] >= 90 and same["fail"] == 0, same
