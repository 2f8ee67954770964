"""Fake `habana_frameworks.torch.core`: mark_step is lazy_only, as in the real bridge (core/step_closure.py):
outside lazy mode it is a no-op chosen once, at import. In lazy mode the fake records it (CPU tensors are
already computed, so there is nothing to run)."""

from habana_frameworks import record
from habana_frameworks.torch.utils.internal import is_lazy, lazy_only


@lazy_only
def mark_step() -> None:
    record("mark_step", lazy=is_lazy())
