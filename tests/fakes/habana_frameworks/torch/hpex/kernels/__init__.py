"""Fake `habana_frameworks.torch.hpex.kernels` with FusedSDPA only (the real package has more kernels).

FusedSDPA as hpex/kernels/FusedSDPA.py (bridge v1.19.0): a torch.autograd.Function whose forward is
forward(ctx, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, softmax_mode="None",
recompute_mode=None, valid_seq_len=None, seq_padding_type="left", return_dropout_mask=False,
return_attn_probs=False), so `FusedSDPA.apply` takes them by position only, as on the real one. On the CPU
it computes torch's scaled_dot_product_attention and recomputes it in backward; each forward is recorded.
Habana has shipped it since 1.10.0 (every release of the suite's table); tests that need it absent install
the fakes without this folder.
"""

import torch
import torch.nn.functional as F

import habana_frameworks.torch.hpu  # noqa: F401 - the real module imports it (as ht)
from habana_frameworks import record


class FusedSDPA(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx,
        q,
        k,
        v,
        attn_mask=None,
        dropout_p=0.0,
        is_causal=False,
        scale=None,
        softmax_mode="None",
        recompute_mode=None,
        valid_seq_len=None,
        seq_padding_type="left",
        return_dropout_mask=False,
        return_attn_probs=False,
    ):
        record(
            "FusedSDPA",
            shape=tuple(q.shape),
            attn_mask=attn_mask,
            dropout_p=dropout_p,
            is_causal=is_causal,
            scale=scale,
        )
        ctx.save_for_backward(q, k, v)
        ctx.options = (attn_mask, dropout_p, is_causal, scale)
        return F.scaled_dot_product_attention(
            q, k, v, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal, scale=scale
        )

    @staticmethod
    def backward(ctx, dout, *args):
        attn_mask, dropout_p, is_causal, scale = ctx.options
        with torch.enable_grad():
            inputs = [tensor.detach().requires_grad_() for tensor in ctx.saved_tensors]
            out = F.scaled_dot_product_attention(
                *inputs, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal, scale=scale
            )
            dq, dk, dv = torch.autograd.grad(out, inputs, dout)
        return (dq, dk, dv) + (None,) * 11
