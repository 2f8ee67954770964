"""Telemetry: one background sampler for every backend, running only inside the timed windows.

A `Sampler` reads a few gauges (host CPU, a GPU through NVML, a Gaudi card through pyhlml). The
`Telemetry` thread calls every sampler each `interval_s` while a window is open and keeps the series;
between windows it sleeps, so warm-up and record writing never show in the figures.
"""

from __future__ import annotations

import math
import threading
import time
import warnings

import psutil


class Sampler:
    """Reads gauges. `open()` once (SDK init), `sample()` many times, `close()` once."""

    name = "sampler"

    def open(self) -> None:
        pass

    def sample(self) -> dict[str, float]:
        raise NotImplementedError

    def close(self) -> None:
        pass


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

    def __init__(self, samplers: list[Sampler], interval_s: float = 0.15):
        self.interval_s = interval_s
        self.samplers: list[Sampler] = []
        self.series: list[dict[str, float]] = []  # each row: {"t_s": seconds since start, gauge: value}
        self.failed: dict[str, str] = {}
        for sampler in samplers:
            try:
                sampler.open()
                self.samplers.append(sampler)
            except Exception as error:  # telemetry must never stop a run: one warning, then go on
                self.failed[sampler.name] = f"{type(error).__name__}: {error}"
                warnings.warn(f"telemetry '{sampler.name}' off: {error}", stacklevel=2)
        self._open = threading.Event()
        self._stop = threading.Event()
        self._start = time.perf_counter()
        self._thread = threading.Thread(target=self._loop, name="suite-telemetry", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            if not self._open.wait(timeout=0.5):
                continue
            row = {"t_s": time.perf_counter() - self._start}
            for sampler in list(self.samplers):
                try:
                    row.update(sampler.sample())
                except Exception as error:
                    self.failed[sampler.name] = f"{type(error).__name__}: {error}"
                    self.samplers.remove(sampler)
            self.series.append(row)
            self._stop.wait(self.interval_s)

    def window_open(self) -> None:
        self._open.set()

    def window_closed(self) -> None:
        self._open.clear()

    def close(self) -> dict:
        """Stop sampling and return the record's telemetry section."""
        self._open.clear()
        self._stop.set()
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
            "failed": self.failed,
        }
