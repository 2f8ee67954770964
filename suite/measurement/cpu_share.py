"""The CPU share a run actually got: per timed window, this process's own CPU time (user + system, all
its threads, from time.process_time) ÷ the window's wall time, in cores (1.0: one CPU's worth all window long).

The host's load is sampled once as a run starts (suite.context.host_load); on a saturated host the other
processes' share sits at its ceiling on every run (82 % beside 83 %), while the time this run got in its
windows still differs. The readings are taken at the window edges the telemetry already has, outside the
clock (suite.measurement.runner: synchronize, telemetry.window_open, clock ... clock, telemetry.window_closed),
so no step is slowed and no device synchronisation is added. Loader worker processes are other
processes: their time is not in this figure.
"""

from __future__ import annotations

import statistics
import time


def own_cpu_seconds() -> float:
    """User + system CPU seconds of this process, all its threads. time.process_time (Linux:
    CLOCK_PROCESS_CPUTIME_ID, nanoseconds), not os.times, whose clock ticks of 10 ms made a window of a few
    milliseconds read 0 or 6 cores on a 2-core host."""
    return time.process_time()


class CpuShare:
    """Own CPU time ÷ wall time, window by window. `open()` and `close()` at each window's edges."""

    def __init__(self, cpu_seconds=own_cpu_seconds, wall_seconds=time.perf_counter):
        self._cpu, self._wall = cpu_seconds, wall_seconds
        self._opened: tuple[float, float] | None = None
        self.cores: list[float] = []  # one a window

    def open(self) -> None:
        self._opened = (self._cpu(), self._wall())

    def close(self) -> None:
        if self._opened is None:
            return
        cpu, wall = self._cpu() - self._opened[0], self._wall() - self._opened[1]
        self._opened = None
        if wall > 0:
            self.cores.append(cpu / wall)


def load_fields(cores: list[float], logical_cpus: int | None) -> dict:
    """What a record keeps beside the host's load (its context's "load"): the median window's own CPU
    cores, and that as a share of all logical CPUs (percent, comparable with others_cpu_percent)."""
    if not cores:
        return {}
    median = statistics.median(cores)
    fields = {"own_cpu_cores": round(median, 3)}
    if logical_cpus:
        fields["own_cpu_percent"] = round(min(100.0, 100 * median / logical_cpus), 1)
    return fields


def add_to_load(record: dict) -> None:
    """The run's own share into its context's load, from its telemetry's per-window figures."""
    load = (record.get("context") or {}).get("load")
    cores = (record.get("telemetry") or {}).get("own_cpu_cores") or []
    if isinstance(load, dict):
        load.update(load_fields(cores, load.get("logical_cpus")))
