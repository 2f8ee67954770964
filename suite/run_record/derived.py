"""The figures a record derives from its other figures, checked on read: a record whose derived figure
disagrees with what it is derived from is refused (`schema.BadRecord`, naming the field, the figure it should
hold and the one it holds), and the report, the comparison and every other reader never see it. 10 img/s
beside 9.9e12 img/h is an edited or damaged record, and which of the two figures is the run's cannot be
told.

Each relation is checked only where the record holds every figure it needs (older records lack some), as
the suite derives it (`windows.window_metrics`, `measurement/flops.mfu_metrics`, `per_device.combine`):

    images_per_hour            images_per_second × 3600
    window_images_per_second   images_per_window ÷ window_time_s, window by window
    images_per_second          the median of window_images_per_second (a per-device run: the copies' sum)
    images_per_second_mean, _min, _max, _stdev, _cv      of window_images_per_second
    step_time_s                median(window_time_s) ÷ steps_per_window
    images_timed, time_timed_s images_per_window × the windows; the sum of window_time_s
    model_tflops_per_second    flops_per_image × images_per_second ÷ world_size ÷ 1e12 (per device)
    mfu                        model_tflops_per_second ÷ mfu_peak_tflops
    tokens_per_second, _hour, _min, _max, _stdev, _step      images_... × tokens_per_sample

and a record in tokens is a token workload's: it names the tokens a sample holds, and its workload section
(where it has one) neither trained on images of a size nor says another unit (an image record marked
`unit: tokens` went into the token table).

Figures per dollar are never stored in a record: the report derives them from the rate and a catalog's
price. Energy per image comes from telemetry counters and power samples and is not re-derived here.
"""

from __future__ import annotations

import math

from suite import stats
from suite.run_record.parts import Metrics


class Disagreement(ValueError):
    """A derived figure that is not what it is derived from (the schema refuses the record, naming it)."""

    def __init__(self, field: str, expected: str, value):
        super().__init__(field)
        self.field, self.expected, self.value = field, expected, value


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# Figures the suite writes agree with their sources to about 1e-15 (JSON keeps a float's digits); a
# person who rounds an hourly rate to whole images stays within this too.
RELATIVE = 1e-6


def _number(mapping: dict, name: str) -> float | None:
    value = mapping.get(name)
    return float(value) if _is_number(value) else None


def _figure(value) -> float | None:
    """A figure of the record's metrics (a number or null: the schema has checked its type)."""
    return float(value) if _is_number(value) else None


def _rates(values) -> list | None:
    return values if isinstance(values, list) and values else None


def _agree(field: str, held: float | None, expected: float | None, how: str, floor: float = 0.0) -> None:
    """Disagreement unless `held` is `expected` to RELATIVE (or within `floor`, for spreads near zero)."""
    if held is None or expected is None:
        return
    if math.isfinite(expected) and math.isclose(held, expected, rel_tol=RELATIVE, abs_tol=floor):
        return
    raise Disagreement(field, f"{how} ({expected:.6g})" if math.isfinite(expected) else how, held)


def _spread(values: list[float]) -> tuple[float, float]:
    """Mean and sample standard deviation of `values` (two or more), scaled by the largest so that sums
    of rates near the largest float do not overflow."""
    top = max(values) or 1.0
    scaled = [v / top for v in values]
    mean = math.fsum(scaled) / len(scaled)
    variance = math.fsum((v - mean) ** 2 for v in scaled) / (len(scaled) - 1)
    return mean * top, math.sqrt(variance) * top


def _check_windows(metrics: Metrics, config: dict) -> None:
    """The figures derived from the windows: their times and counts, then the rates' summary."""
    rates = _rates(metrics.window_images_per_second)
    times = metrics.window_time_s
    if isinstance(times, list) and times:
        _check_window_count(rates, times)
        _check_per_window(metrics, rates, times)
        _check_timed_totals(metrics, config, times)
    if rates:
        _check_rate_summary(metrics, rates)
        _check_rate_spread(metrics, rates)


def _check_window_count(rates: list | None, times: list) -> None:
    if rates and len(rates) != len(times):
        raise Disagreement(
            "metrics.window_images_per_second", f"one rate per window ({len(times)})", f"{len(rates)}"
        )


def _check_per_window(metrics: Metrics, rates: list | None, times: list) -> None:
    """Each window's rate from its images and time, and the images all windows timed (where the record
    holds the images a window counts)."""
    per_window = _figure(metrics.images_per_window)
    if per_window is None:
        return
    for i, seconds in enumerate(times):
        if seconds == 0:
            raise Disagreement(f"metrics.window_time_s[{i}]", "> 0 (a window's images took time)", 0)
        if rates:
            _agree(
                f"metrics.window_images_per_second[{i}]",
                rates[i],
                per_window / seconds,
                "images_per_window ÷ window_time_s",
            )
    _agree(
        "metrics.images_timed",
        _figure(metrics.images_timed),
        per_window * len(times),
        "images_per_window × windows",
    )


def _check_timed_totals(metrics: Metrics, config: dict, times: list) -> None:
    """The time all windows took and the time of one step."""
    top = max(times)
    _agree(
        "metrics.time_timed_s",
        _figure(metrics.time_timed_s),
        math.fsum(t / top for t in times) * top if top else 0.0,
        "the sum of window_time_s",
    )
    steps = _figure(metrics.steps_per_window) or _number(config, "steps_per_window")
    if steps:
        _agree(
            "metrics.step_time_s",
            _figure(metrics.step_time_s),
            stats.median(times) / steps,
            "median(window_time_s) ÷ steps_per_window",
        )


