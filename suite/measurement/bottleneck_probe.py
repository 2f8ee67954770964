"""The bottleneck probe of a real-data run: after its timed windows, the same model without the loader
(compute only) and the loader without the model, so the record can say which pipe is the narrowest
(the rules of suite.diagnosis.rules). `suite diagnose` measures the same three in fresh processes.

One short window is not evidence: a 2-core host shared with anything else moves a 40 ms window by half.
Each probe is PROBE_WINDOWS windows, each grown until it lasts PROBE_MIN_WINDOW_S, and reports its spread,
so the verdict can tell rates that differ from rates that merely measured differently.
"""

from __future__ import annotations

from time import perf_counter as clock

from suite.data.loader_bench import batches_for, measure_loader
from suite.run_record.parts import Metrics
from suite.run_record.windows import window_metrics

PROBE_WINDOWS = 3
PROBE_MIN_WINDOW_S = 0.1


def compute_only(
    train_step,
    batch,
    backend,
    steps: int,
    images_per_step: int,
    windows: int = PROBE_WINDOWS,
    min_window_s: float = PROBE_MIN_WINDOW_S,
) -> Metrics:
    """Images/s of steps on one batch already on the device (no loader, no copy), in `windows` windows of
    at least `min_window_s` each: the windows' rate fields (windows.window_metrics)."""
    train_step(batch)  # settle anything the switch of input might cost, outside the clock

    def window(count: int) -> float:
        backend.synchronize()  # window edge
        start = clock()
        for _ in range(count):
            train_step(batch)
        backend.synchronize()  # window edge
        return clock() - start

    while True:  # calibration: a window too short to mean anything is measured again, longer
        grown = batches_for(min_window_s, steps, window(steps))
        if grown == steps:
            break
        steps = grown
    times = [window(steps) for _ in range(windows)]
    return window_metrics(images_per_step * steps, steps, times)


def measure(train_step, data, batches, backend, steps: int, images_per_step: int) -> dict:
    """Compute-only and loader-only images/s with their spread (after the timed windows)."""
    compute = compute_only(train_step, next(batches), backend, steps, images_per_step)
    # The loader alone, batches left on the host: one warm-up batch (worker start-up) excluded.
    loader = Metrics.from_json(
        measure_loader(
            data.host_batches(),
            batches=steps,
            windows=PROBE_WINDOWS,
            warmup_batches=1,
            min_window_s=PROBE_MIN_WINDOW_S,
        )
    )
    return {
        "compute_images_per_second": compute.images_per_second,
        "compute_cv": compute.images_per_second_cv,
        "compute_windows": compute.window_images_per_second,
        "compute_window_s": compute.window_time_s,
        "loader_images_per_second": loader.images_per_second,
        "loader_cv": loader.images_per_second_cv,
        "loader_windows": loader.window_images_per_second,
        "loader_window_s": loader.window_time_s,
    }
