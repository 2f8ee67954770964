"""Gaudi telemetry through pyhlml (PyPI `habana-pyhlml`), the Habana analogue of NVML.

HLML is initialised once per sampler (`open`), read many times (`sample`) and shut down once (`close`):
hlmlInit loads and opens the driver library, far too slow for every sample. Units as pyhlml returns them
(pyhlml/__init__.py docstrings): power in mW, memory in bytes, temperature in °C, energy in mJ since the
driver was loaded. The gauges below are in W, bytes, °C and J.

Which card: HLML numbers cards by its own index, which is not the module id the bridge opens (`hl-smi -Q
index,module_id` shows index 0 as module 5 on an HLS). The sampler finds the HLML device whose
hlmlDeviceGetModuleID equals this process's module id (HLS_MODULE_ID), and says how it chose in
`attribution`. Without a module id it can tell only when a single card is visible; otherwise it reads
nothing and records the telemetry as unattributed rather than guess.
"""

from __future__ import annotations

import importlib
import importlib.util

from suite.backends.sampler import Sampler

# hlmlDeviceGetTemperature's sensor argument: 0 is the AIP (the compute die), HLML_TEMP_SENS.AIP.
TEMPERATURE_SENSOR_AIP = 0


def hlml_installed() -> bool:
    return importlib.util.find_spec("pyhlml") is not None


def _text(value) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


class HLMLSampler(Sampler):
    """AIP utilisation, memory used, power, temperature and (where the driver has it) energy of one card."""

    name = "hlml"

    def __init__(self, module_id: int | None = None, index: int | None = None):
        self.module_id = module_id
        self.index = index  # an HLML index known to be this process's card (tests, tools)
        self.attribution: dict = {"matched_by": None}
        self._hlml = None
        self._handle = None
        self._energy = True

    def _find_handle(self, hlml):
        if self.index is not None:
            self.attribution = {"matched_by": "hlml index given", "hlml_index": self.index}
            return hlml.hlmlDeviceGetHandleByIndex(self.index)
        count = hlml.hlmlDeviceGetCount()
        if self.module_id is not None:
            for index in range(count):
                handle = hlml.hlmlDeviceGetHandleByIndex(index)
                if hlml.hlmlDeviceGetModuleID(handle) == self.module_id:
                    self.attribution = {
                        "matched_by": "module_id (HLS_MODULE_ID)",
                        "module_id": self.module_id,
                        "hlml_index": index,
                        "pci_bus_id": _text(hlml.hlmlDeviceGetPCIInfo(handle).bus_id),
                    }
                    return handle
            self.attribution = {
                "matched_by": None,
                "unattributed": f"no HLML device has module id {self.module_id} ({count} visible)",
            }
            return None
        if count == 1:
            self.attribution = {"matched_by": "the only visible card", "hlml_index": 0}
            return hlml.hlmlDeviceGetHandleByIndex(0)
        self.attribution = {
            "matched_by": None,
            "unattributed": f"{count} cards visible and no HLS_MODULE_ID: the card this process holds is "
            "unknown, so no card's telemetry is recorded",
        }
        return None

    def open(self) -> None:
        hlml = importlib.import_module("pyhlml")
        hlml.hlmlInit()
        self._hlml = hlml
        self._handle = self._find_handle(hlml)
        if self._handle is None:
            self._energy = False
            return
        try:
            hlml.hlmlDeviceGetTotalEnergyConsumption(self._handle)
        except (hlml.HLMLError, AttributeError):
            # HLMLError (pyhlml's one error type) where the driver has no energy counter, AttributeError
            # where the pyhlml version has no such call: leave energy out. Anything else is a real fault.
            self._energy = False

    def sample(self) -> dict[str, float]:
        hlml, handle = self._hlml, self._handle
        if handle is None:
            return {}  # unattributed
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
