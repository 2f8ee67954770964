"""What each Habana (Intel Gaudi) software release does differently, as one table keyed by the bridge's
version (the `habana-torch-plugin` wheel, e.g. 1.19.0.561 -> row "1.19"; a release whose patches ship
different torch builds has a row per patch, 1.24.1.x -> row "1.24.1").

The hpu backend reads every release difference from here: which value of PT_HPU_LAZY_MODE means lazy or
eager, which mode a release starts in when the variable is unset (where a versioned source says; elsewhere
the backend asks the bridge after importing it), whether `import torch` already loads the
bridge (torch's device-backend autoload), the torch.compile backend, the names of the autocast op-list
variables, whether legacy HMP exists, and which Gaudi generations the release supports (and so the last
release for a card it no longer supports). A release the table does not know is read as the nearest known
row, with a warning that goes into the record, and its default mode is then left to the bridge.

This module imports neither torch nor habana_frameworks: the command line uses it to set the mode before
torch is imported (torch's autoload may import the bridge, which fixes the mode, during `import torch`).

Sources (the same list is printed in docs/gaudi-releases.md; Habana's documents read 2026-11-26):
  [bridge-1.18]  github.com/HabanaAI/gaudi-pytorch-bridge commit f90046f4e6ef ("Publish 1.18.0"):
                 python_packages/habana_frameworks/torch/utils/internal.py (is_lazy: unset means "1", lazy),
                 python_packages/setup.py (entry point group "torch.backends"; the torch of 1.18, 2.4.0, has
                 no backend autoload, so nothing calls it).
  [bridge-1.19]  the same repository, tag v1.19.0 (commit 5a56187e9868):
                 python_packages/habana_frameworks/torch/utils/internal.py (is_lazy: unset means "1", lazy;
                 anything but "0" is lazy; read once and cached), habana_frameworks/autoload/__init__.py
                 (autoload skipped when PT_HPU_AUTOLOAD=0, or when PT_HPU_LAZY_MODE, unset meaning "1", is
                 "1"), python_packages/setup.py (entry point group "torch.backends"),
                 tests/pytest_working/test_utils.py (get_device_name(): "GAUDI", "GAUDI2", "GAUDI3").
                 No later Habana bridge source could be read (the public snapshot ends at 1.19.0).
  [fork]         github.com/ankurneog/gaudi-pytorch-bridge commit ea38cefafa91: a personal fork, not Habana's
                 repository. Its autoload/__init__.py and utils/internal.py read an unset PT_HPU_LAZY_MODE as
                 "0" (eager); its .devops/build_profiles/profiles.json builds against torch 2.6.0, which Habana
                 ships with both 1.20 and 1.21. Which release it is cannot be told, so it pins no row.
  [torch-2.5]    torch/__init__.py `_import_device_backends` (RFC pytorch/pytorch#122468, first in torch 2.5):
                 loads every "torch.backends" entry point during `import torch` unless
                 TORCH_DEVICE_BACKEND_AUTOLOAD=0.
  [mr-X]         github.com/HabanaAI/Model-References at tag X: 1.10.0/1.11.0 torchvision train.py sets
                 PT_HPU_LAZY_MODE="2" for eager; from 1.12.0 eager is "0";
                 hello_world/mnist.py imports hpex.hmp and calls hmp.convert under --hmp up to 1.12.1
                 (its README documents --hmp --hmp-bf16=...), and from 1.13.0 nothing imports hmp;
                 1.12.0-1.14.0 compile with backend="aot_hpu_training_backend", 1.15.0 on with "hpu_backend";
                 op lists are LOWER_LIST/FP32_LIST up to 1.12.0 and PT_HPU_AUTOCAST_LOWER_PRECISION_OPS_LIST/
                 PT_HPU_AUTOCAST_FP32_OPS_LIST from 1.13.0.
                 PyTorch/computer_vision/classification/torchvision/README.md "Supported Configurations" at the
                 commits "Model-References content for X": 1.20.0 ee998910a87c (Gaudi, Gaudi 2, Gaudi 3 on
                 1.20.0, PyTorch 2.6.0), 1.21.0 da5f246c18f4 (the same on 1.21.0, 2.6.0), 1.22.0 2be604412c5a
                 (Gaudi 2, Gaudi 3 on 1.22.0, 2.7.1; Gaudi last on 1.21.0), 1.23.0 06bfc5eaa56c (2026-01-08:
                 Gaudi 2, Gaudi 3 on 1.23.0, 2.9.0; Gaudi last on 1.21.0).
  [matrix-X]     docs.habana.ai/en/latest/Support_Matrix/Support_Matrix_vX.html: the PyTorch version of each
                 release and the generations it supports (Gaudi 3 first listed in 1.16.0; first-generation
                 Gaudi last listed in 1.21.0: v1.22.0 names Gaudi 2 and Gaudi 3 only). [matrix-1.23.0] is
                 the current Support_Matrix.html, which is 1.23.0's (Gaudi 2, Gaudi 3, PyTorch 2.9).
  [flags]        Runtime Flags, PT_HPU_LAZY_MODE: default 1 (lazy) on docs.habana.ai/en/v1.19.0/PyTorch/
                 Reference/Runtime_Flags.html; default 0 (eager + torch.compile) on the current, unversioned
                 /en/latest/ page, whose Theory of Operations calls lazy mode "a legacy fallback that is no
                 longer developed". No versioned page of 1.20 to 1.24 was found.
  [tutorials-1.21] github.com/HabanaAI/Gaudi-tutorials pull request #131 ("1.21.1", merged 2025-05-27 as
                 commit e3a635323d35; Habana's tutorials for the 1.21.0 release): "Lazy mode is no longer the
                 default execution mode in the Intel Gaudi software stack since 1.21.0", and its commit
                 7536a6feadf5 ("Update w LAZY MODE") sets os.environ['PT_HPU_LAZY_MODE'] = '1' in the
                 tutorials that assumed lazy. So unset means eager from 1.21 and lazy up to 1.20.
  [vllm-gaudi-X] github.com/vllm-project/vllm-gaudi (the vLLM plugin for Gaudi; its Dockerfiles are Habana
                 Labs' copyright), .cd/Dockerfile.ubuntu.pytorch.vllm, which builds FROM Habana's image
                 vault.habana.ai/gaudi-docker/<VERSION>/ubuntu24.04/habanalabs/pytorch-installer-<PT_VERSION>:
                 1.24.0 with 2.10.0 at commit 7ea0676790df (2026-05-06; docs/release_notes_v0.19.0.md:
                 "Intel Gaudi Software v1.24.0 with PyTorch 2.10"), 1.24.1 with 2.11.0 at commit
                 64e98391db60 (2026-07-15; docs/release_notes_v0.24.0.md). Its
                 docs/getting_started/compatibility_matrix.md lists 1.24.0 and 1.24.1 for Gaudi 2 and Gaudi 3.
                 Its code of that time still reads habana_frameworks.torch.utils.internal.is_lazy() and
                 compiles with backend "hpu_backend". docs.habana.ai's 1.24 pages were not read (the stored
                 copies end at 1.23.0).
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import os
import re
from dataclasses import dataclass

PLUGIN_DIST = "habana-torch-plugin"  # the wheel that provides habana_frameworks.torch (not on PyPI)
LAZY_ENV = "PT_HPU_LAZY_MODE"
AUTOLOAD_ENV = "PT_HPU_AUTOLOAD"  # Habana's own switch, read by habana_frameworks.autoload
TORCH_AUTOLOAD_ENV = "TORCH_DEVICE_BACKEND_AUTOLOAD"  # torch's switch for every out-of-tree backend

GAUDI1, GAUDI2, GAUDI3 = "gaudi", "gaudi2", "gaudi3"


@dataclass(frozen=True)
class Release:
    version: str  # the bridge's major.minor
    torch: str | None  # the PyTorch version Habana ships with it; None where not checked
    lazy_value: str  # PT_HPU_LAZY_MODE for lazy mode
    eager_value: str  # PT_HPU_LAZY_MODE for eager mode
    # "lazy" or "eager": what runs when PT_HPU_LAZY_MODE is unset; None where no versioned source says (the
    # backend then leaves the variable unset and asks the bridge which mode it chose).
    default_mode: str | None
    autoload: bool  # the bridge registers a torch.backends entry point and torch (>= 2.5) calls it
    compile_backend: str | None  # torch.compile backend name, None where Habana has none
    bf16_ops_env: str  # autocast op lists (lower precision, fp32), read once at the bridge's import
    fp32_ops_env: str
    # Habana's examples still use habana_frameworks.torch.hpex.hmp in this release. Only the explanation
    # when the module is missing: whether HMP runs is decided by the module being installed.
    hmp: bool
    generations: tuple[str, ...]  # Gaudi generations the release supports
    sources: str

    def mode_value(self, mode: str) -> str:
        """PT_HPU_LAZY_MODE for a suite mode (compile runs in eager mode)."""
        return self.lazy_value if mode == "lazy" else self.eager_value

    def mode_of_value(self, value: str | None) -> str | None:
        """The mode the bridge will run in when PT_HPU_LAZY_MODE is `value` (None: unset). None where the
        variable is unset and the release's default is not known."""
        if value is None:
            return self.default_mode
        if self.eager_value == "2":
            # Up to 1.11 three values existed; "1" is lazy, "2" eager (Model-References [mr-1.11.0]).
            return "lazy" if value.strip() == "1" else "eager"
        # [bridge-1.19] is_lazy(): anything but "0" is lazy.
        return "eager" if value.strip() == "0" else "lazy"

    def autoload_imports_bridge(self, env) -> bool | None:
        """Whether `import torch` imports habana_frameworks.torch in an environment `env` (None: it depends
        on the release's default mode, which is not known)."""
        if not self.autoload or env.get(TORCH_AUTOLOAD_ENV, "1") != "1":
            return False
        switch = env.get(AUTOLOAD_ENV, "-1")
        if switch in ("0", "1"):
            return switch == "1"
        # Skipped for lazy mode, whose unset value is the release's default ([bridge-1.19]).
        value = env.get(LAZY_ENV)
        if value is None:
            return None if self.default_mode is None else self.default_mode != "lazy"
        return value != "1"


