"""A classifier's training step (cross-entropy, one optimizer), shared by the ResNets and every classifier
named by the user, and what it accepts as a model's output."""

from __future__ import annotations

import torch
from torch import nn

from .training import Training

EXPECTED_OUTPUT = (
    "a (batch, classes) tensor of float logits, or an object whose .logits is one (as torchvision's "
    "inception_v3 returns while training)"
)


def logits(output):
    """The logits a classifier returned: the tensor itself, or its `.logits` when it returns extra heads
    while training (inception_v3's aux logits). Anything else (a tuple, a dict) is refused, not guessed
    at: in `(features, logits)` the first item is the features, and training on them leaves the real head
    untrained."""
    if isinstance(output, torch.Tensor):
        return output
    if isinstance(getattr(output, "logits", None), torch.Tensor):
        return output.logits
    raise TypeError(f"the model returned {describe_output(output)}; the suite trains on {EXPECTED_OUTPUT}")


def describe_output(output) -> str:
    """`a tuple of 2: (2, 32) float32, (2, 10) float32` — what a model returned, in words."""

    def one(value) -> str:
        if isinstance(value, torch.Tensor):
            return f"{tuple(value.shape)} {str(value.dtype).removeprefix('torch.')}"
        return type(value).__name__

    if isinstance(output, torch.Tensor):
        return f"a {one(output)} tensor"
    if isinstance(output, (tuple, list)):
        return f"a {type(output).__name__} of {len(output)}: {', '.join(one(item) for item in output[:4])}"
    if isinstance(output, dict):
        return f"a dict with keys {', '.join(map(repr, list(output)[:4]))}"
    return f"a {type(output).__name__}"


class ClassifierTraining(Training):
    """Cross-entropy with SGD, for the ResNets and any classifier named by the user (whose output may be a
    tuple of heads while training)."""

    def __init__(self, backend, modules, optimizers):
        super().__init__(backend, modules, optimizers)
        self.criterion = nn.CrossEntropyLoss()

    def train_step(self, batch):
        backend = self.backend
        model, optimizer = self.modules["model"], self.optimizers["model"]
        images, labels = batch
        optimizer.zero_grad(set_to_none=True)
        with backend.autocast():
            loss = self.criterion(logits(model(images)), labels)
        backend.backward(loss)
        backend.step(optimizer)
        backend.end_step()
        return loss.detach().float()
