"""A person's own transformer from a Hugging Face config: `hf:PATH/config.json` (or the folder holding it), or
`hf:MODEL_TYPE` for a config class's defaults (`hf:gpt2`, `hf:llama`). Needs the `hf` extra (transformers).

The model is `AutoModelForCausalLM.from_config(config)`: the architecture of the config, randomly
initialised; no weights are ever read or downloaded. The config itself is read from the local file alone:
the path handed to `AutoConfig.from_pretrained` is always a file, which transformers reads directly
(`PreTrainedConfig._get_config_dict`: `os.path.isfile` -> `_dict_from_json_file`, never `cached_file`, the
function that reaches the Hub), with `local_files_only=True` and HF_HUB_OFFLINE=1 besides, and a config that
asks for code from the Hub (`auto_map`) is refused. It trains through the suite's own language-model step
(workloads/gpt_nets.py CausalLMTraining): next-token cross-entropy, AdamW through the backend, the backend's
autocast, tokens as the unit.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from suite.inputs import errors
from suite.inputs.errors import UserError

from .base import Workload
from .gpt import ADAMW, Decoder

HF_MISSING = "needs transformers, an optional extra: pip install 'suite[hf]' (or pip install transformers)"
DEFAULT_BATCH_SIZE = 8
DEFAULT_CONTEXT = 1024  # where a config states no maximum length (e.g. a model without learned positions)
CONFIG_FILE = "config.json"  # what save_pretrained writes into a folder


def import_transformers():
    # Offline before the first import: transformers and huggingface_hub read these when imported.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    try:
        import transformers
    except ImportError:
        raise UserError(f"hf: workloads {HF_MISSING}") from None
    transformers.logging.set_verbosity_error()  # its advice on a random model's config is not the run's output
    return transformers


def _is_path(spec: str) -> bool:
    """A file or folder (anything with a slash, a .json, or that exists here); otherwise a model type."""
    return "/" in spec or spec.endswith(".json") or Path(spec).exists()


def _config_file(spec: str, name: str) -> Path:
    path = Path(spec).expanduser()
    if path.is_dir():
        path = path / CONFIG_FILE
    if not path.is_file():
        raise UserError(
            f"workload {name!r}: no config file {str(path)!r} (hf: takes a Hugging Face config.json, the folder "
            "holding one, or a model type such as hf:gpt2)"
        )
    return path


def _read_config(spec: str, name: str):
    """The config object: from a local file, or a model type's defaults."""
    transformers = import_transformers()
    from transformers import CONFIG_MAPPING

    if not _is_path(spec):
        if spec not in CONFIG_MAPPING:
            raise errors.near(spec, list(CONFIG_MAPPING.keys()), "Hugging Face model type", "suite list")
        return CONFIG_MAPPING[spec]()
    path = _config_file(spec, name)
    text = _config_text(path, name)
    import tempfile

    from suite import atomic

    # transformers reads the bytes the bounded reader read, from a file of the suite's own: what PATH is
    # now (a FIFO, /proc/kmsg, a file grown to a GiB) is never opened by anyone else.
    with tempfile.TemporaryDirectory(prefix="suite-hf-config-") as folder:
        copy = os.path.join(folder, CONFIG_FILE)
        atomic.write_atomic(copy, text)
        try:
            return transformers.AutoConfig.from_pretrained(
                copy, local_files_only=True, trust_remote_code=False
            )
        except Exception as error:  # noqa: BLE001 - not JSON, no model_type, an unknown model_type ...
            raise UserError(
                f"workload {name!r}: {str(path)!r} is not a Hugging Face config transformers can read: "
                f"{type(error).__name__}: {_first_line(error)}"
            ) from None


# A config.json is a few KiB; the bounded reader's cap for a person's file is far above any real one.
CONFIG_LIMIT = 16 * 1024 * 1024