_OLD_LISTS = ("LOWER_LIST", "FP32_LIST")
_NEW_LISTS = ("PT_HPU_AUTOCAST_LOWER_PRECISION_OPS_LIST", "PT_HPU_AUTOCAST_FP32_OPS_LIST")
_ALL = (GAUDI1, GAUDI2)
_WITH_G3 = (GAUDI1, GAUDI2, GAUDI3)
_NO_G1 = (GAUDI2, GAUDI3)  # first-generation Gaudi dropped in 1.22 ([matrix-1.22.0], [mr-1.22.0])
GENERATION_NAMES = {GAUDI1: "first-generation Gaudi", GAUDI2: "Gaudi 2", GAUDI3: "Gaudi 3"}


def _release(row: tuple) -> Release:
    """A row of _TABLE as a Release (lazy mode is "1" in every release)."""
    version, torch, eager, default, autoload, compile_backend, lists, hmp, generations, sources = row
    return Release(
        version=version,
        torch=torch,
        lazy_value="1",
        eager_value=eager,
        default_mode=default,
        autoload=autoload,
        compile_backend=compile_backend,
        bf16_ops_env=lists[0],
        fp32_ops_env=lists[1],
        hmp=hmp,
        generations=generations,
        sources=sources,
    )


# fmt: off
# version, torch, eager value, unset means, autoload, compile backend, op lists, hmp, generations, sources
_TABLE: tuple[tuple, ...] = (
    ("1.10", "2.0.1", "2", "lazy", False, None, _OLD_LISTS, True, _ALL, "mr-1.10.0, matrix-1.10.0"),
    ("1.11", "2.0.1", "2", "lazy", False, None, _OLD_LISTS, True, _ALL, "mr-1.11.0, matrix-1.11.0"),
    ("1.12", "2.0.1", "0", "lazy", False, "aot_hpu_training_backend", _OLD_LISTS, True, _ALL,
        "mr-1.12.0, matrix-1.12.1"),
    ("1.13", None, "0", "lazy", False, "aot_hpu_training_backend", _NEW_LISTS, False, _ALL, "mr-1.13.0"),
    ("1.14", "2.1.1", "0", "lazy", False, "aot_hpu_training_backend", _NEW_LISTS, False, _ALL,
        "mr-1.14.0, matrix-1.14.0"),
    ("1.15", "2.2.0", "0", "lazy", False, "hpu_backend", _NEW_LISTS, False, _ALL, "mr-1.15.0, matrix-1.15.0"),
    ("1.16", "2.2.2", "0", "lazy", False, "hpu_backend", _NEW_LISTS, False, _WITH_G3, "matrix-1.16.0"),
    ("1.17", "2.3.1", "0", "lazy", False, "hpu_backend", _NEW_LISTS, False, _WITH_G3, "matrix-1.17.0"),
    ("1.18", "2.4.0", "0", "lazy", False, "hpu_backend", _NEW_LISTS, False, _WITH_G3,
        "bridge-1.18, matrix-1.18.0"),
    ("1.19", "2.5.1", "0", "lazy", True, "hpu_backend", _NEW_LISTS, False, _WITH_G3,
        "bridge-1.19, torch-2.5, mr-1.19.0, matrix-1.19.0, flags"),
    # The default mode from 1.20 on: [tutorials-1.21], Habana's own "no longer the default ... since 1.21.0"
    # (so lazy still in 1.20), with [flags]' current page (default 0). torch autoload is assumed as in 1.19
    # (no later Habana bridge source was read).
    ("1.20", "2.6.0", "0", "lazy", True, "hpu_backend", _NEW_LISTS, False, _WITH_G3,
        "mr-1.20.0, tutorials-1.21"),
    ("1.21", "2.6.0", "0", "eager", True, "hpu_backend", _NEW_LISTS, False, _WITH_G3,
        "mr-1.21.0, matrix-1.21.0, tutorials-1.21, flags"),
    ("1.22", "2.7.1", "0", "eager", True, "hpu_backend", _NEW_LISTS, False, _NO_G1,
        "mr-1.22.0, matrix-1.22.0, tutorials-1.21, flags"),
    ("1.23", "2.9.0", "0", "eager", True, "hpu_backend", _NEW_LISTS, False, _NO_G1,
        "mr-1.23.0, matrix-1.23.0, tutorials-1.21, flags"),
    # 1.24.0 and 1.24.1 ship different torch builds: a row each ([vllm-gaudi-X]).
    ("1.24.0", "2.10.0", "0", "eager", True, "hpu_backend", _NEW_LISTS, False, _NO_G1,
        "vllm-gaudi-1.24.0, tutorials-1.21, flags"),
    ("1.24.1", "2.11.0", "0", "eager", True, "hpu_backend", _NEW_LISTS, False, _NO_G1,
        "vllm-gaudi-1.24.1, tutorials-1.21, flags"),
)
# fmt: on
RELEASES: tuple[Release, ...] = tuple(_release(row) for row in _TABLE)
_BY_VERSION = {release.version: release for release in RELEASES}


