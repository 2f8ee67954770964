"""The bottleneck verdict: which pipe is the narrowest — the loader, the copy, or the device.

Three throughputs of the same configuration (seed 000's plumbing picture):

- loader-only: batches pulled from the data path with no model (the upper bound on anything);
- compute-only: the same run on synthetic data (one batch on the device, reused: no loader, no copy);
- end-to-end: the real run.

The narrowest of them sets the pace. When the end-to-end run reaches most of compute-only, the device is
the limit (compute-bound). Otherwise, when the loader alone is slower than compute, the loader is
(input-bound); and when both alone are fast but together slow, the copy to the device or the loader's
competition with compute for the host is (transfer-bound).

Telemetry backs the verdict with seed 002's rules: low device utilisation with busy CPUs points to the
input pipeline; low device and low CPU utilisation to the code (synchronisations, tiny batches); much
free device memory on a compute-bound run to a larger batch.

Everything here is a pure function of numbers, so the rules are tested with numbers.
"""

from __future__ import annotations

import math

# The end-to-end run is "as fast as compute" from this fraction of compute-only on.
COMPUTE_BOUND_EFFICIENCY = 0.90
# The loader alone is "slower than compute" below this fraction of compute-only.
LOADER_SHORTFALL = 0.90
# seed 002: utilisation thresholds, in percent.
LOW_DEVICE_UTIL = 50.0
BUSY_HOST_CPU = 80.0
IDLE_HOST_CPU = 50.0
# Below this share of device memory in use, a larger batch may help a compute-bound run.
MUCH_FREE_MEMORY = 0.50


def device_util_percent(telemetry_summary: dict) -> float | None:
    """The mean of the device's utilisation gauge, whatever its backend calls it (`gpu_util_percent`,
    `aip_util_percent`, ...): any `*_util_percent` gauge that is not the host's and not memory's."""
    for name, stats in sorted((telemetry_summary or {}).items()):
        if name.endswith("_util_percent") and not name.startswith("host_") and "mem" not in name:
            if stats and stats.get("mean") is not None:
                return float(stats["mean"])
    return None


def host_cpu_util_percent(telemetry_summary: dict) -> float | None:
    stats = (telemetry_summary or {}).get("host_cpu_util_percent") or {}
    return stats.get("mean")


def workers_needed(workers: int, loader_ips: float, compute_ips: float) -> int:
    """Workers to feed the device, if decoding scales with workers (seed 000: it does, to a plateau)."""
    return max(1, math.ceil(max(workers, 1) * compute_ips / loader_ips))


