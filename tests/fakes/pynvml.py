"""A fake `pynvml` (the nvidia-ml-py module) that records every call and answers in NVML's own units:
power in milliwatts, energy in millijoules (a counter that grows at the fake power), memory in bytes,
utilisation in percent, temperature in °C, clocks in MHz.

Use `install(monkeypatch, **state)`: it resets the fake and puts it in sys.modules as `pynvml`.
Only the functions the suite calls exist; anything else is an AttributeError, as a typo would be.
"""

from __future__ import annotations

import sys
import time
from types import SimpleNamespace

NVML_TEMPERATURE_GPU = 0
NVML_CLOCK_SM = 1

DEFAULTS = {
    "driver": "550.54.15",
    "gpu_util": 97,
    "memory_util": 41,
    "memory_used_bytes": 12 * 1024**3,
    "memory_total_bytes": 40 * 1024**3,
    "power_mw": 215_500,  # 215.5 W
    "temperature_c": 63,
    "sm_clock_mhz": 1410,
    "fail_init": False,  # nvmlInit raises (no driver)
    "unsupported": (),  # function names that answer NOT_SUPPORTED
    "fail_after_samples": None,  # utilisation reads that succeed before every read raises
    # The energy counter advances by this much per read, as if a second at the fake power had passed
    # since the last one: per read, not by wall clock, so a slow machine cannot change what a test sees.
    "energy_seconds_per_read": 1.0,
}

state: dict = {}
calls: list[tuple] = []  # (function name, perf_counter time, args)
_energy_mj = 0.0


class NVMLError(Exception):
    pass


class NVMLError_NotSupported(NVMLError):  # noqa: N801 - pynvml's spelling
    pass


def reset(**overrides) -> None:
    global _energy_mj
    unknown = set(overrides) - set(DEFAULTS)
    if unknown:
        raise TypeError(f"unknown fake NVML state {sorted(unknown)}")
    state.clear()
    state.update(DEFAULTS, **overrides)
    calls.clear()
    _energy_mj = 0.0


def install(monkeypatch, **overrides):
    reset(**overrides)
    monkeypatch.setitem(sys.modules, "pynvml", sys.modules[__name__])
    return sys.modules[__name__]


def count(name: str) -> int:
    return sum(1 for call in calls if call[0] == name)


def _record(name: str, *args) -> None:
    calls.append((name, time.perf_counter(), args))
    if name in state["unsupported"]:
        raise NVMLError_NotSupported("Not Supported")


def nvmlInit() -> None:
    _record("nvmlInit")
    if state["fail_init"]:
        raise NVMLError("Driver Not Loaded")


def nvmlShutdown() -> None:
    _record("nvmlShutdown")


def nvmlSystemGetDriverVersion() -> str:
    _record("nvmlSystemGetDriverVersion")
    return state["driver"]


def nvmlDeviceGetHandleByIndex(index: int):
    _record("nvmlDeviceGetHandleByIndex", index)
    return SimpleNamespace(index=index)


def nvmlDeviceGetHandleByPciBusId(bus_id: str):
    _record("nvmlDeviceGetHandleByPciBusId", bus_id)
    return SimpleNamespace(bus_id=bus_id)


def nvmlDeviceGetUtilizationRates(handle):
    _record("nvmlDeviceGetUtilizationRates", handle)
    limit = state["fail_after_samples"]
    if limit is not None and count("nvmlDeviceGetUtilizationRates") > limit:
        raise NVMLError("GPU is lost")
    return SimpleNamespace(gpu=state["gpu_util"], memory=state["memory_util"])


def nvmlDeviceGetMemoryInfo(handle):
    _record("nvmlDeviceGetMemoryInfo", handle)
    used, total = state["memory_used_bytes"], state["memory_total_bytes"]
    return SimpleNamespace(used=used, total=total, free=total - used)


def nvmlDeviceGetPowerUsage(handle) -> int:
    _record("nvmlDeviceGetPowerUsage", handle)
    return state["power_mw"]


def nvmlDeviceGetTotalEnergyConsumption(handle) -> int:
    _record("nvmlDeviceGetTotalEnergyConsumption", handle)
    # A counter in mJ growing at the fake power: mW x s = mJ, one fake interval per read.
    global _energy_mj
    _energy_mj += state["power_mw"] * state["energy_seconds_per_read"]
    return int(_energy_mj)


def nvmlDeviceGetTemperature(handle, sensor: int) -> int:
    _record("nvmlDeviceGetTemperature", handle, sensor)
    return state["temperature_c"]


def nvmlDeviceGetClockInfo(handle, clock: int) -> int:
    _record("nvmlDeviceGetClockInfo", handle, clock)
    return state["sm_clock_mhz"]
