"""`hf:CONFIG`: a causal language model transformers builds from a config file (random weights, nothing
downloaded) counts its parameters as transformers does and trains on the CPU in tokens; a missing file, an
encoder's config, a model type that is no language model and a missing extra are one line, exit 2."""

from __future__ import annotations

import json
import math
import sys

import pytest
from conftest import TINY_OPTIONS
from suite.workloads import get_workload

from suite import cli
from suite.inputs.errors import UserError

TINY_GPT2 = {"n_layer": 2, "n_embd": 32, "n_head": 2, "n_positions": 16, "vocab_size": 64}
TINY_TOKENS = {"bos_token_id": 0, "eos_token_id": 0}  # inside the tiny vocabulary


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def transformers():
    return pytest.importorskip("transformers")


@pytest.fixture
def gpt2_config(transformers, tmp_path):
    folder = tmp_path / "tiny-gpt2"
    transformers.GPT2Config(**TINY_GPT2, **TINY_TOKENS).save_pretrained(folder)
    return folder / "config.json"


def assert_refused(capsys, tmp_path, workload: str, *words: str) -> str:
    out_dir = tmp_path / "out"
    code, out, err = run_cli(capsys, "run", *TINY_OPTIONS, "--workload", workload, "--out", str(out_dir))
    assert code == 2, err
    assert err.strip().count("\n") == 0 and "Traceback" not in err, err
    for word in words:
        assert word in err, err
    assert not out_dir.exists() or not list(out_dir.iterdir())
    return err


@pytest.mark.hf
def test_parameters_are_transformers_own_count(transformers, gpt2_config):
    workload = get_workload(f"hf:{gpt2_config}")
    model = transformers.AutoModelForCausalLM.from_config(
        transformers.AutoConfig.from_pretrained(gpt2_config)
    )
    assert workload.parameter_counts() == {"model": sum(p.numel() for p in model.parameters())}
    assert workload.context == 16 and workload.vocabulary == 64 and workload.unit == "tokens"
    assert "GPT2LMHeadModel" in workload.description
    assert get_workload(f"hf:{gpt2_config.parent}").parameter_counts() == workload.parameter_counts()


@pytest.mark.hf
def test_a_model_types_defaults_need_no_file(transformers):
    workload = get_workload("hf:gpt2")
    assert (workload.context, workload.vocabulary, workload.layers, workload.width) == (1024, 50257, 12, 768)


@pytest.mark.hf
def test_a_tiny_cpu_run_writes_a_record_in_tokens(capsys, tmp_path, gpt2_config):
    out_dir = tmp_path / "out"
    code, out, err = run_cli(
        capsys, "run", *TINY_OPTIONS, "--workload", f"hf:{gpt2_config}", "--model-override", "context=8",
        "--out", str(out_dir),
    )  # fmt: skip
    assert code == 0, err
    (path,) = out_dir.rglob("*.json")
    record = json.loads(path.read_text())
    assert record["status"] == "ok"
    assert record["metrics"]["unit"] == "tokens" and record["metrics"]["tokens_per_sample"] == 8
    assert record["metrics"]["tokens_per_step"] == 2 * 8
    losses = record["metrics"]["final_loss"]
    assert losses and all(math.isfinite(loss) for loss in losses)
    assert record["workload"]["transformers"] and record["workload"]["config_sha256"]


@pytest.mark.hf
def test_a_context_beyond_the_configs_positions_is_refused(transformers, gpt2_config):
    with pytest.raises(UserError, match="context 32 .* maximum positions \\(16\\)"):
        get_workload(f"hf:{gpt2_config}").with_overrides(context=32)
    with pytest.raises(UserError, match="unknown model override.*width.*known: context"):
        get_workload(f"hf:{gpt2_config}").with_overrides(width=8)


@pytest.mark.hf
def test_a_missing_file_is_one_line(capsys, tmp_path, transformers):
    assert_refused(
        capsys, tmp_path, f"hf:{tmp_path}/nowhere/config.json", "nowhere/config.json", "no config file"
    )


@pytest.mark.hf
def test_an_encoders_config_is_one_line(capsys, tmp_path, transformers):
    folder = tmp_path / "tiny-bert"
    transformers.BertConfig(
        num_hidden_layers=1, hidden_size=32, num_attention_heads=2, intermediate_size=64, vocab_size=64
    ).save_pretrained(folder)
    assert_refused(capsys, tmp_path, f"hf:{folder}/config.json", "'bert'", "encoder")


@pytest.mark.hf
def test_a_config_with_no_causal_lm_is_one_line(capsys, tmp_path, transformers):
    folder = tmp_path / "tiny-vit"
    transformers.ViTConfig(num_hidden_layers=1, hidden_size=32, num_attention_heads=2).save_pretrained(folder)
    assert_refused(capsys, tmp_path, f"hf:{folder}", "'vit'", "not a causal language model")
    assert_refused(capsys, tmp_path, "hf:gtp2", "unknown Hugging Face model type 'gtp2'", "gpt2")


@pytest.mark.hf
def test_a_file_that_is_not_a_config_is_one_line(capsys, tmp_path, transformers):
    bad = tmp_path / "config.json"
    bad.write_text("{not json")
    assert_refused(capsys, tmp_path, f"hf:{bad}", "is not a Hugging Face config")


def test_transformers_missing_is_one_line_naming_the_extra(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)  # `import transformers` now raises ImportError
    assert_refused(capsys, tmp_path, "hf:gpt2", "pip install 'suite[hf]'")


def test_suite_list_names_the_hf_form_with_an_example(capsys):
    code, out, err = run_cli(capsys, "list")
    assert code == 0, err
    assert "hf:PATH/config.json" in out and "e.g. hf:gpt2" in out and "the `hf` extra" in out


@pytest.mark.hf
def test_activation_checkpointing_turns_on_the_models_own(gpt2_config):
    model = get_workload(f"hf:{gpt2_config}").build_modules()["model"]
    assert not model.inner.is_gradient_checkpointing
    model.checkpointing = True  # what CausalLMTraining.use_run_options sets
    assert model.inner.is_gradient_checkpointing
    model.checkpointing = False
    assert not model.inner.is_gradient_checkpointing
