"""What a run is asked to do: one typed, frozen description (RunSpec), the record's flat `config` made from
it and read back, and its JSON form for `suite run --spec`."""

from suite.spec.parts import (
    MAX_ACCELERATORS_USED,
    MAX_GRAD_ACCUM,
    MAX_SEED,
    Checks,
    Cost,
    CudaOptions,
    Data,
    HpuOptions,
    Launch,
    Schedule,
    Workload,
)
from suite.spec.run_spec import RECORD_ONLY, RunSpec

__all__ = [
    "MAX_ACCELERATORS_USED",
    "MAX_GRAD_ACCUM",
    "MAX_SEED",
    "RECORD_ONLY",
    "Checks",
    "Cost",
    "CudaOptions",
    "Data",
    "HpuOptions",
    "Launch",
    "RunSpec",
    "Schedule",
    "Workload",
]
