"""The wheel installs backends/ and workloads/ inside the suite namespace, never as top-level packages."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT


@pytest.mark.slow
def test_wheel_installs_backends_and_workloads_inside_suite(tmp_path):
    # --no-build-isolation: build with the setuptools already installed, so the test needs no network.
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            ROOT,
        ],
        check=True,
        cwd=tmp_path,
    )
    (wheel,) = tmp_path.glob("suite-*.whl")
    top_levels = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert top_levels == {"suite", f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info"}

    # A fresh environment: a new venv holding only the wheel; torch and the other requirements come from
    # this environment's site-packages through a .pth (which does not carry over this checkout's install).
    env = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    env_python = env / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(env_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--target",
            str(site),
            str(wheel),
        ],
        check=True,
    )
    # Every site-packages folder this interpreter reads (a venv may reach its packages through a .pth of its
    # own, which a .pth in another venv would not follow).
    sites = [sysconfig.get_paths()["purelib"], *(p for p in sys.path if p.endswith("site-packages"))]
    (site / "requirements.pth").write_text("\n".join(dict.fromkeys(sites)) + "\n")

    installed = sorted(
        p.name for p in site.iterdir() if not p.name.endswith((".dist-info", ".pth")) and p.name != "bin"
    )
    assert installed == ["suite"]
    probe = (
        "import importlib.util, suite.backends, suite.workloads, suite.reporting.pricing as pricing;"
        "assert importlib.util.find_spec('backends') is None and importlib.util.find_spec('workloads') is None;"
        "print(suite.backends.__file__); print(suite.workloads.workload_names()[0]);"
        "print(pricing.shipped_catalog_names())"
    )
    out = subprocess.run(
        [str(env_python), "-c", probe], check=True, capture_output=True, text=True, cwd=tmp_path
    )
    backends_file, first_workload, catalogs = out.stdout.splitlines()
    assert backends_file.startswith(str(site / "suite" / "backends"))
    assert first_workload == "dcgan64"
    assert "seed-2022" in catalogs
