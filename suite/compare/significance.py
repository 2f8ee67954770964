"""The statistics of `suite compare`: Welch's t-test and interval on log throughput, one metric's verdict,
and the control of the whole family of tests one comparison makes.

Welch's t-test (unequal variances; B. L. Welch, Biometrika 34, 1947) on log throughput, because a
speed-up is a ratio and because, with the few runs a benchmark affords, an exact rank test cannot decide
at all: with 3 runs a side the smallest two-sided p-value Mann-Whitney U can reach is 2 ÷ C(6, 3) = 0.1
(asv's `statistics.is_different` falls back to interval overlap for the same reason).

One comparison tests every matched configuration and metric at once, and at α = 0.05 twenty tests of
pure noise give at least one "faster" or "slower" 64 % of the time. The family is controlled: Holm's
step-down procedure (S. Holm, Scand. J. Statist. 6, 1979) keeps the chance of any false verdict at α;
from FAMILY_FOR_FDR tests on, Benjamini–Hochberg (J. R. Statist. Soc. B 57, 1995) keeps the expected
share of false verdicts among the verdicts at α instead, which still finds real changes in a sweep of
hundreds. Under pure noise both keep the chance of any false verdict at α.

"Not significant" is not "the same": with few, noisy runs a real 10 % slowdown is not significant either.
Each metric therefore also says what the data could have seen and what they rule out:

    detectable   the smallest change the test would find with POWER (80 %) at α, from the standard error
                 and Welch's degrees of freedom: (t(1 − α/2) + t(POWER)) × se in log throughput (the
                 usual power approximation, J. Cohen, Statistical Power Analysis for the Behavioral
                 Sciences, 2nd ed. 1988, ch. 2, with t for z);
    runs needed  a side, to detect --min-change with that power at the runs' own spread: n = 2 (t(1 − α/2)
                 + t(POWER))² s² ÷ δ², t at 2n − 2 degrees of freedom, δ = log(1 + min-change);
    equivalence  two one-sided tests (D. J. Schuirmann, J. Pharmacokinet. Biopharm. 15(6), 657–680, 1987;
                 statsmodels' `ttost_ind(..., usevar="unequal")`): the ratio lies within
                 (1 − min-change, 1 + min-change) when both one-sided tests reject at α — its 90 %
                 interval inside the margin; and its lower half alone (`p_not_worse`: the data rule out
                 a change for the worse beyond the margin), which is what a `--fail-on` gate asks.

A verdict is faster/slower (the corrected p < α and the ratio at least --min-change from 1), no change
(< min-change) where the equivalence test holds, and otherwise `undecided`. Runs that show no spread at all
(identical figures) cannot estimate their own noise: no test is made and the verdict is `undecided`.
"""

from __future__ import annotations

import functools
import math
import statistics
from dataclasses import dataclass

from suite import stats

MIN_RUNS = 3  # a side; below it the verdict is "too few runs"
ALPHA = 0.05  # two-sided; the interval shown is the matching 95% one
POWER = 0.80  # for the smallest detectable change and the runs needed
TOO_FEW = "too few runs"
# Neither faster/slower nor shown to be within --min-change: the data cannot decide. (Earlier versions
# said "no significant difference", which reads as "the same speed".)
UNDECIDED = "undecided"
MOST_RUNS_NEEDED = 10**6  # past this, "runs needed" is given as this many

# Multiple-comparison control: "auto" is Holm for a small family and Benjamini–Hochberg for a large one.
CORRECTIONS = ("auto", "holm", "bh", "none")
FAMILY_FOR_FDR = 20
CORRECTION_NAMES = {
    "holm": "Holm's step-down correction (family-wise error ≤ α)",
    "bh": "Benjamini–Hochberg correction (false-discovery rate ≤ α)",
    "none": "no multiple-comparison correction (each test at α on its own)",
}