def _numbers(version: str) -> tuple[int, int, int] | None:
    """(major, minor, patch) of a bridge version ("1.24.1.340" -> (1, 24, 1); "1.21.1-16" -> (1, 21, 1);
    patch 0 where there is none), None where it does not start with major.minor."""
    found = re.match(r"\s*(\d+)\.(\d+)(?:\.(\d+))?", version)
    if found is None:
        return None
    major, minor, patch = found.groups()
    return int(major), int(minor), int(patch or 0)


def plugin_version() -> str | None:
    """The installed bridge's version, read from its wheel's metadata (no import)."""
    try:
        return importlib.metadata.version(PLUGIN_DIST)
    except importlib.metadata.PackageNotFoundError:
        return None


def lookup(version: str | None) -> tuple[Release, str | None]:
    """(row, warning): the row of `version` (its major.minor.patch where the table has a row of that patch,
    else its major.minor), or the nearest known row and a warning saying so. A release the table does not
    know may start in another mode: its default is left to the bridge (default_mode None)."""
    parsed = None if version is None else _numbers(version)
    if parsed is None:
        nearest = RELEASES[-1]
        said = "unknown" if version is None else f"{version!r} not understood"
        return _unchecked_default(nearest), (
            f"{PLUGIN_DIST} version {said}: release facts of {nearest.version} assumed (nearest known: newest), "
            "its default mode left to the bridge"
        )
    major, minor, patch = parsed
    for key in (f"{major}.{minor}.{patch}", f"{major}.{minor}"):
        if key in _BY_VERSION:
            return _BY_VERSION[key], None

    def distance(release: Release) -> int:
        m, n, p = _numbers(release.version)
        return abs((m * 100 + n) * 1000 + p - ((major * 100 + minor) * 1000 + patch))

    nearest = min(RELEASES, key=distance)
    return _unchecked_default(nearest), (
        f"{PLUGIN_DIST} {version} is not in the release table: facts of the nearest known release "
        f"{nearest.version} assumed, its default mode left to the bridge"
    )


