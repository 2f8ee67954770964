"""Wiring tests: the hpu backend against fakes that refuse what Habana's own code refuses (no Gaudi here:
nothing below runs on one). Each test names the Habana source file and release it follows."""

from __future__ import annotations

import re
import sys

import habana_fakes
import pytest
import torch
from suite.backends import hpu

from suite.inputs.errors import UserError
from suite.spec import RunSpec


@pytest.fixture
def install(monkeypatch, tmp_path):
    """install(version, **options): the fakes as that Habana release, dropped again after the test."""

    def installer(version: str = "1.19", **options):
        return habana_fakes.install(monkeypatch, tmp_path, version, **options)

    yield installer
    habana_fakes.drop_fake_modules()


def make_backend(**config) -> hpu.HPUBackend:
    backend = hpu.HPUBackend(RunSpec().replace(backend="hpu", **config))
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
        hpu.HPUBackend(RunSpec().replace(backend="hpu", hpu_mode="lazy", precision="hmp"))


def test_wiring_hmp_missing_after_1_12_is_explained_by_the_table(install):
    install("1.19")
    with pytest.raises(UserError, match=r"Habana 1\.19 does not have.*up to 1\.12.*--precision bf16"):
        hpu.HPUBackend(RunSpec().replace(backend="hpu", hpu_mode="lazy", precision="hmp"))


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


# -- Gaudi2's loader choice: bridge v1.19.0 pytorch_helpers/dataloader/habana_dataloader/habana_dataloader/
# habana_dataset.py, ResnetDataLoader.__init__: aeon when PT_HPU_MEDIA_PIPE is false/0/f or
# habana_frameworks.medialoaders.torch.media_dataloader_mediapipe does not import; aeon's transform checks
# (HabanaAeonTransforms) run on the aeon path only.
IMAGENET = {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}


@pytest.fixture
def imagenet_eval_folder(tmp_path):
    import torchvision
    from PIL import Image
    from torchvision import transforms as T

    for label in ("a", "b"):
        (tmp_path / "images" / label).mkdir(parents=True)
        Image.new("RGB", (40, 40), (10, 20, 30)).save(tmp_path / "images" / label / "0.png")
    transform = T.Compose([T.Resize(32), T.CenterCrop(32), T.ToTensor(), T.Normalize(**IMAGENET)])
    return torchvision.datasets.ImageFolder(str(tmp_path / "images"), transform=transform)


def suite_loader_kwargs():
    """What suite.data.imagefolder hands make_loader (its own generator, persistent workers, prefetch)."""
    return dict(
        batch_size=2,
        shuffle=True,
        sampler=None,
        num_workers=2,
        pin_memory=False,
        drop_last=True,
        generator=torch.Generator().manual_seed(0),
        prefetch_factor=2,
        persistent_workers=True,
    )


@pytest.mark.parametrize(
    "medialoaders, media_pipe_env, expected",
    [(True, None, "mediapipe"), (True, "False", "aeon"), (True, "0", "aeon"), (False, None, "aeon")],
)
def test_wiring_gaudi2_loader_path_follows_media_pipe_switch_and_module(
    install, monkeypatch, imagenet_eval_folder, medialoaders, media_pipe_env, expected
):
    install(medialoaders=medialoaders)
    if media_pipe_env is not None:
        monkeypatch.setenv("PT_HPU_MEDIA_PIPE", media_pipe_env)
    habana_fakes.set_generation("gaudi2")
    backend = make_backend(hpu_mode="lazy")
    loader, info = backend.make_loader(imagenet_eval_folder, **suite_loader_kwargs())
    recorded = habana_fakes.recorder()
    # The loader really built its path (no fallback to torch's), and the record says which one engaged.
    assert recorded.events("habana loader", "habana loader fallback") == ["habana loader"]
    built = next(details for event, details in recorded.CALLS if event == "habana loader")
    assert built["path"] == expected and info["engaged"] == expected
    assert info["loader"] == "habana_dataloader.HabanaDataLoader"
    if expected == "aeon":  # Gaudi2 on aeon gets aeon's fixed arguments
        kwargs = built["kwargs"]
        assert (kwargs["num_workers"], kwargs["pin_memory"], kwargs["prefetch_factor"]) == (8, True, 2)
        assert "aeon instead of MediaPipe" in info["why"]
    images, _ = next(iter(loader))
    assert images.shape == (2, 3, 32, 32)


