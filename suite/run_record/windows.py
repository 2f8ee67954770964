"""The figures of timed windows, as the record holds them: the one constructor of a run's (or a loader's,
or a probe's) rate fields, and the warnings their spread calls for.

A window's rate is the images it consumed ÷ its wall time, the device synchronised at both edges. Windows
are repeated; the record keeps their median and spread. Per-step rates are never averaged: a mean of
rates over-weights fast steps. The arithmetic is suite/stats.py's; the field names are `Metrics`'.
"""

from __future__ import annotations

import statistics

from suite import stats
from suite.run_record.parts import Metrics


def window_metrics(images_per_window: int, steps_per_window: int, window_times_s: list[float]) -> Metrics:
    """The rate fields of `Metrics` from the windows' wall times (each window held `images_per_window`)."""
    rates = stats.window_throughputs(images_per_window, window_times_s)
    median = statistics.median(rates)
    # Built in code: its JSON holds these fields in Metrics' declared order, the order records have had.
    return Metrics(
        images_per_second=median,
        images_per_hour=median * stats.SECONDS_PER_HOUR,
        images_per_second_mean=statistics.fmean(rates),
        images_per_second_stdev=statistics.stdev(rates) if len(rates) > 1 else 0.0,
        images_per_second_min=min(rates),
        images_per_second_max=max(rates),
        images_per_second_cv=stats.cv(rates) or 0.0,
        step_time_s=statistics.median(window_times_s) / steps_per_window,
        window_images_per_second=rates,
        window_time_s=list(window_times_s),
        images_per_window=images_per_window,
        images_timed=images_per_window * len(window_times_s),
        time_timed_s=sum(window_times_s),
    )


def spread_warnings(metrics: Metrics) -> list[str]:
    """hyperfine-style warnings: a spread wider than the rate, a wide spread, a slow first window."""
    warnings = []
    rate, stdev, rates = (
        metrics.images_per_second,
        metrics.images_per_second_stdev,
        metrics.window_images_per_second,
    )
    if stdev > rate:
        warnings.append(
            f"the spread between windows (σ {stdev:,.1f} img/s) is larger than "
            f"the value ({rate:,.1f} img/s): this figure is noise, not a rate"
        )
    if metrics.images_per_second_cv > stats.WIDE_SPREAD_CV:
        warnings.append(
            f"windows vary widely (cv {metrics.images_per_second_cv:.1%}): results may be "
            "noisy; close other programs, or use more --steps / --windows"
        )
    if len(rates) > 1 and rates[0] < stats.SLOW_FIRST_WINDOW * statistics.median(rates[1:]):
        warnings.append(
            "the first window was much slower than the rest: warm-up may be too short (consider --warmup N)"
        )
    return warnings
