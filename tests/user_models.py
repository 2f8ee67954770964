"""A person's own code, as `suite run --workload user_models:FACTORY` would name it (tests only)."""

from __future__ import annotations

from torch import nn


def small_cnn(num_classes: int = 10) -> nn.Module:
    """A factory that takes the head's size from --num-classes."""
    return nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1),
        nn.BatchNorm2d(4),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(4, num_classes),
    )


def five_classes() -> nn.Module:
    """A factory with a fixed 5-class head (it takes no num_classes)."""
    return nn.Sequential(nn.Flatten(), nn.LazyLinear(5))


def raises(num_classes: int = 10) -> nn.Module:
    raise RuntimeError("weights file models/best.pt not found")


def wrong_type():
    return {"model": "not a module"}


def not_a_classifier() -> nn.Module:
    return nn.Conv2d(3, 3, 1)  # images out, not logits


NOT_CALLABLE = 3
