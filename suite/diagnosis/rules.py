"""The bottleneck verdict: which pipe is the narrowest — the loader, the copy, or the device.

Three throughputs of the same configuration, pictured as pipes of different widths (docs/bottleneck.md):

- loader-only: batches pulled from the data path with no model (the upper bound on anything);
- compute-only: the same run on synthetic data (one batch on the device, reused: no loader, no copy);
- end-to-end: the real run.

The narrowest of them sets the pace. When the end-to-end run reaches most of compute-only, the device is
the limit (compute-bound). Otherwise, when the loader alone is slower than compute, the loader is
(input-bound); and when both alone are fast but together slow, the copy to the device is (transfer-bound)
— or, on a backend with no copy (the CPU computes in host memory), the loader's workers and compute's
threads competing for the same cores are (host-contention).

Every rate is measured in repeated windows, and carries its spread. A verdict is given only when the rates
it compares are apart by more than that spread; otherwise it is "inconclusive". End to end faster than
compute-only or than the loader alone (beyond the spread) is impossible: the probe measured something
else (a busy host, windows too short), and the verdict says so instead of guessing.

Telemetry backs the verdict with published rules of thumb (docs/bottleneck.md): low device utilisation
with busy CPUs points to the input pipeline; low device and low CPU utilisation to the code
(synchronisations, tiny batches); much free device memory on a compute-bound run to a larger batch.

Advice is a function of the measured rates, the settings the run already had and the backend's
capabilities: it proposes only changes not already made (no --pin-memory to a pinned run, no bf16 to a bf16
run, no cache to a cached run, nothing a backend cannot do), and each change as a structured
{"option", "value"} beside its sentence. More loader workers are proposed only into cores compute does not
use, and fewer compute threads only when workers and threads oversubscribe the cores, so following the
advice never returns to where it started.

Everything here is a pure function of numbers, so the rules are tested with numbers.
"""

from __future__ import annotations

from suite.diagnosis.cases import (
    IMAGE_RATE,
    MIN_TELEMETRY_SAMPLES,
    BottleneckEvidence,
    change,
    judge,
    rate_unit_of,
    spread,
)
from suite.run_record.record import metrics_of

# The end-to-end run is "as fast as compute" from this fraction of compute-only on.
COMPUTE_BOUND_EFFICIENCY = 0.90
# The loader alone is "slower than compute" below this fraction of compute-only.
LOADER_SHORTFALL = 0.90
# Utilisation thresholds, in percent: the rules name only "low" and "high"; these numbers are this
# suite's own, and are the lines its verdict is tested against.
LOW_DEVICE_UTIL = 50.0
BUSY_HOST_CPU = 80.0
IDLE_HOST_CPU = 50.0
# Telemetry from fewer than MIN_TELEMETRY_SAMPLES (cases.py) samples is not evidence.
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


def _above(a: float, a_cv: float | None, b: float, b_cv: float | None) -> bool:
    """a is above b by more than both spreads."""
    return a * (1 - spread(a_cv)) > b * (1 + spread(b_cv))


def _window_case(
    compute_ips: float,
    end_to_end_ips: float,
    loader_ips: float | None,
    compute_cv: float | None,
    loader_cv: float | None,
    end_to_end_cv: float | None,
) -> str:
    """Which rule the rates of one process's windows meet, each with its window-to-window spread."""
    if loader_ips is None:
        return "synthetic"
    if _above(end_to_end_ips, end_to_end_cv, compute_ips, compute_cv) or _above(
        end_to_end_ips, end_to_end_cv, loader_ips, loader_cv
    ):
        return "disturbed"
    if compute_ips and end_to_end_ips / compute_ips >= COMPUTE_BOUND_EFFICIENCY:
        return "compute-bound"
    if loader_ips < LOADER_SHORTFALL * compute_ips:
        return (
            "input-bound"
            if _above(compute_ips, compute_cv, loader_ips, loader_cv)
            else "loader-within-spread"
        )
    return (
        "apart" if _above(compute_ips, compute_cv, end_to_end_ips, end_to_end_cv) else "short-within-spread"
    )


def verdict(evidence: BottleneckEvidence) -> dict:
    """The verdict and its figures, as stored in a record's "diagnosis" section."""
    e = evidence
    figures = _figures(e)
    case = (
        e.decided["case"]
        if e.decided
        else _window_case(
            e.compute_ips, e.end_to_end_ips, e.loader_ips, e.compute_cv, e.loader_cv, e.end_to_end_cv
        )
    )
    kind, message, changes, advice = judge(case, e)
    lines = list(e.decided["evidence"]) if e.decided else []
    if kind == "compute-bound" and e.loader_ips is not None:
        changes += _precision_change(e)
        advice.append("the data path is not the limit: a faster device")
    lines += _telemetry_evidence(e, kind)
    if kind == "compute-bound" and e.peak_memory_bytes and e.total_memory_bytes:
        share = e.peak_memory_bytes / e.total_memory_bytes
        figures["memory_in_use_fraction"] = share
        if share < MUCH_FREE_MEMORY:
            advice.append(f"only {share:.0%} of memory in use: a larger batch may help (`suite batch-size`)")
    suggestions = [f"try {c['option']} {c['value']}: {c['why']}" for c in changes] + advice
    return {
        "verdict": kind,
        "message": message,
        "evidence": lines,
        "suggestions": suggestions,
        "changes": changes,
        "copies_to_device": e.copies_to_device,
        **figures,
        # A token workload's rates are sequences a second, said so when shown (an image record is unchanged).
        **({"rate_unit": e.rate_unit} if e.rate_unit != IMAGE_RATE else {}),
    }


