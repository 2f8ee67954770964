"""Fake `habana_frameworks.torch.core`: mark_step records; it runs nothing (CPU tensors are already done)."""

from habana_frameworks import record
from habana_frameworks.torch.utils.internal import is_lazy


def mark_step() -> None:
    record("mark_step", lazy=is_lazy())
