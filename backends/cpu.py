"""The CPU backend: a real backend (fp32 or bf16 autocast), and the one every test runs on."""

from __future__ import annotations

import contextlib
import os
import platform
import resource
import sys

import psutil

from suite.inputs.errors import UserError

from . import register_backend
from .base import Backend, Schedule

# On a CPU the seed's GPU batch sizes take minutes a step; this keeps `suite run` under a minute.
CPU_DEFAULT_BATCH_CAP = 16
# `--per-device` on the CPU: the cores one copy is pinned to (its "device"), e.g. "0,1".
CORES_ENV = "SUITE_CPU_CORES"


def cpu_model_name() -> str:
    from suite.inputs.files import read_fixed_file

    for line in (read_fixed_file("/proc/cpuinfo") or "").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def pinned_cores() -> list[int] | None:
    """The core group SUITE_CPU_CORES pins this copy of a --per-device run to (None: not one), checked: the
    per-device parent writes distinct cores this process may run on, comma-separated; anything else is a
    UserError naming it (`0,0,0,0` was recorded as 4 threads on 1 core, `x` failed the run at set-up)."""
    value = os.environ.get(CORES_ENV)
    if value is None:
        return None
    parts = [part.strip() for part in value.split(",")]
    allowed = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set(range(os.cpu_count() or 1))
    if not all(part.isascii() and part.isdigit() and len(part) <= 6 for part in parts):
        cores = None
    else:
        cores = [int(part) for part in parts]
    if cores is None or len(set(cores)) != len(cores) or not set(cores) <= allowed:
        raise UserError(
            f"environment variable {CORES_ENV}={value!r} must be distinct cores this process may run on, "
            f"comma-separated (here: {','.join(map(str, sorted(allowed)))}); only `--per-device` sets it"
        )
    return cores


def torch_threads() -> int:
    """The threads torch computes on: its own count once imported; before that, the count it will start
    with, without importing it (`suite env`): OMP_NUM_THREADS, else MKL_NUM_THREADS, where set to a
    positive number, else one per physical core (torch's intraop_default_num_threads, ATen's
    ParallelCommon.cpp, and c10's TaskThreadPoolBase::defaultNumThreads)."""
    loaded = sys.modules.get("torch")
    if loaded is not None:
        return loaded.get_num_threads()
    for value in (os.environ.get("OMP_NUM_THREADS", ""), os.environ.get("MKL_NUM_THREADS", "")):
        if value.isascii() and value.isdigit() and int(value) > 0:
            return int(value)
    return psutil.cpu_count(logical=False) or os.cpu_count() or 1


class MemoryCeilingExceeded(MemoryError):
    """The CPU's stand-in for a device out-of-memory error: the --max-memory ceiling was passed."""


