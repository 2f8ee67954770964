"""A tiny classification workload (one linear layer over 3x4x4 images) for fast runner tests, with a
FLOP count that can be worked out by hand."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from suite.workloads.base import Workload
from suite.workloads.classifier import ClassifierTraining  # the same cross-entropy step as the ResNets
from torch import nn

from suite.measurement.runner import Plan
from suite.spec import RECORD_ONLY, RunSpec

IN_FEATURES = 3 * 4 * 4
HIDDEN = 8
CLASSES = 2
# FlopCounterMode counts 2 FLOPs per multiply-add. The first layer's input needs no gradient, so its
# backward computes only the weight gradient; the second computes both.
#   first:  forward 2·in·hidden, backward 2·in·hidden
#   second: forward 2·hidden·classes, backward 2·2·hidden·classes
FLOPS_PER_IMAGE = 4 * IN_FEATURES * HIDDEN + 6 * HIDDEN * CLASSES


@dataclass(frozen=True)
class Tiny(Workload):
    def build_modules(self, device="cpu"):
        with torch.device(device):
            return {
                "model": nn.Sequential(
                    nn.Flatten(),
                    nn.Linear(IN_FEATURES, HIDDEN, bias=False),
                    nn.ReLU(),
                    nn.Linear(HIDDEN, CLASSES, bias=False),
                )
            }

    def build(self, backend):
        model = backend.prepare_model(self.build_modules()["model"])
        return ClassifierTraining(
            backend, {"model": model}, {"model": backend.make_optimizer(model.parameters(), "sgd", lr=0.01)}
        )


def tiny() -> Tiny:
    return Tiny("tiny", "one linear layer (tests)", image_size=4, default_batch_size=4, num_classes=CLASSES)


def make_plan(backend_cls, workload=None, **fields) -> Plan:
    values = {
        "backend": backend_cls.name,
        "workload": "tiny",
        "batch_size": 4,
        "warmup_steps": 2,
        "steps_per_window": 3,
        "windows": 2,
        "precision": backend_cls.precisions[0],
    }
    values.update(fields)
    launched = {
        name: values.pop(name) for name in RECORD_ONLY if name in values
    }  # the plan's, not the spec's
    resolved = RunSpec().replace(**values)
    return Plan(resolved, backend_cls(resolved), workload or tiny(), "asked for", **launched)
