"""How throughput is computed, in one place: the arithmetic of rates.

Throughput of a window = images consumed in the window / the window's wall time, the device
synchronised at both edges. Windows are repeated; the record reports their median and spread (the
record's fields are built from these by suite/run_record/windows.py). Per-step rates are never averaged:
a mean of rates over-weights fast steps.
"""

from __future__ import annotations

import math
import statistics
import sys

SECONDS_PER_HOUR = 3600.0

# hyperfine-style warnings (run_record/windows.spread_warnings): a wide spread, or a first window much
# slower than the rest.
WIDE_SPREAD_CV = 0.05
SLOW_FIRST_WINDOW = 0.80


def _scaled(values: list[float]) -> list[float]:
    """`values` ÷ the largest magnitude: the ratios below do not change, and a sum of values near the
    largest float (1e308 + 1e308) no longer overflows."""
    top = max((abs(v) for v in values), default=0.0)
    return [v / top for v in values] if top else list(values)


def median(values) -> float:
    """statistics.median, but the middle two of an even count are averaged as a/2 + b/2 where a + b
    would overflow (two rates of 1.7e308 have a median; their sum is no float)."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    low, high = ordered[middle - 1], ordered[middle]
    mean = (low + high) / 2
    return mean if math.isfinite(mean) else low / 2 + high / 2


def cv(values: list[float]) -> float | None:
    """Coefficient of variation, stdev ÷ mean; None for fewer than two values or a zero mean."""
    values = _scaled(values)
    if len(values) < 2 or not statistics.fmean(values):
        return None
    return statistics.stdev(values) / statistics.fmean(values)


def relative_range(values: list[float]) -> float:
    """(max − min) ÷ median: how far apart the extremes are, relative to the typical value."""
    values = _scaled(values)
    return (max(values) - min(values)) / statistics.median(values)


# The fewest values whose min … max covers the median with ≥ 95 % (median_interval: 1 − 2·½⁶ = 0.969).
MIN_RUNS_FOR_INTERVAL = 6


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


# -- ratios of rates, in log space ------------------------------------------------------------------------
# A record's rate may be any finite number > 0 (the schema refuses the rest): 5e-324 img/h and 1e300 img/h
# both. Their quotient (1e624) is no float, and a rate per second of 5e-324 img/h underflows to 0 whose
# log is an error. Ratios and geometric means are therefore computed as differences and means of logs,
# and turned back into a number only where the number exists.

# exp(x) is a normal float (neither overflow nor a subnormal losing digits) for |x| below this.
LOG_REPRESENTABLE = math.log(sys.float_info.max) - 1.0
LOG_SECONDS_PER_HOUR = math.log(SECONDS_PER_HOUR)


def log_rate(rate: float) -> float:
    """The log of a rate > 0 (a ValueError naming it otherwise: the schema keeps such rates out)."""
    if not (isinstance(rate, (int, float)) and math.isfinite(rate) and rate > 0):
        raise ValueError(f"a rate must be a finite number > 0, got {rate!r}")
    return math.log(rate)


def from_log(value: float) -> float | None:
    """exp(value), or None where that is not a normal float (the ratio of 1e300 to 1e-300, say)."""
    return math.exp(value) if abs(value) < LOG_REPRESENTABLE else None


def geometric_mean_ratio(log_ratios: list[float]) -> float | None:
    """The geometric mean of ratios given by their logs; None for none, or past what a float holds."""
    return from_log(math.fsum(log_ratios) / len(log_ratios)) if log_ratios else None


def finite_or_none(value):
    """`value`, but None for a float that is no number (a figure computed from an extreme rate, such as
    the hours of an epoch at 5e-324 img/h): tables show "—", JSON null."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def quotient_text(high: float, low: float) -> str:
    """high ÷ low of two rates > 0, to 2 significant digits; from logs where the quotient is no float."""
    quotient = high / low
    return f"{quotient:.2g}" if math.isfinite(quotient) else format_log_ratio(log_rate(high) - log_rate(low))


def format_log_ratio(value: float, digits: int = 3) -> str:
    """A ratio given by its log, written as a number even where it is no float ("1.00e+624")."""
    ratio = from_log(value)
    if ratio is not None and 1e-4 <= ratio < 1e6:
        return f"{ratio:.{digits}f}"
    exponent = math.floor(value / math.log(10))
    mantissa = math.exp(value - exponent * math.log(10))
    if mantissa >= 9.995:  # rounding to 2 places would write 10.00
        mantissa, exponent = mantissa / 10, exponent + 1
    return f"{mantissa:.2f}e{exponent:+d}"
