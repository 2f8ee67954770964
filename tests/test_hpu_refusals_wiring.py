"""Wiring tests: the hpu backend against fakes that refuse what Habana's own code refuses (no Gaudi here:
nothing below runs on one). Each test names the Habana source file and release it follows."""

from __future__ import annotations

import habana_fakes
import pytest
from suite.backends import hpu

from suite.config import RunConfig
from suite.errors import UserError


@pytest.fixture
def install(monkeypatch, tmp_path):
    """install(version, **options): the fakes as that Habana release, dropped again after the test."""

    def installer(version: str = "1.19", **options):
        return habana_fakes.install(monkeypatch, tmp_path, version, **options)

    yield installer
    habana_fakes.drop_fake_modules()


def make_backend(**config) -> hpu.HPUBackend:
    backend = hpu.HPUBackend(RunConfig(backend="hpu", **config))
    backend.setup()
    return backend


# -- HMP: Model-References 1.12.0 PyTorch/examples/computer_vision/hello_world/mnist.py still imports
# habana_frameworks.torch.hpex.hmp and calls hmp.convert under --hmp (its README: --hmp --hmp-bf16=...);
# 1.13.0 is the first tag where nothing imports it.
def test_wiring_hmp_runs_on_release_1_12(install):
    install("1.12")
    make_backend(hpu_mode="lazy", precision="hmp")
    assert habana_fakes.recorder().events("hmp.convert") == ["hmp.convert"]


def test_wiring_hmp_decided_by_the_installed_module_not_the_table(install):
    install("1.13", hmp=True)  # the table says 1.13 has no HMP, but this install has the module
    make_backend(hpu_mode="lazy", precision="hmp")
    assert habana_fakes.recorder().events("hmp.convert") == ["hmp.convert"]


def test_wiring_hmp_missing_where_the_release_ships_it_says_so(install):
    install("1.12", hmp=False)
    with pytest.raises(UserError, match=r"Habana 1\.12 ships but is not installed here.*--precision bf16"):
        hpu.HPUBackend(RunConfig(backend="hpu", hpu_mode="lazy", precision="hmp"))


def test_wiring_hmp_missing_after_1_12_is_explained_by_the_table(install):
    install("1.19")
    with pytest.raises(UserError, match=r"Habana 1\.19 does not have.*up to 1\.12.*--precision bf16"):
        hpu.HPUBackend(RunConfig(backend="hpu", hpu_mode="lazy", precision="hmp"))
