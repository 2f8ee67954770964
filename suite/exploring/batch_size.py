"""`suite batch-size`: the largest batch that fits, and the smallest that is nearly as fast.

The largest: double the batch until a try runs out of memory, then bisect between the last batch that
fit and the first that did not. On the CPU, `--max-memory` stands in for device memory. Each try is a
fresh `suite run` process, so one out-of-memory error cannot leave the allocator in a state that makes
the next try fail (or pass) for the wrong reason.

The recommended: the smallest batch whose throughput reaches 95% of the best seen. A larger batch buys
speed only while the device is under-used, takes memory the model could use, and makes training more
finicky (small batches' noisy updates regularise); 95% is this suite's line for "nearly as fast" (sources
in docs/bottleneck.md, "Which batch size?").
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from suite.run_record.record import metrics_of

NEARLY_AS_FAST = 0.95


@dataclass
class Try:
    batch_size: int
    status: str  # a run record's status: ok, diverged, oom, error
    images_per_second: float | None = None
    run_id: str | None = None
    message: str = ""
    cv: float | None = None  # spread between its timed windows (stdev / mean); None: one window
    windows: int = 0
    unit: str = "images"  # what its record counts: images, or a token workload's tokens
    per_sample: float = 1  # units in one sample (a sequence's tokens)

    @property
    def fits(self) -> bool:
        return self.status in ("ok", "diverged")

    @property
    def rate(self) -> float | None:
        """Its throughput in its unit (images_per_second counts samples: a token workload's sequences)."""
        return None if self.images_per_second is None else self.images_per_second * self.per_sample

    @property
    def label(self) -> str:
        from suite.launching.child import rate_label

        return rate_label(self.unit)

    def to_dict(self) -> dict:
        """As the search's record keeps it: an image try's fields as ever, a token try's with its unit."""
        fields = vars(self).copy()
        if self.unit == "images":
            del fields["unit"], fields["per_sample"]
        return fields


@dataclass
class Search:
    tries: list[Try] = field(default_factory=list)
    largest_fit: int | None = None
    smallest_oom: int | None = None
    recommended: int | None = None
    best_images_per_second: float | None = None
    stopped: str = ""  # why the search ended where it did

    def to_dict(self) -> dict:
        return {
            "largest_batch_size": self.largest_fit,
            "smallest_failing_batch_size": self.smallest_oom,
            "recommended_batch_size": self.recommended,
            "recommended_rule": f"smallest batch reaching >= {NEARLY_AS_FAST:.0%} of the best throughput seen",
            "best_images_per_second": self.best_images_per_second,
            "stopped": self.stopped,
            "tries": [t.to_dict() for t in self.tries],
        }


def search(
    try_batch, start: int = 1, max_batch: int = 1024, granularity: int = 1, log=lambda _: None
) -> Search:
    """Find the largest fitting batch with `try_batch(n) -> Try`. Pure: all running is in `try_batch`."""
    result = Search()
    attempt = _logged_attempts(try_batch, result, max_batch, granularity, log)
    _double(attempt, result, start, max_batch)
    if result.largest_fit is not None and result.smallest_oom is not None:
        _bisect(attempt, result, granularity)
    elif result.largest_fit is None and not result.stopped:
        result.stopped = f"even the first batch, {start}, does not fit"
    result.recommended, result.best_images_per_second = recommend(result.tries)
    return result


def _logged_attempts(try_batch, result: Search, max_batch: int, granularity: int, log):
    """`attempt(n) -> Try`: one try, kept in `result`, logged before (how many may follow) and after."""
    took: list[float] = []

    def attempt(n: int) -> Try:
        log(f"batch {n:>6}: trying ({_tries_left(result, n, max_batch, granularity, took)})")
        started = time.monotonic()
        outcome = try_batch(n)
        took.append(time.monotonic() - started)
        result.tries.append(outcome)
        rate = f"{outcome.rate:,.1f} {outcome.label}" if outcome.images_per_second else outcome.status
        log(
            f"batch {n:>6}: {rate}"
            + (f" ({outcome.message})" if outcome.message and not outcome.fits else "")
            + f" ({took[-1]:.1f} s)"
        )
        return outcome

    return attempt


def _double(attempt, result: Search, start: int, max_batch: int) -> None:
    """Doubling: 1, 2, 4, ... up to max_batch (which is itself tried when the doubling steps over it)."""
    n = start
    while True:
        outcome = attempt(n)
        if outcome.status == "error":
            result.stopped = f"batch {n} failed with an error that is not out-of-memory: {outcome.message}"
            return
        if not outcome.fits:
            result.smallest_oom = n
            return
        result.largest_fit = n
        if n >= max_batch:
            result.stopped = f"reached --max-batch {max_batch} without running out of memory"
            return
        n = min(n * 2, max_batch)


def _bisect(attempt, result: Search, granularity: int) -> None:
    """Bisection between the last fit and the first out-of-memory."""
    low, high = result.largest_fit, result.smallest_oom
    while high - low > granularity:
        mid = (low + high) // 2
        outcome = attempt(mid)
        if outcome.status == "error":
            result.stopped = f"batch {mid} failed with an error that is not out-of-memory: {outcome.message}"
            break
        if outcome.fits:
            low = mid
        else:
            high = mid
    result.largest_fit, result.smallest_oom = low, high
    result.stopped = result.stopped or (
        f"batch {low} fits and {high} does not"
        + (f" (within --granularity {granularity})" if granularity > 1 else "")
    )


def _tries_left(result: Search, n: int, max_batch: int, granularity: int, took: list[float]) -> str:
    """Which try this is and at most how many follow, with the time that takes at the mean of the tries so
    far: doubling from N to the ceiling and then bisecting below it, or bisecting what is left."""
    fits = [t.batch_size for t in result.tries if t.fits]
    too_big = [t.batch_size for t in result.tries if not t.fits]
    if too_big:  # bisecting between the last fit and the first out-of-memory
        low, high = max(fits, default=0), min(too_big)
        most = max(0, math.ceil(math.log2(max(1, (high - low) / granularity))) - 1)
    else:  # doubling: every doubling up to the ceiling may fit, or any may not and a bisection follows
        doublings = math.ceil(math.log2(max_batch / n)) if n < max_batch else 0
        most = doublings + math.ceil(math.log2(max(1, max_batch / granularity)))
    said = f"try {len(result.tries) + 1}, " + (f"at most {most} more" if most else "the last")
    if took:
        from suite.data.progress import about, seconds

        mean = sum(took) / len(took)
        said += f"; {about(mean * (most + 1))} left at most, at {seconds(mean)} a try so far"
    return said


def recommend(tries: list[Try]) -> tuple[int | None, float | None]:
    """The smallest batch reaching NEARLY_AS_FAST of the best throughput seen, and that best."""
    measured = [t for t in tries if t.status == "ok" and t.images_per_second]
    if not measured:
        return None, None
    best = max(t.images_per_second for t in measured)
    return min(t.batch_size for t in measured if t.images_per_second >= NEARLY_AS_FAST * best), best


def noise_caveat(tries: list[Try]) -> str | None:
    """Why the recommendation may not hold: tries measured in one window (spread unknown), or window
    spreads as wide as the 5% that separates "nearly as fast" from the best."""
    measured = [t for t in tries if t.status == "ok" and t.images_per_second]
    single = [t.batch_size for t in measured if t.cv is None]
    if single:
        return (
            f"batch(es) {', '.join(map(str, single))} measured in one window: their spread is unknown, so "
            "the recommendation may be noise (more windows: --set windows=3)"
        )
    wide = [t.batch_size for t in measured if t.cv > 1 - NEARLY_AS_FAST]
    if wide:
        return (
            f"batch(es) {', '.join(map(str, wide))} varied by more than {1 - NEARLY_AS_FAST:.0%} between "
            "windows, as much as the rule's margin: the recommendation may be noise"
        )
    return None


def try_in_child(first, out_dir: str, timeout_s: float | None = None):
    """`try_batch(n) -> Try` for `search`: the grid point FIRST (whose argv ends with its `--batch-size`) at
    batch N, run by the grid engine as a fresh `suite run` into OUT_DIR."""
    from suite.exploring import grid

    base_argv = first.argv[:-2]  # without "--batch-size N"

    def try_batch(n: int) -> Try:
        point = grid.Point(
            n, {"batch-size": str(n)}, [*base_argv, "--batch-size", str(n)], {**first.config, "batch_size": n}
        )
        return try_from_record(n, grid.run_point(point, out_dir, timeout_s, origin="batch-size"))

    return try_batch


def try_from_record(batch_size: int, record: dict) -> Try:
    error, metrics = record.get("error") or {}, metrics_of(record)
    windows = len(metrics.window_time_s or [])
    return Try(
        batch_size,
        record.get("status", "error"),
        metrics.images_per_second,
        record.get("run_id"),
        error.get("message", ""),
        cv=metrics.images_per_second_cv if windows > 1 else None,
        windows=windows,
        unit=metrics.unit_name,
        per_sample=metrics.per_sample,
    )


def _best_in_unit(result: Search) -> float:
    """The best throughput seen, in the tries' unit (a batch-size search runs one workload: one unit)."""
    best = next(t for t in result.tries if t.images_per_second == result.best_images_per_second)
    return best.rate


def render(result: Search, workload: str, backend: str) -> str:
    from tabulate import tabulate

    def rate(t: Try) -> str:
        if not t.images_per_second:
            return "-"
        spread = f"cv {t.cv:.1%}" if t.cv is not None else "1 window: spread unknown"
        return f"{t.rate:,.1f} ({spread})"

    rows = [
        [
            t.batch_size,
            t.status,
            rate(t),
            "largest"
            if t.batch_size == result.largest_fit and t.fits
            else ("recommended" if t.batch_size == result.recommended else ""),
        ]
        for t in sorted(result.tries, key=lambda t: t.batch_size)
    ]
    for row in rows:
        if row[0] == result.recommended and row[0] == result.largest_fit:
            row[3] = "largest, recommended"
    label = next((t.label for t in result.tries if t.images_per_second), "img/s")
    headers = ["batch", "status", f"{label} (window spread)", "verdict"]
    lines = [tabulate(rows, headers=headers, disable_numparse=True), ""]
    lines.append(
        f"largest batch that fits:  {result.largest_fit if result.largest_fit else 'none'}"
        f"  ({result.stopped})"
    )
    if result.recommended:
        lines.append(
            f"recommended batch:        {result.recommended}  (the smallest reaching "
            f"{NEARLY_AS_FAST:.0%} of the best, {_best_in_unit(result):,.1f} {label})"
        )
        caveat = noise_caveat(result.tries)
        if caveat:
            lines.append(f"  caveat: {caveat}")
    lines.append(f"for {workload} on {backend}")
    return "\n".join(lines)
