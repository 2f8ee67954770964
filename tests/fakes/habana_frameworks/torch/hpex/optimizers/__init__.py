"""Fake Habana fused optimizers: Habana's signatures, defaults, argument checks and update rule, on the CPU.

FusedAdamW as hpex/optimizers/FusedAdamW.py (v1.19.0): defaults eps=1e-6, weight_decay=0.0; bias correction
folded into the step size (step_size = lr * sqrt(1 - beta2^t) / (1 - beta1^t), then
w -= step_size * m / (sqrt(v) + eps)), so eps is not scaled as in torch.optim.AdamW
(m_hat / (sqrt(v_hat) + eps)): close, not identical. Weight decay is decoupled, w *= 1 - lr * wd. Its
step() ends with a mark_step in lazy mode.

FusedSGD as hpex/optimizers/FusedSGD.py (v1.19.0): a torch.optim.Optimizer (not a torch.optim.SGD), lr
required, and its own refusals, which torch's SGD does not all make (a negative dampening). Momentum buffers
start at zero, as its state initialisation does; the update is torch's SGD rule (the fused kernel itself is
not in the bridge's Python source). Both refuse sparse gradients in step(), with the real messages."""

import math

import torch

from habana_frameworks import record
from habana_frameworks.torch.core import mark_step


class FusedAdamW(torch.optim.Optimizer):
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
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr} - should be >= 0.0")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter: {betas[0]} - should be in [0.0, 1.0[")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter: {betas[1]} - should be in [0.0, 1.0[")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps} - should be >= 0.0")
        record("FusedAdamW", lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay)
        defaults = dict(
            lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, bias_correction=bias_correction
        )
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        loss = closure() if closure is not None else None
        record("optimizer.step", optimizer="FusedAdamW")
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if not params:
                continue
            beta1, beta2 = group["betas"]
            group["step"] = group.get("step", 0) + 1
            step_size = group["lr"]
            if group["bias_correction"]:
                step_size *= math.sqrt(1.0 - beta2 ** group["step"]) / (1.0 - beta1 ** group["step"])
            for p in params:
                if p.grad.is_sparse:
                    raise RuntimeError("Adam does not support sparse gradients, please consider SparseAdam")
                state = self.state[p]
                if not state:
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                m, v = state["exp_avg"], state["exp_avg_sq"]
                p.mul_(1.0 - group["weight_decay"] * group["lr"])
                m.mul_(beta1).add_(p.grad, alpha=1.0 - beta1)
                v.mul_(beta2).addcmul_(p.grad, p.grad, value=1.0 - beta2)
                p.addcdiv_(m, v.sqrt().add_(group["eps"]), value=-step_size)
        mark_step()  # the real step() is wrapped in a mark_step-if-lazy
        return loss


class FusedSGD(torch.optim.Optimizer):
    def __init__(self, params, lr, momentum=0, weight_decay=0, dampening=0, nesterov=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= dampening:
            raise ValueError(f"Invalid dampening value: {dampening}")
        defaults = dict(
            lr=lr, momentum=momentum, weight_decay=weight_decay, dampening=dampening, nesterov=nesterov
        )
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        record("FusedSGD", **defaults)
        super().__init__(params, defaults)
        mark_step()  # as the real __init__ ends (_mark_step_if_lazy)

    @torch.no_grad()
    def step(self, closure=None):
        loss = closure() if closure is not None else None
        record("optimizer.step", optimizer="FusedSGD")
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            for p in params:
                if p.grad.is_sparse:
                    raise RuntimeError("SGD does not support sparse gradients, please consider SparseSGD")
            mark_step()  # the real step() marks a step before and after the kernel in lazy mode
            buffers = None
            if group["momentum"] != 0:
                buffers = [self.state[p].setdefault("momentum_buffer", torch.zeros_like(p)) for p in params]
            torch.optim.sgd.sgd(
                params,
                [p.grad for p in params],
                buffers if buffers is not None else [None] * len(params),
                weight_decay=group["weight_decay"],
                momentum=group["momentum"],
                lr=group["lr"],
                dampening=group["dampening"],
                nesterov=group["nesterov"],
                maximize=False,
            )
            mark_step()
        return loss
