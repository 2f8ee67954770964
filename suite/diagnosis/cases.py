"""The cases a bottleneck verdict can meet (suite.diagnosis.rules): the evidence each weighs, and
for each its kind, its sentence and the changes it proposes (docs/bottleneck.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from suite.diagnosis import loader_limits


def workers_needed(workers: int, loader_ips: float, compute_ips: float) -> int:
    """Workers to feed the device, if decoding scales with workers (it does, up to a plateau: more worker
    processes decode more batches at once until the cores or the disk run out)."""
    return max(1, math.ceil(max(workers, 1) * compute_ips / loader_ips))


# Telemetry from fewer samples than this is not evidence: at the sampler's 0.15 s it spans under 1.5 s of
# timed windows, and a host-CPU gauge read over a few ticks (0 % between two reads of one idle tick) swings
# from 0 to 100 % on the same setup. The suite's own line, tested against; below it the utilisation is
# recorded but neither backs nor names a verdict, and the evidence says why.
MIN_TELEMETRY_SAMPLES = 10

# A rate's relative uncertainty when its spread was not measured (one window), and the least one assumed
# when it was (three windows agreeing to 0.1% on a shared host are luck, not precision).
UNKNOWN_SPREAD = 0.10
LEAST_SPREAD = 0.02


def spread(cv: float | None) -> float:
    return UNKNOWN_SPREAD if cv is None else max(float(cv), LEAST_SPREAD)


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def change(option: str, value, why: str) -> dict:
    return {"option": option, "value": value, "why": why}


# A token file (suite/data/token_loader.py) is read, not decoded: a cache, made of images, cannot replace it.
TOKENS = "tokens"
# The rates are samples a second: images, or a token workload's sequences (suite/measurement/units.py).
IMAGE_RATE = "img/s"
SEQUENCE_RATE = "seq/s"


def rate_unit_of(record: dict) -> str:
    """The unit of a record's sample rates, from its unit: sequences a second for a workload in tokens."""
    unit = (record.get("metrics") or {}).get("unit") or (record.get("workload") or {}).get("unit")
    return SEQUENCE_RATE if unit == TOKENS else IMAGE_RATE


@dataclass(frozen=True)
class BottleneckEvidence:
    """What a verdict weighs: the three rates and their spreads; the settings the run had (what ran); the
    host's cores and the backend's capabilities (`copies_to_device`, `precisions`); the run's telemetry and
    memory; and `decided`, the rule repeated processes met (suite.diagnosis.repeated.decide),
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
    rate_unit: str = IMAGE_RATE  # what every rate counts (rate_unit_of): the sentences say it
    batches_per_epoch: int | None = None  # the loader's, as its record says (a rank's share)
    images: int | None = None  # the data's, as its record says

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
        """Cores a worker more could have: those compute and the workers do not take, and where the host's
        CPU use was measured, no more than it left idle."""
        if self.cores is None:
            return None
        free = self.cores - self.compute_threads - self.loader_workers
        return free if self.cores_busy is None else min(free, math.floor(self.cores - self.cores_busy))

    @property
    def telemetry_is_evidence(self) -> bool:
        """Enough samples to count (MIN_TELEMETRY_SAMPLES; a count not recorded is taken as enough)."""
        return self.telemetry_samples is None or self.telemetry_samples >= MIN_TELEMETRY_SAMPLES

    @property
    def cores_busy(self) -> float | None:
        """The host's busy cores during the end-to-end run: its CPU gauge × its cores (None unmeasured)."""
        if self.host_cpu_percent is None or self.cores is None or not self.telemetry_is_evidence:
            return None
        return self.host_cpu_percent / 100 * self.cores

    @property
    def epoch_edges(self) -> loader_limits.EpochEdges | None:
        return loader_limits.epoch_edges(
            self.data_kind, self.loader_workers, self.batches_per_epoch, self.images
        )

    @property
    def workers_busy(self) -> bool | None:
        return loader_limits.workers_busy(self.cores_busy, self.loader_workers)

    @property
    def cores_text(self) -> str:
        """'3.1 of 16 cores, with 8 loader workers' (the figure behind a CPU sentence)."""
        return f"{self.cores_busy:.1f} of {self.cores} cores, with {plural(self.loader_workers, 'loader worker')}"

    @property
    def efficiency(self) -> float | None:
        return self.end_to_end_ips / self.compute_ips if self.compute_ips else None

    @property
    def end_to_end_text(self) -> str:
        return f"{self.end_to_end_ips:,.1f} {self.rate_unit}"


