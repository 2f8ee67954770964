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

import math
from dataclasses import dataclass
from typing import NamedTuple

# The end-to-end run is "as fast as compute" from this fraction of compute-only on.
COMPUTE_BOUND_EFFICIENCY = 0.90
# The loader alone is "slower than compute" below this fraction of compute-only.
LOADER_SHORTFALL = 0.90
# Utilisation thresholds, in percent: the rules name only "low" and "high"; these numbers are this
# suite's own, and are the lines its verdict is tested against.
LOW_DEVICE_UTIL = 50.0
BUSY_HOST_CPU = 80.0
IDLE_HOST_CPU = 50.0
# Telemetry from fewer samples than this is not evidence: at the sampler's 0.15 s it spans under 1.5 s of
# timed windows, and a host-CPU gauge read over a few ticks (0 % between two reads of one idle tick) swings
# from 0 to 100 % on the same setup. The suite's own line, tested against; below it the utilisation is
# recorded but neither backs nor names a verdict, and the evidence says why.
MIN_TELEMETRY_SAMPLES = 10
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
    """Workers to feed the device, if decoding scales with workers (it does, up to a plateau: more worker
    processes decode more batches at once until the cores or the disk run out)."""
    return max(1, math.ceil(max(workers, 1) * compute_ips / loader_ips))


# A rate's relative uncertainty when its spread was not measured (one window), and the least one assumed
# when it was (three windows agreeing to 0.1% on a shared host are luck, not precision).
UNKNOWN_SPREAD = 0.10
LEAST_SPREAD = 0.02


def _spread(cv: float | None) -> float:
    return UNKNOWN_SPREAD if cv is None else max(float(cv), LEAST_SPREAD)


def _above(a: float, a_cv: float | None, b: float, b_cv: float | None) -> bool:
    """a is above b by more than both spreads."""
    return a * (1 - _spread(a_cv)) > b * (1 + _spread(b_cv))


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


def _change(option: str, value, why: str) -> dict:
    return {"option": option, "value": value, "why": why}


@dataclass(frozen=True)
class BottleneckEvidence:
    """What a verdict weighs: the three rates and their spreads; the settings the run had (what ran); the
    host's cores and the backend's capabilities (`copies_to_device`, `precisions`); the run's telemetry and
    memory; and `decided`, the rule repeated processes met (suite.measurement.diagnose_evidence.decide),
    which replaces the rule one run's windows meet and brings its intervals as evidence."""

    compute_ips: float
    end_to_end_ips: float
    loader_ips: float | None = None
    compute_cv: float | None = None
    loader_cv: float | None = None
    end_to_end_cv: float | None = None
    workers: int | None = None
    pin_memory: bool | None = None
    prefetch: int | None = None
    threads: int | None = None
    precision: str | None = None
    cores: int | None = None
    data_kind: str = "imagefolder"
    copies_to_device: bool = True
    precisions: tuple[str, ...] = ()
    host_cpu_percent: float | None = None
    device_util: float | None = None
    peak_memory_bytes: float | None = None
    total_memory_bytes: float | None = None
    telemetry_samples: int | None = None
    decided: dict | None = None

    @property
    def loader_workers(self) -> int:
        return self.workers or 0

    @property
    def compute_threads(self) -> int:
        """Host cores compute takes: its threads on a backend computing in host memory, one feeding thread
        else."""
        return (self.threads or self.cores or 1) if not self.copies_to_device else 1

    @property
    def free_cores(self) -> int | None:
        return None if self.cores is None else self.cores - self.compute_threads - self.loader_workers

    @property
    def efficiency(self) -> float | None:
        return self.end_to_end_ips / self.compute_ips if self.compute_ips else None

    @property
    def end_to_end_text(self) -> str:
        return f"{self.end_to_end_ips:,.1f} img/s"


class _Judgement(NamedTuple):
    """A case's verdict: its kind, its sentence, the changes it proposes and its other advice."""

    kind: str
    message: str
    changes: list[dict]
    advice: list[str]


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
    kind, message, changes, advice = _CASES.get(case, _apart)(e)
    lines = list(e.decided["evidence"]) if e.decided else []
    if kind == "compute-bound" and e.loader_ips is not None:
        changes += _precision_change(e)
        advice.append("the data path is not the limit: a faster device")
    lines += _telemetry_evidence(e)
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


def _synthetic(e: BottleneckEvidence) -> _Judgement:
    message = (
        f"compute-bound: synthetic data has no loader and no copy, so the device's compute sets the "
        f"pace ({e.end_to_end_text})"
    )
    return _Judgement("compute-bound", message, [], [])