@register_backend
class CPUBackend(Backend):
    name = "cpu"
    dist_backend = "gloo"
    precisions = ("fp32", "bf16")
    pin_memory_default = False  # the batches stay on the host: nothing to copy
    copies_to_device = False  # compute runs in host memory: no copy to pin for, or to wait on
    # No minimum window: a CPU step of the suite's workloads takes seconds (dcgan64 at batch 16, 2 to 10 s
    # on a shared 2-core machine), so one makes a window already, and the host's telemetry has no power
    # reading to fill. A time box instead: unless --steps or --windows is given, the windows are fitted
    # to about 20 s from the warm-up step's time, at most 5 windows of 4 steps, at least 2 of 1 step
    # (suite/measurement/window_length.py), so that a first `suite run` ends in about a minute.
    schedule = Schedule(warmup_steps=1, steps_per_window=4, windows=5, window_budget_s=20.0)

    def __init__(self, spec):
        cores = pinned_cores()
        if cores and spec.threads is None:
            # One copy of a --per-device run: one thread per core of its group, recorded as what ran.
            spec = spec.replace(threads=len(cores))
        super().__init__(spec)

    @classmethod
    def is_available(cls) -> tuple[bool, str]:
        return True, "always"

    def default_batch_size(self, workload) -> int:
        return min(workload.default_batch_size, CPU_DEFAULT_BATCH_CAP)

    def setup(self) -> None:
        # What the process holds before any model exists (Python, torch): --max-memory counts above it,
        # so that the ceiling stands for what a device's memory would hold (model, optimizer, batches).
        # torch's optimizers import torch._dynamo when the first one is built (about 150 MiB of modules on
        # x86-64): imported here, that is torch's own weight in the baseline, not the run's.
        import torch
        import torch._dynamo  # noqa: F401

        self._baseline_rss_bytes = psutil.Process().memory_info().rss
        self._maxrss_at_setup_bytes = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        cores = pinned_cores()
        if cores:  # one copy of a --per-device run: pinned to its own core group
            os.sched_setaffinity(0, cores)
        if self.spec.threads is not None:
            if self.spec.threads > (psutil.cpu_count(logical=True) or 1) * 4:
                raise UserError(
                    f"--threads {self.spec.threads} is far more than this machine's "
                    f"{psutil.cpu_count(logical=True)} logical cores"
                )
            torch.set_num_threads(self.spec.threads)
            self.threads_reason = "as asked (--threads)"
        elif self.spec.data.source != "synthetic":
            self._fit_threads_to_the_loader()

    def _fit_threads_to_the_loader(self) -> None:
        """Real data on the CPU: compute's threads and the loader's workers share the cores, so the default
        thread count leaves the workers theirs (suite.data.split_host_cores says how, and the record why)."""
        import torch

        from suite.data import default_workers, split_host_cores

        workers = self.spec.data.workers
        _, threads, why = split_host_cores(
            psutil.cpu_count(logical=True) or 1, default_workers(self.spec), workers, None
        )
        torch.set_num_threads(threads)
        self.threads_reason = why

    def autocast(self):
        import torch

        if self.precision == "bf16":
            return torch.autocast(device_type="cpu", dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def end_step(self) -> None:
        # The --max-memory ceiling. ru_maxrss (the peak resident set) is a cheap syscall and reads no
        # tensor, so checking it every step adds no host-device sync to a timed window.
        ceiling = self.spec.checks.max_memory_bytes
        if ceiling is None:
            return
        used = self._peak_rss_since_setup() - self._baseline_rss_bytes
        if used > ceiling:
            raise MemoryCeilingExceeded(
                f"out of memory: the step used {used / 2**20:,.0f} MiB of host memory, "
                f"over --max-memory {ceiling / 2**20:,.0f} MiB"
            )

    def _peak_rss_since_setup(self) -> int:
        # ru_maxrss is the high-water mark of the process's whole life: once it has risen since setup,
        # it is this run's peak; before that, the run's peak is hidden under an older one and the
        # current resident set is the best cheap estimate.
        maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        if maxrss > self._maxrss_at_setup_bytes:
            return maxrss
        return psutil.Process().memory_info().rss

    def memory_stats(self) -> dict:
        # ru_maxrss is the process's peak resident set, in KiB on Linux: it includes everything the
        # process ever held (model, optimizer state, activations, the Python runtime).
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        return {
            "peak_memory_bytes": peak,
            "rss_bytes": psutil.Process().memory_info().rss,
            "total_memory_bytes": psutil.virtual_memory().total,
        }

    def device_info(self) -> dict:
        return {
            "backend": self.name,
            "name": cpu_model_name(),
            "count": 1,
            "cores_physical": psutil.cpu_count(logical=False),
            "cores_logical": psutil.cpu_count(logical=True),
            "threads": torch_threads(),
            "cores": sorted(os.sched_getaffinity(0)),  # the CPUs this process may run on
            "threads_reason": getattr(self, "threads_reason", "torch's default: one per core"),
        }

    def describe(self) -> dict:
        # The host needs nothing started to be described (setup() would import torch._dynamo for the
        # --max-memory baseline): `suite env` stays quick.
        return self.device_info()

    def pin_envs(self, copies: int) -> list[dict[str, str]]:
        # The CPU's "devices" are groups of the cores this process may use, split evenly; each copy
        # pins itself to its group in setup() (os.sched_setaffinity) and runs one thread per core.
        cores = sorted(os.sched_getaffinity(0))
        if copies > len(cores):
            raise UserError(f"--per-device {copies}: only {len(cores)} core(s) to divide")
        size = len(cores) // copies
        if self.spec.threads is not None and self.spec.threads > size:
            # Pinned to SIZE cores, more threads only take turns on them: the record would claim threads
            # that never ran side by side.
            raise UserError(
                f"--per-device {copies} --threads {self.spec.threads}: each copy is pinned to {size} of the "
                f"{len(cores)} core(s); give --threads {size} or fewer, or leave it out (one thread per core)"
            )
        groups = [cores[i * size : (i + 1) * size] for i in range(copies)]
        return [
            {CORES_ENV: ",".join(map(str, group)), "OMP_NUM_THREADS": str(len(group))} for group in groups
        ]

    def is_out_of_memory(self, error: BaseException) -> bool:
        return isinstance(error, MemoryError) or "DefaultCPUAllocator: can't allocate memory" in str(error)
