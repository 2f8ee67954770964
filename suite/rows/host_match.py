"""Whether the host a row ran on was the instance it is priced as: a run on a 16-CPU machine priced as a
192-vCPU p5en.48xlarge says so, where the device was not the limit (its utilisation gauge, from the
timed windows' telemetry, under DEVICE_BOUND_PERCENT): there the host set the rate (its CPUs, their
clock, the loader), and on the instance's own host it may differ. Where the device was busy throughout, the host did not set
the rate and no word is needed.

The comparison is with the instance's vCPUs for the accelerators the run used (192 × 1/8 = 24 for one of
a p5en's eight GPUs): what a buyer of that share of the instance gets.
"""

from __future__ import annotations

from suite import stats
from suite.backends import declared

# A device busy less than this share of the timed windows was waiting on something else (NVML's
# utilisation is the share of time a kernel ran: a device that sets the rate reads 95–100 %).
DEVICE_BOUND_PERCENT = 80.0


def _utilisation_gauges() -> list[tuple[str, str]]:
    """(telemetry key, label) of each backend's utilisation gauge, as the backends declare them."""
    return [(key, label) for key, label, unit in declared.gauges() if unit == "%"]


def _busy(records: list[dict]) -> tuple[str, list[float]] | None:
    """The device's label and each run's mean utilisation over its timed windows; None without a gauge
    (the cpu backend has none: its host is its device)."""
    for key, label in _utilisation_gauges():
        means = [
            float(gauge["mean"])
            for record in records
            for gauge in [((record.get("telemetry") or {}).get("summary") or {}).get(key) or {}]
            if isinstance(gauge.get("mean"), (int, float))
        ]
        if means:
            return label, means
    return None


def _share(instance, used: int) -> float:
    """The instance's vCPUs for `used` of its accelerators."""
    count = instance.accelerator_count or 0
    return instance.vcpus * used / count if 0 < used < count else float(instance.vcpus)


def notes(records: list[dict], instance, used: int) -> list[str]:
    """A note where the row's runs ran on a host whose CPUs differ from the instance's (for the
    accelerators used) and the device was not the limit; none otherwise."""
    cpus = sorted(
        {c for r in records if isinstance(c := (r.get("context") or {}).get("cpu_cores_logical"), int)}
    )
    if not cpus or not getattr(instance, "vcpus", None):
        return []
    share = _share(instance, used)
    if all(c == share for c in cpus):
        return []
    busy = _busy(records)
    if busy is None:
        return []
    label, means = busy
    if stats.median(means) >= DEVICE_BOUND_PERCENT:
        return []
    low, high = min(means), max(means)
    percent = f"{low:.0f} %" if round(low) == round(high) else f"{low:.0f}–{high:.0f} %"
    instance_cpus = (
        f"the {share:g} vCPUs of {used} of {instance.name}'s {instance.accelerator_count} accelerators "
        f"({instance.vcpus} in all)"
        if share != instance.vcpus
        else f"{instance.name}'s {instance.vcpus} vCPUs"
    )
    return [
        f"HOST: the {label} was busy {percent} of the timed windows (under {DEVICE_BOUND_PERCENT:.0f} %: not "
        f"the limit, the host set the rate), on a host of {' and '.join(str(c) for c in cpus)} logical CPUs, "
        f"not {instance_cpus}: on the instance itself the rate may differ"
    ]
