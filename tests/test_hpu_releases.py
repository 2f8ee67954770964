"""The Habana release table: lookups, the nearest-row warning, the printed copy in docs/, the torch floor."""

from __future__ import annotations

import pathlib

import habana_fakes
import pytest
from conftest import ROOT
from suite.backends import habana_releases, hpu

from suite.spec import RunSpec


@pytest.mark.parametrize(
    "version, row",
    [
        ("1.19.0.561", "1.19"),
        ("1.10.0", "1.10"),
        ("1.21.1-16", "1.21"),
        ("1.22.0", "1.22"),
        ("1.23", "1.23"),
        ("1.24.0.460", "1.24.0"),  # a row per patch: 1.24.0 and 1.24.1 ship different torch builds
        ("1.24", "1.24.0"),
        ("1.24.1.30", "1.24.1"),
    ],
)
def test_known_release_has_its_row_and_no_warning(version, row):
    release, warning = habana_releases.lookup(version)
    assert (release.version, warning) == (row, None)


@pytest.mark.parametrize(
    "version, nearest",
    [("1.9.0", "1.10"), ("1.24.2.10", "1.24.1"), ("1.30.0", "1.24.1"), ("2.0.0", "1.24.1")],
)
def test_unknown_release_gets_the_nearest_row_and_a_warning(version, nearest):
    release, warning = habana_releases.lookup(version)
    assert release.version == nearest
    assert f"{version} is not in the release table" in warning and nearest in warning
    # its other facts are the nearest row's; the mode it starts in is asked of the bridge, never assumed
    assert release.default_mode is None and "default mode left to the bridge" in warning
    assert release.compile_backend == habana_releases.lookup(nearest)[0].compile_backend


def test_wiring_unknown_release_warning_lands_in_the_record(monkeypatch, tmp_path):
    habana_fakes.install(monkeypatch, tmp_path, "1.19")
    monkeypatch.setattr(habana_releases, "plugin_version", lambda: "1.25.0.100")
    backend = hpu.HPUBackend(RunSpec().replace(backend="hpu", hpu_mode="lazy"))
    info = backend.device_info()
    assert (
        info["habana_release"] == "1.24.1"
        and "1.25.0.100 is not in the release table" in info["release_warning"]
    )
    habana_fakes.drop_fake_modules()


def test_release_1_23_is_its_own_row():
    # Model-References 06bfc5ea ("content for 1.23.0", 2026-01-08), torchvision README: PyTorch 2.9.0.
    release, warning = habana_releases.lookup("1.23")
    assert (release.version, release.torch, warning) == ("1.23", "2.9.0", None)
    assert habana_releases.lookup("1.23.0.695") == (release, None)


@pytest.mark.parametrize(
    "version, torch_version",
    # Model-References torchvision README "Supported Configurations" at ee998910, da5f246c, 2be60441, 06bfc5ea;
    # Habana's container images built FROM by vllm-gaudi's Dockerfile at 7ea06767 and 64e98391 for 1.24.x.
    [
        ("1.20", "2.6.0"),
        ("1.21", "2.6.0"),
        ("1.22", "2.7.1"),
        ("1.23", "2.9.0"),
        ("1.24.0", "2.10.0"),
        ("1.24.1", "2.11.0"),
    ],
)
def test_pytorch_of_each_recent_release(version, torch_version):
    assert habana_releases.lookup(version)[0].torch == torch_version


def test_no_first_generation_gaudi_from_1_22():
    # Support Matrix v1.21.0 lists first-gen Gaudi, v1.22.0 Gaudi 2 and Gaudi 3 only; the torchvision README
    # of 1.22.0 and 1.23.0 names 1.21.0 as the last release validated on Gaudi.
    by_version = {r.version: r.generations for r in habana_releases.RELEASES}
    assert habana_releases.GAUDI1 in by_version["1.21"]
    assert [v for v, g in by_version.items() if habana_releases.GAUDI1 not in g] == [
        "1.22",
        "1.23",
        "1.24.0",
        "1.24.1",
    ]
    assert habana_releases.last_release_for(habana_releases.GAUDI1).version == "1.21"
    refusal = habana_releases.unsupported_card(habana_releases.lookup("1.22")[0], habana_releases.GAUDI1)
    assert (
        "not supported by Habana 1.22" in refusal
        and "last release that supports it is 1.21 (PyTorch 2.6.0)" in refusal
    )
    assert habana_releases.unsupported_card(habana_releases.lookup("1.21")[0], habana_releases.GAUDI1) is None