def _config_text(path: Path, name: str) -> str:
    """The config file's text, read by the one bounded reader (a regular file, never waited on, at most
    CONFIG_LIMIT bytes) and checked as strict JSON: one object, no key given twice (a parser keeps the
    last silently), no NaN or Infinity (no width, count or rate is one)."""
    import json

    from suite.inputs.files import read_user_file

    text = read_user_file(str(path), f"workload {name!r}: config", CONFIG_LIMIT)
    where = f"workload {name!r}: {str(path)!r} is not a Hugging Face config"

    def no_constant(word: str):
        raise ValueError(f"{word} is no JSON number (a config's values are finite)")

    def no_duplicates(pairs: list) -> dict:
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"key {key!r} is given twice")
            seen.add(key)
        return dict(pairs)

    try:
        data = json.loads(text, parse_constant=no_constant, object_pairs_hook=no_duplicates)
    except (ValueError, RecursionError) as error:
        raise UserError(f"{where} (strict JSON): {_first_line(error)}") from None
    if not isinstance(data, dict):
        raise UserError(f"{where}: it is not a JSON object")
    return text


def _check_builds(workload, name: str) -> None:
    """Build the model on the meta device (shapes, no memory) while the run is planned: a config that
    transformers reads but cannot build (a negative width, heads that do not divide it, positions -1, an
    unknown rope_type) is one line here, not a traceback when the run starts."""
    try:
        workload.build_modules(device="meta")
    except UserError:
        raise
    except Exception as error:  # noqa: BLE001 - transformers' own checks raise many kinds
        raise UserError(
            f"workload {name!r}: transformers cannot build a model from this config: "
            f"{type(error).__name__}: {_first_line(error)}"
        ) from None


