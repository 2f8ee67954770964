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
    num_classes: int | None = None  # None: the workload's own head (named models: 1000)
    image_size: int | None = None  # None: the workload's own size (named models: their published one)
    # The numerics check after the timed windows (suite.measurement.numerics); None: the same backend.
    check_numerics: bool = False
    reference_backend: str | None = None

    # -- data path ---------------------------------------------------------------------------------
    data: str = "synthetic"  # "synthetic", a folder of class sub-folders of images, or a prepared cache
    workers: int | None = None  # loader workers (None: 4 for images, capped at the cores; 1 for a cache)
    pin_memory: bool | None = None  # None: pin when the device is not the host
    prefetch: int | None = None  # batches each worker prepares ahead (None: 2 with workers)

    # -- where it ran (cost) -----------------------------------------------------------------------
    instance: str | None = None  # the cloud instance it ran on, a name in a price catalog
    prices: str | None = None  # the catalog that instance was checked against (name or file)
    accelerators_used: int | None = None  # of the instance's accelerators; None: one per process
    per_device: int | None = None  # independent copies run at once, one per device (`--per-device`)

    # -- cuda --------------------------------------------------------------------------------------
    device_index: int | None = None  # None: LOCAL_RANK (set by torchrun), else 0
    tf32: bool = False  # allow TF32 tensor-core math for fp32 matmuls and convolutions
    channels_last: bool = False  # NHWC memory format for the model (and 4-D inputs copied in)
    compile: bool = False  # torch.compile the model(s)

    # -- hpu ---------------------------------------------------------------------------------------
    hpu_mode: str | None = (
        None  # lazy | eager | compile; None: the environment's or the Habana release's default
    )
    hpu_fused: bool = True  # Habana's FusedAdamW / FusedSGD; False (--no-fused): torch.optim's
    hpu_bf16_ops: str | None = None  # op-list file: autocast's lower-precision list, or HMP's bf16 list
    hpu_fp32_ops: str | None = None  # op-list file: ops kept in fp32 (autocast or HMP)

    # -- profiling and diagnosis -------------------------------------------------------------------
    profile_dir: str | None = None  # torch.profiler traces go here; a profiled run's timings are perturbed
    # A memory ceiling for backends without device memory of their own (the CPU): peak resident memory
    # above what the process held at setup; going over it is an out-of-memory failure, as on a device.
    max_memory_bytes: int | None = None

    # -- distributed -------------------------------------------------------------------------------
    # Launch: processes on this node, nodes, this node's rank, rendezvous HOST:PORT (multi-node).
    nproc: int | None = None  # None: one process, no launcher
    nnodes: int | None = None
    node_rank: int | None = None
    rdzv_endpoint: str | None = None
    dist_timeout_s: float | None = None  # bound on any wait for another rank; None: the default
    # Resolved from the launcher's environment: what actually ran.
    world_size: int = 1
    global_batch_size: int | None = None  # batch_size (per process) x world_size

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def resolved(self, **values) -> RunConfig:
        """A copy with defaults filled in (the record stores what actually ran, not what was typed)."""
        return dataclasses.replace(self, **values)
