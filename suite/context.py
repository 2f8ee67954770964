"""The context of a run: the machine and software it ran on, for the record."""

from __future__ import annotations

import datetime
import os
import platform
import re
import socket
import subprocess
import sys
import time
from typing import NamedTuple

import psutil

import suite

# Written by `benchmarks/stamp_commit.sh` into a checkout that is copied to a machine without its .git (a
# lent GPU machine gets the working tree only): the commit it was copied from, and "+dirty" if it had changes.
COMMIT_STAMP = ".suite-commit"
_STAMP = re.compile(r"[0-9a-f]{40}(\+dirty)?")


CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def git_commit(checkout: str = CHECKOUT) -> str | None:
    """The suite checkout's commit: git's answer, else the stamp a copied tree carries (None for an
    installed wheel, or a copy with neither). Where both answer and git's repository does not even hold the
    stamped commit, the tree was copied beside an older .git (a lent machine's copy did exactly that: its git
    named the commit before the one that ran), so the stamp, written from the newer checkout, is the truth; a
    stamp git does hold but HEAD has moved past is merely stale, and git wins."""
    commit = _git(checkout, "rev-parse", "HEAD")
    stamp = _stamped_commit(os.path.join(checkout, COMMIT_STAMP))
    if commit and stamp and stamp.partition("+")[0] != commit:
        if _git(checkout, "cat-file", "-e", f"{stamp.partition('+')[0]}^{{commit}}") is None:
            return stamp
    return commit or stamp