def _check_causal(config, name: str) -> str:
    """The class AutoModelForCausalLM builds for CONFIG, or one line saying why it builds none."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    model_type = getattr(config, "model_type", "")
    if getattr(config, "auto_map", None):
        raise UserError(
            f"workload {name!r}: the config names code to fetch from the Hub (auto_map); only the model "
            "types transformers ships are built"
        )
    if model_type not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        raise UserError(
            f"workload {name!r}: model type {model_type!r} is not a causal language model in transformers "
            "(AutoModelForCausalLM builds none for it): hf: takes decoder configs such as gpt2, llama, mistral"
        )
    # An encoder (BERT, RoBERTa ...) has a causal-LM head in transformers only when its config says
    # is_decoder; otherwise its attention looks both ways and next-token training is meaningless.
    if model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES and not getattr(config, "is_decoder", False):
        raise UserError(
            f"workload {name!r}: model type {model_type!r} is an encoder (masked language model); "
            "hf: takes decoder configs such as gpt2, llama, mistral (or set is_decoder true in the config)"
        )
    return MODEL_FOR_CAUSAL_LM_MAPPING_NAMES[model_type]


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _max_positions(config) -> int:
    for key in ("max_position_embeddings", "n_positions", "n_ctx", "max_seq_len", "seq_length"):
        value = getattr(config, key, None)
        if isinstance(value, int) and value > 0:
            return value
    return 0


def _text_config(config):
    getter = getattr(config, "get_text_config", None)
    return getter() if getter is not None else config


def resolve(spec: str, name: str) -> Workload:
    """`hf:SPEC` -> a HuggingFaceLM, every check made while the run is planned."""
    config = _read_config(spec, name)
    model_class = _check_causal(config, name)
    text = _text_config(config)
    limit = _max_positions(text)
    vocabulary = int(getattr(text, "vocab_size", 0) or 0)
    if vocabulary <= 0:
        raise UserError(f"workload {name!r}: the config states no vocab_size")
    source = spec if _is_path(spec) else f"{spec} defaults"
    import transformers

    workload = HuggingFaceLM(
        name,
        f"Hugging Face {model_class} ({source}), random init",
        image_size=0,
        default_batch_size=DEFAULT_BATCH_SIZE,
        num_classes=0,
        config_json=config.to_json_string(use_diff=False),
        context=limit or DEFAULT_CONTEXT,
        max_positions=limit,
        vocabulary=vocabulary,
        layers=int(getattr(text, "num_hidden_layers", 0) or 0),
        width=int(getattr(text, "hidden_size", 0) or 0),
        library_version=transformers.__version__,
    )
    _check_builds(workload, name)
    return workload


def _wrap(model):
    """The Hugging Face model as the step calls a language model: ids in, logits out, and a `checkpointing`
    switch (`--activation-checkpointing`) that turns on the model's own gradient checkpointing."""
    from torch import nn

    class CausalLM(nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner
            self._checkpointing = False

        @property
        def checkpointing(self) -> bool:
            return self._checkpointing

        @checkpointing.setter
        def checkpointing(self, on: bool) -> None:
            if on == self._checkpointing:
                return
            if on and not getattr(self.inner, "supports_gradient_checkpointing", False):
                raise UserError(
                    f"--activation-checkpointing: {type(self.inner).__name__} does not support it in transformers"
                )
            if on:  # use_reentrant=False, as the suite's own decoders checkpoint (gpt_nets.DecoderLM)
                self.inner.gradient_checkpointing_enable(
                    gradient_checkpointing_kwargs={"use_reentrant": False}
                )
            else:
                self.inner.gradient_checkpointing_disable()
            self._checkpointing = on

        def forward(self, ids):
            return self.inner(input_ids=ids, use_cache=False).logits

    return CausalLM(model)


@dataclass(frozen=True)
class HuggingFaceLM(Workload):
    """A causal language model transformers builds from a config; `--model-override context=N` sets the
    sequence length (at most the config's maximum positions, where it states one)."""

    config_json: str = ""  # the whole config: what is built, and (in the repr) the FLOP cache's key
    context: int = DEFAULT_CONTEXT
    max_positions: int = 0  # 0: the config states none
    vocabulary: int = 0
    layers: int = 0  # for the attention FLOPs term; 0 where the config does not say
    width: int = 0
    library_version: str = ""

    unit = "tokens"
    recipe_batch = None  # AdamW: the rate holds at any batch
    accumulates_gradients = True
    checkpoints_activations = True
    numerics_batch = 2

    units_per_sample = Decoder.units_per_sample
    sample_text = Decoder.sample_text
    synthetic_batch = Decoder.synthetic_batch
    with_shape = Decoder.with_shape
    check_data_classes = Decoder.check_data_classes
    attention_flops_per_sample = Decoder.attention_flops_per_sample

    def __post_init__(self):
        if self.context <= 0 or (self.max_positions and self.context > self.max_positions):
            raise UserError(
                f"{self.name}: context {self.context} is not between 1 and the config's maximum positions "
                f"({self.max_positions})"
            )

    def with_overrides(self, **overrides) -> Workload:
        unknown = sorted(set(overrides) - {"context"})
        if unknown:
            raise UserError(
                f"unknown model override(s) {', '.join(unknown)} for {self.name} (known: context; "
                "change anything else in the config file)"
            )
        return super().with_overrides(**overrides)

    def config(self):
        import json

        transformers = import_transformers()
        data = json.loads(self.config_json)
        return transformers.AutoConfig.for_model(data.pop("model_type"), **data)

    def build_modules(self, device="cpu"):
        import torch

        transformers = import_transformers()
        with torch.device(device):
            model = transformers.AutoModelForCausalLM.from_config(self.config())
        return {"model": _wrap(model)}

    def build(self, backend):
        from .gpt_nets import CausalLMTraining

        model = backend.prepare_model(self.build_modules()["model"])
        return CausalLMTraining(
            backend, {"model": model}, {"model": backend.make_optimizer(model.parameters(), "adamw", **ADAMW)}
        )

    def provenance(self) -> dict:
        digest = hashlib.sha256(self.config_json.encode()).hexdigest()[:16]
        return {
            **super().provenance(),
            "unit": self.unit,
            "tokens_per_sample": self.context,
            "transformers": self.library_version,
            "config_sha256": digest,
        }
