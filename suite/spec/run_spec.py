"""RunSpec: a run as asked, in typed parts; and its one flat form, the record's `config`.

The record keeps a flat dict (field names as the command line's dests: `batch_size`, `hpu_mode`), in one
fixed order, so that records stay byte-for-byte what they have always been and old ones still read.
`FLAT` maps each flat name to its place in the spec; the command line, sweep and campaign files and
`--set` all name fields the flat way and build a spec through `RunSpec.from_flat`.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field

from suite.inputs.errors import UserError
from suite.spec.parts import Checks, Cost, CudaOptions, Data, HpuOptions, Launch, Schedule, Workload

# Flat name -> (part, attribute), in the order a record's config has always held them; part None: a
# field of RunSpec itself.
FLAT: dict[str, tuple[str | None, str]] = {
    "backend": (None, "backend"),
    "workload": ("workload", "name"),
    "batch_size": ("workload", "batch_size"),
    "precision": (None, "precision"),
    "warmup_steps": ("schedule", "warmup_steps"),
    "steps_per_window": ("schedule", "steps_per_window"),
    "windows": ("schedule", "windows"),
    "threads": (None, "threads"),
    "seed": ("workload", "seed"),
    "model_overrides": ("workload", "model_overrides"),
    "num_classes": ("workload", "num_classes"),
    "image_size": ("workload", "image_size"),
    "check_numerics": ("checks", "numerics"),
    "reference_backend": ("checks", "reference_backend"),
    "data": ("data", "source"),
    "workers": ("data", "workers"),
    "pin_memory": ("data", "pin_memory"),
    "prefetch": ("data", "prefetch"),
    "instance": ("cost", "instance"),
    "prices": ("cost", "prices"),
    "accelerators_used": ("cost", "accelerators_used"),
    "per_device": ("launch", "per_device"),
    "device_index": ("cuda", "device_index"),
    "tf32": ("cuda", "tf32"),
    "channels_last": ("cuda", "channels_last"),
    "compile": ("cuda", "compile"),
    "hpu_mode": ("hpu", "mode"),
    "hpu_fused": ("hpu", "fused"),
    "hpu_bf16_ops": ("hpu", "bf16_ops"),
    "hpu_fp32_ops": ("hpu", "fp32_ops"),
    "profile_dir": ("checks", "profile_dir"),
    "max_memory_bytes": ("checks", "max_memory_bytes"),
    "nproc": ("launch", "nproc"),
    "nnodes": ("launch", "nnodes"),
    "node_rank": ("launch", "node_rank"),
    "rdzv_endpoint": ("launch", "rdzv_endpoint"),
    "dist_timeout_s": ("launch", "dist_timeout_s"),
    "grad_accum": ("workload", "grad_accum"),
    "activation_checkpointing": ("workload", "activation_checkpointing"),
    "fsdp": ("launch", "fsdp"),
    "compile_mode": ("cuda", "compile_mode"),
}
# What the record's config holds after the spec's fields: what the launcher started, known only once the
# run is under way (suite.measurement.distributed.resolved_fields), with the values of a single process.
RECORD_ONLY: dict[str, object] = {"world_size": 1, "global_batch_size": None}


@dataclass(frozen=True)
class RunSpec:
    """What a run is asked to do. None: the default (the backend's precision, torch's thread count)."""

    backend: str = "auto"
    precision: str | None = None
    threads: int | None = None  # host threads for CPU compute
    workload: Workload = field(default_factory=Workload)
    schedule: Schedule = field(default_factory=Schedule)
    data: Data = field(default_factory=Data)
    cost: Cost = field(default_factory=Cost)
    checks: Checks = field(default_factory=Checks)
    launch: Launch = field(default_factory=Launch)
    cuda: CudaOptions = field(default_factory=CudaOptions)
    hpu: HpuOptions = field(default_factory=HpuOptions)

    @classmethod
    def from_flat(cls, values: dict) -> RunSpec:
        """A spec from flat field names (parsed options, a sweep point, a campaign run); every name must be
        one of FLAT's. None leaves a field at its default."""
        return cls().replace(**{name: value for name, value in values.items() if value is not None})

    def replace(self, **values) -> RunSpec:
        """A copy with flat fields replaced (`spec.replace(batch_size=8, tf32=False)`)."""
        unknown = sorted(set(values) - set(FLAT))
        if unknown:
            raise UserError(f"unknown run field {unknown[0]!r} (known: {', '.join(FLAT)})")
        own, parts = {}, {}
        for name, value in values.items():
            part, attribute = FLAT[name]
            if part is None:
                own[attribute] = value
            else:
                parts.setdefault(part, {})[attribute] = value
        for part, changes in parts.items():
            own[part] = dataclasses.replace(getattr(self, part), **changes)
        return dataclasses.replace(self, **own)

    def flat(self) -> dict:
        """{flat name: value} in the record's order."""
        return {
            name: getattr(self if part is None else getattr(self, part), attribute)
            for name, (part, attribute) in FLAT.items()
        }

    def to_record_config(self, **record_only) -> dict:
        """The record's `config`: the flat fields, then RECORD_ONLY's (given here, else a single process's)."""
        unknown = sorted(set(record_only) - set(RECORD_ONLY))
        if unknown:
            raise TypeError(f"not a record-only field: {unknown[0]}")
        return copy.deepcopy(self.flat()) | {**RECORD_ONLY, **record_only}  # the record shares no dict

    @classmethod
    def from_record_config(cls, config: dict) -> RunSpec:
        """The spec a record's `config` was run from; fields a record of another version lacks keep their
        default, and fields it has that this version does not know (or RECORD_ONLY's) are left out."""
        return cls().replace(**{name: value for name, value in config.items() if name in FLAT})
