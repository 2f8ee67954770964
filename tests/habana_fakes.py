"""Installs the fake Habana stack of tests/fakes as one release of suite.backends.habana_releases.

A release is installed as the real wheel installs it: the package on sys.path and a
`habana_torch_plugin-<version>.dist-info` beside it, whose version the backend and the fakes both read, and
whose entry_points.txt registers the bridge's torch autoload where that release has it. Releases without
legacy HMP get no hpex/hmp folder. The card is put on a fake PCI bus (sysfs `vendor` / `device` files, as
the kernel writes them), a generation the release supports unless a test asks for another. `import_torch()` runs torch's own autoload step (the part of
`import torch` that loads "torch.backends" entry points, torch >= 2.5), since torch itself is imported
already in the test process.
"""

from __future__ import annotations

import pathlib
import shutil
import sys

import pytest
import torch
from packaging.version import Version
from suite.backends import habana_releases, hpu, hpu_install, presence

FAKES = pathlib.Path(__file__).parent / "fakes"
FAKE_PACKAGES = ("habana_frameworks", "habana_dataloader", "pyhlml")
# Four releases with different facts: "2" is eager and HMP exists (1.10); "0" is eager, new op-list names
# and aot compile (1.13); torch autoload, lazy by default (1.19); eager by default (from 1.21), no
# first-generation Gaudi, a row of its own per patch (1.24.1, the newest).
PROFILES = ("1.10", "1.13", "1.19", "1.24.1")
# The PCI device id of each generation's card (hpu_install.PCI_GENERATIONS: Habana's driver).
PCI_DEVICE_IDS = {
    habana_releases.GAUDI1: "0x1000",
    habana_releases.GAUDI2: "0x1020",
    habana_releases.GAUDI3: "0x1060",
}
_card: dict = {}  # where install() put the card: the fake package and the fake PCI device
ENV_VARS = (
    hpu.LAZY_ENV,
    "LOWER_LIST",
    "FP32_LIST",
    "PT_HPU_AUTOCAST_LOWER_PRECISION_OPS_LIST",
    "PT_HPU_AUTOCAST_FP32_OPS_LIST",
    habana_releases.AUTOLOAD_ENV,
    habana_releases.TORCH_AUTOLOAD_ENV,
    "WORLD_SIZE",
    "RANK",
    "LOCAL_RANK",
    "LOCAL_WORLD_SIZE",
    "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_LOCAL_RANK",
    "OMPI_COMM_WORLD_LOCAL_SIZE",
    "HLS_MODULE_ID",
    "PT_HPU_MEDIA_PIPE",
    "HABANA_VISIBLE_MODULES",
    "MASTER_ADDR",
    "MASTER_PORT",
    "ID",
)


# torch's device-backend autoload (torch >= 2.5); the releases that use it ship such a torch.
TORCH_AUTOLOADS = hasattr(torch, "_import_device_backends")
needs_torch_autoload = pytest.mark.skipif(not TORCH_AUTOLOADS, reason="torch < 2.5 has no backend autoload")


def drop_fake_modules() -> None:
    for name in list(sys.modules):
        if name.split(".")[0] in FAKE_PACKAGES:
            del sys.modules[name]


