"""Decoder-only transformer workloads, measured in tokens: `gpt2-small` (GPT-2 124M) and `llama-1b` (the Llama
3.2 1B shape).

The models are the suite's own compact decoder (workloads/gpt_nets.py), not Hugging Face's classes: a few
dozen lines of plain PyTorch build and train the same way on every backend, need no extra dependency, and
keep the parameter counts exact and checkable on the `meta` device. Their shapes are the public configs'
(docs/models.md derives each count from them; tests/test_gpt_workloads.py holds them):

- GPT-2 small, Hugging Face transformers' `GPT2Config` defaults (n_layer 12, n_head 12, n_embd 768,
  n_positions 1024, vocab_size 50257; learned positions, LayerNorm with bias, GELU MLP 4x, tied
  embeddings): 124,439,808 parameters, as `GPT2LMHeadModel` counts them.
  https://huggingface.co/docs/transformers/model_doc/gpt2#transformers.GPT2Config
- Llama 3.2 1B, meta-llama/Llama-3.2-1B `config.json` (hidden_size 2048, intermediate_size 8192,
  num_hidden_layers 16, num_attention_heads 32, num_key_value_heads 8, vocab_size 128256,
  tie_word_embeddings true, rope_theta 500000, rms_norm_eps 1e-5; no biases): 1,235,814,400 parameters.
  https://huggingface.co/meta-llama/Llama-3.2-1B/blob/main/config.json

One sample is one sequence of `context` tokens; a throughput is counted in tokens (`units_per_sample`).
The data is synthetic (one batch of random token ids made once on the device and reused: a compute ceiling)
or a file of token ids given with `--data FILE` (suite/data/token_file.py). This module imports no torch;
the networks and the step are imported when a model is built.
"""

from __future__ import annotations

from dataclasses import dataclass

from suite.inputs.errors import UserError

from . import register_workload
from .base import Workload

# nanoGPT's train.py defaults for GPT-2 (learning_rate 6e-4, beta1 0.9, beta2 0.95, weight_decay 0.1), used
# for both models: the rate does not change the work of a step. https://github.com/karpathy/nanoGPT
ADAMW = {"lr": 6e-4, "betas": (0.9, 0.95), "eps": 1e-8, "weight_decay": 0.1}
STYLES = ("gpt2", "llama")


@dataclass(frozen=True)
class Decoder(Workload):
    """A decoder-only language model; every architecture field can be overridden (`--model-override
    layers=2`), which the tests use to train the same code at tiny widths."""

    style: str = "gpt2"  # gpt2: learned positions, LayerNorm, GELU; llama: RoPE, RMSNorm, SwiGLU, GQA
    layers: int = 12
    width: int = 768
    heads: int = 12
    kv_heads: int = 0  # key-value heads (grouped-query attention); 0: as many as `heads`
    context: int = 1024  # tokens per sequence: one sample
    vocabulary: int = 50257
    mlp_width: int = 0  # the MLP's hidden width; 0: 4 x width (GPT-2's 3072, Llama 3.2 1B's 8192)
    rope_theta: float = 500000.0  # llama only

    unit = "tokens"
    recipe_batch = None  # AdamW: the rate holds at any batch
    accumulates_gradients = True  # CausalLMTraining.use_run_options
    checkpoints_activations = True
    shards_parameters = True  # CausalLMTraining.shard: each block, then the root
    numerics_batch = 2

    def units_per_sample(self) -> int:
        return self.context

    def attention_flops_per_sample(self) -> int:
        """The attention's matmuls in one training step of one sequence: 12·L·H·Q·T per token (Q·Kᵀ and
        the weighted sum of V, 2·T·H·Q FLOPs each per token and layer forward, ×3 with the backward), the
        causal mask's skipped half included, as Chowdhery et al. 2022 (PaLM, arXiv:2204.02311, appendix
        B) and nanoGPT's estimate_mfu count it. suite/measurement/flops.py adds it where torch's FLOP
        counter could not count the fused kernel."""
        return 12 * self.layers * self.width * self.context * self.context

    def sample_text(self) -> str:
        return f"{self.context:,} tokens"

    def shape(self):
        from .gpt_nets import Shape

        if self.style not in STYLES:
            raise UserError(f"model style {self.style!r} is not one of {', '.join(STYLES)}")
        return Shape(
            style=self.style,
            layers=self.layers,
            width=self.width,
            heads=self.heads,
            kv_heads=self.kv_heads or self.heads,
            context=self.context,
            vocabulary=self.vocabulary,
            mlp_width=self.mlp_width or 4 * self.width,
            rope_theta=self.rope_theta,
        )

    def build_modules(self, device="cpu"):
        import torch

        from .gpt_nets import DecoderLM, init_weights

        with torch.device(device):
            model = DecoderLM(self.shape())
        if str(device) != "meta":
            model.apply(init_weights)
        return {"model": model}

    def build(self, backend):
        from .gpt_nets import CausalLMTraining

        model = backend.prepare_model(self.build_modules()["model"])

        def adamw(parameters):
            return backend.make_optimizer(parameters, "adamw", **ADAMW)

        return CausalLMTraining(backend, {"model": model}, {"model": adamw(model.parameters())}, adamw)

    def with_shape(self, num_classes=None, image_size=None):
        for option, value in (("--num-classes", num_classes), ("--image-size", image_size)):
            if value is not None:
                raise UserError(
                    f"{option} does not apply to {self.name}, a language model measured in tokens "
                    "(change its shape with --model-override, e.g. context=512)"
                )
        return self

    def check_data_classes(self, classes: int, where: str, head_asked: bool = False) -> None:
        return None  # never reached: a token workload's data is checked by suite.data.check_token_data

    def provenance(self) -> dict:
        return {**super().provenance(), "unit": self.unit, "tokens_per_sample": self.context}

    def synthetic_batch(self, batch_size: int, device, seed: int = 0):
        """(inputs, targets): random token ids, the targets the inputs shifted by one (a draw of context + 1
        tokens per sequence, so that every one of the `context` positions is trained)."""
        import torch

        generator = torch.Generator().manual_seed(seed)
        tokens = torch.randint(0, self.vocabulary, (batch_size, self.context + 1), generator=generator)
        return tokens[:, :-1].contiguous().to(device), tokens[:, 1:].contiguous().to(device)


@register_workload
def gpt2_small() -> Decoder:
    return Decoder(
        "gpt2-small",
        "GPT-2 small (124M): 12 layers, 12 heads, width 768, 1,024 tokens, tied embeddings",
        image_size=0,
        default_batch_size=16,
        num_classes=0,
        style="gpt2",
        layers=12,
        width=768,
        heads=12,
        context=1024,
        vocabulary=50257,
    )


@register_workload
def llama_1b() -> Decoder:
    return Decoder(
        "llama-1b",
        "Llama 3.2 1B shape: 16 layers, width 2,048, 32 heads (8 key-value), SwiGLU 8,192, RoPE, 2,048 tokens",
        image_size=0,
        default_batch_size=4,
        num_classes=0,
        style="llama",
        layers=16,
        width=2048,
        heads=32,
        kv_heads=8,
        context=2048,
        vocabulary=128256,  # mlp_width 0: 4 x 2,048 = 8,192, the config's intermediate_size
    )