_TINY = 1e-300  # keeps the continued fraction's denominators off zero (Numerical Recipes' FPMIN)


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (Abramowitz & Stegun 26.5.8), by the
    modified Lentz method (Numerical Recipes, 3rd ed., §6.4, `betacf`)."""
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 1000):
        for numerator in (
            m * (b - m) * x / ((a - 1 + 2 * m) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 1 + 2 * m)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            h *= d * c
        if abs(d * c - 1.0) < 1e-16:
            break
    return h


def betainc(a: float, b: float, x: float, y: float) -> float:
    """The regularized incomplete beta function I_x(a, b), with y = 1 − x given exactly by the caller
    (1 − x in floats loses the digits of a small y). The fraction converges fast for x below
    (a + 1) ÷ (a + b + 2); above it I_x(a, b) = 1 − I_y(b, a). Checked against mpmath's arbitrary-precision
    `betainc` in the tests."""
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1.0 - betainc(b, a, y, x)
    log_front = a * math.log(x) + b * math.log(y) + math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    return math.exp(log_front) * _beta_fraction(a, b, x) / a


def _t_two_sided_p(t: float, df: float) -> float:
    """P(|T| ≥ |t|) for Student's t with `df` degrees of freedom: the regularized incomplete beta
    I_{df/(df+t²)}(df/2, 1/2) (Abramowitz & Stegun 26.7.1)."""
    square = t * t
    if square == math.inf:
        return 0.0
    return betainc(df / 2, 0.5, df / (df + square), square / (df + square))


def _t_density(t: float, df: float) -> float:
    """Student's t probability density."""
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return math.exp(log_norm - (df + 1) / 2 * math.log1p(t * t / df))


def _t_critical(df: float, alpha: float = ALPHA) -> float:
    """The t with P(|T| ≥ t) = alpha, by Newton's method from the normal distribution's quantile, which
    lies below it (t's tails are heavier): P(|T| ≥ t) is decreasing and convex for t > 0 (its derivative is
    −2 × the density, which falls there), so the steps approach the root from below without overshooting;
    a few reach it to 1e-12."""
    t = statistics.NormalDist().inv_cdf(1 - alpha / 2)
    for _ in range(100):
        step = (_t_two_sided_p(t, df) - alpha) / (2 * _t_density(t, df))
        t += step
        if abs(step) < 1e-12 * max(1.0, t):
            break
    return t


def _t_upper_tail(t: float, df: float) -> float:
    """P(T ≥ t), one-sided."""
    half = _t_two_sided_p(t, df) / 2
    return half if t >= 0 else 1 - half


@functools.lru_cache(maxsize=4096)
def _t_critical_cached(df: float, alpha: float) -> float:
    return _t_critical(df, alpha)


@dataclass
class Welch:
    difference: float  # mean(candidate) − mean(baseline)
    ci_low: float
    ci_high: float
    p_value: float
    df: float | None  # None when neither side varies
    se: float = 0.0  # the standard error of the difference
    t_critical: float | None = None  # the t of the interval (1 − α/2 quantile at df)


def welch(baseline: list[float], candidate: list[float], alpha: float = ALPHA) -> Welch:
    """Welch's unequal-variance t-test and interval for mean(candidate) − mean(baseline)."""
    na, nb = len(baseline), len(candidate)
    difference = statistics.fmean(candidate) - statistics.fmean(baseline)
    va, vb = statistics.variance(baseline) / na, statistics.variance(candidate) / nb
    se = math.sqrt(va + vb)
    if se == 0:  # no spread at all: any difference is certain, none is none
        return Welch(difference, difference, difference, 0.0 if difference else 1.0, None)
    df = (va + vb) ** 2 / (va**2 / (na - 1) + vb**2 / (nb - 1))  # Welch–Satterthwaite
    df = min(df, 1000.0)  # past this t is the normal distribution (to 0.1%), and the series converge
    critical = _t_critical(df, alpha)
    half = critical * se
    p_value = _t_two_sided_p(difference / se, df)
    return Welch(difference, difference - half, difference + half, p_value, df, se, critical)


def no_change(min_change: float) -> str:
    return f"no change (< {min_change:.0%})"


def verdict(metric: dict, p_value: float, min_change: float, words=("faster", "slower")) -> str:
    """The call on one decided METRIC (its log ratio, its equivalence test) given the p-value that
    decides a difference (the family-corrected one)."""
    if metric.get("se_log") == 0:
        return UNDECIDED  # no spread on either side: the noise is unknown, no test can be made
    log_ratio = metric["log_ratio"]
    if p_value < ALPHA and abs(math.expm1(min(log_ratio, 1.0))) >= min_change:  # past e: any margin
        return words[0] if log_ratio > 0 else words[1]
    p_equivalent = metric.get("p_equivalent")
    if p_equivalent is not None and p_equivalent < ALPHA:
        return no_change(min_change)
    return UNDECIDED


