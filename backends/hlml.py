"""Gaudi telemetry through pyhlml (PyPI `habana-pyhlml`), the Habana analogue of NVML.

HLML is initialised once per sampler (`open`), read many times (`sample`) and shut down once (`close`):
hlmlInit loads and opens the driver library, far too slow for every sample. Units as pyhlml returns them
(pyhlml/__init__.py docstrings): power in mW, memory in bytes, temperature in °C, energy in mJ since the
driver was loaded. The gauges below are in W, bytes, °C and J.
"""

from __future__ import annotations

import importlib
import importlib.util

from suite.backends.sampler import Sampler

# hlmlDeviceGetTemperature's sensor argument: 0 is the AIP (the compute die), HLML_TEMP_SENS.AIP.
TEMPERATURE_SENSOR_AIP = 0


def hlml_installed() -> bool:
    return importlib.util.find_spec("pyhlml") is not None


class HLMLSampler(Sampler):
    """AIP utilisation, memory used, power, temperature and (where the driver has it) energy of one card."""

    name = "hlml"

    def __init__(self, index: int = 0):
        self.index = index
        self._hlml = None
        self._handle = None
        self._energy = True

    def open(self) -> None:
        hlml = importlib.import_module("pyhlml")
        hlml.hlmlInit()
        self._hlml = hlml
        self._handle = hlml.hlmlDeviceGetHandleByIndex(self.index)
        try:
            hlml.hlmlDeviceGetTotalEnergyConsumption(self._handle)
        except Exception:  # older drivers and pyhlml versions have no energy counter: leave it out
            self._energy = False

    def sample(self) -> dict[str, float]:
        hlml, handle = self._hlml, self._handle
        utilization = hlml.hlmlDeviceGetUtilizationRates(handle)
        # A c_hlml_utilization with .aip (%); very old pyhlml returned the number itself.
        aip_percent = getattr(utilization, "aip", utilization)
        memory = hlml.hlmlDeviceGetMemoryInfo(handle)
        values = {
            "hpu_util_percent": float(aip_percent),
            "hpu_memory_used_bytes": float(memory.used),
            "hpu_power_w": hlml.hlmlDeviceGetPowerUsage(handle) / 1000.0,  # mW -> W
            "hpu_temperature_c": float(hlml.hlmlDeviceGetTemperature(handle, TEMPERATURE_SENSOR_AIP)),
        }
        return values

    def counters(self) -> dict[str, float]:
        if not self._energy:
            return {}
        # A running total (mJ -> J), read at window edges: a window's energy is the difference.
        return {"hpu_energy_j": self._hlml.hlmlDeviceGetTotalEnergyConsumption(self._handle) / 1000.0}

    def close(self) -> None:
        if self._hlml is not None:
            self._hlml.hlmlShutdown()
            self._hlml = None
