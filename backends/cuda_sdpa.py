"""Which scaled-dot-product-attention kernels torch may run on a CUDA GPU, and which one it chose for a
language model's attention: recorded, never constrained.

torch.nn.functional.scaled_dot_product_attention picks its kernel at each call: the first of a priority
order whose checks the inputs pass (dtype, head width, mask, the GPU's compute capability, the switches
below). The order is flash, memory-efficient, math, except that torch puts cuDNN's kernel first on
compute capability 9.x and 10.x with cuDNN newer than 9.15 (pytorch/pytorch
aten/src/ATen/native/transformers/cuda/sdp_utils.cpp, `priority_order` and `select_sdp_backend`, commit
001f694aef6f). So an H100 or H200 may run cuDNN's kernel where an A100 runs flash, and fp32 inputs never
reach flash (fp16 and bf16 only). Forcing one (torch.nn.attention.sdpa_kernel) would make a run fail
wherever that kernel's checks do not pass, and would measure the suite's choice instead of torch's: the
backend leaves the choice to torch and says in the record which kernels were enabled and which one torch
chose for the model's own inputs.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

# torch.backends.cuda's switch for each kernel (all on by default; an older torch lacks cudnn's).
SWITCHES = {
    "flash": "flash_sdp_enabled",
    "mem_efficient": "mem_efficient_sdp_enabled",
    "cudnn": "cudnn_sdp_enabled",
    "math": "math_sdp_enabled",
}


def enabled_kernels() -> dict[str, bool]:
    """{kernel: whether torch may choose it}, for the switches this torch has."""
    switches = torch.backends.cuda
    return {
        name: bool(getattr(switches, query)()) for name, query in SWITCHES.items() if hasattr(switches, query)
    }


def chosen_kernel(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> str | None:
    """The kernel torch's dispatcher chooses for these inputs with the causal mask, by SDPBackend's name
    ("FLASH_ATTENTION", "CUDNN_ATTENTION", ...): torch._fused_sdp_choice runs the same selection the call
    does, from the tensors' shapes, dtypes and device, without touching their data (no device sync).
    None where this torch has no such query."""
    choose = getattr(torch, "_fused_sdp_choice", None)
    try:
        from torch.nn.attention import SDPBackend
    except ImportError:  # torch < 2.2
        return None
    if choose is None:
        return None
    names = {int(member.value): name for name, member in SDPBackend.__members__.items()}
    choice = int(choose(q, k, v, is_causal=True))
    return names.get(choice, f"unknown ({choice})")


def _tracing() -> bool:
    """Inside torch.compile's tracing: the compiled graph, not this call, decides the kernel."""
    compiler = getattr(torch, "compiler", None)
    is_compiling = getattr(compiler, "is_compiling", None)
    return bool(is_compiling()) if is_compiling is not None else False


class RecordingAttention:
    """torch's causal scaled-dot-product attention that notes the kernel chosen at its first eager call
    (the first layer of the first step: every layer's inputs have the same shape and dtype)."""

    def __init__(self):
        self.chosen: str | None = None

    def __call__(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        if self.chosen is None and not _tracing():
            self.chosen = chosen_kernel(q, k, v)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    def record(self) -> dict:
        """The record's `sdpa`: the switches, and the kernel chosen (None: no attention ran eagerly, as
        under torch.compile, or this torch cannot say)."""
        return {"enabled": enabled_kernels(), "chosen": self.chosen}
