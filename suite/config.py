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
    data: str = "synthetic"

    # -- where it ran (cost) -----------------------------------------------------------------------

    # -- cuda --------------------------------------------------------------------------------------

    # -- hpu ---------------------------------------------------------------------------------------

    # -- profiling and diagnosis -------------------------------------------------------------------

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
