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


def gradient_sync_deferred(module: torch.nn.Module):
    """A context in which a backward pass leaves the gradients unreduced across processes: DDP's `no_sync()`
    (a compiled module hands the attribute on to the module it wraps). A module outside DDP has nothing to
    defer."""
    no_sync = getattr(module, "no_sync", None)
    return no_sync() if no_sync is not None else contextlib.nullcontext()
