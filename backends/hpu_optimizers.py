"""Habana's fused optimizers (habana_frameworks.torch.hpex.optimizers) for the suite's optimizer kinds, with
the hyperparameters made the suite's and a note for the record of how the update differs from torch's."""

from __future__ import annotations

import importlib

import torch


def fused_optimizer(params, kind: str, **hyper) -> tuple[torch.optim.Optimizer, str]:
    """(optimizer, note) for `kind` ("adamw" or "sgd"); imports the bridge, so only after setup()."""
    optimizers = importlib.import_module("habana_frameworks.torch.hpex.optimizers")
    if kind == "adamw":
        # FusedAdamW defaults to eps=1e-6, weight_decay=0.0; torch.optim.AdamW to 1e-8 and 1e-2: both
        # are passed explicitly. The update is close to torch's, not identical: FusedAdamW folds bias
        # correction into the step size (lr * sqrt(1 - beta2^t) / (1 - beta1^t), then m / (sqrt(v) + eps)),
        # so its eps is not scaled by sqrt(1 - beta2^t) as torch.optim.AdamW's is (hpex/optimizers/
        # FusedAdamW.py, bridge v1.19.0). The difference is largest in the first steps.
        hyper = {"eps": 1e-8, "weight_decay": 1e-2, **hyper}
        note = (
            "adamw: habana FusedAdamW (bias correction folded into the step size: eps acts unscaled, "
            "close to torch.optim.AdamW, not identical)"
        )
        return optimizers.FusedAdamW(params, **hyper), note
    if kind == "sgd":
        # FusedSGD(params, lr, momentum=0, weight_decay=0, dampening=0, nesterov=False): torch's defaults.
        note = "sgd: habana FusedSGD"
        return optimizers.FusedSGD(params, **hyper), note
    raise ValueError(f"unknown optimizer kind {kind!r}")
