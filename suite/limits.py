"""Bounded resources: estimate what a command will take before it takes it, and refuse past a bound.

Each check states its estimate and its bound; one override, the environment variable SUITE_ALLOW_LARGE=1,
lets a person who knows better go ahead (a disk that will grow, a machine with more than it reports).
"""

from __future__ import annotations

import os
import shutil
import signal
import sys

from suite.inputs.errors import UserError

OVERRIDE_ENV = "SUITE_ALLOW_LARGE"


def human(count: float) -> str:
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(value) < 1024 or unit == "PiB":
            return f"{value:,.0f} {unit}" if unit == "B" else f"{value:,.1f} {unit}"
        value /= 1024
    return f"{value:,.1f} PiB"


def overridden() -> bool:
    return os.environ.get(OVERRIDE_ENV) == "1"


def check_override_env(env=None) -> str | None:
    """At start-up: the override is `1` (go ahead) or `0`/empty (do not); anything else is removed from ENV
    and the line returned says so (`yes` used to be a silent no)."""
    env = os.environ if env is None else env
    value = env.get(OVERRIDE_ENV)
    if value is None or value.strip() in ("", "0", "1"):
        return None
    del env[OVERRIDE_ENV]
    return f"{OVERRIDE_ENV}={value!r} in the environment ignored: accepted 1 (go ahead past a bound) or 0"


def refuse_above(what: str, estimate: float, bound: float, why: str, show=human) -> None:
    """UserError when `estimate` exceeds `bound`, naming both and the override."""
    if estimate > bound and not overridden():
        raise UserError(
            f"{what} would take about {show(estimate)}, more than {show(bound)} ({why}); "
            f"set {OVERRIDE_ENV}=1 to go ahead anyway"
        )


def free_disk_bytes(path: str) -> int | None:
    """Free bytes on the file system that holds `path` (or its nearest existing parent)."""
    folder = os.path.abspath(path)
    while not os.path.exists(folder) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def available_memory_bytes() -> int:
    import psutil

    return int(psutil.virtual_memory().available)


def total_memory_bytes() -> int:
    import psutil

    return int(psutil.virtual_memory().total)


def cores() -> int:
    return os.cpu_count() or 1


# -- processes ------------------------------------------------------------------------------------------
# Every count that starts processes at once (loader workers, decoding processes, --nproc ranks,
# --per-device copies, scale's counts) is held to what the machine can run and hold, before any starts.
PROCESSES_PER_CORE = 4
# A process that trains (a `suite run`, a torchrun rank): its own Python with torch and torchvision imported
# is 368 MiB of memory no other process shares (USS, psutil, torch 2.14.1 on x86-64), before any model or
# batch; rounded up to allow for them. An estimate on the low side: a large model's process holds far more.
TRAINING_PROCESS_BYTES = 512 * 1024**2


def check_processes(what: str, count: int, per_process_bytes: int, kind: str = "process") -> None:
    """Refuse COUNT processes at once beyond PROCESSES_PER_CORE per core (at least 8), or beyond the memory
    available now at PER_PROCESS_BYTES each; WHAT names the option ("--nproc 100000"), KIND one process
    ("loader process")."""
    machine = cores()
    refuse_above(
        what,
        count,
        max(8, PROCESSES_PER_CORE * machine),
        f"{PROCESSES_PER_CORE} per core on this {machine}-core machine; more only wait for a core",
        show=lambda n: f"{n:,.0f} {kind}es",
    )
    refuse_above(
        what,
        count * per_process_bytes,
        available_memory_bytes(),
        f"the memory available now, at about {human(per_process_bytes)} per {kind}",
    )


# -- shared memory ----------------------------------------------------------------------------------------
# Worker processes (a DataLoader's, a decoding pool's) make their queues' locks as POSIX semaphores and hand
# batches over as POSIX shared memory: on Linux both are files in /dev/shm. A read-only /dev/shm (a container
# mounted so) failed at the first batch with "Read-only file system", naming nothing, and torch's half-made
# loader printed "Exception ignored".
SHARED_MEMORY = "/dev/shm"


def shared_memory_problem() -> str | None:
    """Why worker processes could not share memory here (one lock made and dropped, as their queues make
    it), or None where they can."""
    import multiprocessing

    try:
        multiprocessing.get_context().Lock()
    except OSError as error:
        return f"shared memory ({SHARED_MEMORY}), which cannot be written here: {error.strerror or error}"
    return None


def check_shared_memory(what: str, instead: str) -> None:
    """UserError naming WHAT (the option that starts workers) and INSTEAD (how to run without them) where
    worker processes cannot share memory; before any starts."""
    problem = shared_memory_problem()
    if problem:
        raise UserError(f"{what}: worker processes need {problem}; make it writable, or use {instead}")


# -- children end with the process that started them ------------------------------------------------------
# Linux's PR_SET_PDEATHSIG (prctl(2)): the kernel signals a process when the thread that started it ends,
# however it ends (kill -9 included); kept across exec. Elsewhere nothing is asked and the children rely on
# the process group (Ctrl-C at a terminal reaches every process of the group).
PR_SET_PDEATHSIG = 1
# A torchrun rank: its launcher (torch's agent, in `python -m suite.launching.launch`) names itself here,
# since torch starts each rank in a session of its own, where no signal to the suite's group reaches it.
LAUNCHER_PID_ENV = "SUITE_LAUNCHER_PID"
EXIT_PARENT_GONE = 137  # as for a process killed by SIGKILL: the one that started it is gone


def _prctl():
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def end_with_parent(signum: int = signal.SIGTERM):
    """A `preexec_fn` for subprocess.Popen, or the first call of a forked pool's worker: the child gets
    SIGNUM when this process (the thread that starts it) ends, and exits at once if this process ended
    before it could ask. prctl is looked up here, before the fork, so the child runs no import and takes no
    lock between fork and exec."""
    parent = os.getpid()
    prctl = _prctl()

    def in_child(*_ignored) -> None:
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0)
        if os.getppid() != parent:  # the parent ended between the fork and the prctl: nobody waits for us
            os._exit(EXIT_PARENT_GONE)

    return in_child


def end_with_launcher(env=None) -> str | None:
    """In a torchrun rank started by the suite's launcher: die (SIGTERM) when the launcher ends. Returns a
    line to say where the variable is ignored (it names a process that is not this one's parent, and there
    is no launcher to wait for: left in a shell), None otherwise. Raises SystemExit when the launcher that
    started this rank has ended already."""
    env = os.environ if env is None else env
    value = env.pop(LAUNCHER_PID_ENV, None)
    if value is None:
        return None
    if not (value.isascii() and value.isdigit()):
        return f"{LAUNCHER_PID_ENV}={value!r} in the environment ignored: only the suite's launcher sets it"
    prctl = _prctl()
    if prctl is not None:
        prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    if os.getppid() == int(value):
        return None
    if "TORCHELASTIC_RUN_ID" in env:  # started by torch's agent, which has ended since: nobody waits for us
        print(f"suite: error: the launcher (pid {value}) that started this rank has ended", file=sys.stderr)
        raise SystemExit(EXIT_PARENT_GONE)
    if prctl is not None:
        prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0)
    return f"{LAUNCHER_PID_ENV}={value} in the environment ignored: it names no launcher of this process"
