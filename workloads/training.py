"""A built workload: its modules and optimizers on one backend, and one training step.

A workload's `train_step` uses only `backend.autocast/backward/step/end_step`. It returns its loss as a
detached tensor and never calls `.item()`: reading a value would synchronise host and device every step.
"""

from __future__ import annotations

import contextlib

import torch


class Training:
    """A built workload: its modules and optimizers on one backend, and its training step."""

    def __init__(self, backend, modules: dict[str, torch.nn.Module], optimizers: dict):
        self.backend = backend
        self.modules = modules
        self.optimizers = optimizers
        # None: a step's random draws come from the device's own generator (fast, no copy). The numerics
        # check sets a seeded host generator, so that runs on different devices draw the same numbers.
        self.host_generator: torch.Generator | None = None

    def randn(self, *shape: int, device) -> torch.Tensor:
        """Normal noise for a step, on DEVICE: from the device's generator, or the host's stream if set."""
        if self.host_generator is None:
            return torch.randn(*shape, device=device)
        return torch.randn(*shape, generator=self.host_generator).to(device)

    def train_step(self, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        """One iteration. Returns the loss(es) as a detached tensor: no `.item()` here."""
        raise NotImplementedError

    def use_run_options(self, grad_accum: int = 1, activation_checkpointing: bool = False) -> None:
        """The run's `--grad-accum` and `--activation-checkpointing`, set once the training is built. A
        workload whose step honours them says so (Workload.accumulates_gradients, checkpoints_activations)
        and overrides this; the others are refused them while the run is planned, so only the defaults
        reach here."""
        if grad_accum != 1 or activation_checkpointing:
            raise ValueError(f"{type(self).__name__} takes neither gradient accumulation nor checkpointing")

    def shard(self, fully_shard) -> None:
        """Shard the modules' parameters across the process group with torch's `fully_shard` (`suite run
        --fsdp`). A workload that can says so (Workload.shards_parameters) and overrides this; the others
        are refused --fsdp while the run is planned."""
        raise ValueError(f"{type(self).__name__} does not shard its parameters")


def gradient_sync_deferred(module: torch.nn.Module):
    """A context in which a backward pass leaves the gradients unreduced across processes: DDP's `no_sync()`
    (a compiled module hands the attribute on to the module it wraps). A module outside DDP has nothing to
    defer. A module sharded by FSDP2 has no `no_sync()`: its `set_requires_gradient_sync(False)` keeps the
    unsharded gradients instead of reduce-scattering them, until it is set back."""
    no_sync = getattr(module, "no_sync", None)
    if no_sync is not None:
        return no_sync()
    if getattr(module, "set_requires_gradient_sync", None) is not None:
        return _sharded_sync_deferred(module)
    return contextlib.nullcontext()


@contextlib.contextmanager
def _sharded_sync_deferred(module: torch.nn.Module):
    module.set_requires_gradient_sync(False)
    try:
        yield
    finally:
        module.set_requires_gradient_sync(True)
