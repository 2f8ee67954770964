"""ResNet classification workloads, built from torchvision's models (randomly initialised); their training
step is classifier.py's."""

from __future__ import annotations

from dataclasses import dataclass

from . import register_workload
from .base import Workload

# The standard ImageNet recipe's optimiser (torchvision references: SGD, momentum 0.9, wd 1e-4).
SGD = {"lr": 0.1, "momentum": 0.9, "weight_decay": 1e-4}


def __getattr__(name: str):
    # The classifier's step lived here before it moved to classifier.py (which imports torch): code that
    # imports it from here still works.
    if name in ("ClassifierTraining", "logits", "describe_output", "EXPECTED_OUTPUT"):
        from . import classifier

        return getattr(classifier, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class ResNet(Workload):
    arch: str = "resnet50"

    def build_modules(self, device="cpu"):
        import torch
        import torchvision  # here, not at the top: importing it costs `suite list` ~2 s on 2 cores

        builder = getattr(torchvision.models, self.arch)
        with torch.device(device):
            return {"model": builder(weights=None, num_classes=self.num_classes)}

    def build(self, backend):
        from .classifier import ClassifierTraining

        model = backend.prepare_model(self.build_modules()["model"])
        return ClassifierTraining(
            backend, {"model": model}, {"model": backend.make_optimizer(model.parameters(), "sgd", **SGD)}
        )


@register_workload
def resnet50() -> ResNet:
    return ResNet(
        "resnet50",
        "torchvision ResNet-50, ImageNet-1k head, 224 px",
        image_size=224,
        default_batch_size=256,
        num_classes=1000,
        arch="resnet50",
    )


@register_workload
def resnet50_inat() -> ResNet:
    return ResNet(
        "resnet50-inat",
        "torchvision ResNet-50 with a 10,000-class iNaturalist head, 224 px",
        image_size=224,
        default_batch_size=256,
        num_classes=10000,
        arch="resnet50",
    )


@register_workload
def resnet18_cifar() -> ResNet:
    return ResNet(
        "resnet18-cifar",
        "torchvision ResNet-18, 10 classes at 224 px (CIFAR-10 upscaled)",
        image_size=224,
        default_batch_size=128,
        num_classes=10,
        arch="resnet18",
    )
