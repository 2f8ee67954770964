"""`suite run --grad-accum N` and `--activation-checkpointing` on the language models, at the tiny widths of
conftest.TINY: an accumulated step is one step on the whole batch, a checkpointed step is the plain one,
DDP reduces the gradients once per step, the record counts every sample, and other workloads refuse both."""

from __future__ import annotations

import pytest
import torch
from conftest import TINY, TINY_OPTIONS, model_override_options, only_record
from suite.backends.cpu import CPUBackend
from suite.workloads import get_workload, gpt_nets

from suite import cli
from suite.spec import RunSpec

LANGUAGE_MODELS = ("gpt2-small", "llama-1b")


def tiny_training(name: str, **run_options):
    """A tiny model's training on the CPU in fp32, from seed 0's weights, with the run options given."""
    backend = CPUBackend(RunSpec().replace(backend="cpu", precision="fp32", workload=name))
    torch.manual_seed(0)
    training = get_workload(name).with_overrides(**TINY[name]).build(backend)
    training.use_run_options(**run_options)
    return training


def batch_of(name: str, size: int):
    return get_workload(name).with_overrides(**TINY[name]).synthetic_batch(size, "cpu", seed=1)


# AdamW's first step moves a weight by lr x g / (|g| + eps): where a gradient is as small as eps (1e-8), its
# last bits of fp32 rounding move the weight by a percent of lr (6e-4). A step taken per micro-batch instead
# would move it by about lr again; a gradient not scaled by 1/N is caught by the gradients' own check.
WEIGHT_ATOL = 1e-5


def assert_same_step(one, other, loss_one, loss_other) -> None:
    """The same loss, and after the step the same gradients and the same weights (fp32 tolerance)."""
    torch.testing.assert_close(loss_one, loss_other, rtol=1e-5, atol=1e-6)
    pairs = zip(one.modules["model"].named_parameters(), other.modules["model"].parameters(), strict=True)
    for (name, mine), theirs in pairs:
        torch.testing.assert_close(mine.grad, theirs.grad, rtol=1e-4, atol=1e-6, msg=f"gradient of {name}")
        torch.testing.assert_close(mine, theirs, rtol=1e-5, atol=WEIGHT_ATOL, msg=f"weight {name}")


@pytest.mark.parametrize("name", LANGUAGE_MODELS)
def test_one_accumulated_step_is_one_step_on_the_whole_batch(name):
    batch = batch_of(name, 8)
    whole, accumulated = tiny_training(name), tiny_training(name, grad_accum=4)
    assert_same_step(whole, accumulated, whole.train_step(batch), accumulated.train_step(batch))


def test_checkpointing_gives_the_same_loss_and_gradients(monkeypatch):
    asked = []
    real = gpt_nets.checkpoint

    def counting(function, *args, **kwargs):
        asked.append(kwargs.get("use_reentrant"))
        return real(function, *args, **kwargs)

    monkeypatch.setattr(gpt_nets, "checkpoint", counting)
    batch = batch_of("gpt2-small", 4)
    plain, checkpointed = (
        tiny_training("gpt2-small"),
        tiny_training("gpt2-small", activation_checkpointing=True),
    )
    assert_same_step(plain, checkpointed, plain.train_step(batch), checkpointed.train_step(batch))
    assert asked == [False] * TINY["gpt2-small"]["layers"]  # each block, the non-reentrant variant


def test_ddp_reduces_the_gradients_once_per_accumulated_step(tmp_path):
    """Counted by a communication hook on a one-process gloo group: a step of 3 micro-batches reduces each
    gradient bucket once (in the last backward), as a step of one does; without no_sync() it would be 3 times."""
    import torch.distributed as dist

    dist.init_process_group("gloo", store=dist.FileStore(str(tmp_path / "store"), 1), rank=0, world_size=1)
    try:
        training = tiny_training("gpt2-small")
        training.modules["model"] = model = training.backend.wrap_ddp(training.modules["model"])
        reduced = []

        def hook(state, bucket):
            reduced.append(bucket.index())
            done = torch.futures.Future()
            done.set_result(bucket.buffer())
            return done

        model.register_comm_hook(None, hook)
        training.train_step(batch_of("gpt2-small", 3))
        one_micro_batch = len(reduced)
        reduced.clear()
        training.micro_batches = 3
        training.train_step(batch_of("gpt2-small", 9))
        assert one_micro_batch >= 1 and len(reduced) == one_micro_batch
    finally:
        dist.destroy_process_group()


def test_a_record_counts_every_micro_batch_and_keys_its_row_apart(capsys, tmp_path):
    from suite.rows.identity import row_key
    from suite.run_record import check_record

    argv = ["run", *TINY_OPTIONS, "--workload", "gpt2-small", *model_override_options(TINY["gpt2-small"])]
    options = ["--grad-accum", "3", "--activation-checkpointing"]
    assert cli.main([*argv, *options, "--out", str(tmp_path)]) == 0, capsys.readouterr().err
    record = only_record(tmp_path)
    check_record(record)
    metrics, config = record["metrics"], record["config"]
    assert config["batch_size"] == 2 and config["grad_accum"] == 3 and config["activation_checkpointing"]
    assert metrics["images_per_step"] == 6 and metrics["tokens_per_step"] == 6 * 16
    assert metrics["micro_batch_size"] == 2 and metrics["accumulated_batch_size"] == 6
    assert metrics["images_timed"] == 6 * metrics["steps_timed"]
    for field, plain in (("grad_accum", 1), ("activation_checkpointing", False)):
        other = {**record, "config": {**config, field: plain}}
        assert row_key(other) != row_key(record)
        older = {**record, "config": {key: value for key, value in other["config"].items() if key != field}}
        assert row_key(older) == row_key(other)  # a record from before the option: its default


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (["--grad-accum", "2"], "--grad-accum 2 does not apply to dcgan64"),
        (["--activation-checkpointing"], "--activation-checkpointing does not apply to dcgan64"),
        (["--grad-accum", "0"], "--grad-accum must be a positive integer"),
    ],
)
def test_refusals_are_one_line_and_exit_2(capsys, tmp_path, options, says):
    code = cli.main(["run", *TINY_OPTIONS, "--workload", "dcgan64", *options, "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and says in err and err.count("\n") == 1, err


def test_both_options_are_in_the_help(capsys):
    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    out = capsys.readouterr().out
    assert "--grad-accum N" in out and "--activation-checkpointing" in out
