"""Fake `habana_frameworks.torch.hpu` (the module the real bridge registers as torch.hpu)."""

from habana_frameworks import record
from habana_frameworks.torch.utils import experimental

HLS_MODULE_ID_VAR = "HLS_MODULE_ID"
HABANA_VISIBLE_MODULES_VAR = "HABANA_VISIBLE_MODULES"
DEVICE_COUNT = 1
# get_device_name() as the bridge reports each generation.
DEVICE_NAMES = {
    experimental.synDeviceType.synDeviceGaudi: "GAUDI",
    experimental.synDeviceType.synDeviceGaudi2: "GAUDI2",
    experimental.synDeviceType.synDeviceGaudi3: "GAUDI3",
}
# Habana's memory_stats() keys (habana_frameworks/torch/hpu/memory.py), in bytes.
MEMORY = {"Limit": 32 * 2**30, "InUse": 3 * 2**20, "MaxInUse": 5 * 2**20, "NumAllocs": 7, "NumFrees": 2}


def is_available() -> bool:
    return DEVICE_COUNT > 0


def device_count() -> int:
    return DEVICE_COUNT


def get_device_name(device=None) -> str:
    return DEVICE_NAMES[experimental._get_device_type()]


def current_device() -> int:
    return 0


def set_device(device) -> None:
    record("set_device", device=device)


def synchronize() -> None:
    record("synchronize")


def memory_stats(device=None) -> dict:
    return dict(MEMORY)


def memory_allocated(device=None) -> int:
    return MEMORY["InUse"]


def max_memory_allocated(device=None) -> int:
    return MEMORY["MaxInUse"]


def reset_peak_memory_stats(device=None) -> None:
    record("reset_peak_memory_stats")
    MEMORY["MaxInUse"] = MEMORY["InUse"]


def mem_get_info(device=None) -> tuple:
    return MEMORY["Limit"] - MEMORY["InUse"], MEMORY["Limit"]
