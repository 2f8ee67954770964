"""The measurement loop: what it times, what it records, and how failures become records."""

from __future__ import annotations

import statistics

import pytest
import torch
from conftest import tiny_config

from suite.inputs.errors import UserError
from suite.measurement import runner


def test_a_tiny_run_produces_a_complete_record():
    record = runner.execute(runner.plan_run(tiny_config(windows=3)))
    assert record["status"] == "ok", record["error"]
    metrics = record["metrics"]
    # Throughput is images in a window / its wall time; the headline is the median window.
    assert metrics["images_per_window"] == 2 * 2
    rates = [4 / t for t in metrics["window_time_s"]]
    assert metrics["window_images_per_second"] == pytest.approx(rates)
    assert metrics["images_per_second"] == pytest.approx(statistics.median(rates))
    assert metrics["images_per_hour"] == pytest.approx(metrics["images_per_second"] * 3600)
    assert (
        metrics["images_per_second_min"] <= metrics["images_per_second"] <= metrics["images_per_second_max"]
    )
    assert metrics["steps_timed"] == 6 and metrics["images_timed"] == 12
    assert metrics["time_to_first_step_s"] > 0 and metrics["warmup_time_s"] > 0
    assert record["memory"]["peak_memory_bytes"] > 0
    assert record["data"]["source"] == "synthetic"
    assert record["config"]["batch_size"] == 2 and record["config"]["precision"] == "fp32"
    for key in (
        "host",
        "cpu_model",
        "cpu_cores_logical",
        "ram_bytes",
        "os",
        "python",
        "torch",
        "torchvision",
        "suite_version",
        "utc_time",
    ):
        assert record["context"][key], key
    assert record["workload"]["parameters"]["generator"] > 0


def test_defaults_come_from_the_backend():
    plan = runner.plan_run(
        tiny_config(batch_size=None, warmup_steps=None, steps_per_window=None, windows=None, precision=None)
    )
    schedule = plan.backend.schedule
    # The CPU's time box leaves its steps and windows to warm-up timing (tests/test_window_length.py).
    assert (
        plan.spec.schedule.warmup_steps,
        plan.spec.schedule.steps_per_window,
        plan.spec.schedule.windows,
    ) == (schedule.warmup_steps, None, None)
    assert plan.steps_chosen_by == "time box" and schedule.window_budget_s is not None
    assert plan.spec.precision == "fp32"
    assert plan.spec.workload.batch_size == 16  # the workload's 256, capped for a CPU


def test_bf16_autocast_runs_on_the_cpu():
    record = runner.execute(runner.plan_run(tiny_config(precision="bf16")))
    assert record["status"] == "ok" and record["config"]["precision"] == "bf16"


def test_the_window_is_timed_between_two_synchronisations(monkeypatch):
    """Record every synchronize and train_step: each window's steps sit between two syncs, none inside."""
    events = []
    plan = runner.plan_run(tiny_config(windows=2, steps_per_window=3, warmup_steps=1))
    monkeypatch.setattr(plan.backend, "synchronize", lambda: events.append("sync"))
    real_clock = runner.clock
    monkeypatch.setattr(runner, "clock", lambda: events.append("clock") or real_clock())
    build = plan.workload.build

    def build_and_spy(backend):
        training = build(backend)
        step = training.train_step
        training.train_step = lambda batch: events.append("step") or step(batch)
        return training

    monkeypatch.setattr(plan.workload.__class__, "build", lambda self, backend: build_and_spy(backend))
    runner.execute(plan)
    timed = "".join({"sync": "S", "clock": "C", "step": "x"}[e] for e in events)
    # warm-up: a step, a sync (first-step timestamp), the end-of-warm-up sync; then per window
    # "sync, clock, steps, sync, clock" with no sync between the steps.
    assert "SCxxxSC" in timed
    assert timed.count("SCxxxSC") == 2
    assert "xSx" not in timed.split("SCxxxSC", 1)[1]


def test_a_nan_loss_marks_the_record_diverged(monkeypatch):
    plan = runner.plan_run(tiny_config())
    build = plan.workload.build

    def build_nan(backend):
        training = build(backend)
        training.train_step = lambda batch: torch.tensor([float("nan"), 1.0])
        return training

    monkeypatch.setattr(plan.workload.__class__, "build", lambda self, backend: build_nan(backend))
    record = runner.execute(plan)
    assert record["status"] == "diverged"
    assert "NaN" in record["error"]["message"]
    assert record["metrics"]["images_per_second"] > 0  # the timing is kept


def test_an_out_of_memory_error_becomes_an_oom_record(monkeypatch):
    plan = runner.plan_run(tiny_config(batch_size=4))

    def explode(backend):
        raise MemoryError("DefaultCPUAllocator: can't allocate memory")

    monkeypatch.setattr(plan.workload.__class__, "build", lambda self, backend: explode(backend))
    record = runner.execute(plan)
    assert record["status"] == "oom"
    assert "batch size 4" in record["error"]["hint"] and "suite batch-size" in record["error"]["hint"]


def test_any_other_failure_becomes_an_error_record(monkeypatch):
    plan = runner.plan_run(tiny_config())
    monkeypatch.setattr(
        plan.workload.__class__, "build", lambda self, backend: (_ for _ in ()).throw(RuntimeError("boom"))
    )
    record = runner.execute(plan)
    assert record["status"] == "error"
    assert record["error"] == {"type": "RuntimeError", "message": "boom"}


def test_keyboard_interrupt_is_not_swallowed(monkeypatch):
    plan = runner.plan_run(tiny_config())
    monkeypatch.setattr(
        plan.workload.__class__, "build", lambda self, backend: (_ for _ in ()).throw(KeyboardInterrupt())
    )
    with pytest.raises(KeyboardInterrupt):
        runner.execute(plan)


@pytest.mark.parametrize(
    "field,value,message",
    [
        ("batch_size", 0, "--batch-size must be a positive integer, got 0"),
        ("steps_per_window", "x", "--steps must be a positive integer, got 'x'"),
        ("windows", -1, "--windows must be a positive integer, got -1"),
        ("warmup_steps", -2, "--warmup must be a whole number >= 0, got -2"),
        ("precision", "amp", "precision 'amp' is not supported by the cpu backend (accepted: fp32, bf16)"),
    ],
)
def test_plan_refuses_bad_values(field, value, message):
    with pytest.raises(UserError) as info:
        runner.plan_run(tiny_config(**{field: value}))
    assert str(info.value) == message
