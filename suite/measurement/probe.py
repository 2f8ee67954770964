"""The bottleneck probe of a real-data run: after its timed windows, the same model without the loader
(compute only) and the loader without the model, one window each, so the record can say which pipe is
the narrowest (suite.measurement.diagnose's rules). `suite diagnose` measures the same three in fresh processes.
"""

from __future__ import annotations

from time import perf_counter as clock

from suite.data.loader_bench import measure_loader


def compute_only(train_step, batch, backend, steps: int, images_per_step: int) -> float:
    """Images/s of `steps` steps on one batch already on the device: no loader, no copy."""
    train_step(batch)  # settle anything the switch of input might cost, outside the clock
    backend.synchronize()  # window edge
    start = clock()
    for _ in range(steps):
        train_step(batch)
    backend.synchronize()  # window edge
    return images_per_step * steps / (clock() - start)


def measure(train_step, data, batches, backend, steps: int, images_per_step: int) -> dict:
    """Compute-only and loader-only images/s, one window of `steps` each (after the timed windows)."""
    compute_ips = compute_only(train_step, next(batches), backend, steps, images_per_step)
    # The loader alone, batches left on the host: one warm-up batch (worker start-up) excluded.
    loader = measure_loader(data.host_batches(), batches=steps, windows=1, warmup_batches=1)
    return {"compute_images_per_second": compute_ips, "loader_images_per_second": loader["images_per_second"]}
