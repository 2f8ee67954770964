"""Fake Habana fused optimizers: torch's arithmetic, Habana's signatures and defaults, calls recorded.

Defaults as Habana's (hpex/optimizers/FusedAdamW.py: eps=1e-6, weight_decay=0.0), so a test can tell
whether the suite passed its own values explicitly."""

import torch

from habana_frameworks import record


class FusedAdamW(torch.optim.AdamW):
    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-6,
        weight_decay=0.0,
        bias_correction=True,
        moments_dtype=None,
    ):
        record("FusedAdamW", lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay)
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)

    def step(self, closure=None):
        record("optimizer.step", optimizer="FusedAdamW")
        return super().step(closure)


class FusedSGD(torch.optim.SGD):
    def __init__(self, params, lr, momentum=0, weight_decay=0, dampening=0, nesterov=False):
        record(
            "FusedSGD",
            lr=lr,
            momentum=momentum,
            weight_decay=weight_decay,
            dampening=dampening,
            nesterov=nesterov,
        )
        super().__init__(
            params,
            lr=lr,
            momentum=momentum,
            weight_decay=weight_decay,
            dampening=dampening,
            nesterov=nesterov,
        )

    def step(self, closure=None):
        record("optimizer.step", optimizer="FusedSGD")
        return super().step(closure)