def _disturbed(e: BottleneckEvidence) -> _Judgement:
    slower = "compute-only" if e.end_to_end_ips > e.compute_ips else "the loader alone"
    message = (
        f"inconclusive: end to end ({e.end_to_end_text}) measured faster than {slower} (loader "
        f"{e.loader_ips:,.1f}, compute {e.compute_ips:,.1f} img/s) beyond their spread, which cannot be: the "
        "probe was disturbed (a busy host, windows too short)"
    )
    return _Judgement(
        "inconclusive", message, [], ["measure again on a quiet host, with more --steps or --windows"]
    )


def _compute_bound(e: BottleneckEvidence) -> _Judgement:
    keeps_up = (
        "enough to keep up"
        if e.loader_ips >= e.compute_ips
        else "slower than compute alone, yet end to end keeps up (the loader works ahead during steps)"
    )
    message = (
        f"compute-bound: end to end reaches {e.efficiency:.0%} of compute-only ({e.end_to_end_ips:,.1f} of "
        f"{e.compute_ips:,.1f} img/s); the loader alone delivers {e.loader_ips:,.1f} img/s, {keeps_up}"
    )
    return _Judgement("compute-bound", message, [], [])


def _loader_within_spread(e: BottleneckEvidence) -> _Judgement:
    message = (
        f"inconclusive: the loader ({e.loader_ips:,.1f} img/s, cv {_spread(e.loader_cv):.0%}) and compute "
        f"({e.compute_ips:,.1f} img/s, cv {_spread(e.compute_cv):.0%}) are within each other's spread"
    )
    return _Judgement(
        "inconclusive", message, [], ["measure again with more --steps or --windows to separate them"]
    )


def _input_bound(e: BottleneckEvidence) -> _Judgement:
    message = (
        f"input-bound: the loader delivers {e.loader_ips:,.1f} img/s, the device could do "
        f"{e.compute_ips:,.1f} img/s (end to end {e.end_to_end_text})"
    )
    changes, advice = _more_workers(e)
    if e.data_kind == "cache":
        advice.append("a prepared cache already skips decoding: faster storage, or fewer images per step")
    else:
        changes.append(_change("--data", "cache", "a prepared cache skips decoding (`suite data prepare`)"))
    return _Judgement("input-bound", message, changes, advice)


def _more_workers(e: BottleneckEvidence) -> tuple[list[dict], list[str]]:
    """Workers into the cores compute does not use, or why none can be added."""
    workers, cores = e.loader_workers, e.cores
    # From repeated evidence, the fewest workers its interval of compute ÷ loader supports: a figure
    # the runs agree on, not one that moves with each run's noise.
    factor = e.decided["need_factor"] if e.decided else (e.compute_ips / e.loader_ips,) * 2
    need = workers_needed(workers, 1.0, factor[0])
    most = workers_needed(workers, 1.0, factor[1])
    target = need if e.free_cores is None else min(need, workers + max(e.free_cores, 0))
    if target > workers:
        short = f" (about {need} would be needed; {cores} cores)" if need > target else ""
        short += f" (these runs put the need at {need} to {most})" if most > need else ""
        return [_change("--workers", target, f"more decoding in parallel{short}")], []
    if need > workers and cores is not None:
        return [], [
            f"about {need} workers would be needed, and the {cores} cores are taken "
            f"({e.compute_threads} by compute, {workers} by workers)"
        ]
    return [], []


def _short_within_spread(e: BottleneckEvidence) -> _Judgement:
    message = (
        f"inconclusive: end to end ({e.end_to_end_text}) is short of compute-only ({e.compute_ips:,.1f} img/s) by "
        "less than their spread"
    )
    return _Judgement(
        "inconclusive", message, [], ["measure again with more --steps or --windows to separate them"]
    )


def _undecided(e: BottleneckEvidence) -> _Judgement:
    """Repeated evidence whose intervals do not separate: its own words."""
    return _Judgement("inconclusive", e.decided["message"], [], [e.decided["advice"]])


def _apart(e: BottleneckEvidence) -> _Judgement:
    """Loader and compute each fast alone, together slow: the copy, or with no copy the shared cores."""
    return _transfer_bound(e) if e.copies_to_device else _host_contention(e)


