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
# HLML's index order is not the module id order (`hl-smi -Q index,module_id`): index 0 can be module 5.
MODULE_IDS = [5, 1, 4, 0, 7, 2, 6, 3]
PCI_BUS_IDS = [f"0000:{0x10 + 0x10 * i:02x}:00.0" for i in range(8)]


def hlmlInit():
    CALLS.append("hlmlInit")


def hlmlShutdown():
    CALLS.append("hlmlShutdown")


def hlmlDeviceGetCount():
    return 8


def hlmlDeviceGetHandleByIndex(index):
    CALLS.append(f"handle {index}")
    if not 0 <= index < hlmlDeviceGetCount():
        raise RuntimeError("HLML_ERROR_INVALID_ARGUMENT")
    return SimpleNamespace(index=index)


def hlmlDeviceGetModuleID(handle):
    return MODULE_IDS[handle.index]


def hlmlDeviceGetPCIInfo(handle):
    # c_hlml_pci_info: bus_id as bytes, like NVML's
    return SimpleNamespace(bus_id=PCI_BUS_IDS[handle.index].encode())


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
