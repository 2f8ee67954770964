"""The decoder of workloads/gpt.py and its causal-LM training step, in plain PyTorch.

Two styles share one block: `gpt2` (learned positions, LayerNorm with bias, GELU MLP, biases everywhere, as
GPT-2) and `llama` (rotary positions, RMSNorm, SwiGLU MLP, grouped-query attention, no biases, as Llama 3).
Attention is torch.nn.functional.scaled_dot_product_attention with is_causal=True, so each backend runs its
own fused kernel, unless the backend hands the model another (Backend.causal_attention: Habana's FusedSDPA,
which torch's SDPA does not reach on a Gaudi). The output head is the token embedding itself (tied), as
both published models do.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

from .training import Training, gradient_sync_deferred


@dataclass(frozen=True)
class Shape:
    style: str
    layers: int
    width: int
    heads: int
    kv_heads: int
    context: int
    vocabulary: int
    mlp_width: int
    rope_theta: float

    @property
    def head_width(self) -> int:
        return self.width // self.heads

    def check(self) -> None:
        if self.width % self.heads:
            raise ValueError(f"width {self.width} is not a multiple of heads {self.heads}")
        if self.heads % self.kv_heads:
            raise ValueError(f"heads {self.heads} is not a multiple of kv_heads {self.kv_heads}")
        if self.style == "llama" and self.head_width % 2:
            raise ValueError(f"rotary positions need an even head width, got {self.head_width}")


class RMSNorm(nn.Module):
    """x / sqrt(mean(x²) + eps) × weight (Zhang & Sennrich 2019, arXiv:1910.07467; Llama's eps 1e-5)."""

    def __init__(self, width: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(width))

    def forward(self, x):
        normed = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + self.eps)
        return normed.type_as(x) * self.weight


def _norm(shape: Shape) -> nn.Module:
    return nn.LayerNorm(shape.width) if shape.style == "gpt2" else RMSNorm(shape.width)


def rotary_tables(shape: Shape) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of RoPE (Su et al. 2021, arXiv:2104.09864), (context, head_width), in the rotate-half
    layout Hugging Face's Llama uses."""
    half = shape.head_width // 2
    inverse = 1.0 / (shape.rope_theta ** (torch.arange(half, dtype=torch.float32) / half))
    angles = torch.outer(torch.arange(shape.context, dtype=torch.float32), inverse)
    angles = torch.cat([angles, angles], dim=-1)
    return angles.cos(), angles.sin()


def _rotate(x, cos, sin):
    first, second = x.chunk(2, dim=-1)
    return x * cos + torch.cat([-second, first], dim=-1) * sin


