"""What a checked run record says, read the same way by every reader (report rows, pricing, compare,
plots): its data source, nodes and accelerators, its throughput, whether it was profiled or failed its
numerics check, and whether it ran on another device than an instance's accelerator.

Each reads a record that `schema.check_record` accepted, as a `RunRecord` or (from readers not yet given
the type) the mapping it was built from, and fills in what older records leave out.
"""

from __future__ import annotations

import re

from suite import stats
from suite.run_record.record import RunRecord, metrics_of

# Words that name a vendor or a memory size, not the accelerator model (for "ran on another device").
_GENERIC_TOKENS = re.compile(
    r"^(nvidia|tesla|habana|labs|amd|intel|aws|r|tm|cpu|gpu|hbm\d*|sxm\d*|pcie|"
    r"\d+gb|\d+(\.\d+)?ghz)$"
)


def _config(record) -> dict:
    return record.config if isinstance(record, RunRecord) else record["config"]


def data_path(record) -> str:
    source = record.data.source if isinstance(record, RunRecord) else (record.get("data") or {}).get("source")
    return str(source or _config(record).get("data") or "?")


def nodes(record) -> int:
    return int(_config(record).get("nnodes") or 1)


def accelerators_used(record) -> int:
    """Accelerators used on each instance (node) of the run."""
    config = _config(record)
    used = config.get("accelerators_used")
    return int(used) if used is not None else max(1, int(config.get("world_size", 1) or 1) // nodes(record))


def numerics_failed(record) -> bool:
    """A run whose precision failed the numerics check trained another model: shown, never ranked."""
    if isinstance(record, RunRecord):
        return record.numerics.verdict == "fail"
    return (record.get("numerics") or {}).get("verdict") == "fail"


def profiled(record) -> bool:
    """A profiled run's steps were slowed by the profiler: shown, never in a median."""
    return bool(record.get("profile") or _config(record).get("profile_dir"))


def images_per_hour(record) -> float | None:
    metrics = metrics_of(record)
    if metrics.images_per_hour is not None:
        return float(metrics.images_per_hour)
    if metrics.images_per_second is not None:
        return float(metrics.images_per_second) * stats.SECONDS_PER_HOUR
    return None


def log_images_per_hour(record) -> float | None:
    """The log of `images_per_hour`, taken without forming a number that is no float: what ratios and
    geometric means of rates are computed from (`stats.from_log`)."""
    metrics = metrics_of(record)
    if metrics.images_per_hour is not None:
        return stats.log_rate(float(metrics.images_per_hour))
    if metrics.images_per_second is not None:
        return stats.log_rate(float(metrics.images_per_second)) + stats.LOG_SECONDS_PER_HOUR
    return None


def device_words(name: str) -> set[str]:
    """The words of a device's name that tell its model apart (`NVIDIA H100 80GB HBM3` -> {"h100"})."""
    return {t for t in re.findall(r"[a-z0-9]+", name.lower()) if not _GENERIC_TOKENS.match(t)}


def other_device(device_name: str | None, accelerator: str) -> bool:
    """True when the run's device is plainly not the instance's accelerator (e.g. a CPU run priced as a
    V100 instance): the two names share no model word. An instance without accelerators (`none`, an
    m6i.xlarge) computes on its host's CPUs: a run there ran on what the instance is rented for."""
    if not device_name or str(accelerator or "").strip().lower() in ("", "none"):
        return False
    return not (device_words(device_name) & device_words(accelerator))


def per_device(record) -> int | None:
    """Copies run at once, one per device (`suite run --per-device`), or None for an ordinary run."""
    return _config(record).get("per_device")