def install(
    monkeypatch,
    tmp_path,
    version: str = "1.19",
    hmp: bool | None = None,
    medialoaders: bool = True,
    torch_version: str | None = None,
    built_for: str | None = None,
    bridge_default: str | None = None,
    generation: str | None = None,
    fused_sdpa: bool = True,
) -> habana_releases.Release:
    """The fakes as Habana `version` on sys.path, a clean environment, a stand-in device node. The hpex/hmp
    folder is there where the release ships it, unless `hmp` says otherwise (an install that differs);
    `medialoaders=False` leaves out habana_frameworks.medialoaders (Gaudi2's MediaPipe loader).
    The bridge is built for `built_for` (its required_version.txt) and runs with `torch_version`; both default
    to Habana's fork of the installed torch's version ("X.Y.Za0+git0000000").
    `bridge_default` ("lazy" or "eager") is the mode the bridge runs with PT_HPU_LAZY_MODE unset: the
    release's own unless given (a test of a release the table does not know gives it).
    `generation` is the card: by default the oldest generation the release supports.
    `fused_sdpa=False` leaves out hpex/kernels (FusedSDPA, in every release of the table since 1.10.0): an
    install without it."""
    release, warning = habana_releases.lookup(version)
    assert warning is None, warning
    with_hmp = release.hmp if hmp is None else hmp
    root = tmp_path / "fakes"
    shutil.copytree(
        FAKES,
        root,
        ignore=lambda d, names: [
            "__pycache__",
            *(["hmp"] if d.endswith("hpex") and not with_hmp else []),
            *(["medialoaders"] if d.endswith("habana_frameworks") and not medialoaders else []),
            *(["kernels"] if d.endswith("hpex") and not fused_sdpa else []),
        ],
    )
    fork = f"{Version(str(torch.__version__)).base_version}a0+git0000000"  # as Habana names its builds
    (root / "habana_frameworks" / "torch" / "required_version.txt").write_text(built_for or fork)
    (root / "habana_frameworks" / "torch_version.txt").write_text(torch_version or fork)
    default = bridge_default or release.default_mode
    unset = release.lazy_value if default == "lazy" else release.eager_value
    (root / "habana_frameworks" / "unset_lazy_mode.txt").write_text(unset)
    pci_device = tmp_path / "pci" / "0000:10:00.0"
    pci_device.mkdir(parents=True)
    (pci_device / "vendor").write_text(hpu_install.HABANA_PCI_VENDOR + "\n")
    monkeypatch.setattr(hpu_install, "PCI_DEVICES", str(tmp_path / "pci"))
    _card.update(package=root / "habana_frameworks", pci_device=pci_device)
    _put_card(generation or release.generations[0])
    dist_info = root / f"habana_torch_plugin-{version}.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: habana-torch-plugin\nVersion: {version}.0\n"
    )
    if release.autoload:
        # The bridge's setup.py: entry_points={"torch.backends": ["device_backend = habana_frameworks.autoload:__autoload"]}
        (dist_info / "entry_points.txt").write_text(
            "[torch.backends]\ndevice_backend = habana_frameworks.autoload:__autoload\n"
        )
    drop_fake_modules()
    monkeypatch.syspath_prepend(str(root))
    for var in ENV_VARS:
        monkeypatch.setenv(var, "unset")  # so that undo removes whatever a fake sets later
        monkeypatch.delenv(var)
    (tmp_path / "hl0").touch()  # a stand-in Gaudi device node
    monkeypatch.setattr(presence, "DEVICE_NODE_GLOBS", (str(tmp_path / "hl[0-9]*"),))
    monkeypatch.setattr(hpu.HPUBackend, "device_type", "cpu")
    return release


def import_torch() -> None:
    """What `import torch` does after its own modules: load out-of-tree backends unless disabled
    (torch/__init__.py `_is_device_backend_autoload_enabled` / `_import_device_backends`, torch >= 2.5)."""
    if not TORCH_AUTOLOADS:
        return  # torch before 2.5 loads no out-of-tree backend at import
    if torch._is_device_backend_autoload_enabled():
        torch._import_device_backends()


def _put_card(name: str) -> None:
    (_card["package"] / "card.txt").write_text(name)
    (_card["pci_device"] / "device").write_text(PCI_DEVICE_IDS[name] + "\n")


def set_generation(name: str) -> None:
    """Swap the card of the installed fakes (on the PCI bus and as the bridge reports it)."""
    import habana_frameworks  # the package only: its torch part fixes the mode when imported

    _put_card(name)
    habana_frameworks.GENERATION = name


def recorder():
    import habana_frameworks

    return habana_frameworks
