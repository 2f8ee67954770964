"""What Habana software and cards are here, and which mode the bridge runs in, found without importing the
bridge: importing `habana_frameworks.torch` fixes the execution mode (bridge v1.19.0:
habana_frameworks/torch/__init__.py, torch/utils/internal.py), so everything here only looks for files,
reads the environment, or asks a bridge that something else already imported."""

from __future__ import annotations

import glob
import importlib
import importlib.util
import os
import sys

from suite.inputs.errors import UserError

from . import habana_releases

LAZY_ENV = habana_releases.LAZY_ENV
BRIDGE_PROBE = (
    "import habana_frameworks.torch.core, habana_frameworks.torch.hpu as h\n"
    "if h.device_count() < 1: raise SystemExit('the Habana bridge imports but no Gaudi device answers')"
)
# The bridge's own refusals at its import (habana_frameworks/torch/__init__.py, v1.19.0): a torch of another
# major.minor than it was built for, a torch that is not Habana's fork in lazy mode, and (before either) a
# torch with no local version at all, on which its `run_time_ver.local.startswith("git")` fails. Each is what
# a `pip install` that pulled a stock torch over Habana's leaves behind.
BRIDGE_TORCH_REFUSALS = (
    "Compile-time major/minor PyTorch version",
    "is not supported in Lazy mode",
    "'NoneType' object has no attribute 'startswith'",
)
TORCH_FIX = (
    "reinstall Habana's torch (its container or installer), then install the suite with "
    "`pip install --no-deps -e .` so that pip leaves torch alone (docs/gaudi-releases.md)"
)
INSTALL_HINT = (
    "use a Gaudi instance with Habana's PyTorch container (vault.habana.ai/gaudi-docker) or "
    "Habana's installer; the bridge is not on PyPI"
)


def torch_refusal(text: str) -> str | None:
    """One line naming the fix when `text` (an error from importing the bridge) is its refusal of torch."""
    if not any(marker in text for marker in BRIDGE_TORCH_REFUSALS):
        return None
    return f"habana_frameworks refuses the installed torch ({text.strip()}): {TORCH_FIX}"


def package_dir(*parts: str) -> str | None:
    """Where a habana_frameworks sub-package would be, found without importing anything."""
    spec = importlib.util.find_spec(parts[0])
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        path = os.path.join(root, *parts[1:])
        if os.path.isdir(path) or os.path.isfile(path + ".py"):
            return path
    return None


def hmp_refusal(release: habana_releases.Release) -> str | None:
    """Why --precision hmp cannot run here, or None. The installed module decides (looked for without
    importing: the import would fix the mode); the release table only explains its absence."""
    if package_dir("habana_frameworks", "torch", "hpex", "hmp") is not None:
        return None
    if release.hmp:
        return (
            f"precision 'hmp' needs habana_frameworks.torch.hpex.hmp, which Habana {release.version} ships "
            "but is not installed here: reinstall Habana's wheel, or use --precision bf16 (torch.autocast on hpu)"
        )
    return (
        f"precision 'hmp' needs habana_frameworks.torch.hpex.hmp, which Habana {release.version} does not "
        "have (Habana's examples use HMP up to 1.12): use --precision bf16 (torch.autocast on hpu)"
    )


def suite_mode(release: habana_releases.Release, bridge_mode: str) -> str:
    """The suite's mode for a bridge mode: eager runs as eager + torch.compile (Habana's default path where
    eager is the default) where the release has a compile backend."""
    return "lazy" if bridge_mode == "lazy" else ("compile" if release.compile_backend else "eager")


def default_mode(release: habana_releases.Release | None = None) -> tuple[str | None, str]:
    """(mode, why) when --hpu-mode is not given: the environment's choice, else the release's default.
    The mode is None where the release's default is not known: PT_HPU_LAZY_MODE is then left unset, and
    the mode is the one the bridge chose, read after its import (bridge_default_mode)."""
    release = release or habana_releases.installed()[0]
    env = os.environ.get(LAZY_ENV)
    bridge_mode = release.mode_of_value(env)
    if bridge_mode is None:
        return None, f"default of Habana {release.version}, which the release table does not know"
    mode = suite_mode(release, bridge_mode)
    if env is not None:
        return mode, f"{LAZY_ENV}={env} in the environment ({bridge_mode} on Habana {release.version})"
    return mode, f"default of Habana {release.version} ({bridge_mode})"


