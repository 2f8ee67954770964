"""The grid engine: a list of points, each one configuration of `suite run` started as a fresh child
process, run into one folder: made from fixed options and a grid (`expand`), every value checked before
anything runs (`resolve`), resumed from the records already there (`sweep_resume.find_record`), each
claimed while it runs so that engines started at once into one folder share the work (`try_claim`), with a
timeout, a line of progress per point (`Pace`), and the list of outcomes, point by point.

Its strategies choose the points: `suite sweep` every combination of a grid (`run_points`), `suite
batch-size` the next batch from the tries so far (`batch_size.try_in_child`), `suite diagnose` its arms,
interleaved (`diagnose_arms`), `suite scale` one point per process count (`scale_counts`), `suite tune`
the next configuration from the runs so far (`tune/lab.py`). One process
per point, so an out-of-memory error or a crash cannot poison
the next point; a point that fails is recorded with its error and the others go on.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import itertools
import json
import math
import os
import socket
import time
from dataclasses import dataclass, field

from suite import atomic, limits, run_record
from suite.exploring.grid_options import Spec
from suite.exploring.sweep_resume import find_record, group_of
from suite.inputs import errors
from suite.inputs.errors import UserError
from suite.launching import child
from suite.launching.child import describe

# More points than this would run for days (each point is a fresh process); SUITE_ALLOW_LARGE=1 overrides.
MAX_POINTS = 10_000
# A point's claim file in the out folder (hidden: readers of the folder skip it).
CLAIM_PREFIX = ".claim-"


@dataclass
class Point:
    index: int
    knobs: dict[str, str]  # the grid's values for this point, e.g. {"batch-size": "32"}
    argv: list[str]  # `suite run` options
    config: dict = field(default_factory=dict)  # the resolved record config (what a record of it holds)
    repeat: int | None = None  # the runs of its group (`repeat` among its options), else one run
    candidate_config: dict | None = None  # with `against`: the group's other side, resolved
    env: dict[str, str] = field(default_factory=dict)  # more of its child's environment (scale: a run id)

    def label(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.knobs.items()) or "(single point)"


def expand(spec: Spec, options: dict) -> list[Point]:
    """Every combination of the grid, in order (the first option varies slowest). A repeatable option
    (`model-override KEY=VALUE`) keeps its fixed values where the grid varies it too: a grid of
    `context=8,context=16` changes one key of the model, never drops the others (`layers=2`); the grid's
    value is typed after them, so a key given in both takes the grid's."""
    from suite.run_options import OverrideAction

    fixed_argv = [
        arg
        for name, values in spec.fixed.items()
        if name not in spec.grid or isinstance(options[name], OverrideAction)
        for value in values
        for arg in child.option_argv(name, value, options[name])
    ]
    names = list(spec.grid)
    # Counted before any point is made: a grid of 10^8 points must not fill memory before a word is said.
    count = math.prod(len(spec.grid[n]) for n in names)
    if count == 0:
        empty = ", ".join(n for n in names if not spec.grid[n])
        raise UserError(f"the grid has no points: {empty} has no values (give OPTION=V1,V2,...)")
    limits.refuse_above(
        "the sweep",
        count,
        MAX_POINTS,
        "each point is a fresh process of seconds to minutes: split the grid",
        show=lambda n: f"{n:,.0f} points",
    )
    points = []
    for index, combo in enumerate(itertools.product(*(spec.grid[n] for n in names))):
        knobs = dict(zip(names, combo))
        argv = list(fixed_argv)
        for name, value in knobs.items():
            argv += child.option_argv(name, value, options[name])
        points.append(Point(index, knobs, argv))
    return points


def resolve(points: list[Point], name_points: bool = True) -> None:
    """Fill each point's resolved configuration (checks every value before anything runs). An error names
    its sweep point, unless NAME_POINTS is false (scale: the error names the option it is about)."""
    for point in points:
        try:
            point.config = child.resolved_config(point.argv)
            point.repeat, point.candidate_config = group_of(point.argv)
        except UserError as error:
            # One point (diagnose, batch-size): the error is about the command's own options, no point named.
            where = (
                f"sweep point {point.index + 1} ({point.label()}): " if point.knobs and name_points else ""
            )
            raise UserError(f"{where}{error}") from None


# -- resume --------------------------------------------------------------------------------------------


