"""The CUDA backend (NVIDIA GPUs). Registered so `suite list` and `--backend auto` can see it."""

from __future__ import annotations

import torch

from . import register_backend
from .base import Backend


@register_backend
class CUDABackend(Backend):
    name = "cuda"
    dist_backend = "nccl"
    precisions = ("amp", "fp32", "bf16")

    @classmethod
    def is_available(cls) -> tuple[bool, str]:
        if not torch.cuda.is_available():
            return False, "no CUDA GPU visible to torch (torch.cuda.is_available() is False)"
        return False, "not implemented yet"