def _figures(e: BottleneckEvidence) -> dict:
    return {
        "loader_images_per_second": e.loader_ips,
        "compute_images_per_second": e.compute_ips,
        "end_to_end_images_per_second": e.end_to_end_ips,
        "loader_cv": e.loader_cv,
        "compute_cv": e.compute_cv,
        "end_to_end_cv": e.end_to_end_cv,
        "end_to_end_over_compute": e.efficiency,
        "host_cpu_util_percent": e.host_cpu_percent,
        "device_util_percent": e.device_util,
        "telemetry_samples": e.telemetry_samples,
    }


def _precision_change(e: BottleneckEvidence) -> list[dict]:
    """A compute-bound fp32 run: the backend's first lower precision, if it has one."""
    lower = [p for p in e.precisions if p != e.precision and p != "fp32"]
    if e.precision == "fp32" and lower:
        return [change("--precision", lower[0], "lower-precision math is faster where supported")]
    return []


def _telemetry_evidence(e: BottleneckEvidence, kind: str) -> list[str]:
    """What the utilisation gauges say, when there are enough samples to say anything, in the verdict's
    terms: an input-bound one's says what limits the loader; a compute-bound one's, that an idle device is
    the step's doing (end to end reached compute-only: not the loader's)."""
    device, host, samples = e.device_util, e.host_cpu_percent, e.telemetry_samples
    if not e.telemetry_is_evidence and (device is not None or host is not None):
        return [
            f"telemetry: only {samples} sample(s), fewer than {MIN_TELEMETRY_SAMPLES}: not evidence "
            "(utilisation not used; run longer windows with --steps or --windows)"
        ]
    if kind == "input-bound":
        return _input_evidence(e)
    if kind == "compute-bound" and device is not None and device < LOW_DEVICE_UTIL:
        return [
            f"device utilisation {device:.0f}% while end to end reaches compute-only: the step itself leaves "
            "the device idle (synchronisations, small kernels, or a batch too small; `suite run --profile` "
            "shows which)"
        ]
    if device is not None and host is not None:
        if device < LOW_DEVICE_UTIL and host > BUSY_HOST_CPU:
            return [
                f"device utilisation {device:.0f}% with host CPUs {host:.0f}% busy: "
                "the device waits on the host (input pipeline)"
            ]
        if device < LOW_DEVICE_UTIL and host < IDLE_HOST_CPU:
            return [
                f"device utilisation {device:.0f}% and host CPUs {host:.0f}%: "
                "neither is busy; look for synchronisations in the step or a batch too small"
            ]
        return [f"device utilisation {device:.0f}%"] if device >= LOW_DEVICE_UTIL else []
    return [f"host CPUs {host:.0f}% busy"] if host is not None else []


def _input_evidence(e: BottleneckEvidence) -> list[str]:
    """An input-bound verdict's telemetry and data: what its figures say limits the loader — the host's
    cores (busy: the input pipeline), its workers' (busy: decoding is CPU-bound), neither (the CPUs do not
    limit it) — and epochs too short for its workers. The CPU figure counts every process on the host."""
    device, host, edges = e.device_util, e.host_cpu_percent, e.epoch_edges
    lines = []
    if host is not None:
        gauges = (f"device utilisation {device:.0f}% and " if device is not None else "") + (
            f"host CPUs {host:.0f}% busy"
        )
        if e.cores_busy is None:  # the host's share alone: its cores unknown
            reading = (
                "the device waits on the host (input pipeline)"
                if host > BUSY_HOST_CPU
                else "the host's CPUs as a whole are not what limits the loader (how many cores its "
                "workers used is not known)"
            )
        elif host > BUSY_HOST_CPU:
            reading = "the device waits on the host (input pipeline)" + _spare_cores_text(e)
        elif e.workers_busy:
            reading = "the loader's workers keep their cores busy: decoding is CPU-bound" + _spare_cores_text(
                e
            )
        elif e.workers_busy is None:  # no worker processes: the training process loads the batches
            reading = "the training process loads the batches itself, between its steps"
        else:
            reading = "the loader is limited by something other than the CPUs: " + (
                "its epochs are too short for its workers (below)"
                if edges
                else "it waits on storage, or on handing batches to the training process"
            )
        cores = f" ({e.cores_text})" if e.cores_busy is not None else ""
        lines.append(f"{gauges}{cores}: {reading}")
    elif device is not None and device >= LOW_DEVICE_UTIL:
        lines.append(f"device utilisation {device:.0f}%")
    if edges:
        lines.append(edges.evidence())
    return lines


