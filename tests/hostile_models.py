"""A person's own code that is hostile or cannot train, as `--workload hostile_models:FACTORY` names it
(tests only). `hostile_exit_on_import` ends the process when imported."""

from __future__ import annotations

import os
import sys

import torch
from torch import nn


def exits(num_classes: int = 10) -> nn.Module:
    sys.exit(0)  # a script's habit, in a factory


def exits_with_status(num_classes: int = 10) -> nn.Module:
    raise SystemExit(3)


class _Forward(nn.Module):
    """A tiny classifier whose output FINISH turns into something else."""

    def __init__(self, finish, classes: int = 4):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 3, 1), nn.AdaptiveAvgPool2d(2), nn.Flatten(), nn.Linear(12, classes)
        )
        self.finish = finish

    def forward(self, images):
        return self.finish(self.body(images))


def zero_classes() -> nn.Module:
    return _Forward(lambda out: out, classes=0)


def no_parameters() -> nn.Module:
    return nn.Sequential(nn.AdaptiveAvgPool2d(2), nn.Flatten())  # (batch, 12), nothing to train


def frozen() -> nn.Module:
    model = _Forward(lambda out: out)
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    return model


def integer_logits() -> nn.Module:
    return _Forward(lambda out: out.long())


def dict_output() -> nn.Module:
    return _Forward(lambda out: {"logits": out})


def features_and_logits(num_classes: int = 10) -> nn.Module:
    """The common `return features, logits` of a person's model: 32 features, then the real head."""

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(3, 32))
            self.head = nn.Linear(32, num_classes)

        def forward(self, images):
            features = self.features(images)
            return features, self.head(features)

    return Model()


def fixed_size_32() -> nn.Module:
    """Takes 32 px images only (a flattened linear layer)."""
    return nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 4))


def exits_in_forward() -> nn.Module:
    return _Forward(lambda out: sys.exit(0))


def dies() -> nn.Module:  # os._exit cannot be caught by anyone: documented, not tested as survivable
    os._exit(0)


def tensor_with_logits_attribute() -> nn.Module:
    """torchvision's inception_v3/googlenet return a named tuple with `.logits`: still accepted."""
    from collections import namedtuple

    Outputs = namedtuple("Outputs", ["logits", "aux_logits"])
    return _Forward(lambda out: Outputs(out, out))


_ = torch  # imported for the factories' users