def verdict(
    *,
    compute_ips: float,
    end_to_end_ips: float,
    loader_ips: float | None = None,
    workers: int | None = None,
    cores: int | None = None,
    data_kind: str = "imagefolder",
    host_cpu_percent: float | None = None,
    device_util: float | None = None,
    peak_memory_bytes: float | None = None,
    total_memory_bytes: float | None = None,
) -> dict:
    """The verdict and its figures, as stored in a record's "diagnosis" section."""
    efficiency = end_to_end_ips / compute_ips if compute_ips else None
    figures = {
        "loader_images_per_second": loader_ips,
        "compute_images_per_second": compute_ips,
        "end_to_end_images_per_second": end_to_end_ips,
        "end_to_end_over_compute": efficiency,
        "host_cpu_util_percent": host_cpu_percent,
        "device_util_percent": device_util,
    }
    evidence, suggestions = [], []

    if loader_ips is None:
        kind = "compute-bound"
        message = (
            f"compute-bound: synthetic data has no loader and no copy, so the device's compute sets the "
            f"pace ({end_to_end_ips:,.1f} img/s)"
        )
    elif efficiency is not None and efficiency >= COMPUTE_BOUND_EFFICIENCY:
        kind = "compute-bound"
        message = (
            f"compute-bound: end to end reaches {efficiency:.0%} of compute-only ({end_to_end_ips:,.1f} of "
            f"{compute_ips:,.1f} img/s); the loader delivers {loader_ips:,.1f} img/s, enough to keep up"
        )
        suggestions.append("the data path is not the limit: a faster device, bf16/amp, or a larger batch")
    elif loader_ips < LOADER_SHORTFALL * compute_ips:
        kind = "input-bound"
        message = (
            f"input-bound: the loader delivers {loader_ips:,.1f} img/s, the device could do "
            f"{compute_ips:,.1f} img/s (end to end {end_to_end_ips:,.1f} img/s)"
        )
        if data_kind == "cache":
            suggestions.append("a prepared cache already skips decoding: more --workers, or faster storage")
        else:
            need = workers_needed(workers or 0, loader_ips, compute_ips)
            if cores is not None and need > cores:
                suggestions.append(
                    f"about {need} workers would be needed and this machine has {cores} cores: "
                    "use a prepared cache (`suite data prepare`)"
                )
            else:
                suggestions.append(f"try --workers {need}, or a prepared cache (`suite data prepare`)")
    else:
        kind = "transfer-bound"
        message = (
            f"transfer-bound: the loader alone delivers {loader_ips:,.1f} img/s and compute alone "
            f"{compute_ips:,.1f} img/s, but together only {end_to_end_ips:,.1f} img/s"
        )
        suggestions.append(
            "the copy to the device or the loader's competition with compute for the host costs "
            "the difference: try --pin-memory, --prefetch, fewer --workers, or a prepared cache"
        )

    if device_util is not None and host_cpu_percent is not None:
        if device_util < LOW_DEVICE_UTIL and host_cpu_percent > BUSY_HOST_CPU:
            evidence.append(
                f"device utilisation {device_util:.0f}% with host CPUs {host_cpu_percent:.0f}% busy: "
                "the device waits on the host (input pipeline)"
            )
        elif device_util < LOW_DEVICE_UTIL and host_cpu_percent < IDLE_HOST_CPU:
            evidence.append(
                f"device utilisation {device_util:.0f}% and host CPUs {host_cpu_percent:.0f}%: "
                "neither is busy; look for synchronisations in the step or a batch too small"
            )
        elif device_util >= LOW_DEVICE_UTIL:
            evidence.append(f"device utilisation {device_util:.0f}%")
    elif host_cpu_percent is not None:
        evidence.append(f"host CPUs {host_cpu_percent:.0f}% busy")
    if kind == "compute-bound" and peak_memory_bytes and total_memory_bytes:
        share = peak_memory_bytes / total_memory_bytes
        figures["memory_in_use_fraction"] = share
        if share < MUCH_FREE_MEMORY:
            suggestions.append(
                f"only {share:.0%} of memory in use: a larger batch may help (`suite batch-size`)"
            )
    return {"verdict": kind, "message": message, "evidence": evidence, "suggestions": suggestions, **figures}


def from_records(
    end_to_end: dict, compute: dict | None, loader: dict | None, cores: int | None = None
) -> dict:
    """The verdict from the three records (a loader record from `suite loader`'s measurement)."""
    summary = (end_to_end.get("telemetry") or {}).get("summary") or {}
    data = end_to_end.get("data") or {}
    memory = end_to_end.get("memory") or {}
    e2e_ips = end_to_end["metrics"]["images_per_second"]
    compute_ips = compute["metrics"]["images_per_second"] if compute else e2e_ips
    loader_ips = loader["metrics"]["images_per_second"] if loader else None
    return verdict(
        compute_ips=compute_ips,
        end_to_end_ips=e2e_ips,
        loader_ips=loader_ips,
        workers=data.get("workers"),
        cores=cores,
        data_kind=data.get("source", "imagefolder"),
        host_cpu_percent=host_cpu_util_percent(summary),
        device_util=device_util_percent(summary),
        peak_memory_bytes=memory.get("peak_memory_bytes"),
        total_memory_bytes=memory.get("total_memory_bytes"),
    )


def render(diagnosis: dict) -> str:
    def rate(value):
        return f"{value:,.1f} img/s" if value is not None else "- (no loader)"

    lines = [
        f"loader only   {rate(diagnosis['loader_images_per_second'])}",
        f"compute only  {rate(diagnosis['compute_images_per_second'])}",
        f"end to end    {rate(diagnosis['end_to_end_images_per_second'])}",
        "",
        f"verdict: {diagnosis['message']}",
    ]
    lines += [f"  evidence: {line}" for line in diagnosis["evidence"]]
    lines += [f"  next: {line}" for line in diagnosis["suggestions"]]
    return "\n".join(lines)
