"""The token workloads (gpt2-small, llama-1b): exact published parameter counts, a real training step, and
runs measured in tokens."""

from __future__ import annotations

import pytest
import torch
from conftest import TINY, TINY_OPTIONS, model_override_options, only_record
from suite.backends.cpu import CPUBackend
from suite.workloads import get_workload

from suite import cli
from suite.inputs.errors import UserError
from suite.spec import RunSpec

# GPT2LMHeadModel at GPT2Config's defaults, and meta-llama/Llama-3.2-1B's config.json (docs/models.md
# derives both from the architecture).
PUBLISHED_COUNTS = {"gpt2-small": 124_439_808, "llama-1b": 1_235_814_400}


@pytest.mark.parametrize("name", sorted(PUBLISHED_COUNTS))
def test_parameter_counts_are_the_published_models_exactly(name):
    counts = get_workload(name).parameter_counts()  # on the meta device: no memory
    assert counts == {"model": PUBLISHED_COUNTS[name]}


def _formula_count(layers, width, vocabulary, context=0, kv_width=None, mlp=None, gpt2=True) -> int:
    """docs/models.md's formulas, part by part."""
    mlp = mlp or 4 * width
    if gpt2:
        per_layer = 2 * 2 * width + (width * 3 * width + 3 * width) + (width * width + width)
        per_layer += (width * mlp + mlp) + (mlp * width + width)
        return vocabulary * width + context * width + layers * per_layer + 2 * width
    kv_width = kv_width or width
    per_layer = 2 * width + width * (width + 2 * kv_width) + width * width + 3 * width * mlp
    return vocabulary * width + layers * per_layer + width


def test_the_docs_formulas_give_the_same_counts():
    assert _formula_count(12, 768, 50257, context=1024) == PUBLISHED_COUNTS["gpt2-small"]
    assert _formula_count(16, 2048, 128256, kv_width=8 * 64, gpt2=False) == PUBLISHED_COUNTS["llama-1b"]
    tiny = get_workload("llama-1b").with_overrides(**TINY["llama-1b"])
    assert tiny.parameter_counts()["model"] == _formula_count(2, 32, 64, kv_width=2 * 8, gpt2=False)


def test_the_head_is_the_token_embedding():
    model = get_workload("gpt2-small").with_overrides(**TINY["gpt2-small"]).build_modules()["model"]
    logits = model(torch.zeros(1, 4, dtype=torch.long))
    assert logits.shape == (1, 4, 64)
    assert not any(n.startswith("head") for n, _ in model.named_parameters())  # tied: no second matrix


def test_attention_is_causal():
    # A later token must not change an earlier position's logits.
    torch.manual_seed(0)
    for name in PUBLISHED_COUNTS:
        model = get_workload(name).with_overrides(**TINY[name]).build_modules()["model"]
        ids = torch.randint(0, 64, (1, 8))
        changed = ids.clone()
        changed[0, -1] = (ids[0, -1] + 1) % 64
        with torch.no_grad():
            assert torch.allclose(model(ids)[0, :-1], model(changed)[0, :-1], atol=1e-6)


def test_targets_are_the_inputs_shifted_by_one():
    workload = get_workload("gpt2-small").with_overrides(**TINY["gpt2-small"])
    inputs, targets = workload.synthetic_batch(2, "cpu")
    assert inputs.shape == targets.shape == (2, 16) and inputs.dtype == torch.long
    assert torch.equal(inputs[:, 1:], targets[:, :-1])
    assert workload.unit == "tokens" and workload.units_per_sample() == 16


def test_the_step_is_adamw_through_the_backend():
    backend = CPUBackend(RunSpec().replace(backend="cpu", workload="llama-1b"))
    training = get_workload("llama-1b").with_overrides(**TINY["llama-1b"]).build(backend)
    (optimizer,) = training.optimizers.values()
    assert isinstance(optimizer, torch.optim.AdamW)