def test_default_mode_switches_to_eager_at_1_21_as_habana_says():
    # Lazy up to 1.19 (bridge v1.19.0 is_lazy(); Runtime Flags v1.19.0: default 1); Habana's tutorials for
    # 1.21.0: "Lazy mode is no longer the default execution mode ... since 1.21.0" ([tutorials-1.21]).
    defaults = {r.version: r.default_mode for r in habana_releases.RELEASES}
    assert {v for v, d in defaults.items() if d == "lazy"} >= {"1.10", "1.19", "1.20"}
    assert [v for v, d in defaults.items() if d != "lazy"] == ["1.21", "1.22", "1.23", "1.24.0", "1.24.1"]
    assert all(d == "eager" for v, d in defaults.items() if d != "lazy")
    release = habana_releases.lookup("1.24.1")[0]
    assert release.mode_of_value(None) == "eager" and release.mode_of_value("1") == "lazy"
    assert release.autoload_imports_bridge({}) is True  # unset is eager: Habana's autoload imports it
    assert release.autoload_imports_bridge({"PT_HPU_LAZY_MODE": "1"}) is False
    # a release the table does not know: its default is not assumed from the nearest row
    unknown = habana_releases.lookup("1.25.0")[0]
    assert unknown.mode_of_value(None) is None and unknown.autoload_imports_bridge({}) is None


def test_the_personal_fork_is_named_as_such():
    doc = (pathlib.Path(ROOT) / "docs" / "gaudi-releases.md").read_text()
    source = pathlib.Path(habana_releases.__file__).read_text()
    for text in (doc, source):
        assert "bridge-later" not in text
        assert "ankurneog/gaudi-pytorch-bridge" in text and "personal fork" in text


def test_docs_print_the_table_the_code_uses():
    doc = (pathlib.Path(ROOT) / "docs" / "gaudi-releases.md").read_text()
    assert habana_releases.markdown_table() in doc


def test_preset_mode_only_for_hpu_with_a_mode(monkeypatch):
    monkeypatch.setattr(habana_releases, "plugin_version", lambda: "1.10.0")
    env = {}
    assert habana_releases.preset_mode(["run", "--backend", "cpu", "--hpu-mode", "eager"], env) is None
    assert habana_releases.preset_mode(["run", "--backend", "hpu"], env) is None and env == {}
    assert habana_releases.preset_mode(["run", "--hpu-mode", "lazy"], env) == "1"  # auto would pick hpu
    env.clear()
    assert habana_releases.preset_mode(["run", "--backend=hpu", "--hpu-mode", "eager"], env) == "2"
    assert env == {"PT_HPU_LAZY_MODE": "2"}  # 1.10's eager
    monkeypatch.setattr(habana_releases, "plugin_version", lambda: None)
    assert habana_releases.preset_mode(["run", "--backend", "hpu", "--hpu-mode", "lazy"], {}) is None


def _floor(name: str):
    from packaging.requirements import Requirement

    tomllib = pytest.importorskip("tomllib")  # Python 3.11 on

    project = tomllib.loads((pathlib.Path(ROOT) / "pyproject.toml").read_text())["project"]
    return next(Requirement(r) for r in project["dependencies"] if Requirement(r).name == name)


def test_torch_floor_admits_habanas_own_torch_builds():
    """Habana's torch is a pre-release-style build (2.4.0a0+git74cd574). pip accepts an installed
    pre-release for a plain floor (PEP 440: installed pre-releases are accepted), so the floor must sit
    below every such build the suite supports, or pip would replace Habana's torch."""
    from packaging.version import Version

    torch = _floor("torch")
    floor = min(Version(s.version) for s in torch.specifier if s.operator == ">=")
    supported = [r for r in habana_releases.RELEASES if r.torch and Version(r.torch) >= floor]
    assert [r.version for r in supported][0] == "1.14"  # 1.14's torch 2.1.1 is the oldest checked above it
    for release in supported:
        habana_build = f"{release.torch}a0+git74cd574"
        assert torch.specifier.contains(habana_build, prereleases=True), habana_build
    # Releases 1.10 to 1.12 ship torch 2.0.1, below the floor (docs/compat.md says so).
    assert not torch.specifier.contains("2.0.1a0+git74cd574", prereleases=True)
