"""A run records torchvision's own version string without importing torchvision where the run does not need
it (a DCGAN or a language model): the import costs seconds of a fresh process."""

from __future__ import annotations

import subprocess
import sys

import pytest

from suite import context


@pytest.mark.slow  # a fresh Python that imports torch
def test_torchvision_version_is_the_packages_own_without_importing_it():
    script = (
        "import sys; from suite.context import torchvision_version; v = torchvision_version(); "
        "print('torchvision' in sys.modules); import torchvision; print(v == torchvision.__version__, v)"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    imported, same = done.stdout.split()[:2]
    assert imported == "False" and same == "True", done.stdout


def test_a_torchvision_already_imported_answers_for_itself(monkeypatch):
    monkeypatch.setitem(sys.modules, "torchvision", type("Stand", (), {"__version__": "9.9.9+local"})())
    assert context.torchvision_version() == "9.9.9+local"


@pytest.mark.parametrize("text", ["", "version = 'no'\n", "__version__ = unquoted\n"])
def test_a_version_file_without_the_string_gives_the_installed_metadatas(monkeypatch, text):
    import importlib.metadata

    monkeypatch.delitem(sys.modules, "torchvision", raising=False)
    monkeypatch.setattr("suite.inputs.files.read_fixed_file", lambda path, limit=65536: text)
    assert context.torchvision_version() == importlib.metadata.version("torchvision")