def bridge_default_mode(release: habana_releases.Release) -> tuple[str, str]:
    """(mode, why) from an imported bridge that was left to its own default."""
    running, how = active_mode(release)
    if running is None:
        raise UserError(
            f"cannot tell which mode Habana {release.version}'s bridge runs ({how}): give --hpu-mode lazy, "
            "eager or compile"
        )
    return suite_mode(release, running), (
        f"default of Habana {release.version} ({running}, as the bridge reports it after its import: the "
        "release table does not know this release's default)"
    )


def active_mode(release: habana_releases.Release) -> tuple[str | None, str]:
    """(bridge mode, how it was found) of an imported bridge: its own is_lazy(), which the bridge caches at
    its first import (utils/internal.py), else the value of PT_HPU_LAZY_MODE read as the release reads it
    (None: unset, and the release's default is not known)."""
    internal = sys.modules.get("habana_frameworks.torch.utils.internal")
    if internal is not None and hasattr(internal, "is_lazy"):
        return ("lazy" if internal.is_lazy() else "eager"), "habana_frameworks is_lazy()"
    return release.mode_of_value(os.environ.get(LAZY_ENV)), f"{LAZY_ENV} as Habana {release.version} reads it"


# Habana's PCI ids: vendor 0x1da3 (PCI_VENDOR_ID_HABANALABS, habanalabs.h) and the device ids the driver binds
# (habanalabs_drv.c: PCI_IDS_GAUDI 0x1000, _SEC 0x1010, _HL2000M 0x1001, _HL2000M_SEC 0x1011; PCI_IDS_GAUDI2
# 0x1020; PCI_IDS_GAUDI3 0x1060, _HL_338 0x1063), both in github.com/HabanaAI/drivers.accel.habanalabs.kernel
# commit 4058b6e12803, drivers/accel/habanalabs/common/. sysfs writes them as "0x%04x".
HABANA_PCI_VENDOR = "0x1da3"
PCI_GENERATIONS = {
    "0x1000": habana_releases.GAUDI1,
    "0x1010": habana_releases.GAUDI1,
    "0x1001": habana_releases.GAUDI1,
    "0x1011": habana_releases.GAUDI1,
    "0x1020": habana_releases.GAUDI2,
    "0x1060": habana_releases.GAUDI3,
    "0x1063": habana_releases.GAUDI3,
}
PCI_DEVICES = "/sys/bus/pci/devices"


def _read(path: str) -> str | None:
    from suite.inputs.files import read_fixed_file

    text = read_fixed_file(path, 256)
    return text.strip().lower() if text is not None else None


def card_generations() -> set[str]:
    """The generations of the Habana cards on the PCI bus, read from sysfs: no driver, bridge or pyhlml
    needed, so a card that a newer stack no longer drives is still seen. Empty where sysfs says nothing."""
    found = set()
    for device in glob.glob(os.path.join(PCI_DEVICES, "*")):
        if _read(os.path.join(device, "vendor")) == HABANA_PCI_VENDOR:
            generation = PCI_GENERATIONS.get(_read(os.path.join(device, "device")) or "")
            if generation is not None:
                found.add(generation)
    return found


def card_refusal(release: habana_releases.Release) -> str | None:
    """Why the Gaudi cards here cannot run on `release` (none of them is a generation it supports), or None."""
    cards = card_generations()
    if not cards or cards & set(release.generations):
        return None
    return habana_releases.unsupported_card(release, sorted(cards)[0])


def device_generation() -> str | None:
    """gaudi, gaudi2 or gaudi3 from an imported bridge's own device type (None if unknown)."""
    experimental = sys.modules.get("habana_frameworks.torch.utils.experimental")
    if experimental is None:
        try:
            experimental = importlib.import_module("habana_frameworks.torch.utils.experimental")
        except ImportError:
            return None
    device = experimental._get_device_type()
    names = {
        getattr(experimental.synDeviceType, "synDeviceGaudi", None): habana_releases.GAUDI1,
        getattr(experimental.synDeviceType, "synDeviceGaudi2", None): habana_releases.GAUDI2,
        getattr(experimental.synDeviceType, "synDeviceGaudi3", None): habana_releases.GAUDI3,
    }
    return names.get(device)
