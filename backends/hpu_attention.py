"""Habana's fused attention kernel (habana_frameworks.torch.hpex.kernels.FusedSDPA) for a language model's
causal attention where the installed bridge has it, else torch's scaled_dot_product_attention; and a note
for the record of which one runs.

Why not torch's SDPA alone: on a Gaudi it does not reach FusedSDPA. In the bridge's op table (HabanaAI/
gaudi-pytorch-bridge v1.19.0, commit 5a56187e9868, scripts/ops_list/ops_table.csv) aten::
scaled_dot_product_attention and aten::_scaled_dot_product_attention_math are composite ops with no HPU
kernel of their own, and aten::_scaled_dot_product_flash_attention has none on HPU; torch's documentation of
scaled_dot_product_attention says the same from its side ("The function may call optimized kernels for
improved performance when using the CUDA backend. For all other backends, the PyTorch implementation will
be used"). Only Habana's GPU migration toolkit swaps FusedSDPA in for it; Habana's own models call FusedSDPA
directly (Model-References from 1.13.0: Megatron-DeepSpeed's and MLPerf's GPT-3 transformer.py).

Which releases have it: Habana's 1.10.0 release notes add FusedSDPA ("a fused implementation of the
nn.functional.scaled_dot_product_attention() API"), the bridge's v1.19.0 source defines it
(python_packages/habana_frameworks/torch/hpex/kernels/FusedSDPA.py), and Model-References 1.23.0 still
calls it. Every release of habana_releases.py (1.10 to 1.23) has it; whether it runs is decided by the
installed module, as HMP's is, so an install without it runs torch's SDPA and the record says so.
"""

from __future__ import annotations

import importlib

KERNELS = "habana_frameworks.torch.hpex.kernels"
FUSED = "habana FusedSDPA (hpex.kernels)"
TORCH_SDPA = "torch.nn.functional.scaled_dot_product_attention"


def causal_attention():
    """(attend, note): FusedSDPA with the causal mask, or None (torch's SDPA) where the bridge has no
    FusedSDPA. Imports the bridge, so only after the backend's setup()."""
    try:
        fused = importlib.import_module(KERNELS).FusedSDPA
    except (ImportError, AttributeError) as error:
        return None, f"{TORCH_SDPA} (no FusedSDPA in this install: {error})"

    def attend(q, k, v):
        # FusedSDPA is a torch.autograd.Function, whose apply() takes its arguments by position only:
        # forward(ctx, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, ...) (v1.19.0).
        return fused.apply(q, k, v, None, 0.0, True)

    return attend, FUSED