def _check_rate_summary(metrics: Metrics, rates: list) -> None:
    """The run's rate (the windows' median) and the least and most of them."""
    _agree(
        "metrics.images_per_second",
        _figure(metrics.images_per_second),
        stats.median(rates),
        "the median of window_images_per_second",
    )
    _agree(
        "metrics.images_per_second_min",
        _figure(metrics.images_per_second_min),
        min(rates),
        "the least of window_images_per_second",
    )
    _agree(
        "metrics.images_per_second_max",
        _figure(metrics.images_per_second_max),
        max(rates),
        "the most of window_images_per_second",
    )


def _check_rate_spread(metrics: Metrics, rates: list) -> None:
    """The windows' mean rate, standard deviation and coefficient of variation."""
    if len(rates) == 1:
        mean, stdev = rates[0], 0.0
    else:
        mean, stdev = _spread(rates)
    scale = max(rates)
    _agree(
        "metrics.images_per_second_mean",
        _figure(metrics.images_per_second_mean),
        mean,
        "the mean of window_images_per_second",
    )
    _agree(
        "metrics.images_per_second_stdev",
        _figure(metrics.images_per_second_stdev),
        stdev,
        "the standard deviation of window_images_per_second",
        floor=scale * 1e-9,
    )
    _agree(
        "metrics.images_per_second_cv",
        _figure(metrics.images_per_second_cv),
        stdev / mean if mean else 0.0,
        "images_per_second_stdev ÷ images_per_second_mean",
        floor=1e-9,
    )


def _check_efficiency(metrics: Metrics, config: dict) -> None:
    rate = _figure(metrics.images_per_second)
    flops = _figure(metrics.flops_per_image)
    peak = _figure(metrics.mfu_peak_tflops)
    if metrics.mfu is not None and (flops is None or peak is None):
        raise Disagreement("metrics.mfu", "null where flops_per_image or mfu_peak_tflops is", metrics.mfu)
    if rate is None or flops is None:
        return
    tflops = flops * (rate / (_number(config, "world_size") or 1)) / 1e12
    _agree(
        "metrics.model_tflops_per_second",
        _figure(metrics.model_tflops_per_second),
        tflops,
        "flops_per_image × images_per_second per device ÷ 1e12",
    )
    if peak:
        _agree(
            "metrics.mfu", _figure(metrics.mfu), tflops / peak, "model_tflops_per_second ÷ mfu_peak_tflops"
        )


def _check_per_device(record: dict, metrics: Metrics) -> None:
    rates = metrics.images_per_second_per_device
    if not (isinstance(rates, list) and rates and all(_is_number(r) for r in rates)):
        return
    top = max(rates) or 1.0
    total = math.fsum(r / top for r in rates) * top
    _agree(
        "metrics.images_per_second",
        _figure(metrics.images_per_second),
        total,
        "the sum of images_per_second_per_device",
    )
    section = record.get("per_device")
    if isinstance(section, dict):
        _agree(
            "per_device.images_per_second_sum",
            _number(section, "images_per_second_sum"),
            total,
            "the sum of the copies' images_per_second",
        )


def check_derived(record: dict) -> None:
    """Disagreement naming the first derived figure of `record` (checked by the schema for types and ranges
    already) that disagrees with the figures it is derived from."""
    metrics = Metrics.from_json(record.get("metrics") or {})
    config = record.get("config") or {}
    rate = _figure(metrics.images_per_second)
    _agree(
        "metrics.images_per_hour",
        _figure(metrics.images_per_hour),
        None if rate is None else rate * stats.SECONDS_PER_HOUR,
        "images_per_second × 3600",
        floor=1e-300,  # a rate so small that × 3600 lands among the subnormals keeps few digits
    )
    _check_windows(metrics, config)
    _check_per_device(record, metrics)
    _check_efficiency(metrics, config)
    _check_unit(record, metrics)


def _check_unit(record: dict, metrics: Metrics) -> None:
    """The unit the figures are counted in agrees with the workload that ran (suite/measurement/units.py)."""
    workload = record.get("workload") if isinstance(record.get("workload"), dict) else {}
    said = workload.get("unit")  # a token workload's section says it; an image workload's says none
    if metrics.unit is None:
        if said not in (None, "images") and metrics.images_per_second is not None:
            raise Disagreement("metrics.unit", f"{said}, as workload.unit says", None)
        return
    if said is not None and metrics.unit != said:
        raise Disagreement(
            "metrics.unit", f"{said}, the unit of the workload that ran (workload.unit)", metrics.unit
        )
    if metrics.unit != "tokens":
        return
    if _number(workload, "image_size"):  # what a token workload never has: it trained on images
        raise Disagreement(
            "metrics.unit", f"images, for a workload of {workload['image_size']} px images", metrics.unit
        )
    per_sample = _figure(metrics.tokens_per_sample)
    if per_sample is None:
        raise Disagreement(
            "metrics.tokens_per_sample", "the tokens one sample holds (the unit is tokens)", None
        )
    _agree(
        "workload.tokens_per_sample",
        _number(workload, "tokens_per_sample"),
        per_sample,
        "metrics.tokens_per_sample",
    )
    for name in (
        "per_second",
        "per_hour",
        "per_second_min",
        "per_second_max",
        "per_second_stdev",
        "per_step",
    ):
        images = _figure(getattr(metrics, f"images_{name}"))
        _agree(
            f"metrics.tokens_{name}",
            _figure(getattr(metrics, f"tokens_{name}")),
            None if images is None else images * per_sample,
            f"images_{name} × tokens_per_sample",
            floor=1e-9,
        )
