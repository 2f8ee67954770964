"""Wiring tests: the hpu backend against fakes that refuse what Habana's own code refuses (no Gaudi here:
nothing below runs on one). Each test names the Habana source file and release it follows."""

from __future__ import annotations

import re

import habana_fakes
import pytest
import torch
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


# -- Fused optimizers: bridge v1.19.0 python_packages/habana_frameworks/torch/hpex/optimizers/FusedSGD.py and
# FusedAdamW.py: their own argument checks, with their own messages.
@pytest.mark.parametrize(
    "hyper, message",
    [
        ({"dampening": -0.1}, "Invalid dampening value: -0.1"),  # torch.optim.SGD accepts it
        ({"momentum": -0.5}, "Invalid momentum value: -0.5"),
        ({"weight_decay": -1.0}, "Invalid weight_decay value: -1.0"),
        ({"lr": -1.0}, "Invalid learning rate: -1.0"),
        (
            {"nesterov": True, "momentum": 0.9, "dampening": 0.1},
            "Nesterov momentum requires a momentum and zero",
        ),
    ],
)
def test_wiring_fused_sgd_refuses_what_habanas_refuses(install, hyper, message):
    install()
    backend = make_backend(hpu_mode="lazy")
    params = [torch.nn.Parameter(torch.zeros(2))]
    with pytest.raises(ValueError, match=re.escape(message)):
        backend.make_optimizer(params, "sgd", **{"lr": 0.1, **hyper})


def test_wiring_fused_sgd_is_not_torchs_sgd_and_refuses_sparse_gradients(install):
    install()
    from habana_frameworks.torch.hpex.optimizers import FusedSGD

    weight = torch.nn.Parameter(torch.ones(3))
    optimizer = FusedSGD([weight], lr=0.1, momentum=0.9)
    assert not isinstance(optimizer, torch.optim.SGD)
    weight.grad = torch.ones(3).to_sparse()
    with pytest.raises(
        RuntimeError, match="SGD does not support sparse gradients, please consider SparseSGD"
    ):
        optimizer.step()


def test_wiring_fused_adamw_names_the_bad_beta(install):
    install()
    from habana_frameworks.torch.hpex.optimizers import FusedAdamW

    params = [torch.nn.Parameter(torch.zeros(2))]
    with pytest.raises(ValueError, match=re.escape("Invalid beta parameter: 1.0 - should be in [0.0, 1.0[")):
        FusedAdamW(params, betas=(0.9, 1.0))


# -- HLML errors: habana-pyhlml 1.24.2.481 pyhlml/hlml_error.py and main.py (check_return raises
# HLMLError(code); hlmlInit makes one subclass per code).
def test_wiring_hlml_fake_raises_pyhlmls_error_type(install):
    install()
    import pyhlml

    pyhlml.hlmlInit()
    with pytest.raises(pyhlml.HLMLError, match=r"^HLML Error with code 2$") as raised:
        pyhlml.hlmlDeviceGetHandleByIndex(99)
    assert type(raised.value).__name__ == "HLMLError_InvalidArgument" and raised.value.value == 2


def test_wiring_hlml_no_energy_counter_is_pyhlmls_not_supported(install, monkeypatch):
    install()
    import pyhlml
    from suite.backends.hlml import HLMLSampler

    monkeypatch.setattr(pyhlml, "HAS_ENERGY", False)
    sampler = HLMLSampler(index=0)
    sampler.open()
    assert sampler.counters() == {}  # HLMLError_NotSupported: energy left out, the rest sampled
    assert sampler.sample()["hpu_power_w"] == pytest.approx(pyhlml.POWER_MW / 1000)
    sampler.close()