def margin(min_change: float) -> tuple[float, float]:
    """--min-change as bounds on the log ratio: (log(1 − m), log(1 + m))."""
    return math.log1p(-min_change), math.log1p(min_change)


def equivalence(test: Welch, min_change: float) -> dict:
    """Schuirmann's two one-sided tests of the log ratio against the margin (1 − m, 1 + m), on Welch's
    standard error and degrees of freedom: `p_not_worse` rejects a change for the worse beyond the margin
    (log ratio ≤ log(1 − m)), `p_not_better` one for the better (≥ log(1 + m)); `p_equivalent` is the
    larger (None without a margin: nothing is equivalent within 0 %). Also the 90 % interval (1 − 2α)
    whose lying inside the margin is the same equivalence test."""
    low, high = margin(min_change)
    p_not_worse = _t_upper_tail((test.difference - low) / test.se, test.df)
    p_not_better = _t_upper_tail((high - test.difference) / test.se, test.df)
    half = _t_critical_cached(round(test.df, 6), 2 * ALPHA) * test.se
    return {
        "p_not_worse": p_not_worse,
        "p_not_better": p_not_better,
        "p_equivalent": max(p_not_worse, p_not_better) if min_change > 0 else None,
        "log_ci90": [test.difference - half, test.difference + half],
    }


def detectable(test: Welch) -> float:
    """The smallest change in log throughput the test finds with POWER at α: (t(1 − α/2) + t(POWER)) × se."""
    power_t = _t_critical_cached(round(test.df, 6), 2 * (1 - POWER))
    return (test.t_critical + power_t) * test.se


def detectable_range(metric: dict) -> str:
    """The ratios these runs could tell from 1 (at POWER): `×0.453 … ×2.21`; `—` where none was tested."""
    change = metric.get("detectable_log")
    if change is None:
        return "—"
    return f"×{stats.format_log_ratio(-change)} … ×{stats.format_log_ratio(change)}"


def runs_needed(log_base: list[float], log_cand: list[float], min_change: float) -> int | None:
    """Runs a side to detect a change of MIN_CHANGE with POWER at α, at these runs' own spread (their
    variances pooled on the log scale); None without a margin or a spread."""
    variance = (statistics.variance(log_base) + statistics.variance(log_cand)) / 2
    if min_change <= 0 or variance <= 0:
        return None
    delta = math.log1p(min_change)  # the nearer of the margin's two bounds on the log scale
    z = statistics.NormalDist().inv_cdf(1 - ALPHA / 2) + statistics.NormalDist().inv_cdf(POWER)
    n = 2 * z * z * variance / (delta * delta)
    for _ in range(20):  # with t for z at 2n − 2 degrees of freedom: a few rounds settle it
        if n >= MOST_RUNS_NEEDED:
            return MOST_RUNS_NEEDED
        df = float(max(2 * math.ceil(n) - 2, 1))
        t = _t_critical_cached(df, ALPHA) + _t_critical_cached(df, 2 * (1 - POWER))
        updated = 2 * t * t * variance / (delta * delta)
        if math.ceil(updated) == math.ceil(n):
            break
        n = updated
    return max(MIN_RUNS, min(MOST_RUNS_NEEDED, math.ceil(n)))


def _median(values: list[float], logs: list[float]) -> float | None:
    """The median of the values; from their logs where a value is no float (a rate of 5e-324 img/h is
    0.0 img/s)."""
    if not values:
        return None
    if all(0 < v < math.inf for v in values):
        return stats.median(values)
    return stats.from_log(statistics.median(logs))


