"""Fake of habana_frameworks.torch.utils.experimental: the device generation (_get_device_type), which
HabanaDataLoader and the backend read. Tests set habana_frameworks.GENERATION."""

import enum

import habana_frameworks


class synDeviceType(enum.Enum):  # noqa: N801 (Habana's name)
    synDeviceGaudi = 1
    synDeviceGaudi2 = 2
    synDeviceGaudi3 = 3


def _get_device_type():
    return {
        "gaudi": synDeviceType.synDeviceGaudi,
        "gaudi2": synDeviceType.synDeviceGaudi2,
        "gaudi3": synDeviceType.synDeviceGaudi3,
    }[habana_frameworks.GENERATION]
