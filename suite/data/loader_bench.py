"""The data loader measured on its own, with no model: the upper bound on any training throughput.

Same rules as a training run (suite/run_record/windows.py): warm-up batches excluded (worker start-up, first
reads), then timed windows of batches, images counted / window wall time, median and spread.

A window must last long enough to mean something: a cache serves a batch in well under a millisecond, and
a window of a few such batches measures the clock and the scheduler, not the loader. A window shorter than
MIN_WINDOW_S is measured again with more batches (grown from what the short one took) before any window
counts; the record says how many batches a window finally held and why.
"""

from __future__ import annotations

import math
import time

from suite.run_record.windows import spread_warnings, window_metrics

# A timed window shorter than this is noise (timer resolution, one scheduler tick of a busy 2-core host).
MIN_WINDOW_S = 0.05
# Growing stops here, whatever the loader's speed (a window of a million batches is a mistake, not rigour).
MAX_BATCHES_PER_WINDOW = 100_000


def batches_for(min_window_s: float, batches: int, elapsed_s: float) -> int:
    """Batches for a window of at least `min_window_s`, from `batches` having taken `elapsed_s` (with a
    margin of 2×, so that a window a little faster than the calibrating one is still over the line)."""
    if elapsed_s >= min_window_s:
        return batches
    per_batch = max(elapsed_s, 1e-9) / batches
    return min(MAX_BATCHES_PER_WINDOW, max(batches + 1, math.ceil(2 * min_window_s / per_batch)))


def measure_loader(
    source,
    batches: int = 20,
    windows: int = 3,
    warmup_batches: int = 2,
    synchronize=None,
    min_window_s: float = MIN_WINDOW_S,
) -> dict:
    """Pull batches from `source` (any iterable of (images, labels) batches: a DataSource's
    `host_batches()` for the loader alone, or the DataSource itself for batches on the device) and
    time it. `synchronize` (the backend's) is called at the window edges when batches go to a device.
    Returns the windows' rate fields (run_record/windows.window_metrics) plus first_batch_s (start-up:
    workers, first reads), the batches a window held (grown, if `batches` made windows shorter than
    `min_window_s`) and warnings."""
    synchronize = synchronize or (lambda: None)
    iterator = iter(source)
    first_batch_s = _warm_up(iterator, warmup_batches)

    def window(count: int) -> tuple[float, int]:
        return _window(iterator, count, synchronize)

    grown = _calibrated(window, batches, min_window_s)
    window_times, images_per_window = _timed_windows(window, grown, windows)
    figures = window_metrics(images_per_window, grown, window_times)
    metrics = figures.to_json()
    metrics["batch_time_s"] = metrics.pop("step_time_s")  # a loader has batches, not steps
    metrics.update(
        {
            "batches_per_window": grown,
            "batches_per_window_asked": batches,
            "min_window_s": min_window_s,
            "warmup_batches": warmup_batches,
            "first_batch_s": first_batch_s,
        }
    )
    warnings = spread_warnings(figures)
    if grown != batches:
        warnings.append(
            f"{batches} batches took under {min_window_s * 1000:.0f} ms: each window grown to {grown} batches"
        )
    metrics["warnings"] = warnings
    return metrics


def _warm_up(iterator, warmup_batches: int) -> float | None:
    """Pull the warm-up batches; the time the first took (start-up: workers, first reads)."""
    start = time.perf_counter()
    first_batch_s = None
    for index in range(warmup_batches):
        next(iterator)
        if index == 0:
            first_batch_s = time.perf_counter() - start
    return first_batch_s


def _window(iterator, count: int, synchronize) -> tuple[float, int]:
    """One timed window of `count` batches: its time and the images it held."""
    synchronize()  # window edge
    begin = time.perf_counter()
    images = 0
    for _ in range(count):
        images += len(next(iterator)[0])
    synchronize()  # window edge: every batch of the window is on the device
    return time.perf_counter() - begin, images


def _calibrated(window, batches: int, min_window_s: float) -> int:
    """Calibration: windows too short to mean anything are measured again with more batches; the short
    ones count as warm-up, never as results."""
    while True:
        elapsed, _ = window(batches)
        grown = batches_for(min_window_s, batches, elapsed)
        if grown == batches or batches >= MAX_BATCHES_PER_WINDOW:
            return batches
        batches = grown


def _timed_windows(window, batches: int, windows: int) -> tuple[list[float], int | None]:
    """The windows that count: each one's time, and the images every window held."""
    window_times, images_per_window = [], None
    for _ in range(windows):
        elapsed, images = window(batches)
        window_times.append(elapsed)
        if images_per_window not in (None, images):  # drop_last keeps batches equal; guard anyway
            raise RuntimeError("loader batches changed size between windows")
        images_per_window = images
    return window_times, images_per_window
