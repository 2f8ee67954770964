"""Broken vendor software is unavailable, with its error as the reason, never a crash: a half-installed
Habana SDK beside a device node, and a pynvml that raises something other than ImportError at import.
Wiring tests: the broken modules are small stand-ins written by the tests, placed where Python finds them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import SAFETY_NET_S, TINY_RUN, suite_env

from suite.cli import main


@pytest.fixture
def half_installed_habana(monkeypatch, tmp_path):
    """habana_frameworks present, a device node present, but the bridge's shared library missing."""
    from suite.backends import presence

    package = tmp_path / "sdk" / "habana_frameworks"
    (package / "torch").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "torch" / "__init__.py").write_text(
        "raise ImportError('libhabana_pytorch_plugin.so: cannot open shared object file: No such file or directory')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "sdk"))
    (tmp_path / "hl0").touch()  # a device node, as the driver makes it
    monkeypatch.setattr(presence, "DEVICE_NODE_GLOBS", (str(tmp_path / "hl[0-9]*"),))
    yield
    for name in [n for n in sys.modules if n.split(".")[0] == "habana_frameworks"]:
        del sys.modules[name]


def test_wiring_a_half_installed_habana_sdk_is_unavailable_with_the_import_error(half_installed_habana):
    from suite.backends import hpu

    ok, reason = hpu.HPUBackend.is_available()
    assert not ok
    assert "libhabana_pytorch_plugin.so: cannot open shared object file" in reason
    assert "habana_frameworks" not in sys.modules  # detection imported nothing here


def test_wiring_auto_falls_through_a_half_installed_habana_sdk(half_installed_habana):
    from suite.backends import resolve_backend_name

    name, why = resolve_backend_name("auto")
    assert name in ("cuda", "cpu") and name != "hpu"


def test_wiring_env_and_list_survive_a_half_installed_habana_sdk(half_installed_habana, capsys):
    assert main(["list"]) == 0
    hpu_line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("hpu "))
    assert "unavailable" in hpu_line and "cannot open shared object file" in hpu_line
    assert main(["env", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["backends"]["hpu"]["available"] is False and info["backends"]["cpu"]["available"] is True


def test_wiring_env_survives_a_backend_whose_set_up_fails(monkeypatch, capsys):
    from suite.backends.cpu import CPUBackend

    def broken(self):
        raise RuntimeError("driver went away\nsecond line")

    monkeypatch.setattr(CPUBackend, "describe", broken)
    assert main(["env", "--json"]) == 0
    cpu = json.loads(capsys.readouterr().out)["backends"]["cpu"]
    assert cpu["available"] is False and cpu["detail"] == "set-up failed: RuntimeError: second line"


# -- a pynvml that raises at import --------------------------------------------------------------------


@pytest.fixture
def broken_pynvml(tmp_path):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "pynvml.py").write_text("raise RuntimeError('NVML library is corrupt')\n")
    env = suite_env(tmp_path)
    env["PYTHONPATH"] = os.pathsep.join([str(folder), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


@pytest.mark.slow  # a fresh Python that imports torch: the fault happens at import time
def test_wiring_the_broken_pynvml_stand_in_does_take_down_a_plain_torch_import(broken_pynvml):
    # The fault is real: torch catches only ImportError when it imports pynvml.
    done = subprocess.run(
        [sys.executable, "-c", "import torch"],
        env=broken_pynvml,
        capture_output=True,
        text=True,
        timeout=SAFETY_NET_S,
    )
    assert done.returncode != 0 and "NVML library is corrupt" in done.stderr


@pytest.mark.slow  # a fresh Python: the broken module must be quarantined before torch is first imported
@pytest.mark.parametrize("command", [["list"], ["env"]])
def test_wiring_list_and_env_survive_a_pynvml_that_raises_at_import(broken_pynvml, command):
    done = subprocess.run(
        [sys.executable, "-m", "suite", *command],
        env=broken_pynvml,
        capture_output=True,
        text=True,
        timeout=SAFETY_NET_S,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "pynvml is installed but broken (RuntimeError: NVML library is corrupt)" in done.stdout


def test_wiring_a_module_that_raises_at_import_is_quarantined_in_process(monkeypatch, tmp_path, capsys):
    """The quick loop's view of the fresh-process tests above: the quarantine itself, and what `list` and
    `env` print about it (the stand-in has its own name: this process has already imported torch)."""
    from suite.vendors import optional_modules

    name = "suite_test_broken_vendor"
    (tmp_path / f"{name}.py").write_text("raise RuntimeError('NVML library is corrupt')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(optional_modules, "BROKEN", {})
    monkeypatch.delitem(sys.modules, name, raising=False)
    try:
        broken = optional_modules.quarantine_broken((name,))
        assert broken == {name: "RuntimeError: NVML library is corrupt"}
        with pytest.raises(ImportError):
            __import__(name)  # every later import is an ordinary "not installed"
    finally:
        sys.modules.pop(name, None)
    line = f"{name} is installed but broken (RuntimeError: NVML library is corrupt)"
    for command in (["list"], ["env"]):
        assert main(command) == 0
        out, err = capsys.readouterr()
        assert line in out and "Traceback" not in err
    assert main(["env", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["broken_modules"] == broken


@pytest.mark.slow
def test_wiring_the_cpu_path_survives_a_pynvml_that_raises_at_import(broken_pynvml, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "suite", *TINY_RUN, "--out", str(tmp_path / "out"), "--json"],
        env=broken_pynvml,
        capture_output=True,
        text=True,
        timeout=SAFETY_NET_S,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "ok"