def test_wiring_mediapipe_path_does_not_apply_aeons_transform_checks(install, imagenet_eval_folder):
    install()
    from torchvision import transforms as T

    habana_fakes.set_generation("gaudi2")
    make_backend(hpu_mode="lazy")
    import habana_dataloader

    # DCGAN's Normalize(0.5, 0.5): aeon refuses it, MediaPipe is handed it (its own rules are not in the source).
    imagenet_eval_folder.transform = T.Compose(
        [T.Resize(32), T.ToTensor(), T.Normalize([0.5] * 3, [0.5] * 3)]
    )
    mediapipe = habana_dataloader.HabanaDataLoader(imagenet_eval_folder, batch_size=2)
    assert not mediapipe.dataloader.fallback_activated
    assert habana_fakes.recorder().events("HPUMediaPipe") == ["HPUMediaPipe"]
    habana_fakes.set_generation("gaudi")
    aeon = habana_dataloader.HabanaDataLoader(imagenet_eval_folder, batch_size=2, pin_memory=True)
    assert aeon.dataloader.fallback_activated


# -- Cards a release no longer supports: Support Matrix v1.22.0 lists Gaudi 2 and Gaudi 3 only (v1.21.0 also
# first-generation Gaudi); the card's generation comes from its PCI id (Habana's driver, habanalabs_drv.c).
def test_wiring_dl1_on_1_22_run_stops_in_one_line_naming_1_21(install, capsys):
    from suite.cli import main

    install("1.22", generation="gaudi")  # a DL1's HL-205 on the PCI bus, Habana 1.22 installed
    assert main(["run", "--backend", "hpu"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(
        "suite: error: backend 'hpu' is not available: first-generation Gaudi is not supported"
    )
    assert "Habana 1.22" in err and "last release that supports it is 1.21 (PyTorch 2.6.0)" in err
    assert "habana_frameworks.torch" not in sys.modules  # said before the bridge is imported or probed


@pytest.mark.parametrize("version, generation", [("1.21", "gaudi"), ("1.22", "gaudi2"), ("1.23", "gaudi3")])
def test_wiring_supported_cards_are_not_refused(install, version, generation):
    from suite.backends import hpu_install

    release = install(version, generation=generation)
    assert hpu_install.card_generations() == {generation}
    assert hpu_install.card_refusal(release) is None


def test_wiring_setup_refuses_a_dl1_that_only_the_bridge_reports(install, monkeypatch, tmp_path):
    # No PCI ids readable (sysfs hidden): the bridge's own device type, after its import, says it instead.
    from suite.backends import hpu_install

    install("1.23", generation="gaudi")
    monkeypatch.setattr(hpu_install, "PCI_DEVICES", str(tmp_path / "no-sysfs"))
    backend = hpu.HPUBackend(RunSpec().replace(backend="hpu", hpu_mode="eager"))
    with pytest.raises(
        UserError, match=r"^first-generation Gaudi is not supported by Habana 1\.23 .*is 1\.21 "
    ):
        backend.setup()


# -- Import-time refusals: bridge v1.19.0 python_packages/habana_frameworks/torch/__init__.py asserts that
# the run-time torch has the major.minor of required_version.txt and, in lazy mode, that it is Habana's fork.
def test_wiring_bridge_refuses_stock_torch_in_lazy_mode(install, monkeypatch):
    install(torch_version="2.14.1+cpu")
    monkeypatch.setenv("PT_HPU_LAZY_MODE", "1")
    with pytest.raises(
        AssertionError, match=r"^Stock PyTorch version 2\.14\.1\+cpu is not supported in Lazy mode\.$"
    ):
        import habana_frameworks.torch  # noqa: F401


def test_wiring_bridge_refuses_another_torch_major_minor(install, monkeypatch):
    install(built_for="2.5.1a0+git74cd574", torch_version="2.14.1a0+git0000000")
    monkeypatch.setenv("PT_HPU_LAZY_MODE", "0")
    message = "Error: Compile-time major/minor PyTorch version 2.5.1a0+git74cd574 differs from run-time 2.14.1a0+git0000000."
    with pytest.raises(AssertionError, match=f"^{re.escape(message)}$"):
        import habana_frameworks.torch  # noqa: F401


def test_wiring_bridge_refusal_in_setup_is_one_line_naming_the_fix(install):
    install(built_for="2.5.1a0+git74cd574")
    backend = hpu.HPUBackend(RunSpec().replace(backend="hpu", hpu_mode="eager"))
    with pytest.raises(
        UserError, match=r"refuses the installed torch \(AssertionError: Error: Compile-time.*--no-deps"
    ):
        backend.setup()


@pytest.mark.parametrize("torch_version", ["2.14.1+cpu", "2.14.1"])  # "2.14.1": no local version at all
def test_wiring_run_and_env_name_the_fix_for_a_stock_torch(install, capsys, torch_version):
    from suite.cli import main

    install(torch_version=torch_version)  # 1.19: lazy by default
    assert main(["run", "--backend", "hpu"]) == 2
    err = capsys.readouterr().err
    assert (
        err.count("\n") == 1 and "refuses the installed torch" in err and "pip install --no-deps -e ." in err
    )
    assert main(["env"]) == 0
    hpu_line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("hpu "))
    assert "refuses the installed torch" in hpu_line and "--no-deps" in hpu_line