def existing_records(out_dir: str, warn=None) -> list[dict]:
    """The run records already in the sweep's folder (read as every reader reads them: a FIFO or a link
    to a device is skipped, never waited on); with `warn`, each file skipped is named with why."""
    found = []
    if not os.path.isdir(out_dir):
        return found
    for path in run_record.iter_record_paths([out_dir]):
        try:
            found.append((path, run_record.read_record(path)))
        except run_record.OtherSuiteRecord:
            continue
        except (run_record.NotARecord, OSError) as error:
            if warn:  # other files in the folder are not ours to judge, but a person should know
                warn(f"suite: warning: {errors.for_terminal(f'skipped {path}: {error}')}")
    said = (
        (lambda message: warn(f"suite: warning: {errors.for_terminal(message)}"))
        if warn
        else (lambda message: None)
    )
    return [record for _, record in run_record.unique_runs(found, said)]  # a group's runs counted once each


# -- running -------------------------------------------------------------------------------------------


def run_point(
    point: Point,
    out_dir: str,
    timeout_s: float | None = None,
    origin: str = "sweep",
    keep_failure: bool = True,
    **extra,
) -> dict:
    """Run one point in a fresh process and return its record, tagged with the command (`origin`) that ran
    it. A failure is recorded, with the point (and EXTRA fields: a tuning trial's `tune`), unless the
    strategy keeps no failures (KEEP_FAILURE false: `suite scale`, whose folder holds only the runs' own
    records, each under the run id it chose; `suite tune`'s run cut short by its budget)."""
    return child.run(
        point.argv,
        point.config,
        out_dir,
        timeout_s,
        origin=origin,
        env=point.env,
        keep_failure=keep_failure,
        sweep_point=point.knobs,
        **extra,
    )


def claim_path(out_dir: str, point: Point) -> str:
    """The point's claim file: hidden (readers skip it), named by its resolved configuration."""
    digest = hashlib.sha256(json.dumps(point.config, sort_keys=True, default=str).encode()).hexdigest()
    return os.path.join(out_dir, f"{CLAIM_PREFIX}{digest[:20]}")


def try_claim(path: str, wait: bool = False) -> int | None:
    """Claim a point: an exclusive flock(2) on its claim file, held while the point runs. Returns the open
    descriptor, or None when another process holds it (with WAIT: blocks until it is free).

    A lock, not a file's existence, is the claim: the kernel releases it when its process ends however it
    ends (kill -9, a crash, a power cut), so a dead sweep's points are never claimed forever, and no age or
    pid has to be guessed at. The file is removed by its owner when the point is done; one opened just
    before that removal is found stale by its inode and opened again. The lock is held on a read-only
    descriptor (flock needs no write access): no file stays open for writing while a point runs, so
    nothing of the sweep's keeps its folder's file system from being remounted read-only."""
    while True:
        fd = _open_claim(path, os.O_CREAT | os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        except BaseException:
            os.close(fd)
            raise
        try:
            current = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            current = False
        if current:
            # Who holds it, for a person looking; only a note: the lock is the claim.
            with contextlib.suppress(OSError, UserError):
                note = _open_claim(path, os.O_WRONLY | os.O_TRUNC)
                try:
                    os.write(note, f"{socket.gethostname()} pid {os.getpid()}\n".encode())
                finally:
                    os.close(note)
            return fd
        os.close(fd)  # its owner removed it after we opened it: claim the new file instead


def _open_claim(path: str, flags: int) -> int:
    """A claim file's descriptor: never through a symlink, never waiting (a FIFO planted under a claim's
    name would hold an open for reading until a writer came), and only a regular file, else a UserError."""
    flags |= os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENXIO):  # a symlink (O_NOFOLLOW); a FIFO opened to write
            raise UserError(f"sweep claim file {path!r} is not a regular file: remove it") from None
        raise
    kind = atomic.file_kind(os.fstat(fd).st_mode)
    if kind is not None:
        os.close(fd)
        raise UserError(f"sweep claim file {path!r} is {kind}, not a regular file: remove it")
    return fd


def release_claim(path: str, fd: int) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)  # before the lock goes: a waiter then sees the file is no longer the claim
    os.close(fd)