class Attention(nn.Module):
    def __init__(self, shape: Shape):
        super().__init__()
        bias = shape.style == "gpt2"
        self.shape = shape
        qkv = (shape.heads + 2 * shape.kv_heads) * shape.head_width  # one matmul for q, k and v
        self.qkv = nn.Linear(shape.width, qkv, bias=bias)
        self.out = nn.Linear(shape.width, shape.width, bias=bias)
        self.attend = causal_sdpa  # or the backend's own kernel (use_attention)

    def forward(self, x, rotary=None):
        s = self.shape
        batch, length, _ = x.shape
        q, k, v = self.qkv(x).split(
            [s.heads * s.head_width, s.kv_heads * s.head_width, s.kv_heads * s.head_width], dim=-1
        )
        q = q.view(batch, length, s.heads, s.head_width).transpose(1, 2)
        k = k.view(batch, length, s.kv_heads, s.head_width).transpose(1, 2)
        v = v.view(batch, length, s.kv_heads, s.head_width).transpose(1, 2)
        if rotary is not None:
            cos, sin = (table[:length].to(q.dtype) for table in rotary)
            q, k = _rotate(q, cos, sin), _rotate(k, cos, sin)
        if s.kv_heads != s.heads:  # grouped-query attention: each key-value head serves heads/kv_heads
            k = k.repeat_interleave(s.heads // s.kv_heads, dim=1)
            v = v.repeat_interleave(s.heads // s.kv_heads, dim=1)
        y = self.attend(q, k, v)
        return self.out(y.transpose(1, 2).reshape(batch, length, s.width))


def causal_sdpa(q, k, v):
    """torch's scaled dot-product attention with the causal mask: torch picks the kernel."""
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def use_attention(model: nn.Module, attend) -> None:
    """Every attention layer of `model` calls `attend(q, k, v)`: the backend's causal attention."""
    for module in model.modules():
        if isinstance(module, Attention):
            module.attend = attend


class MLP(nn.Module):
    """GPT-2: Linear, GELU (tanh approximation, GPT-2's gelu_new), Linear. Llama: SwiGLU (Shazeer 2020,
    arXiv:2002.05202), its gate and up projections in one matmul."""

    def __init__(self, shape: Shape):
        super().__init__()
        self.gated = shape.style == "llama"
        bias = not self.gated
        self.up = nn.Linear(shape.width, shape.mlp_width * (2 if self.gated else 1), bias=bias)
        self.down = nn.Linear(shape.mlp_width, shape.width, bias=bias)

    def forward(self, x):
        if self.gated:
            gate, up = self.up(x).chunk(2, dim=-1)
            return self.down(F.silu(gate) * up)
        return self.down(F.gelu(self.up(x), approximate="tanh"))


class Block(nn.Module):
    """Pre-norm: x + attention(norm(x)), then x + mlp(norm(x))."""

    def __init__(self, shape: Shape):
        super().__init__()
        self.norm1, self.attention = _norm(shape), Attention(shape)
        self.norm2, self.mlp = _norm(shape), MLP(shape)

    def forward(self, x, rotary=None):
        x = x + self.attention(self.norm1(x), rotary)
        return x + self.mlp(self.norm2(x))


class DecoderLM(nn.Module):
    """Token ids (batch, length) -> logits (batch, length, vocabulary).

    With `checkpointing` (`suite run --activation-checkpointing`) each block keeps only its input for the
    backward pass and runs its forward again there. It goes through torch.utils.checkpoint.checkpoint with
    use_reentrant=False, the variant torch's documentation recommends ("It is recommended that you use
    use_reentrant=False"; torch.utils.checkpoint, torch 2.14): the reentrant one supports only
    torch.autograd.backward, needs an input that requires grad, and recomputes the whole block even where
    the backward needs only part of it."""

    def __init__(self, shape: Shape):
        super().__init__()
        shape.check()
        self.shape = shape
        self.checkpointing = False
        self.tokens = nn.Embedding(shape.vocabulary, shape.width)
        # GPT-2 learns a vector per position; Llama rotates q and k instead (tables, not parameters).
        self.positions = nn.Embedding(shape.context, shape.width) if shape.style == "gpt2" else None
        if shape.style == "llama":
            cos, sin = rotary_tables(shape)
            self.register_buffer("rotary_cos", cos, persistent=False)
            self.register_buffer("rotary_sin", sin, persistent=False)
        self.blocks = nn.ModuleList(Block(shape) for _ in range(shape.layers))
        self.norm = _norm(shape)

    def forward(self, ids):
        x = self.tokens(ids)
        rotary = None
        if self.positions is not None:
            x = x + self.positions(torch.arange(ids.shape[1], device=ids.device))
        else:
            rotary = (self.rotary_cos, self.rotary_sin)
        for block in self.blocks:
            if self.checkpointing and torch.is_grad_enabled():
                x = checkpoint(block, x, rotary, use_reentrant=False)
            else:
                x = block(x, rotary)
        return F.linear(self.norm(x), self.tokens.weight)  # tied: the head is the embedding


def init_weights(module: nn.Module) -> None:
    """GPT-2's initialisation: normal(0, 0.02) weights, zero biases (norms keep ones)."""
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, 0.0, 0.02)
    if isinstance(module, nn.Linear) and module.bias is not None:
        nn.init.zeros_(module.bias)


class CausalLMTraining(Training):
    """Next-token cross-entropy over every position of every sequence, one AdamW.

    With `micro_batches` N (`suite run --grad-accum N`, nanoGPT's gradient_accumulation_steps) one step's
    batch is N micro-batches: each one's loss is scaled by 1/N and backpropagated, the gradients add up, and
    the optimizer steps once, so the step equals one step on the whole batch (the loss is a mean over equal
    micro-batches). Under DDP the first N-1 backward passes run in `no_sync()`, and the gradients are
    all-reduced once, in the last one's backward, as torch's DistributedDataParallel.no_sync documents."""

    micro_batches = 1

    def __init__(self, backend, modules, optimizers, make_optimizer=None):
        super().__init__(backend, modules, optimizers)
        self.make_optimizer = make_optimizer  # parameters -> the optimizer; rebuilt once they are sharded
        attend = backend.causal_attention()  # None: torch's SDPA, which chooses its own kernel
        if attend is not None:
            use_attention(modules["model"], attend)

    def use_run_options(self, grad_accum: int = 1, activation_checkpointing: bool = False) -> None:
        self.micro_batches = grad_accum
        model = self.modules["model"]
        getattr(model, "module", model).checkpointing = activation_checkpointing  # a DDP-wrapped model too

    def shard(self, fully_shard) -> None:
        """FSDP2: each block a group of its own, then the root (the embeddings, the final norm and the tied
        head), bottom-up as torch's fully_shard documents; each group is all-gathered as its forward starts.
        The parameters become DTensors, so the optimizer is built again on them (the one built before holds
        the replaced tensors)."""
        model = self.modules["model"]
        for block in model.blocks:
            fully_shard(block)
        fully_shard(model)
        self.optimizers["model"] = self.make_optimizer(model.parameters())

    def train_step(self, batch):
        backend = self.backend
        model, optimizer = self.modules["model"], self.optimizers["model"]
        inputs, targets = batch
        count = self.micro_batches
        if inputs.shape[0] % count:
            raise ValueError(f"a batch of {inputs.shape[0]} does not split into {count} equal micro-batches")
        optimizer.zero_grad(set_to_none=True)
        loss_sum = None
        for index, (micro_inputs, micro_targets) in enumerate(zip(inputs.chunk(count), targets.chunk(count))):
            last = index == count - 1
            with contextlib.nullcontext() if last else gradient_sync_deferred(model):
                loss = self._loss(model, micro_inputs, micro_targets)
                backend.backward(loss)
            loss_sum = loss.detach() if loss_sum is None else loss_sum + loss.detach()
        backend.step(optimizer)
        backend.end_step()
        return loss_sum.float()

    def _loss(self, model, inputs, targets):
        """The micro-batch's mean cross-entropy, scaled by 1/micro_batches (the batch's is their sum)."""
        with self.backend.autocast():
            logits = model(inputs)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        return loss if self.micro_batches == 1 else loss / self.micro_batches