def decide(
    baseline: list[float],
    candidate: list[float],
    min_change: float = 0.0,
    words=("faster", "slower"),
    logs: tuple[list[float], list[float]] | None = None,
) -> dict:
    """One metric of one matched pair, tested alone: medians, the ratio with its interval, p and the
    verdict (`correct` later re-decides it within its family). The test and the ratio are computed on
    the values' logs (`logs`, or taken here), so that no ratio of rates overflows: `log_ratio` always
    holds it; `ratio` and its interval are None where they are no float."""
    log_base, log_cand = logs or (
        [stats.log_rate(x) for x in baseline],
        [stats.log_rate(x) for x in candidate],
    )
    result = _undecided(baseline, candidate, (log_base, log_cand), min_change)
    if min(len(baseline), len(candidate)) < MIN_RUNS:
        return result
    test = welch(log_base, log_cand)
    result.update(_tested(test))
    if test.se > 0:
        change = detectable(test)
        result.update(
            equivalence(test, min_change),
            detectable_log=change,
            detectable=math.expm1(min(change, 700.0)),
            runs_needed=runs_needed(log_base, log_cand, min_change),
        )
    result["verdict"] = verdict(result, test.p_value, min_change, words)
    return result


def _undecided(baseline: list[float], candidate: list[float], logs: tuple, min_change: float) -> dict:
    """Every field of a decision, in order: the medians and run counts filled, the test's still empty,
    the verdict too few runs (what stays when either side has under MIN_RUNS)."""
    log_base, log_cand = logs
    return {
        "baseline_median": _median(baseline, log_base),
        "candidate_median": _median(candidate, log_cand),
        "baseline_runs": len(baseline),
        "candidate_runs": len(candidate),
        "ratio": None,
        "log_ratio": None,
        "log_ci": None,
        "ci_low": None,
        "ci_high": None,
        "p_value": None,
        "p_adjusted": None,
        "min_change": min_change,
        "se_log": None,
        "df": None,
        "p_not_worse": None,
        "p_not_better": None,
        "p_equivalent": None,
        "log_ci90": None,
        "detectable_log": None,
        "detectable": None,
        "runs_needed": None,
        "verdict": TOO_FEW,
    }


def _tested(test) -> dict:
    """Welch's test on the logs as a decision's fields: the ratio (from its log), its interval and p."""
    return {
        "ratio": stats.from_log(test.difference),
        "log_ratio": test.difference,
        "log_ci": [test.ci_low, test.ci_high],
        "ci_low": stats.from_log(test.ci_low),
        "ci_high": stats.from_log(test.ci_high),
        "p_value": test.p_value,
        "p_adjusted": test.p_value,
        "se_log": test.se,
        "df": test.df,
    }


# -- the family ---------------------------------------------------------------------------------------


def holm(p_values: list[float]) -> list[float]:
    """Holm's adjusted p-values: the i-th smallest times (m − i + 1), made non-decreasing, capped at 1."""
    m = len(p_values)
    adjusted, running = [0.0] * m, 0.0
    for rank, index in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def benjamini_hochberg(p_values: list[float]) -> list[float]:
    """Benjamini–Hochberg adjusted p-values: the i-th smallest times m ÷ i, made non-decreasing from the
    largest down, capped at 1."""
    m = len(p_values)
    adjusted, running = [0.0] * m, 1.0
    for rank, index in reversed(list(enumerate(sorted(range(m), key=lambda i: p_values[i]), start=1))):
        running = min(running, m * p_values[index] / rank)
        adjusted[index] = running
    return adjusted


def chosen_correction(correction: str, family: int) -> str:
    if correction == "auto":
        return "bh" if family >= FAMILY_FOR_FDR else "holm"
    return correction


def correct(tests: list[tuple[dict, float, tuple[str, str]]], correction: str = "auto") -> dict:
    """Re-decide every tested metric of one comparison within their family. `tests` holds each decided
    metric with its --min-change and verdict words; their p_adjusted and verdict are updated in place.
    Returns {"method", "name", "family"} for the output to say which control was used."""
    tested = [t for t in tests if t[0]["p_value"] is not None]
    method = chosen_correction(correction, len(tested))
    adjust = {"holm": holm, "bh": benjamini_hochberg}.get(method, lambda ps: list(ps))
    for (metric, min_change, words), adjusted in zip(tested, adjust([t[0]["p_value"] for t in tested])):
        metric["p_adjusted"] = adjusted
        metric["verdict"] = verdict(metric, adjusted, min_change, words)
    return {"method": method, "name": CORRECTION_NAMES[method], "family": len(tested)}
