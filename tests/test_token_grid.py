"""The language models on the grid engine: a sweep over batch × sequence length (`--model-override
context=N`) keeps the model's other settings, and the sweep's table, its progress lines and `suite
batch-size` give a token workload's rates in tokens per second, from the record's unit; images as ever."""

from __future__ import annotations

import pytest
from conftest import TINY, suite_env, suite_here

from suite import run_record
from suite.exploring import batch_size, grid, grid_options, sweep_table
from suite.launching import child
from suite.measurement.units import unit_metrics
from suite.run_options import run_options
from suite.run_record.windows import window_metrics

# gpt2-small at the test widths, its sequence length left to the grid.
WIDTHS = {key: value for key, value in TINY["gpt2-small"].items() if key != "context"}
FIXED = ["backend=cpu", "workload=gpt2-small", *(f"model-override={k}={v}" for k, v in WIDTHS.items())]
QUICK = ["warmup=1", "steps=1", "windows=1", "threads=1"]


def token_record(run_id: str, sequences_per_s: float, context: int, batch: int) -> dict:
    config = {"workload": "gpt2-small", "batch_size": batch, "model_overrides": {"context": context}}
    record = run_record.new_record(run_id, {"utc_time": "2026-01-01T00:00:00Z"}, config)
    metrics = window_metrics(batch, 1, [batch / sequences_per_s, batch / sequences_per_s]).to_json()
    metrics.update(step_time_s=0.01, **unit_metrics(metrics, "tokens", context))
    record.update(status="ok", metrics=metrics)
    return record


def image_record(run_id: str, rate: float) -> dict:
    record = run_record.new_record(run_id, {"utc_time": "2026-01-01T00:00:00Z"}, {"workload": "dcgan64"})
    record.update(status="ok", metrics={**window_metrics(4, 1, [4 / rate]).to_json(), "step_time_s": 0.01})
    return record


def test_a_grid_of_sequence_lengths_keeps_the_models_other_settings():
    options = run_options()
    spec = grid_options.parse_inline(
        ["batch-size=2,4", "model-override=context=8,context=16"], FIXED, options
    )
    points = grid.expand(spec, options)
    grid.resolve(points)
    assert [(p.config["batch_size"], p.config["model_overrides"]["context"]) for p in points] == [
        (2, 8),
        (2, 16),
        (4, 8),
        (4, 16),
    ]
    assert all(p.config["model_overrides"] == {**WIDTHS, "context": c} for p, c in zip(points, [8, 16] * 2))


def test_a_grid_value_wins_over_a_fixed_value_of_the_same_key():
    options = run_options()
    spec = grid_options.parse_inline(
        ["model-override=context=8"], [*FIXED, "model-override=context=32"], options
    )
    [point] = grid.expand(spec, options)
    assert point.argv[-2:] == ["--model-override", "context=8"] and "context=32" in point.argv


def test_a_token_sweep_table_counts_tokens_and_its_effects_compare_tokens():
    grid_values = {"model-override": ["context=8", "context=16"]}
    # Twice the sequence length at nearly the same sequences per second: nearly twice the tokens.
    outcome = [
        (grid.Point(0, {"model-override": "context=8"}, []), token_record("a", 100.0, 8, 2)),
        (grid.Point(1, {"model-override": "context=16"}, []), token_record("b", 95.0, 16, 2)),
    ]
    table = sweep_table.render(outcome, grid_values)
    header, _, first, second = table.splitlines()[:4]
    assert "tok/s" in header and "img/s" not in table
    assert first.split()[:2] == ["context=16", "1,520.0"] and second.split()[:2] == ["context=8", "800.0"]
    assert "context=8→context=16: 1.90×" in table
    assert child.describe(outcome[0][1]) == "800.0 tok/s"


def test_an_image_sweep_table_is_as_it_was():
    outcome = [(grid.Point(0, {"batch-size": "4"}, []), image_record("a", 100.0))]
    header = sweep_table.render(outcome, {"batch-size": ["4"]}).splitlines()[0]
    assert header.split() == ["batch-size", "img/s", "±", "σ", "step", "(ms)", "peak", "memory", "status"]
    assert child.describe(outcome[0][1]) == "100.0 img/s"


def test_points_of_two_units_are_shown_with_each_unit_and_never_compared():
    outcome = [
        (grid.Point(0, {"workload": "dcgan64"}, []), image_record("a", 100.0)),
        (grid.Point(1, {"workload": "gpt2-small"}, []), token_record("b", 50.0, 16, 2)),
    ]
    table = sweep_table.render(outcome, {"workload": ["dcgan64", "gpt2-small"]})
    assert table.splitlines()[0].split()[1] == "rate"
    assert "800.0 tok/s" in table and "100.0 img/s" in table
    assert "dcgan64→gpt2-small: n/a (no pair completed)" in table


def test_a_batch_size_search_of_a_token_workload_says_tokens():
    tries = {2: token_record("a", 100.0, 16, 2), 4: token_record("b", 180.0, 16, 4)}
    found = batch_size.search(lambda n: batch_size.try_from_record(n, tries[n]), start=2, max_batch=4)
    text = batch_size.render(found, "gpt2-small", "cpu")
    assert "tok/s (window spread)" in text and "img/s" not in text
    assert "the best, 2,880.0 tok/s" in text  # 180 sequences of 16 tokens a second
    assert found.to_dict()["tries"][0]["unit"] == "tokens"
    image = batch_size.try_from_record(4, image_record("c", 100.0))
    assert "unit" not in image.to_dict() and image.label == "img/s"  # an image try's record as ever


@pytest.mark.slow  # four tiny gpt2-small runs, each a fresh process
def test_a_tiny_gpt2_sweep_over_batch_and_sequence_length_runs(tmp_path, capsys, monkeypatch):
    own_folders(tmp_path / "env", monkeypatch)
    sets = [arg for item in [*FIXED, *QUICK] for arg in ("--set", item)]
    command = ["sweep", "--grid", "batch-size=1,2"]
    command += ["model-override=context=8,context=16", *sets, "--out", str(tmp_path)]
    status, stdout, stderr = suite_here(capsys, command)
    assert status == 0, stderr[-2000:]
    assert "tok/s" in stdout.splitlines()[0] and "tok/s" in stderr
    assert "model-override context=8→context=16:" in stdout


@pytest.mark.slow  # one tiny gpt2-small try in a fresh process
def test_a_tiny_gpt2_batch_size_search_finds_a_batch_in_tokens(tmp_path, capsys, monkeypatch):
    own_folders(tmp_path / "env", monkeypatch)
    sets = [arg for item in QUICK for arg in ("--set", item)]
    overrides = [f"model-override={k}={v}" for k, v in TINY["gpt2-small"].items()]
    command = ["batch-size", "--backend", "cpu", "--workload", "gpt2-small"]
    command += ["--start", "2", "--max-batch", "2", *sets, *(a for o in overrides for a in ("--set", o))]
    status, stdout, stderr = suite_here(capsys, [*command, "--out", str(tmp_path)])
    assert status == 0, stderr[-2000:]
    assert "largest batch that fits:  2" in stdout and "tok/s)" in stdout


def own_folders(folder, monkeypatch) -> None:
    """The runs this process starts get suite_env(FOLDER)'s cache and temporary folders."""
    for name in ("SUITE_CACHE_DIR", "TMPDIR"):
        monkeypatch.setenv(name, suite_env(folder)[name])
