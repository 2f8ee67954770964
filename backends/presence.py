"""Whether a backend's device can be here at all, answered from files alone: no torch, no vendor SDK.

`suite list` and `--backend auto` ask every backend whether it is available, and importing torch alone takes
about 2 s on 2 cores. Where files settle the answer (the CPU is always there; torch reaches no GPU without
the driver's library; there is no Gaudi without Habana's package and a device node), it comes from here
and nothing is imported. Where a device may be present, the backend's own `is_available` asks torch or the
SDK, and starts with these same checks.
"""

from __future__ import annotations

import ctypes
import glob
import importlib.util
import os
import sys

from .hpu_install import INSTALL_HINT

# Torch reaches an NVIDIA GPU through the driver's user-space library (a CUDA build dlopens it when CUDA is
# first used) and an AMD GPU (a ROCm build, which this backend also drives) through the kernel's /dev/kfd, or
# under WSL2 through /dev/dxg (which has no /dev/kfd): where either node is, only torch can tell.
CUDA_DRIVER_LIBRARY = "libcuda.so.1"
ROCM_DEVICE_NODES = ("/dev/kfd", "/dev/dxg")
# Gaudi device nodes: /dev/hl<N> (habanalabs driver; "habanalabs: create two char devices per ASIC", hlX and
# hl_controlDX) or /dev/accel/accel<N> since the driver moved to the kernel's accel subsystem.
DEVICE_NODE_GLOBS = ("/dev/hl[0-9]*", "/dev/accel/accel[0-9]*")


def cuda_absent() -> str | None:
    """Why no GPU can be used here, or None when one may be (then only torch can tell). Linux only:
    elsewhere the driver's files have other names, and torch is asked."""
    if not sys.platform.startswith("linux") or any(os.path.exists(node) for node in ROCM_DEVICE_NODES):
        return None
    try:
        ctypes.CDLL(CUDA_DRIVER_LIBRARY)  # loading initialises nothing: CUDA starts at its first call
    except OSError:
        return (
            f"no GPU driver on this machine ({CUDA_DRIVER_LIBRARY} does not load and there is no "
            f"{' or '.join(ROCM_DEVICE_NODES)}): check `nvidia-smi` and the driver, or run on a GPU instance"
        )
    return None


def habana_absent() -> str | None:
    """Why no Gaudi can be used here, or None when one may be (then the bridge must be asked)."""
    # find_spec looks without importing: importing habana_frameworks fixes the execution mode.
    if importlib.util.find_spec("habana_frameworks") is None:
        return f"Habana software not installed (no habana_frameworks module): {INSTALL_HINT}"
    if not any(glob.glob(pattern) for pattern in DEVICE_NODE_GLOBS):
        return (
            "habana_frameworks is installed but no Gaudi device is visible (no /dev/hl* or "
            "/dev/accel/accel*): run on a Gaudi instance, or pass the devices into the container"
        )
    return None


def settled(name: str) -> tuple[bool, str] | None:
    """(available, why) where files alone settle it for backend NAME; None: ask the backend."""
    if name == "cpu":
        return True, "always"
    absent = {"cuda": cuda_absent, "hpu": habana_absent}.get(name, lambda: None)()
    return (False, absent) if absent else None
