"""The data loader measured on its own, with no model: the upper bound on any training throughput.

Same rules as a training run (suite/stats.py): warm-up batches excluded (worker start-up, first
reads), then timed windows of batches, images counted / window wall time, median and spread.
"""

from __future__ import annotations

import time

from suite import stats


def measure_loader(
    source, batches: int = 20, windows: int = 3, warmup_batches: int = 2, synchronize=None
) -> dict:
    """Pull batches from `source` (any iterable of (images, labels) batches: a DataSource's
    `host_batches()` for the loader alone, or the DataSource itself for batches on the device) and
    time it. `synchronize` (the backend's) is called at the window edges when batches go to a device.
    Returns stats.summarise_windows' metrics plus first_batch_s (start-up: workers, first reads)."""
    synchronize = synchronize or (lambda: None)
    iterator = iter(source)
    start = time.perf_counter()
    first_batch_s = None
    for index in range(warmup_batches):
        next(iterator)
        if index == 0:
            first_batch_s = time.perf_counter() - start
    window_times, images_per_window = [], None
    for _ in range(windows):
        synchronize()  # window edge
        begin = time.perf_counter()
        images = 0
        for _ in range(batches):
            images += len(next(iterator)[0])
        synchronize()  # window edge: every batch of the window is on the device
        window_times.append(time.perf_counter() - begin)
        if images_per_window not in (None, images):  # drop_last keeps batches equal; guard anyway
            raise RuntimeError("loader batches changed size between windows")
        images_per_window = images
    metrics = stats.summarise_windows(images_per_window, batches, window_times)
    metrics["batch_time_s"] = metrics.pop("step_time_s")  # a loader has batches, not steps
    metrics.update(
        {"batches_per_window": batches, "warmup_batches": warmup_batches, "first_batch_s": first_batch_s}
    )
    return metrics
