"""A run records torchvision's own version string without importing torchvision where the run does not need
it (a DCGAN or a language model): the import costs seconds of a fresh process."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import SAFETY_NET_S

from suite import context


@pytest.mark.slow  # a fresh Python that imports torch
def test_torchvision_version_is_the_packages_own_without_importing_it():
    # torch's version and thread count as well (`suite env` imports no torch): what torch says once imported.
    script = (
        "import sys; from suite.context import package_version, torchvision_version; "
        "from suite.backends.cpu import torch_threads; "
        "v, t, n = torchvision_version(), package_version('torch'), torch_threads(); "
        "print('torch' in sys.modules); import torch, torchvision; "
        "print(v == torchvision.__version__, t == torch.__version__, n == torch.get_num_threads(), v, t, n)"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=SAFETY_NET_S, env=env
    )
    assert done.returncode == 0, done.stderr
    imported, *same = done.stdout.split()[:4]
    assert imported == "False" and same == ["True"] * 3, done.stdout


def test_a_torchvision_already_imported_answers_for_itself(monkeypatch):
    monkeypatch.setitem(sys.modules, "torchvision", type("Stand", (), {"__version__": "9.9.9+local"})())
    assert context.torchvision_version() == "9.9.9+local"


@pytest.mark.parametrize("text", ["", "version = 'no'\n", "__version__ = unquoted\n"])
def test_a_version_file_without_the_string_gives_the_installed_metadatas(monkeypatch, text):
    import importlib.metadata

    monkeypatch.delitem(sys.modules, "torchvision", raising=False)
    monkeypatch.setattr("suite.inputs.files.read_fixed_file", lambda path, limit=65536: text)
    assert context.torchvision_version() == importlib.metadata.version("torchvision")