class Judgement(NamedTuple):
    """A case's verdict: its kind, its sentence, the changes it proposes and its other advice."""

    kind: str
    message: str
    changes: list[dict]
    advice: list[str]


def _synthetic(e: BottleneckEvidence) -> Judgement:
    message = (
        f"compute-bound: synthetic data has no loader and no copy, so the device's compute sets the "
        f"pace ({e.end_to_end_text})"
    )
    return Judgement("compute-bound", message, [], [])


def _disturbed(e: BottleneckEvidence) -> Judgement:
    slower = "compute-only" if e.end_to_end_ips > e.compute_ips else "the loader alone"
    message = (
        f"inconclusive: end to end ({e.end_to_end_text}) measured faster than {slower} (loader "
        f"{e.loader_ips:,.1f}, compute {e.compute_ips:,.1f} {e.rate_unit}) beyond their spread, which cannot be: the "
        "probe was disturbed (a busy host, windows too short)"
    )
    return Judgement(
        "inconclusive", message, [], ["measure again on a quiet host, with more --steps or --windows"]
    )


def _compute_bound(e: BottleneckEvidence) -> Judgement:
    keeps_up = (
        "enough to keep up"
        if e.loader_ips >= e.compute_ips
        else "slower than compute alone, yet end to end keeps up (the loader works ahead during steps)"
    )
    message = (
        f"compute-bound: end to end reaches {e.efficiency:.0%} of compute-only ({e.end_to_end_ips:,.1f} of "
        f"{e.compute_ips:,.1f} {e.rate_unit}); the loader alone delivers {e.loader_ips:,.1f} {e.rate_unit}, {keeps_up}"
    )
    return Judgement("compute-bound", message, [], [])


def _loader_within_spread(e: BottleneckEvidence) -> Judgement:
    message = (
        f"inconclusive: the loader ({e.loader_ips:,.1f} {e.rate_unit}, cv {spread(e.loader_cv):.0%}) and compute "
        f"({e.compute_ips:,.1f} {e.rate_unit}, cv {spread(e.compute_cv):.0%}) are within each other's spread"
    )
    return Judgement(
        "inconclusive", message, [], ["measure again with more --steps or --windows to separate them"]
    )


def _input_bound(e: BottleneckEvidence) -> Judgement:
    message = (
        f"input-bound: the loader delivers {e.loader_ips:,.1f} {e.rate_unit}, the device could do "
        f"{e.compute_ips:,.1f} {e.rate_unit} (end to end {e.end_to_end_text})"
    )
    changes, advice = _more_workers(e)
    if e.data_kind == "cache":
        advice.append("a prepared cache already skips decoding: faster storage, or fewer images per step")
    elif e.data_kind == TOKENS:
        advice.append("a token file has no decoding to skip: faster storage, or more loader workers")
    else:
        changes.append(change("--data", "cache", "a prepared cache skips decoding (`suite data prepare`)"))
    return Judgement("input-bound", message, changes, advice)


def _more_workers(e: BottleneckEvidence) -> tuple[list[dict], list[str]]:
    """Workers into the cores compute does not use, where the figures show decoding limits the loader;
    else why none are advised: epochs too short for the workers to be measured, or workers that leave
    their cores idle (more of them would wait on what they wait on now)."""
    edges = e.epoch_edges
    if edges:
        return [], [edges.advice()]
    workers, cores = e.loader_workers, e.cores
    if e.workers_busy is False:
        return [], [
            f"no more workers: {workers} used {e.cores_busy:.1f} of {cores} cores, so the CPUs are not what "
            "they wait on (storage, or handing batches to the training process); `suite loader --workers "
            f"{workers},{2 * workers}` measures whether more help"
        ]
    # From repeated evidence, the fewest workers its interval of compute ÷ loader supports: a figure
    # the runs agree on, not one that moves with each run's noise.
    factor = e.decided["need_factor"] if e.decided else (e.compute_ips / e.loader_ips,) * 2
    need = workers_needed(workers, 1.0, factor[0])
    most = workers_needed(workers, 1.0, factor[1])
    target = need if e.free_cores is None else min(need, workers + max(e.free_cores, 0))
    if target > workers:
        short = f" (about {need} would be needed; {cores} cores)" if need > target else ""
        short += f" (these runs put the need at {need} to {most})" if most > need else ""
        return [change("--workers", target, f"more decoding in parallel{short}: {_decoding_text(e)}")], []
    if need > workers and cores is not None:
        taken = (
            f"({e.compute_threads} by compute, {workers} by workers)"
            if e.cores_busy is None
            else f"({e.cores_busy:.1f} were busy)"
        )
        return [], [f"about {need} workers would be needed, and the {cores} cores are taken {taken}"]
    return [], []


