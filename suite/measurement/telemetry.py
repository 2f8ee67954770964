"""Telemetry: one background sampler for every backend, running only inside the timed windows.

A `Sampler` reads a few gauges (host CPU, a GPU through NVML, a Gaudi card through pyhlml). The
`Telemetry` thread calls every sampler each `interval_s` while a window is open and keeps the series;
between windows it sleeps, so warm-up and record writing never show in the figures.

Cumulative counters (a GPU's energy counter) are read on the caller's thread at the window edges, which
the runner calls after its synchronize and outside its clock, so a window's energy is exact rather than
interpolated from samples.
"""

from __future__ import annotations

import math
import threading
import time

import psutil

from suite.backends.sampler import Sampler
from suite.measurement.cpu_share import CpuShare


class HostSampler(Sampler):
    """Host CPU utilisation (all cores, %) and RAM in use: on every backend, CPU included."""

    name = "host"

    def open(self) -> None:
        psutil.cpu_percent(interval=None)  # the first call only primes the counter

    def sample(self) -> dict[str, float]:
        return {
            "host_cpu_util_percent": psutil.cpu_percent(interval=None),
            "host_ram_used_bytes": float(psutil.virtual_memory().used),
        }


def summarise(values: list[float]) -> dict[str, float]:
    finite = [v for v in values if v is not None and math.isfinite(v)]
    if not finite:
        return {}
    return {"mean": sum(finite) / len(finite), "min": min(finite), "max": max(finite)}


class Telemetry:
    """Samples while a window is open. Use `window_open()` / `window_closed()` around each window."""

    def __init__(self, samplers: list[Sampler], interval_s: float = 0.15, cpu_share: CpuShare | None = None):
        self.interval_s = interval_s
        self.cpu_share = cpu_share or CpuShare()  # this process's CPU time per window, read at its edges
        self.samplers: list[Sampler] = []
        self.series: list[dict[str, float]] = []  # each row: {"t_s": seconds since start, gauge: value}
        self.windows: list[list[float]] = []  # [open t_s, closed t_s] per window
        self.counters: dict[str, float] = {}  # counter name -> sum over windows of (closed - open)
        self._counters_at_open: dict[str, dict[str, float]] = {}
        self.failed: dict[str, str] = {}
        for sampler in samplers:
            try:
                sampler.open()
                self.samplers.append(sampler)
            except Exception as error:
                self._fail(sampler, error)
        # The lock makes a window edge and a sample exclusive: a sample is taken entirely inside an
        # open window, never straddling its close.
        self._lock = threading.Lock()
        self._open = threading.Event()
        self._stop = threading.Event()
        self._start = time.perf_counter()
        self._thread = threading.Thread(target=self._loop, name="suite-telemetry", daemon=True)
        self._thread.start()

    def _now(self) -> float:
        return time.perf_counter() - self._start

    def _fail(self, sampler: Sampler, error: BaseException) -> None:
        # Telemetry must never stop a run: the sampler is dropped and its error kept in `failed`,
        # which the runner turns into one warning in the record (and so in the summary).
        self.failed[sampler.name] = f"{type(error).__name__}: {error}"
        if sampler in self.samplers:
            self.samplers.remove(sampler)
            try:
                sampler.close()
            except Exception:
                pass

    def _loop(self) -> None:
        while not self._stop.is_set():
            if not self._open.wait(timeout=0.5):
                continue
            with self._lock:
                if self._stop.is_set():  # close() woke the wait: no sample after the last window
                    return
                if not self._open.is_set():  # the window closed while we waited for the lock
                    continue
                row = {"t_s": self._now()}
                for sampler in list(self.samplers):
                    try:
                        row.update(sampler.sample())
                    except Exception as error:
                        self._fail(sampler, error)
                self.series.append(row)
            self._stop.wait(self.interval_s)

    def _read_counters(self) -> dict[str, dict[str, float]]:
        values = {}
        for sampler in list(self.samplers):
            try:
                values[sampler.name] = sampler.counters()
            except Exception as error:
                self._fail(sampler, error)
        return values

    def window_open(self) -> None:
        with self._lock:
            self._counters_at_open = self._read_counters()
            self.windows.append([self._now(), math.nan])
            self._open.set()
            self.cpu_share.open()

    def window_closed(self) -> None:
        with self._lock:
            self.cpu_share.close()
            self._open.clear()
            if self.windows:
                self.windows[-1][1] = self._now()
            at_close = self._read_counters()
            for name, opened in self._counters_at_open.items():
                for counter, start_value in opened.items():
                    if counter in at_close.get(name, {}):
                        self.counters[counter] = (
                            self.counters.get(counter, 0.0) + at_close[name][counter] - start_value
                        )

    def close(self) -> dict:
        """Stop sampling and return the record's telemetry section."""
        self._stop.set()
        self._open.set()  # wakes the loop's wait at once (it sees the stop first), not up to 0.5 s later
        self._thread.join(timeout=5)
        for sampler in self.samplers:
            try:
                sampler.close()
            except Exception:
                pass
        gauges = sorted({key for row in self.series for key in row if key != "t_s"})
        return {
            "interval_s": self.interval_s,
            "samples": len(self.series),
            "summary": {g: summarise([row.get(g) for row in self.series]) for g in gauges},
            "series": self.series,
            "windows_s": self.windows,
            "counters": self.counters,
            "own_cpu_cores": [round(c, 4) for c in self.cpu_share.cores],
            "failed": self.failed,
        }


def energy_per_image(
    telemetry: dict, images_timed: int, time_timed_s: float
) -> tuple[float | None, str | None]:
    """Joules per training image in the timed windows, and how it was found.

    Prefer the device's energy counter (read exactly at the window edges); otherwise integrate the
    mean sampled power over the timed time. Every device gauge named `*_power_w` / `*_energy_j` is
    summed (host power is not measured). None where the device reports neither.
    """
    if not images_timed:
        return None, None
    energy = [v for k, v in telemetry.get("counters", {}).items() if k.endswith("_energy_j")]
    if energy:
        return sum(energy) / images_timed, "device energy counter at window edges"
    powers = [s["mean"] for k, s in telemetry.get("summary", {}).items() if k.endswith("_power_w") and s]
    if powers and time_timed_s:
        return sum(powers) * time_timed_s / images_timed, "mean sampled power x timed time"
    return None, None
