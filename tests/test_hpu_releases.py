"""The Habana release table: lookups, the nearest-row warning, the printed copy in docs/, the torch floor."""

from __future__ import annotations

import pathlib

import habana_fakes
import pytest
from conftest import ROOT
from suite.backends import habana_releases, hpu

from suite.config import RunConfig


@pytest.mark.parametrize("version, row", [("1.19.0.561", "1.19"), ("1.10.0", "1.10"), ("1.21.1-16", "1.21")])
def test_known_release_has_its_row_and_no_warning(version, row):
    release, warning = habana_releases.lookup(version)
    assert (release.version, warning) == (row, None)


@pytest.mark.parametrize("version, nearest", [("1.9.0", "1.10"), ("1.30.0", "1.22"), ("2.0.0", "1.22")])
def test_unknown_release_gets_the_nearest_row_and_a_warning(version, nearest):
    release, warning = habana_releases.lookup(version)
    assert release.version == nearest
    assert f"{version} is not in the release table" in warning and nearest in warning


def test_wiring_unknown_release_warning_lands_in_the_record(monkeypatch, tmp_path):
    habana_fakes.install(monkeypatch, tmp_path, "1.19")
    monkeypatch.setattr(habana_releases, "plugin_version", lambda: "1.25.0.100")
    backend = hpu.HPUBackend(RunConfig(backend="hpu", hpu_mode="lazy"))
    info = backend.device_info()
    assert (
        info["habana_release"] == "1.22"
        and "1.25.0.100 is not in the release table" in info["release_warning"]
    )
    habana_fakes.drop_fake_modules()


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
