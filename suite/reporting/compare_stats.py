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
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from suite import stats

MIN_RUNS = 3  # a side; below it the verdict is "too few runs"
ALPHA = 0.05  # two-sided; the interval shown is the matching 95% one
NO_DIFFERENCE = "no significant difference"
TOO_FEW = "too few runs"

# Multiple-comparison control: "auto" is Holm for a small family and Benjamini–Hochberg for a large one.
CORRECTIONS = ("auto", "holm", "bh", "none")
FAMILY_FOR_FDR = 20
CORRECTION_NAMES = {
    "holm": "Holm's step-down correction (family-wise error ≤ α)",
    "bh": "Benjamini–Hochberg correction (false-discovery rate ≤ α)",
    "none": "no multiple-comparison correction (each test at α on its own)",
}


def _t_two_sided_p(t: float, df: float) -> float:
    """P(|T| ≥ |t|) for Student's t with `df` degrees of freedom: the regularized incomplete beta
    I_{df/(df+t²)}(df/2, 1/2) (Abramowitz & Stegun 26.7.1), from mpmath (which torch already requires)."""
    import mpmath

    return float(mpmath.betainc(df / 2, 0.5, 0, df / (df + t * t), regularized=True))


def _t_density(t: float, df: float) -> float:
    """Student's t probability density."""
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return math.exp(log_norm - (df + 1) / 2 * math.log1p(t * t / df))


def _t_critical(df: float, alpha: float = ALPHA) -> float:
    """The t with P(|T| ≥ t) = alpha, by Newton's method from 0: P(|T| ≥ t) is decreasing and convex for
    t > 0 (its derivative is −2 × the density, which falls there), so the steps approach the root from
    below without overshooting; a handful reach it to 1e-12."""
    t = 0.0
    for _ in range(100):
        step = (_t_two_sided_p(t, df) - alpha) / (2 * _t_density(t, df))
        t += step
        if abs(step) < 1e-12 * max(1.0, t):
            break
    return t


@dataclass
class Welch:
    difference: float  # mean(candidate) − mean(baseline)
    ci_low: float
    ci_high: float
    p_value: float
    df: float | None  # None when neither side varies


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
    half = _t_critical(df, alpha) * se
    return Welch(difference, difference - half, difference + half, _t_two_sided_p(difference / se, df), df)


def verdict(log_ratio: float, p_value: float, min_change: float, words=("faster", "slower")) -> str:
    """The call on a ratio given by its log (a ratio of extreme rates may be no float)."""
    if p_value >= ALPHA:
        return NO_DIFFERENCE
    if abs(math.expm1(min(log_ratio, 1.0))) < min_change:  # past e, no --min-change could hold it
        return f"no change (< {min_change:.0%})"
    return words[0] if log_ratio > 0 else words[1]


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
    result = {
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
        "verdict": TOO_FEW,
    }
    if min(len(baseline), len(candidate)) < MIN_RUNS:
        return result
    test = welch(log_base, log_cand)
    result.update(
        ratio=stats.from_log(test.difference),
        log_ratio=test.difference,
        log_ci=[test.ci_low, test.ci_high],
        ci_low=stats.from_log(test.ci_low),
        ci_high=stats.from_log(test.ci_high),
        p_value=test.p_value,
        p_adjusted=test.p_value,
        verdict=verdict(test.difference, test.p_value, min_change, words),
    )
    return result


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
        metric["verdict"] = verdict(metric["log_ratio"], adjusted, min_change, words)
    return {"method": method, "name": CORRECTION_NAMES[method], "family": len(tested)}