def _decoding_text(e: BottleneckEvidence) -> str:
    """The figures worker advice rests on: each worker's rate, compute's, and the cores the workers kept
    busy (or that this was not measured, and what the advice then assumes)."""
    unit, workers = e.rate_unit, e.loader_workers
    each = (
        f"{plural(workers, 'worker')} delivered {e.loader_ips / workers:,.1f} {unit} each"
        if workers
        else f"the training process alone loaded {e.loader_ips:,.1f} {unit}"
    )
    cores = (
        " (cores its workers kept busy not measured: this assumes decoding is CPU-bound)"
        if e.cores_busy is None
        else f", the host keeping {e.cores_busy:.1f} of {e.cores} cores busy"
    )
    return f"{each}{cores}, and compute takes {e.compute_ips:,.1f} {unit}"


def _short_within_spread(e: BottleneckEvidence) -> Judgement:
    message = (
        f"inconclusive: end to end ({e.end_to_end_text}) is short of compute-only ({e.compute_ips:,.1f} {e.rate_unit}) by "
        "less than their spread"
    )
    return Judgement(
        "inconclusive", message, [], ["measure again with more --steps or --windows to separate them"]
    )


def _undecided(e: BottleneckEvidence) -> Judgement:
    """Repeated evidence whose intervals do not separate: its own words."""
    return Judgement("inconclusive", e.decided["message"], [], [e.decided["advice"]])


def _apart(e: BottleneckEvidence) -> Judgement:
    """Loader and compute each fast alone, together slow: the copy, or with no copy the shared cores."""
    return _transfer_bound(e) if e.copies_to_device else _host_contention(e)


def _transfer_bound(e: BottleneckEvidence) -> Judgement:
    message = (
        f"transfer-bound: the loader alone delivers {e.loader_ips:,.1f} {e.rate_unit} and compute alone "
        f"{e.compute_ips:,.1f} {e.rate_unit}, but together only {e.end_to_end_text}: the copy to the device costs the "
        "difference"
    )
    changes = []
    if not e.pin_memory:
        changes.append(change("--pin-memory", "on", "page-locked batches copy faster"))
    if e.workers and (e.prefetch or 2) < 4:
        changes.append(change("--prefetch", 4, "more batches ready ahead of each copy"))
    if e.data_kind not in ("cache", TOKENS):
        changes.append(change("--data", "cache", "uint8 batches: a quarter of the bytes to copy"))
    return Judgement("transfer-bound", message, changes, [])


def _host_contention(e: BottleneckEvidence) -> Judgement:
    workers, threads, cores = e.loader_workers, e.compute_threads, e.cores
    message = (
        f"host-contention: the loader alone delivers {e.loader_ips:,.1f} {e.rate_unit} and compute alone "
        f"{e.compute_ips:,.1f} {e.rate_unit}, but together only {e.end_to_end_text}: with no copy to a device, the "
        f"loader's {workers} worker(s) and compute's {threads} thread(s) share "
        f"{cores if cores is not None else 'the'} cores"
    )
    changes, advice = [], []
    if cores is not None and workers + threads > cores and threads > 1:
        fit = max(1, cores - workers)
        if fit < threads:
            changes.append(
                change("--threads", fit, f"compute threads and loader workers within {cores} cores")
            )
    if e.data_kind not in ("cache", TOKENS):
        changes.append(change("--data", "cache", "no decoding left to compete with compute"))
    if not changes:
        advice.append("the host is the limit: a machine with more cores")
    return Judgement("host-contention", message, changes, advice)


_CASES = {
    "synthetic": _synthetic,
    "disturbed": _disturbed,
    "compute-bound": _compute_bound,
    "loader-within-spread": _loader_within_spread,
    "input-bound": _input_bound,
    "short-within-spread": _short_within_spread,
    "inconclusive": _undecided,
}


def judge(case: str, evidence: BottleneckEvidence) -> Judgement:
    """The judgement of the case the rates met ("apart", or any case not named, is the copy or the cores)."""
    return _CASES.get(case, _apart)(evidence)