@pytest.mark.parametrize("option", ["--num-classes", "--image-size"])
def test_image_options_are_refused_in_one_line(capsys, tmp_path, option):
    code = cli.main(["run", "--workload", "gpt2-small", option, "10", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and f"{option} does not apply to gpt2-small" in err and err.count("\n") == 1


def test_a_shape_that_cannot_be_built_is_refused():
    with pytest.raises(UserError, match="cannot be built"):
        from suite.inputs.input_checks import check_model_builds

        check_model_builds(get_workload("llama-1b").with_overrides(heads=3))


def tiny_run(capsys, tmp_path, name, *extra):
    argv = ["run", *TINY_OPTIONS, "--workload", name, *model_override_options(TINY[name]), *extra]
    code = cli.main([*argv, "--out", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 0, err
    return only_record(tmp_path), out


@pytest.mark.parametrize("name", sorted(PUBLISHED_COUNTS))
def test_a_tiny_run_trains_and_writes_a_record(capsys, tmp_path, name):
    record, out = tiny_run(capsys, tmp_path, name)
    assert record["status"] == "ok"
    assert record["data"]["source"] == "synthetic"
    assert record["workload"]["unit"] == "tokens" and record["workload"]["tokens_per_sample"] == 16


def test_an_image_folder_is_refused_in_one_line(capsys, tmp_path):
    folder = tmp_path / "images"
    (folder / "a").mkdir(parents=True)
    code = cli.main(
        ["run", *TINY_OPTIONS, "--workload", "gpt2-small", "--data", str(folder), "--out", str(tmp_path)]
    )
    err = capsys.readouterr().err
    assert code == 2 and "is a folder; a language model reads a file" in err and err.count("\n") == 1


def test_suite_list_shows_a_sample_in_tokens(capsys):
    assert cli.main(["list"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert "1,024 tokens" in lines["gpt2-small"] and "124,439,808" in lines["gpt2-small"]
    assert "2,048 tokens" in lines["llama-1b"] and "1,235,814,400" in lines["llama-1b"]


# -- measured in tokens ------------------------------------------------------------------------------


def test_the_record_counts_tokens_beside_the_sequences(capsys, tmp_path):
    from suite.run_record import check_record

    record, out = tiny_run(capsys, tmp_path, "gpt2-small")
    metrics = record["metrics"]
    assert metrics["unit"] == "tokens" and metrics["tokens_per_sample"] == 16
    assert metrics["tokens_per_second"] == pytest.approx(metrics["images_per_second"] * 16)
    assert metrics["tokens_per_hour"] == pytest.approx(metrics["tokens_per_second"] * 3600)
    assert metrics["tokens_per_step"] == 2 * 16  # batch 2 sequences of 16 tokens
    check_record(record)  # the schema reads it
    assert " tok/s median" in out and "sequences/s of 16 tokens" in out and "img/s" not in out


def test_an_image_record_gains_no_unit(capsys, tmp_path):
    from conftest import TINY_RUN

    assert cli.main([*TINY_RUN, "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    metrics = only_record(tmp_path)["metrics"]
    assert not any("token" in name or name == "unit" for name in metrics)
    assert " img/s median" in out


def test_a_bad_unit_is_refused_on_read():
    from suite.run_record import BadRecord, check_record

    record = {"schema": "suite.run", "schema_version": 1, "run_id": "r", "status": "ok"}
    record["config"] = {"workload": "gpt2-small"}
    for metrics, field in (
        ({"unit": "furlongs"}, "metrics.unit"),
        ({"unit": "tokens", "tokens_per_sample": 0}, "metrics.tokens_per_sample"),
        ({"unit": "tokens", "tokens_per_second": -1.0}, "metrics.tokens_per_second"),
    ):
        with pytest.raises(BadRecord, match=field):
            check_record({**record, "metrics": metrics})


def test_flops_count_the_attention_the_cpu_counter_misses():
    # FlopCounterMode counts every matmul of the step (6 per weight per token) but not the CPU's fused
    # attention kernel: its 12·L·H·Q·T per token (PaLM, appendix B) is added, and the sum is exact.
    from suite.measurement import flops

    layers, width, context, vocabulary = 2, 32, 16, 64
    workload = get_workload("gpt2-small").with_overrides(**TINY["gpt2-small"])
    matmul_weights = layers * (width * 3 * width + width * width + 2 * width * 4 * width) + vocabulary * width
    per_token = 6 * matmul_weights + 12 * layers * width * context
    assert flops.count_flops_per_image(workload) == per_token * context


def test_report_keeps_tokens_and_images_apart(capsys, tmp_path):
    from conftest import TINY_RUN

    for argv in (
        TINY_RUN,
        ["run", *TINY_OPTIONS, "--workload", "gpt2-small", *model_override_options(TINY["gpt2-small"])],
    ):
        assert cli.main([*argv, "--instance", "m6i.xlarge", "--out", str(tmp_path / "runs")]) == 0
    capsys.readouterr()
    assert cli.main(["report", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    answer, rest = out.split("## The table")
    images, tokens = rest.split("## Language models, in tokens")
    assert "dcgan64" in images and "gpt2-small" not in images  # no token row among images
    # the answer answers both, each in its own unit: the token workload after the images, in tok/s
    assert answer.index("**dcgan64") < answer.index("**gpt2-small") and " tok/s" in answer.split("**gpt2")[1]
    assert "gpt2-small" in tokens and "dcgan64" not in tokens  # nor an image row among tokens
    assert "| tok/s |" in tokens and "$ per M tokens" in tokens and "Tokens per $" in tokens
    row = next(line for line in tokens.splitlines() if line.startswith("| T1 "))
    assert "2 × 16" in row


def test_report_prices_tokens(tmp_path):
    from suite.rows.token_rows import add_unit

    row = {"images_per_hour": 3600.0, "images_per_usd": 1800.0, "spot_images_per_usd": None}
    row |= {"usd_per_million_images": 555.0, "spot_usd_per_million_images": None}
    add_unit(row, {"metrics": {"unit": "tokens", "tokens_per_sample": 1000}})
    assert row["tokens_per_hour"] == 3_600_000 and row["tokens_per_usd"] == 1_800_000
    assert row["usd_per_million_tokens"] == pytest.approx(0.555) and row["spot_tokens_per_usd"] is None
    image_row = dict(row)
    add_unit(image_row, {"metrics": {}})
    assert image_row["unit"] == "images" and image_row["units_per_sample"] == 1


def test_the_bare_loop_trains_gpt2_small_and_counts_tokens(tmp_path):
    import json
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parents[1] / "benchmarks"))
    import bare_loop

    out = tmp_path / "bare.json"
    argv = ["--backend", "cpu", "--workload", "gpt2-small", "--batch-size", "2", "--warmup", "1"]
    argv += ["--steps", "1", "--windows", "1", "--json", str(out)]
    argv += [
        arg for key, value in TINY["gpt2-small"].items() for arg in ("--model-override", f"{key}={value}")
    ]
    assert bare_loop.main(argv) == 0
    result = json.loads(out.read_text())
    assert result["tokens_per_sample"] == 16
    assert result["tokens_per_second"] == pytest.approx(result["images_per_second"] * 16)
