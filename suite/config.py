"""What a run is asked to do: one flat, JSON-friendly record of every knob that can change a number."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field


@dataclass
class RunConfig:
    backend: str = "auto"
    workload: str = "dcgan64"
    batch_size: int | None = None  # per process; None: the backend's default for the workload
    precision: str | None = None  # None: the backend's default
    warmup_steps: int | None = None  # None: the backend's default schedule
    steps_per_window: int | None = None
    windows: int | None = None
    threads: int | None = None  # host threads for CPU compute; None: torch's default
    seed: int = 0
    # Architecture overrides for a workload (e.g. {"ngf": 8} for tiny test models); recorded as given.
    model_overrides: dict = field(default_factory=dict)

    # -- data path ---------------------------------------------------------------------------------
    data: str = "synthetic"  # "synthetic", a folder of class sub-folders of images, or a prepared cache
    workers: int | None = None  # loader workers (None: 4 for images, capped at the cores; 1 for a cache)
    pin_memory: bool | None = None  # None: pin when the device is not the host
    prefetch: int | None = None  # batches each worker prepares ahead (None: 2 with workers)

    # -- where it ran (cost) -----------------------------------------------------------------------

    # -- cuda --------------------------------------------------------------------------------------

    # -- hpu ---------------------------------------------------------------------------------------

    # -- profiling and diagnosis -------------------------------------------------------------------
    profile_dir: str | None = None  # torch.profiler traces go here; a profiled run's timings are perturbed
    # A memory ceiling for backends without device memory of their own (the CPU): peak resident memory
    # above what the process held at setup; going over it is an out-of-memory failure, as on a device.
    max_memory_bytes: int | None = None

    # -- distributed -------------------------------------------------------------------------------

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def resolved(self, **values) -> RunConfig:
        """A copy with defaults filled in (the record stores what actually ran, not what was typed)."""
        return dataclasses.replace(self, **values)
