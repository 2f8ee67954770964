"""The Habana release table: lookups, the nearest-row warning, the printed copy in docs/, the torch floor."""

from __future__ import annotations

import pathlib

import habana_fakes
import pytest
from suite.backends import habana_releases, hpu

from suite.config import RunConfig

ROOT = pathlib.Path(__file__).parent.parent


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
    doc = (ROOT / "docs" / "gaudi-releases.md").read_text()
    assert habana_releases.markdown_table() in doc


def test_preset_mode_only_for_hpu_with_a_mode(monkeypatch):
    monkeypatch.setattr(habana_releases, "plugin_version", lambda: "1.10.0")
    env = {}
    assert habana_releases.preset_mode(["run", "--backend", "cpu", "--hpu-mode", "eager"], env) is None
    assert habana_releases.preset_mode(["run", "--backend", "hpu"], env) is None and env == {}
    assert habana_releases.preset_mode(["run", "--backend=hpu", "--hpu-mode", "eager"], env) == "2"
    assert env == {"PT_HPU_LAZY_MODE": "2"}  # 1.10's eager
    monkeypatch.setattr(habana_releases, "plugin_version", lambda: None)
    assert habana_releases.preset_mode(["run", "--backend", "hpu", "--hpu-mode", "lazy"], {}) is None