def _unchecked_default(release: Release) -> Release:
    return dataclasses.replace(release, default_mode=None)


def installed() -> tuple[Release, str | None]:
    return lookup(plugin_version())


def last_release_for(generation: str) -> Release | None:
    """The newest row that supports `generation` (None: no row does)."""
    return next((r for r in reversed(RELEASES) if generation in r.generations), None)


def unsupported_card(release: Release, generation: str) -> str | None:
    """Why `generation` cannot run on `release` (one line naming the last release that supports it), or
    None where it can."""
    if generation in release.generations:
        return None
    name = GENERATION_NAMES.get(generation, generation)
    supported = ", ".join(GENERATION_NAMES[g] for g in release.generations)
    last = last_release_for(generation)
    fix = (
        f"the last release that supports it is {last.version} (PyTorch {last.torch or 'version not checked'}): "
        f"use Habana's {last.version} software and container (docs/gaudi-releases.md)"
        if last
        else "no release in the table supports it"
    )
    return f"{name} is not supported by Habana {release.version} (it supports {supported}): {fix}"


MODE_OPTION = "--hpu-mode"


def preset_mode(argv: list[str], env=None) -> str | None:
    """Set PT_HPU_LAZY_MODE for `--hpu-mode M` (backend hpu or auto) in `argv` before torch is imported.

    From torch 2.5 `import torch` itself may import the bridge (autoload), and the bridge fixes its mode at
    that import; setting the variable later, in the backend's setup(), would be too late. Returns the value
    set, or None when `argv` does not ask for an hpu mode or the bridge is not installed."""
    env = os.environ if env is None else env
    mode = _option_value(argv, MODE_OPTION)
    # `--hpu-mode` is an hpu option: with --backend auto (or none) it can only mean that auto picks hpu.
    if mode not in ("lazy", "eager", "compile") or _option_value(argv, "--backend") not in (
        None,
        "auto",
        "hpu",
    ):
        return None
    version = plugin_version()
    if version is None:
        return None
    release, _ = lookup(version)
    env[LAZY_ENV] = release.mode_value(mode)
    # The autocast op lists are read at the same import (bf16 autocast, hpu's default precision).
    if _option_value(argv, "--precision") in (None, "bf16"):
        for option, name in (
            ("--hpu-bf16-ops", release.bf16_ops_env),
            ("--hpu-fp32-ops", release.fp32_ops_env),
        ):
            path = _option_value(argv, option)
            if path is not None and os.path.isfile(path):
                env[name] = os.path.abspath(path)
    return env[LAZY_ENV]


