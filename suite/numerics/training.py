"""One run of the numerics check: the workload's own recipe for a few steps, and what it measured.

Each run starts from the seed's initial weights and trains on a small set of synthetic batches (drawn on the
host from the seed and copied, so every device trains on the same numbers) in a given order, with a GAN's
noise from a seeded host stream. It keeps, as device tensors read once after its last step:

    losses   every step's loss(es)
    drift    per layer group, ‖w_T − w_0‖: how far the recipe moved those weights in the check
    grad     per layer group, the root mean square over the steps of ‖∇w‖ as the optimizer received it
             (after a GradScaler unscaled it; a step the scaler skipped is not counted)
    updates  per step and layer group, ‖w_t − w_(t−1)‖: the size of each step's update, so that one step
             whose update vanished or exploded shows at that step, not diluted in the whole run's drift

A layer group is one module of the workload (generator, discriminator, model) and one kind of layer in it
(conv, norm, linear, other): a convolutional body that never updates shows as a `conv` drift of zero.
"""

from __future__ import annotations

import torch
from torch import nn

KINDS = (
    ("conv", nn.modules.conv._ConvNd),
    ("norm", (nn.modules.batchnorm._NormBase, nn.LayerNorm, nn.GroupNorm)),
    ("linear", nn.Linear),
)


def _kind(module: nn.Module) -> str:
    return next((name for name, types in KINDS if isinstance(module, types)), "other")


def layer_groups(modules: dict[str, nn.Module]) -> dict[str, list[nn.Parameter]]:
    """`generator.conv` → its trainable parameters, in a stable order (the modules' own)."""
    groups: dict[str, list[nn.Parameter]] = {}
    seen: set[int] = set()
    for name, module in modules.items():
        for sub in module.modules():
            for parameter in sub.parameters(recurse=False):
                if parameter.requires_grad and id(parameter) not in seen:
                    seen.add(id(parameter))
                    groups.setdefault(f"{name}.{_kind(sub)}", []).append(parameter)
    return groups


def _norm(tensors) -> torch.Tensor:
    return torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(t.float()) for t in tensors]))


class _GradientNorms:
    """Per layer group, the sum over steps of ‖∇w‖², kept on the device: an optimizer step pre-hook sees the
    gradients exactly as the update uses them (GradScaler.step unscales before it calls optimizer.step)."""

    def __init__(self, groups: dict[str, list[nn.Parameter]], optimizers):
        self.names = list(groups)
        self.owner = {id(p): name for name, params in groups.items() for p in params}
        self.sums: dict[str, torch.Tensor] = {}
        self.counts = dict.fromkeys(self.names, 0)
        self.handles = [
            optimizer.register_step_pre_hook(self._hook)
            for optimizer in optimizers
            if hasattr(optimizer, "register_step_pre_hook")
        ]

    def _hook(self, optimizer, args, kwargs) -> None:
        found: dict[str, list[torch.Tensor]] = {}
        for group in optimizer.param_groups:
            for parameter in group["params"]:
                if parameter.grad is not None and id(parameter) in self.owner:
                    found.setdefault(self.owner[id(parameter)], []).append(parameter.grad.detach())
        with torch.no_grad():
            for name, grads in found.items():
                square = _norm(grads).square()
                self.sums[name] = self.sums[name] + square if name in self.sums else square
                self.counts[name] += 1

    def rms(self) -> dict[str, torch.Tensor]:
        for handle in self.handles:
            handle.remove()
        return {
            name: (self.sums[name] / self.counts[name]).sqrt() for name in self.names if self.counts[name]
        }


def run(backend, workload, steps: int, batches: list, order: list[int], noise_seed: int, seed: int) -> dict:
    """STEPS steps of the workload's recipe from the seed's weights, visiting BATCHES in ORDER (cycled)."""
    backend.setup()
    torch.manual_seed(seed)  # the same initial weights in every run: every workload draws them on the host
    training = workload.build(backend)
    scale = workload.recipe_lr_scale(len(batches[0][0]))
    for optimizer in training.optimizers.values():
        for group in optimizer.param_groups:
            group["lr"] *= scale
    groups = layer_groups(training.modules)
    with torch.no_grad():
        start = {name: [p.detach().clone() for p in params] for name, params in groups.items()}
    norms = _GradientNorms(groups, training.optimizers.values())
    on_device = [tuple(t.to(backend.device) for t in batch) for batch in batches]
    # A GAN's z from one seeded host stream, copied: the CPU's and a GPU's generators differ for one seed.
    training.host_generator = torch.Generator().manual_seed(noise_seed)
    scaler = getattr(backend, "scaler", None)  # fp16 AMP's GradScaler, where the backend keeps one
    losses, scales, updates = [], [], []
    with torch.no_grad():
        previous = {name: [p.detach().clone() for p in params] for name, params in groups.items()}
    for step in range(steps):
        losses.append(training.train_step(on_device[order[step % len(order)]]))
        updates.append(_updates(groups, previous))
        if scaler is not None:
            # GradScaler keeps its scale as a device tensor (`_scale`); get_scale() would read it (a sync).
            scales.append(scaler._scale.detach().clone())
    with torch.no_grad():
        drift = {
            name: _norm([p.detach() - p0 for p, p0 in zip(params, start[name])])
            for name, params in groups.items()
        }
    grad = norms.rms()
    backend.synchronize()
    # The one read of this run: everything to the host together.
    names = list(groups)
    result = {
        "lr": {
            name: float(optimizer.param_groups[0]["lr"]) for name, optimizer in training.optimizers.items()
        },
        "losses": torch.stack([loss.reshape(-1) for loss in losses]).float().cpu(),
        "drift": dict(zip(names, torch.stack([drift[n] for n in names]).cpu().tolist())),
        "grad": dict(zip(list(grad), torch.stack(list(grad.values())).cpu().tolist())) if grad else {},
        # [step][group], in the order of `names`
        "updates": dict(zip(names, torch.stack(updates).float().cpu().T.tolist())) if updates else {},
    }
    if scales:
        read = torch.stack([s.reshape(-1)[0] for s in scales]).float().cpu().tolist()
        skipped = _skipped(read, scaler)
        result["grad_scaler"] = {
            "final_scale": read[-1],
            "skipped_steps": len(skipped),
            "skipped_at": skipped,
        }
    return result


def _updates(groups: dict[str, list[nn.Parameter]], previous: dict[str, list[torch.Tensor]]) -> torch.Tensor:
    """Per layer group, ‖w − w_previous‖ of the step just taken (a device tensor, in the groups' order);
    PREVIOUS is then moved to the weights now (a copy on the device: no read, no sync)."""
    with torch.no_grad():
        sizes = []
        for name, params in groups.items():
            # In place (w_previous − w, then w): no temporary the size of the weights at every step.
            for p, q in zip(params, previous[name]):
                q.sub_(p)
            sizes.append(_norm(previous[name]))
            for p, q in zip(params, previous[name]):
                q.copy_(p)
        return torch.stack(sizes)


def _skipped(scales: list[float], scaler) -> list[int]:
    """The steps (from 1) whose update the scaler skipped: each one lowers the scale (backoff) at its
    update."""
    previous, skipped = float(getattr(scaler, "_init_scale", scales[0])), []
    for step, scale in enumerate(scales, start=1):
        if scale < previous:
            skipped.append(step)
        previous = scale
    return skipped