def _spare_cores_text(e: BottleneckEvidence) -> str:
    """Whether the cores leave room for another worker (the worker advice's free_cores, in words)."""
    free = e.free_cores
    if free is None:
        return ""
    return (
        f", with {free} idle core(s) for more workers"
        if free > 0
        else ", and no core left for another worker"
    )


def from_probe(record: dict, probed: dict, backend, cores: int | None) -> dict:
    """The verdict of a real-data run from its own record (end to end, settings) and its probe."""
    import torch

    summary = (record.get("telemetry") or {}).get("summary") or {}
    metrics = metrics_of(record)
    settings = _settings(record)
    if settings["threads"] is None:  # the device section comes later: the threads compute has now
        settings["threads"] = torch.get_num_threads()
    evidence = BottleneckEvidence(
        compute_ips=probed["compute_images_per_second"],
        compute_cv=probed.get("compute_cv"),
        loader_ips=probed["loader_images_per_second"],
        loader_cv=probed.get("loader_cv"),
        end_to_end_ips=metrics.images_per_second,
        end_to_end_cv=metrics.images_per_second_cv,
        **settings,
        cores=cores,
        copies_to_device=getattr(backend, "copies_to_device", True),
        precisions=tuple(getattr(backend, "precisions", ())),
        host_cpu_percent=host_cpu_util_percent(summary),
        device_util=device_util_percent(summary),
        telemetry_samples=(record.get("telemetry") or {}).get("samples"),
    )
    return verdict(evidence) | {
        "probe": {k: v for k, v in probed.items() if k.endswith(("_windows", "_window_s"))}
    }


def _settings(record: dict) -> dict:
    """What the run had (what ran, not what was typed): the advice never proposes these again."""
    data, config, device = record.get("data") or {}, record.get("config") or {}, record.get("device") or {}
    return {
        "workers": data.get("workers"),
        "pin_memory": data.get("pin_memory"),
        "prefetch": data.get("prefetch"),
        "threads": device.get("threads") or config.get("threads"),
        "precision": config.get("precision"),
        "data_kind": data.get("source", "imagefolder"),
        "rate_unit": rate_unit_of(record),
        "batches_per_epoch": data.get("batches_per_epoch"),
        "images": data.get("images"),
    }


def from_records(
    end_to_end: dict,
    compute: dict | None,
    loader: dict | None,
    cores: int | None = None,
    copies_to_device: bool = True,
    precisions: tuple[str, ...] = (),
) -> dict:
    """The verdict from the three records (a loader record from `suite loader`'s measurement)."""
    metrics = metrics_of(end_to_end)
    source = metrics_of(compute) if compute else metrics
    loader_metrics = metrics_of(loader) if loader else None
    evidence = BottleneckEvidence(
        compute_ips=source.images_per_second,
        compute_cv=source.images_per_second_cv,
        end_to_end_ips=metrics.images_per_second,
        end_to_end_cv=metrics.images_per_second_cv,
        loader_ips=loader_metrics.images_per_second if loader_metrics else None,
        loader_cv=loader_metrics.images_per_second_cv if loader_metrics else None,
        **from_records_settings(end_to_end),
        cores=cores,
        copies_to_device=copies_to_device,
        precisions=precisions,
    )
    return verdict(evidence)


def from_records_settings(end_to_end: dict) -> dict:
    """What an end-to-end record says beside its rate: the settings that ran, its telemetry, its memory."""
    summary = (end_to_end.get("telemetry") or {}).get("summary") or {}
    memory = end_to_end.get("memory") or {}
    return {
        **_settings(end_to_end),
        "host_cpu_percent": host_cpu_util_percent(summary),
        "device_util": device_util_percent(summary),
        "peak_memory_bytes": memory.get("peak_memory_bytes"),
        "total_memory_bytes": memory.get("total_memory_bytes"),
        "telemetry_samples": (end_to_end.get("telemetry") or {}).get("samples"),
    }


def render(diagnosis: dict) -> str:
    unit = diagnosis.get("rate_unit", IMAGE_RATE)

    def rate(name):
        value, cv = diagnosis[f"{name}_images_per_second"], diagnosis.get(f"{name}_cv")
        if value is None:
            return "- (no loader)"
        processes = (diagnosis.get("processes") or {}).get(name)
        if processes:  # repeated evidence: the median of its processes, and their run-to-run spread
            spread = f"cv {cv:.1%} run to run" if cv is not None else "spread unknown"
            return f"{value:,.1f} {unit} (median of {processes} processes, {spread})"
        return f"{value:,.1f} {unit}" + (
            f" (cv {cv:.1%})" if cv is not None else " (one window: spread unknown)"
        )

    lines = [
        f"loader only   {rate('loader')}",
        f"compute only  {rate('compute')}",
        f"end to end    {rate('end_to_end')}",
        "",
        f"verdict: {diagnosis['message']}",
    ]
    lines += [f"  evidence: {line}" for line in diagnosis["evidence"]]
    lines += [f"  next: {line}" for line in diagnosis["suggestions"]]
    return "\n".join(lines)
