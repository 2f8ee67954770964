"""How throughput is computed, in one place.

Throughput of a window = images consumed in the window / the window's wall time, the device
synchronised at both edges. Windows are repeated; the record reports their median and spread.
Per-step rates are never averaged: a mean of rates over-weights fast steps.
"""

from __future__ import annotations

import math
import statistics

SECONDS_PER_HOUR = 3600.0

# hyperfine-style warnings: a wide spread, or a first window much slower than the rest.
WIDE_SPREAD_CV = 0.05
SLOW_FIRST_WINDOW = 0.80


def cv(values: list[float]) -> float | None:
    """Coefficient of variation, stdev ÷ mean; None for fewer than two values or a zero mean."""
    if len(values) < 2 or not statistics.fmean(values):
        return None
    return statistics.stdev(values) / statistics.fmean(values)


def relative_range(values: list[float]) -> float:
    """(max − min) ÷ median: how far apart the extremes are, relative to the typical value."""
    return (max(values) - min(values)) / statistics.median(values)


def median_interval(values: list[float], confidence: float = 0.95) -> tuple[float, float, float] | None:
    """A distribution-free interval of the median: the order statistics x(k) … x(n−k+1) with the largest k
    whose coverage 1 − 2·P(Binomial(n, ½) < k) is still ≥ `confidence` (the sign-test interval; e.g.
    Conover, Practical Nonparametric Statistics, 3rd ed., §3.2). Returns (low, high, coverage), or None
    when even min … max covers less (at 95 %: fewer than 6 values, since 1 − 2·½⁵ = 0.94)."""
    ordered, n = sorted(values), len(values)
    best = None
    for k in range(1, n // 2 + 1):
        below = sum(math.comb(n, i) for i in range(k)) / 2**n
        coverage = 1 - 2 * below
        if coverage < confidence:
            break
        best = (ordered[k - 1], ordered[n - k], coverage)
    return best


def window_throughputs(images_per_window: int, window_times_s: list[float]) -> list[float]:
    return [images_per_window / t for t in window_times_s]


def summarise_windows(images_per_window: int, steps_per_window: int, window_times_s: list[float]) -> dict:
    rates = window_throughputs(images_per_window, window_times_s)
    median = statistics.median(rates)
    stdev = statistics.stdev(rates) if len(rates) > 1 else 0.0
    return {
        "images_per_second": median,
        "images_per_hour": median * SECONDS_PER_HOUR,
        "images_per_second_mean": statistics.fmean(rates),
        "images_per_second_stdev": stdev,
        "images_per_second_min": min(rates),
        "images_per_second_max": max(rates),
        "images_per_second_cv": cv(rates) or 0.0,
        "step_time_s": statistics.median(window_times_s) / steps_per_window,
        "window_images_per_second": rates,
        "window_time_s": list(window_times_s),
        "images_per_window": images_per_window,
        "images_timed": images_per_window * len(window_times_s),
        "time_timed_s": sum(window_times_s),
    }


def spread_warnings(metrics: dict) -> list[str]:
    warnings = []
    rates = metrics["window_images_per_second"]
    if metrics["images_per_second_stdev"] > metrics["images_per_second"]:
        warnings.append(
            f"the spread between windows (σ {metrics['images_per_second_stdev']:,.1f} img/s) is larger than "
            f"the value ({metrics['images_per_second']:,.1f} img/s): this figure is noise, not a rate"
        )
    if metrics["images_per_second_cv"] > WIDE_SPREAD_CV:
        warnings.append(
            f"windows vary widely (cv {metrics['images_per_second_cv']:.1%}): results may be "
            "noisy; close other programs, or use more --steps / --windows"
        )
    if len(rates) > 1 and rates[0] < SLOW_FIRST_WINDOW * statistics.median(rates[1:]):
        warnings.append(
            "the first window was much slower than the rest: warm-up may be too short (consider --warmup N)"
        )
    return warnings
