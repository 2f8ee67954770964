"""Fake `pyhlml` (PyPI habana-pyhlml) with the real units (power mW, memory bytes, °C, energy mJ) and the
real error type: every failing call raises pyhlml.HLMLError(code), which hlmlInit turns into one subclass
per code (HLMLError_NotSupported, ...), printed "HLML Error with code N" (habana-pyhlml 1.24.2.481:
pyhlml/hlml_error.py, main.py check_return, pyhlml_types_generated.py HLML_RETURN)."""

from enum import IntEnum
from string import capwords
from types import SimpleNamespace


class HLML_RETURN(IntEnum):  # noqa: N801 (pyhlml's name)
    HLML_SUCCESS = 0
    HLML_ERROR_UNINITIALIZED = 1
    HLML_ERROR_INVALID_ARGUMENT = 2
    HLML_ERROR_NOT_SUPPORTED = 3
    HLML_ERROR_ALREADY_INITIALIZED = 5
    HLML_ERROR_NOT_FOUND = 6
    HLML_ERROR_INSUFFICIENT_SIZE = 7
    HLML_ERROR_DRIVER_NOT_LOADED = 9
    HLML_ERROR_TIMEOUT = 10
    HLML_ERROR_AIP_IS_LOST = 15
    HLML_ERROR_MEMORY = 20
    HLML_ERROR_NO_DATA = 21
    HLML_ERROR_UNKNOWN = 49


class HLMLError(Exception):
    _cMap = {}  # noqa: RUF012 (pyhlml's class attribute)

    def __new__(typ, value):
        if typ == HLMLError:
            typ = HLMLError._cMap.get(value, typ)
        obj = Exception.__new__(typ)
        obj.value = value
        return obj

    def __str__(self):
        return f"HLML Error with code {self.value}"


def _errors_as_classes():
    """pyhlml's ErrorsAsClass, run by hlmlInit: HLMLError_<Name> for each HLML_ERROR_<NAME>."""
    for code in HLML_RETURN:
        if not code.name.startswith("HLML_ERROR"):
            continue
        name = "HLMLError_" + capwords(code.name.replace("HLML_ERROR_", ""), "_").replace("_", "")
        subclass = type(name, (HLMLError,), {"__new__": lambda typ, _v=int(code): HLMLError.__new__(typ, _v)})
        globals()[name] = subclass
        HLMLError._cMap[int(code)] = subclass


def _check_return(ret):
    if ret != HLML_RETURN.HLML_SUCCESS:
        raise HLMLError(ret)
    return ret


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
    _errors_as_classes()
    CALLS.append("hlmlInit")


def hlmlShutdown():
    CALLS.append("hlmlShutdown")


def hlmlDeviceGetCount():
    return 8


def hlmlDeviceGetHandleByIndex(index):
    CALLS.append(f"handle {index}")
    if not 0 <= index < hlmlDeviceGetCount():
        _check_return(int(HLML_RETURN.HLML_ERROR_INVALID_ARGUMENT))
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
        _check_return(int(HLML_RETURN.HLML_ERROR_NOT_SUPPORTED))
    return ENERGY_MJ