def _option_value(argv: list[str], option: str) -> str | None:
    for i, arg in enumerate(argv):
        if arg == option and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(option + "="):
            return arg.split("=", 1)[1]
    return None


def markdown_table() -> str:
    """The table as docs/gaudi-releases.md prints it (a test keeps the two the same)."""
    names = {GAUDI1: "Gaudi", GAUDI2: "Gaudi 2", GAUDI3: "Gaudi 3"}
    unset = {"lazy": "lazy", "eager": "eager", None: "not checked: the bridge is asked"}
    lines = [
        "| Release | PyTorch | lazy / eager value | Unset means | torch autoload | torch.compile backend "
        "| Autocast op-list variables | HMP | Generations | Sources |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in RELEASES:
        lines.append(
            f"| {r.version} | {r.torch or 'not checked'} | `{r.lazy_value}` / `{r.eager_value}` | {unset[r.default_mode]} "
            f"| {'yes' if r.autoload else 'no'} | {f'`{r.compile_backend}`' if r.compile_backend else 'none'} "
            f"| `{r.bf16_ops_env}`, `{r.fp32_ops_env}` | {'yes' if r.hmp else 'no'} "
            f"| {', '.join(names[g] for g in r.generations)} | {r.sources} |"
        )
    return "\n".join(lines)
