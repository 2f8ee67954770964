"""`suite run --profile DIR`: torch.profiler over the timed steps.

The profiler follows a wait/warmup/active schedule (torch.profiler.schedule; the pattern of
https://pytorch.org/tutorials/intermediate/tensorboard_profiler_tutorial.html) counted in timed steps, and
writes one Chrome-trace JSON per active cycle through tensorboard_trace_handler: TensorBoard's profiler
plugin (torch-tb-profiler) reads the folder, and https://ui.perfetto.dev opens each file.

Profiling perturbs what it measures (per-operator bookkeeping on the host, trace export at the end of the
active steps, inside a timed window), so a profiled run's record says so and its throughput is not
comparable with unprofiled runs.
"""

from __future__ import annotations

import glob
import os
import warnings

TOP_OPERATORS = 10
PERTURBED = (
    "this run was profiled: torch.profiler adds host overhead and exports its trace inside a "
    "timed window, so its throughput is not comparable with unprofiled runs"
)
NO_WARMUP = (
    "no profiler warm-up step fits in the timed steps: the first active step includes the profiler's own "
    "start-up (more --steps or --windows give it one)"
)
# libkineto, torch.profiler's engine, reads KINETO_LOG_LEVEL once when the first profiler starts and prints
# every message at or above it (severities VERBOSE 0 ... USDT 5 in torch 2.14). A value above them all
# silences it; https://github.com/pytorch/kineto/blob/main/libkineto/src/init.cpp (libkineto_init).
KINETO_SILENT = "99"


def schedule_for(timed_steps: int, wait: int = 1, warmup: int = 1, active: int = 3) -> dict:
    """The seed's wait=1, warmup=1, active=3, shrunk to fit the timed steps there are (active first)."""
    active = max(1, min(active, timed_steps))
    warmup = max(0, min(warmup, timed_steps - active))
    wait = max(0, min(wait, timed_steps - active - warmup))
    return {"wait": wait, "warmup": warmup, "active": active, "repeat": 1}


class NoProfiler:
    """What the runner holds when no profile was asked for: every call is free."""

    def step(self) -> None:
        pass

    def close(self) -> dict | None:
        return None


class StepProfiler:
    """torch.profiler.profile, started before the first timed step and stepped after each one."""

    def __init__(self, out_dir: str, timed_steps: int, activities=None, worker_name: str | None = None):
        import torch.profiler as tp

        self.out_dir = os.path.abspath(out_dir)
        os.makedirs(self.out_dir, exist_ok=True)
        self.schedule = schedule_for(timed_steps)
        self._before = set(glob.glob(os.path.join(self.out_dir, "*.json*")))
        activities = list(activities) if activities else [tp.ProfilerActivity.CPU]
        if activities == [tp.ProfilerActivity.CPU]:
            # A host-only trace has no device for libkineto to probe, yet on a CUDA build of torch without a
            # GPU it prints "gpuGetDeviceCount failed with code 35" and stage lines nobody can act on. With
            # a device traced its messages stay (a CUPTI permission error there is worth seeing).
            os.environ.setdefault("KINETO_LOG_LEVEL", KINETO_SILENT)
        with warnings.catch_warnings():
            # Said once in this profile's own notes instead (NO_WARMUP), where the schedule is printed.
            warnings.filterwarnings("ignore", message="Profiler won't be using warmup")
            schedule = tp.schedule(**self.schedule)
        self.profiler = tp.profile(
            activities=activities,
            schedule=schedule,
            on_trace_ready=tp.tensorboard_trace_handler(self.out_dir, worker_name=worker_name),
            record_shapes=True,
        )
        self.profiler.start()

    def step(self) -> None:
        # note: host-side bookkeeping only; it reads no device value (no sync here)
        self.profiler.step()

    def close(self) -> dict:
        self.profiler.stop()  # a cycle cut short by the last step is still saved here
        traces = sorted(set(glob.glob(os.path.join(self.out_dir, "*.json*"))) - self._before)
        return {
            "dir": self.out_dir,
            "schedule": self.schedule,
            "trace_files": traces,
            "top_operators": top_operators(self.profiler.key_averages()),
            "note": PERTURBED if self.schedule["warmup"] else f"{PERTURBED}; {NO_WARMUP}",
        }


def open_profiler(spec, backend, timed_steps: int):
    """A StepProfiler when the run asked for --profile, else a no-op. The backend names the profiler
    activities for its device (`profiler_activities()`: the host's, plus CUDA's or HPU's)."""
    if not spec.checks.profile_dir:
        return NoProfiler()
    return StepProfiler(spec.checks.profile_dir, timed_steps, backend.profiler_activities())


def top_operators(averages, limit: int = TOP_OPERATORS) -> list[dict]:
    """The operators that took most self time, host and device, in the active steps."""
    rows = []
    total_cpu_s = sum(event.self_cpu_time_total for event in averages) / 1e6 or 1.0
    for event in averages:
        device_us = getattr(event, "self_device_time_total", None)
        if device_us is None:
            device_us = getattr(event, "self_cuda_time_total", 0)
        rows.append(
            {
                "name": event.key,
                "calls": int(event.count),
                "self_cpu_time_s": event.self_cpu_time_total / 1e6,
                "self_cpu_share": event.self_cpu_time_total / 1e6 / total_cpu_s,
                "self_device_time_s": (device_us or 0) / 1e6,
            }
        )
    rows.sort(key=lambda row: (row["self_device_time_s"], row["self_cpu_time_s"]), reverse=True)
    return rows[:limit]


def render(profile: dict) -> str:
    """The short table printed after a profiled run."""
    from tabulate import tabulate

    rows = profile.get("top_operators") or []
    with_device = any(r["self_device_time_s"] for r in rows)
    table = [
        [r["name"][:48], r["calls"], f"{r['self_cpu_time_s'] * 1e3:,.2f}", f"{r['self_cpu_share']:.0%}"]
        + ([f"{r['self_device_time_s'] * 1e3:,.2f}"] if with_device else [])
        for r in rows
    ]
    headers = ["operator", "calls", "self CPU (ms)", "share of CPU"] + (
        ["self device (ms)"] if with_device else []
    )
    schedule = profile["schedule"]
    lines = [
        f"profile: top operators over {schedule['active']} active step(s) "
        f"(schedule wait={schedule['wait']} warmup={schedule['warmup']} active={schedule['active']})",
        tabulate(table, headers=headers, disable_numparse=True),
        f"traces: {profile['dir']} ({len(profile['trace_files'])} file(s); open with TensorBoard "
        "--logdir, or in https://ui.perfetto.dev)",
        f"note: {profile['note']}",
    ]
    return "\n".join(lines)