def _transfer_bound(e: BottleneckEvidence) -> _Judgement:
    message = (
        f"transfer-bound: the loader alone delivers {e.loader_ips:,.1f} img/s and compute alone "
        f"{e.compute_ips:,.1f} img/s, but together only {e.end_to_end_text}: the copy to the device costs the "
        "difference"
    )
    changes = []
    if not e.pin_memory:
        changes.append(_change("--pin-memory", "on", "page-locked batches copy faster"))
    if e.workers and (e.prefetch or 2) < 4:
        changes.append(_change("--prefetch", 4, "more batches ready ahead of each copy"))
    if e.data_kind != "cache":
        changes.append(_change("--data", "cache", "uint8 batches: a quarter of the bytes to copy"))
    return _Judgement("transfer-bound", message, changes, [])


def _host_contention(e: BottleneckEvidence) -> _Judgement:
    workers, threads, cores = e.loader_workers, e.compute_threads, e.cores
    message = (
        f"host-contention: the loader alone delivers {e.loader_ips:,.1f} img/s and compute alone "
        f"{e.compute_ips:,.1f} img/s, but together only {e.end_to_end_text}: with no copy to a device, the "
        f"loader's {workers} worker(s) and compute's {threads} thread(s) share "
        f"{cores if cores is not None else 'the'} cores"
    )
    changes, advice = [], []
    if cores is not None and workers + threads > cores and threads > 1:
        fit = max(1, cores - workers)
        if fit < threads:
            changes.append(
                _change("--threads", fit, f"compute threads and loader workers within {cores} cores")
            )
    if e.data_kind != "cache":
        changes.append(_change("--data", "cache", "no decoding left to compete with compute"))
    if not changes:
        advice.append("the host is the limit: a machine with more cores")
    return _Judgement("host-contention", message, changes, advice)


_CASES = {
    "synthetic": _synthetic,
    "disturbed": _disturbed,
    "compute-bound": _compute_bound,
    "loader-within-spread": _loader_within_spread,
    "input-bound": _input_bound,
    "short-within-spread": _short_within_spread,
    "inconclusive": _undecided,
}


def _precision_change(e: BottleneckEvidence) -> list[dict]:
    """A compute-bound fp32 run: the backend's first lower precision, if it has one."""
    lower = [p for p in e.precisions if p != e.precision and p != "fp32"]
    if e.precision == "fp32" and lower:
        return [_change("--precision", lower[0], "lower-precision math is faster where supported")]
    return []


def _telemetry_evidence(e: BottleneckEvidence) -> list[str]:
    """What the utilisation gauges say, when there are enough samples to say anything."""
    device, host, samples = e.device_util, e.host_cpu_percent, e.telemetry_samples
    if samples is not None and samples < MIN_TELEMETRY_SAMPLES and (device is not None or host is not None):
        return [
            f"telemetry: only {samples} sample(s), fewer than {MIN_TELEMETRY_SAMPLES}: not evidence "
            "(utilisation not used; run longer windows with --steps or --windows)"
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


def from_probe(record: dict, probed: dict, backend, cores: int | None) -> dict:
    """The verdict of a real-data run from its own record (end to end, settings) and its probe."""
    import torch

    summary = (record.get("telemetry") or {}).get("summary") or {}
    metrics = record["metrics"]
    settings = _settings(record)
    if settings["threads"] is None:  # the device section comes later: the threads compute has now
        settings["threads"] = torch.get_num_threads()
    evidence = BottleneckEvidence(
        compute_ips=probed["compute_images_per_second"],
        compute_cv=probed.get("compute_cv"),
        loader_ips=probed["loader_images_per_second"],
        loader_cv=probed.get("loader_cv"),
        end_to_end_ips=metrics["images_per_second"],
        end_to_end_cv=metrics.get("images_per_second_cv"),
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
    metrics = end_to_end["metrics"]
    source = compute["metrics"] if compute else metrics
    evidence = BottleneckEvidence(
        compute_ips=source["images_per_second"],
        compute_cv=source.get("images_per_second_cv"),
        end_to_end_ips=metrics["images_per_second"],
        end_to_end_cv=metrics.get("images_per_second_cv"),
        loader_ips=loader["metrics"]["images_per_second"] if loader else None,
        loader_cv=loader["metrics"].get("images_per_second_cv") if loader else None,
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
    def rate(name):
        value, cv = diagnosis[f"{name}_images_per_second"], diagnosis.get(f"{name}_cv")
        if value is None:
            return "- (no loader)"
        processes = (diagnosis.get("processes") or {}).get(name)
        if processes:  # repeated evidence: the median of its processes, and their run-to-run spread
            spread = f"cv {cv:.1%} run to run" if cv is not None else "spread unknown"
            return f"{value:,.1f} img/s (median of {processes} processes, {spread})"
        return f"{value:,.1f} img/s" + (
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
