"""The HPU backend (Habana Gaudi). Registered so `suite list` and `--backend auto` can see it."""

from __future__ import annotations

import importlib.util

from . import register_backend
from .base import Backend


@register_backend
class HPUBackend(Backend):
    name = "hpu"
    dist_backend = "hccl"
    precisions = ("bf16", "fp32")

    @classmethod
    def is_available(cls) -> tuple[bool, str]:
        # find_spec looks without importing: importing habana_frameworks fixes the execution mode.
        if importlib.util.find_spec("habana_frameworks") is None:
            return False, ("Habana software not installed (no habana_frameworks module); use a Gaudi "
                           "instance with Habana's PyTorch container or its installer")
        return False, "not implemented yet"