class Pace:
    """How far a sweep is, and about how long its rest takes: the mean time of the points this sweep ran,
    times the points left to run (nothing is guessed before the first is done)."""

    def __init__(self, total: int, to_run: int):
        self.total, self.left = total, to_run
        self.durations: list[float] = []

    def running(self) -> str:
        """What a point's start says: `running (about 2 min left for 3 points, from 2 run so far)`."""
        if not self.durations:
            return "running"
        mean = sum(self.durations) / len(self.durations)
        from suite.data.progress import about

        return (
            f"running ({about(mean * self.left)} left for {self.left} point{'s' if self.left != 1 else ''}, "
            f"from {len(self.durations)} run so far)"
        )

    def ran(self, seconds: float | None) -> None:
        """A point is done: run here (its time), or found recorded by another sweep (None)."""
        self.left = max(0, self.left - 1)
        if seconds is not None:
            self.durations.append(seconds)


def run_points(points: list[Point], out_dir: str, log=print, timeout_s: float | None = None) -> list:
    """Run what is not yet recorded; returns [(point, record)] for every point. Sweeps started at once
    into one folder share the work: each point is claimed (`try_claim`) before it runs, and a point
    another sweep holds is waited for at the end, then taken from its record, or run here if that sweep
    died without one."""
    os.makedirs(out_dir, exist_ok=True)
    records = existing_records(out_dir, warn=child.log)
    outcome, held_elsewhere = [], []
    to_run = sum(1 for p in points if find_record(p, records) is None)
    log(f"sweep: {len(points)} points, {len(points) - to_run} already recorded in {out_dir}, {to_run} to run")
    pace = Pace(len(points), to_run)
    width = len(str(len(points)))
    for point in points:
        head = f"[{point.index + 1:>{width}}/{len(points)}] {point.label()}"
        record = find_record(point, records)
        if record is not None:
            log(f"{head}: recorded ({describe(record)})")
            outcome.append((point, record))
            continue
        claimed = _run_claimed(point, out_dir, head, outcome, log, timeout_s, False, pace)
        if not claimed:
            log(f"{head}: being run by another sweep into {out_dir}; taken from it at the end")
            held_elsewhere.append(point)
    for point in held_elsewhere:
        head = f"[{point.index + 1:>{width}}/{len(points)}] {point.label()}"
        _run_claimed(point, out_dir, head, outcome, log, timeout_s, True, pace)
    return sorted(outcome, key=lambda pair: pair[0].index)


def _run_claimed(point, out_dir, head, outcome, log, timeout_s, wait: bool, pace: Pace) -> bool:
    """Claim POINT (waiting for it with WAIT), then take its record if another sweep made one meanwhile,
    else run it. False if it is claimed elsewhere and WAIT is not set."""
    total = pace.total
    path = claim_path(out_dir, point)
    try:
        fd = try_claim(path, wait=wait)
    except OSError as error:
        # The folder turned read-only (or full, or went away) between points: as for a record it cannot keep.
        error = run_record.RecordNotWritten(f"cannot claim the point in {out_dir}: {error.strerror or error}")
        log(_stopped_unwritable(head, error, outcome, total, out_dir))
        raise error from None
    if fd is None:
        return False
    try:
        record = find_record(point, existing_records(out_dir))  # the claim's last holder may have made it
        if record is not None:
            log(f"{head}: recorded by another sweep ({describe(record)})")
            outcome.append((point, record))
            pace.ran(None)
            return True
        log(f"{head}: {pace.running()}")
        started = time.monotonic()
        try:
            record = run_point(point, out_dir, timeout_s)
        except KeyboardInterrupt:
            # The point's run may have finished its record as the stop came: the folder says (a run
            # stopped after a timed window leaves a record of status interrupted, which is run again).
            finished = find_record(point, existing_records(out_dir)) is not None
            log(
                f"{head}: interrupted. {len(outcome) + finished} of {total} points are recorded in {out_dir}; "
                "run the same command again to resume"
            )
            raise
        except run_record.RecordNotWritten as error:
            # The folder turned read-only (or full): stop rather than measure points nothing can keep.
            log(_stopped_unwritable(head, error, outcome, total, out_dir))
            raise
        log(f"{head}: {describe(record)} ({time.monotonic() - started:.1f} s)")
        pace.ran(time.monotonic() - started)
        outcome.append((point, record))
        return True
    finally:
        release_claim(path, fd)


def _stopped_unwritable(head: str, error: Exception, outcome: list, total: int, out_dir: str) -> str:
    return (
        f"{head}: {error}. {len(outcome)} of {total} points are recorded in {out_dir}; "
        "make it writable and run the same command again to resume"
    )