def _git(checkout: str, *args: str) -> str | None:
    """git's output (stripped; "" for a command that prints nothing), or None where git fails or is absent."""
    try:
        out = subprocess.run(
            ["git", "-C", checkout, *args], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _stamped_commit(path: str) -> str | None:
    from suite.inputs.files import read_fixed_file  # never waits: a FIFO there is no stamp

    stamp = (read_fixed_file(path, 64) or "").strip()
    return stamp if _STAMP.fullmatch(stamp) else None


RUN_ID_VARIABLES = ("SUITE_RUN_ID", "SUITE_RUN_ID_OWNER")
OWNER_VARIABLE = "SUITE_RUN_ID_OWNER"
# What a suite process hands its own children (a run id the launcher chose, which command made a run, the
# cores a --per-device copy is pinned to and how many copies run beside it, the tuning search a run is a
# trial of):
# trusted only from an ancestor that proves it is one (OWNER_VARIABLE), never from a person's shell.
HANDED_DOWN = ("SUITE_RUN_ID", "SUITE_ORIGIN", "SUITE_CPU_CORES", "SUITE_SIBLINGS", "SUITE_TUNE")


def owner_token(pid: int | None = None) -> str:
    """`PID@START`: a process and its start time. The start time is what makes it a proof: PID 1 (init,
    everyone's ancestor) or a reused pid does not match a token written by a suite process."""
    pid = os.getpid() if pid is None else pid
    return f"{pid}@{psutil.Process(pid).create_time():.2f}"


def interpreter_start_time() -> float:
    """Wall-clock time this Python started the suite, where a run's time to first step counts from: the
    later of the suite package's first import in this interpreter (`suite.IMPORTED_AT`) and the process's
    creation (psutil; later in a process forked from one that imported the suite long before). The
    creation time alone would count what a shell did before `exec suite run` under the same pid (a
    `sleep`, an install); Python's own start-up before the import (tens of ms) is not counted."""
    try:
        created = psutil.Process().create_time()
    except (OSError, psutil.Error):
        created = 0.0
    return max(created, suite.IMPORTED_AT)


def handed_by_an_ancestor(env) -> bool:
    """ENV's owner token names a living ancestor of this process, by pid and start time."""
    pid, _, started = str(env.get(OWNER_VARIABLE, "")).partition("@")
    if not pid.isdigit() or not started:
        return False
    try:
        return any(
            parent.pid == int(pid) and f"{parent.create_time():.2f}" == started
            for parent in psutil.Process().parents()
        )
    except psutil.Error:
        return False


def drop_unowned_handoffs() -> list[str]:
    """Remove from this process's environment what only a suite parent may hand down, when no ancestor
    handed it (SUITE_ORIGIN=sweep left in a shell would hide a person's own runs from the report; a
    SUITE_RUN_ID would make every run overwrite one record). Returns the names removed."""
    present = [name for name in HANDED_DOWN if name in os.environ]
    if not present or handed_by_an_ancestor(os.environ):
        return []
    for name in (*present, OWNER_VARIABLE):
        os.environ.pop(name, None)
    return present


def child_env(**extra: str) -> dict:
    """The environment for a child `python -m suite ...`: it imports this same suite, installed or not."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    # A run id is handed only to this process's own children, with this process as its owner; one this
    # process inherited is never passed on (a sweep's points would all overwrite one record). The origin
    # passes on (a sweep point's own launcher keeps it), with this process as its owner.
    inherited = {k: v for k, v in os.environ.items() if k not in RUN_ID_VARIABLES}
    extra = {**extra, OWNER_VARIABLE: owner_token()}
    return {
        **inherited,
        **extra,
        "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p),
    }


# What the machine says it is, without the network: an AWS Nitro instance names its type as the DMI product
# name (sys_vendor "Amazon EC2", product_name "p5.48xlarge"); GCP's product name is "Google Compute Engine",
# no machine type, and then nothing is said (sources in docs/cost.md). SYSFS_ROOT_VARIABLE moves the root the
# files are read under, for tests only.
SYSFS_ROOT_VARIABLE = "SUITE_SYSFS_ROOT"
DMI_FOLDER = "sys/devices/virtual/dmi/id"  # /sys/class/dmi/id links here
_INSTANCE_TYPE = re.compile(r"[a-z][a-z0-9-]*\.[a-z0-9-]+")  # p5.48xlarge, m6g.metal, u-6tb1.metal


def _dmi(name: str, root: str) -> str | None:
    from suite.inputs.files import read_fixed_file  # sysfs, or the tests' stand-in: never waited on

    return (read_fixed_file(os.path.join(root, DMI_FOLDER, name), 256) or "").strip() or None


def detected_instance(root: str | None = None) -> dict | None:
    """The cloud instance type this machine says it is, and where it says so, for the record's
    `context.instance_source`: {"instance": "p5.48xlarge", "vendor": "Amazon EC2", "file": "/sys/...
    /product_name"}; None where it says nothing (GCP, Azure, a Xen-era EC2 instance, a laptop)."""
    root = root if root is not None else os.environ.get(SYSFS_ROOT_VARIABLE) or "/"
    vendor = _dmi("sys_vendor", root)
    if vendor != "Amazon EC2":
        return None
    name = _dmi("product_name", root)
    if not name or not _INSTANCE_TYPE.fullmatch(name):
        return None
    return {"instance": name, "vendor": vendor, "file": f"/{DMI_FOLDER}/product_name"}


def utc_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


LOAD_SAMPLE_S = 0.1  # the shortest CPU-time sample: ~10 clock ticks a CPU at Linux's usual 100 Hz


class _Reading(NamedTuple):
    machine: tuple  # all CPUs' times (psutil.cpu_times)
    own: tuple  # this process's (psutil.Process().cpu_times)
    at: float  # monotonic seconds
    pid: int  # whose reading: a fork's sample is its own


# The reading that starts the next CPU-time sample: set when the command starts (start_load_sample) and by
# each host_load().
_sample_start: _Reading | None = None

# Set by the parent of processes started together as one run (`--per-device` copies), as torchrun sets
# WORLD_SIZE for its ranks: each would count its siblings' start-up as other processes' load.
SIBLINGS_VARIABLE = "SUITE_SIBLINGS"


def _busy(times) -> float:
    """CPU seconds spent on anything but idling (iowait is idle: the CPU could have run something)."""
    return sum(times) - times.idle - getattr(times, "iowait", 0.0)


def _own(times) -> float:
    """CPU seconds of this process and of the children it has reaped (a sweep's points, DataLoader
    workers): work this process caused is not other processes' load."""
    children = getattr(times, "children_user", 0.0) + getattr(times, "children_system", 0.0)
    return times.user + times.system + children


def _reading() -> _Reading:
    return _Reading(psutil.cpu_times(), psutil.Process().cpu_times(), time.monotonic(), os.getpid())


def _started_with_siblings() -> bool:
    for name in ("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", SIBLINGS_VARIABLE):
        try:
            if int(os.environ.get(name) or 1) > 1:
                return True
        except ValueError:
            continue
    return False


def start_load_sample() -> None:
    """Start the CPU-time sample that the first host_load() ends, unless one is running: called as a
    command starts, so the sample spans the process's start-up (importing torch, building the model)
    rather than a sleep before the run. Not in a rank or a copy started beside its siblings: their
    start-up is not other processes' load, and there the sample is the short one as the run starts."""
    global _sample_start
    if _sample_start is None and not _started_with_siblings():
        try:
            _sample_start = _reading()
        except (OSError, psutil.Error):
            pass


def host_load(sample_s: float = LOAD_SAMPLE_S) -> dict:
    """The host's load as a run starts, for the record (as pyperf keeps the load average and CPU clock
    with every run): the 1- and 5-minute load averages, the share of all CPUs' time that OTHER processes
    used, and the CPU clock where the system exposes it. None where unreadable.
    The share's sample spans the command's start-up (start_load_sample) or, for a process's later runs,
    the time since its previous reading; at least `sample_s`, the remainder slept (±1 tick in ~10 a CPU
    at the shortest). The load averages span minutes."""
    global _sample_start
    load = {"logical_cpus": psutil.cpu_count(logical=True)}
    try:
        load["load_average_1m"], load["load_average_5m"], _ = os.getloadavg()
    except (OSError, AttributeError):  # not on every OS
        load["load_average_1m"] = load["load_average_5m"] = None
    try:
        before = _sample_start if _sample_start and _sample_start.pid == os.getpid() else _reading()
        time.sleep(max(0.0, sample_s - (time.monotonic() - before.at)))
        after = _sample_start = _reading()
        wall = after.at - before.at
        total = wall * (load["logical_cpus"] or 1)
        others = max(0.0, _busy(after.machine) - _busy(before.machine) - (_own(after.own) - _own(before.own)))
        load["others_cpu_percent"] = round(min(100.0, 100 * others / total), 1)
        load["sample_s"] = round(wall, 3)
    except (OSError, psutil.Error):
        load["others_cpu_percent"] = None
        load["sample_s"] = None
    try:
        frequency = psutil.cpu_freq()
    except (OSError, NotImplementedError, AttributeError):
        frequency = None
    load["cpu_mhz"] = round(frequency.current) if frequency and frequency.current else None
    load["cpu_max_mhz"] = round(frequency.max) if frequency and frequency.max else None
    return load


def torchvision_version() -> str | None:
    """torchvision's own version string (`0.29.1+cu130`), without importing it (package_version)."""
    return package_version("torchvision")


def package_version(name: str) -> str | None:
    """A package's own version string (`2.14.1+cu130`), without importing it where it is not imported yet:
    `suite env` and a sweep's dry run need nothing else of torch, and torchvision's import costs 2 to 3 s
    on 2 cores where nothing has imported torch._dynamo yet, 0.2 to 0.7 s more after a torch optimizer has.
    torch and torchvision keep the string in their version.py, where `__version__` comes from; a layout
    without it gives the installed metadata's (which may lack the `+cu130`); None where it is not installed."""
    import importlib.metadata
    import importlib.util

    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded.__version__
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        return None
    from suite.inputs.files import read_fixed_file  # a file of the installed package, never a person's

    for folder in spec.submodule_search_locations or ():
        text = read_fixed_file(os.path.join(folder, "version.py")) or ""
        found = re.search(r"^__version__ = ['\"]([^'\"]+)['\"]", text, re.M)
        if found:
            return found.group(1)
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def software_versions() -> dict:
    """The versions a record keeps of the software that computed it (the numerics ledger keys by the same):
    the modules' own, not their installed metadata's, since a CUDA wheel's metadata says 2.14.1 where
    torch.__version__ says 2.14.1+cu130."""
    return {
        "torch": package_version("torch"),
        "torchvision": torchvision_version(),
        "suite_version": suite.__version__,
    }


def collect() -> dict:
    from suite.backends.cpu import cpu_model_name

    return {
        "host": socket.gethostname(),
        "cpu_model": cpu_model_name(),
        "cpu_cores_physical": psutil.cpu_count(logical=False),
        "cpu_cores_logical": psutil.cpu_count(logical=True),
        "ram_bytes": psutil.virtual_memory().total,
        "os": f"{platform.system()} {platform.release()}",
        "platform": platform.platform(),
        "python": platform.python_version(),
        "python_executable": sys.executable,
        **software_versions(),
        "git_commit": git_commit(),
        "instance_source": detected_instance(),
        "utc_time": utc_now(),
        "load": host_load(),
    }
