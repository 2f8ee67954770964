"""The registry's workloads: exact architectures, and a real training step for each on the CPU."""

from __future__ import annotations

import pytest
import torch
from conftest import TINY
from suite.backends.cpu import CPUBackend
from suite.workloads import get_workload, workload_names

from suite.spec import RunSpec

# Trainable-parameter counts of the standard DCGAN (arXiv:1511.06434) at each model's widths, to the parameter.
SEED_COUNTS = {
    "dcgan64": (3_576_704, 2_765_568),
    "dcgan64-safe": (52_448_768, 2_765_568),
    "dcgan128-safe": (195_063_296, 44_611_072),
    "dcgan128": (48_772_864, 2_796_928),
}


def test_registry_has_the_nine_workloads():
    assert sorted(workload_names()) == sorted(
        [
            "dcgan64",
            "dcgan64-safe",
            "dcgan128-safe",
            "dcgan128",
            "resnet50",
            "resnet50-inat",
            "resnet18-cifar",
            "gpt2-small",
            "llama-1b",
        ]
    )


@pytest.mark.parametrize("name", sorted(SEED_COUNTS))
def test_dcgan_parameter_counts_match_the_seed_exactly(name):
    counts = get_workload(name).parameter_counts()
    assert (counts["generator"], counts["discriminator"]) == SEED_COUNTS[name]


@pytest.mark.parametrize(
    "name,classes,builder",
    [
        ("resnet50", 1000, "resnet50"),
        ("resnet50-inat", 10000, "resnet50"),
        ("resnet18-cifar", 10, "resnet18"),
    ],
)
def test_resnets_are_torchvisions_models(name, classes, builder):
    import torchvision  # here, not at collection: it imports torch._dynamo (seconds on 2 cores)

    with torch.device("meta"):
        expected = sum(
            p.numel() for p in getattr(torchvision.models, builder)(num_classes=classes).parameters()
        )
    assert get_workload(name).parameter_counts() == {"model": expected}
    assert get_workload(name).num_classes == classes


def test_dcgan_generator_makes_images_of_the_workload_size():
    for name in SEED_COUNTS:
        workload = get_workload(name).with_overrides(**TINY[name])
        modules = workload.build_modules()
        z = torch.randn(2, workload.nz, 1, 1)
        images = modules["generator"](z)
        assert images.shape == (2, 3, workload.image_size, workload.image_size)
        assert modules["discriminator"](images).shape == (2, 1, 1, 1)  # one logit per image


@pytest.mark.parametrize("name", sorted(TINY))
def test_each_workload_trains_one_real_step_on_the_cpu(name):
    torch.manual_seed(0)
    workload = get_workload(name).with_overrides(**TINY[name])
    backend = CPUBackend(RunSpec().replace(backend="cpu", workload=name))
    backend.setup()
    training = workload.build(backend)
    before = {
        f"{m}.{n}": p.detach().clone()
        for m, mod in training.modules.items()
        for n, p in mod.named_parameters()
    }
    loss = training.train_step(workload.synthetic_batch(2, backend.device))

    assert torch.isfinite(loss).all()
    assert not loss.requires_grad  # the step hands back a detached value, never a graph
    for module_name, module in training.modules.items():
        for param_name, param in module.named_parameters():
            assert param.grad is not None, f"{module_name}.{param_name} got no gradient"
            assert torch.isfinite(param.grad).all()
            # Weight decay moves every parameter, so each one must have changed.
            assert not torch.equal(param.detach(), before[f"{module_name}.{param_name}"]), (
                f"{module_name}.{param_name} was not updated"
            )


def test_dcgan_discriminator_has_no_sigmoid_and_uses_logit_loss():
    training = (
        get_workload("dcgan64")
        .with_overrides(**TINY["dcgan64"])
        .build(CPUBackend(RunSpec().replace(backend="cpu")))
    )
    assert not any(isinstance(m, torch.nn.Sigmoid) for m in training.modules["discriminator"].modules())
    assert isinstance(training.criterion, torch.nn.BCEWithLogitsLoss)


def test_dcgan_optimizers_are_the_seeds_adamw():
    training = (
        get_workload("dcgan64")
        .with_overrides(**TINY["dcgan64"])
        .build(CPUBackend(RunSpec().replace(backend="cpu")))
    )
    for optimizer in training.optimizers.values():
        assert isinstance(optimizer, torch.optim.AdamW)
        group = optimizer.param_groups[0]
        assert (group["lr"], group["betas"], group["weight_decay"]) == (2e-4, (0.5, 0.999), 0.05)


def test_an_unknown_override_is_a_clear_error():
    from suite.inputs.errors import UserError

    with pytest.raises(UserError, match="unknown model override.*wdith") as refused:
        get_workload("dcgan64").with_overrides(wdith=3)
    # It lists what can be set, and only that: the name, the description and the batch are not the model's.
    assert str(refused.value).endswith("(settable: image_size, ndf, ngf, num_classes, nz)")
    for identity in ("name", "description", "default_batch_size"):
        with pytest.raises(UserError, match=f"unknown model override.*{identity}"):
            get_workload("dcgan64").with_overrides(**{identity: 3})
    with pytest.raises(
        UserError, match=r"override\(s\) model for torchvision:squeezenet1_1 \(settable: image_size"
    ):
        get_workload("torchvision:squeezenet1_1").with_overrides(model="resnet18")


@pytest.mark.slow  # a fresh Python that imports torch: the order in which modules are first imported
def test_listing_order_does_not_depend_on_which_module_was_imported_first():
    import subprocess
    import sys

    code = "import suite.workloads.resnet; from suite.workloads import workload_names; print(','.join(workload_names()))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    ).stdout.strip()
    assert out == (
        "dcgan64,dcgan64-safe,dcgan128-safe,dcgan128,resnet50,resnet50-inat,resnet18-cifar,gpt2-small,llama-1b"
    )


def test_the_training_steps_still_import_from_the_modules_they_moved_out_of():
    # A person's own Workload may subclass Training as docs/models.md describes, from before the steps moved
    # to modules of their own (training.py, classifier.py, dcgan_nets.py).
    from suite.workloads.base import Training
    from suite.workloads.dcgan import DCGANTraining, generator
    from suite.workloads.resnet import ClassifierTraining, logits

    assert issubclass(ClassifierTraining, Training) and issubclass(DCGANTraining, Training)
    assert callable(generator) and callable(logits)
