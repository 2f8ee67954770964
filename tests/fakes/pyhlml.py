"""Fake `pyhlml` (PyPI habana-pyhlml) with the real units: power mW, memory bytes, °C, energy mJ."""

from types import SimpleNamespace

CALLS: list = []
UTILIZATION_AIP = 87
MEMORY_USED_BYTES = 12 * 2**30
MEMORY_TOTAL_BYTES = 32 * 2**30
POWER_MW = 123_456
TEMPERATURE_C = 48
ENERGY_MJ = 9_876_000
HAS_ENERGY = True


def hlmlInit():
    CALLS.append("hlmlInit")


def hlmlShutdown():
    CALLS.append("hlmlShutdown")


def hlmlDeviceGetCount():
    return 8


def hlmlDeviceGetHandleByIndex(index):
    CALLS.append(f"handle {index}")
    return SimpleNamespace(index=index)


def hlmlDeviceGetName(handle):
    return b"HL-205"


def hlmlDeviceGetUtilizationRates(handle):
    CALLS.append("utilization")
    return SimpleNamespace(aip=UTILIZATION_AIP)


def hlmlDeviceGetMemoryInfo(handle):
    return SimpleNamespace(
        used=MEMORY_USED_BYTES, total=MEMORY_TOTAL_BYTES, free=MEMORY_TOTAL_BYTES - MEMORY_USED_BYTES
    )


def hlmlDeviceGetPowerUsage(handle):
    return POWER_MW


def hlmlDeviceGetTemperature(handle, sensor):
    CALLS.append(f"temperature sensor {sensor}")
    return TEMPERATURE_C


def hlmlDeviceGetClockInfo(handle, clock_type=0):
    return 1_500


def hlmlDeviceGetTotalEnergyConsumption(handle):
    if not HAS_ENERGY:
        raise RuntimeError("HLML_ERROR_NOT_SUPPORTED")
    return ENERGY_MJ
