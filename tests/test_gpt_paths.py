"""The language models through every path of a run, at the tiny widths of conftest.TINY: `--nproc N --fsdp`
(torch's FSDP2 fully_shard: each rank holds its shard of the parameters), `--nproc N` (DDP),
`--per-device N` (the combined record in tokens) and `--check-numerics` (bf16 against fp32 on the CPU)."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
import torch
from conftest import (
    ROOT,
    SAFETY_NET_S,
    TINY,
    TINY_OPTIONS,
    changed,
    model_override_options,
    only_record,
    suite_env,
)
from suite.workloads import training as training_module

from suite import cli
from suite.measurement import sharding

GPT = ["run", *TINY_OPTIONS, "--workload", "gpt2-small", *model_override_options(TINY["gpt2-small"])]
# Start-up of two torch processes on a shared 2-core machine takes tens of seconds; a hang would not end.
RUN_TIMEOUT_S = SAFETY_NET_S


def suite_run(args: list[str], out) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "suite", *changed(GPT, steps=2), "--out", str(out), *args],
        cwd=ROOT,
        env=suite_env(out / "env", PYTHONPATH=ROOT),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )


def assert_trained_on_both_ranks(done: subprocess.CompletedProcess, out) -> dict:
    assert done.returncode == 0, done.stderr[-3000:]
    record = only_record(out)
    assert record["status"] == "ok" and record["config"]["world_size"] == 2
    assert [rank["rank"] for rank in record["ranks"]] == [0, 1]
    for rank in record["ranks"]:
        assert rank["status"] == "ok" and all(math.isfinite(loss) for loss in rank["final_loss"])
    assert record["metrics"]["tokens_per_second"] > 0
    return record


# -- --fsdp ----------------------------------------------------------------------------------------


@pytest.mark.slow  # trains in two processes started by torch's launcher
def test_fsdp_on_two_gloo_ranks_trains_and_each_rank_holds_half_of_the_parameters(tmp_path):
    record = assert_trained_on_both_ranks(suite_run(["--nproc", "2", "--fsdp"], tmp_path), tmp_path)
    assert record["config"]["fsdp"] is True
    total = record["sharding"]["parameter_elements"]
    held = [rank["parameter_elements_held"] for rank in record["ranks"]]
    # Each parameter is split on its first dimension, so a rank holds half of it, give or take a row.
    assert sum(held) == total and all(abs(part - total / 2) <= 0.02 * total for part in held), (held, total)


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (
            ["run", *TINY_OPTIONS, "--workload", "dcgan64", "--nproc", "2", "--fsdp"],
            "--fsdp does not apply to dcgan64",
        ),
        ([*GPT, "--fsdp"], "--fsdp shards across processes: it needs --nproc 2 or more"),
        ([*GPT, "--fsdp", "--nproc", "1"], "--fsdp shards across processes: it needs --nproc 2 or more"),
    ],
)
def test_fsdp_refusals_are_one_line_and_exit_2(capsys, tmp_path, options, says):
    code = cli.main([*options, "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and says in err and err.count("\n") == 1, err


def test_fsdp_on_a_torch_without_fully_shard_names_the_version_needed(capsys, tmp_path, monkeypatch):
    for module in ("torch.distributed.fsdp", "torch.distributed._composable.fsdp"):
        monkeypatch.setitem(sys.modules, module, None)  # an import of it fails, as on torch 2.3
    monkeypatch.setattr(torch, "__version__", "2.3.1")
    code = cli.main([*GPT, "--nproc", "2", "--fsdp", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "--fsdp needs torch 2.4 or newer" in err and "torch 2.3.1" in err, err


def test_fsdp_is_in_the_help_and_keys_its_row_apart(capsys):
    from suite.rows.identity import row_key

    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    assert "--fsdp" in capsys.readouterr().out
    record = {"workload": {"name": "gpt2-small"}, "config": {"backend": "cpu", "fsdp": False}}
    sharded = {**record, "config": {**record["config"], "fsdp": True}}
    older = {**record, "config": {"backend": "cpu"}}  # a record from before the option: its default
    assert row_key(sharded) != row_key(record) and row_key(older) == row_key(record)


def test_fully_shard_is_found_on_this_torch():
    assert sharding.fully_shard_function().__name__ == "fully_shard"


def test_accumulation_under_fsdp_defers_the_reduce_scatter_to_the_last_micro_batch():
    asked = []

    class Sharded(torch.nn.Module):  # the one method of an FSDP2 module the deferral uses
        def set_requires_gradient_sync(self, requires: bool) -> None:
            asked.append(requires)

    with training_module.gradient_sync_deferred(Sharded()):
        assert asked == [False]
    assert asked == [False, True]


# -- DDP, per device, numerics ---------------------------------------------------------------------


@pytest.mark.slow  # trains in two processes started by torch's launcher
def test_ddp_on_two_gloo_ranks_trains_gpt(tmp_path):
    record = assert_trained_on_both_ranks(suite_run(["--nproc", "2"], tmp_path), tmp_path)
    assert record["config"]["fsdp"] is False and "sharding" not in record


@pytest.mark.slow  # starts two copies, each a child process
def test_per_device_copies_write_their_combined_record_in_tokens(tmp_path):
    done = suite_run(["--per-device", "2"], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    record = only_record(tmp_path)
    metrics, tokens = record["metrics"], TINY["gpt2-small"]["context"]
    assert metrics["unit"] == "tokens" and metrics["tokens_per_sample"] == tokens
    assert metrics["tokens_per_second"] == pytest.approx(metrics["images_per_second"] * tokens)
    assert metrics["tokens_per_hour"] == pytest.approx(metrics["images_per_hour"] * tokens)
    each = [rate * tokens for rate in metrics["images_per_second_per_device"]]
    assert metrics["tokens_per_second_per_device"] == pytest.approx(each)
    assert "tok/s" in done.stdout and "img/s" not in done.stdout


def test_check_numerics_gives_gpt_a_verdict_for_bf16_against_fp32(capsys, tmp_path):
    code = cli.main([*GPT, "--precision", "bf16", "--check-numerics", "--out", str(tmp_path)])
    assert code == 0, capsys.readouterr().err
    numerics = only_record(tmp_path)["numerics"]
    assert numerics["verdict"] in ("pass", "fail") and numerics["candidate"] == "cpu bf16"
    assert numerics["compared"] and "numerics" in capsys.readouterr().out
    assert numerics["batch"].endswith("sequences of 16 tokens, in turn"), numerics["batch"]
