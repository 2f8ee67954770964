"""How many steps a timed window holds: grown from warm-up timing where the backend declares a minimum
window and no --steps was given, --steps as given (with a warning when too short), and the record and
summary saying which. The CUDA path runs on the CPU with fake torch.cuda queries and a fake clock: wiring."""

from __future__ import annotations

import dataclasses
import os
import sys

import pytest
from conftest import ROOT, tiny_config
from suite.backends import backend_class
from tiny_workload import make_plan

from suite import run_record
from suite.measurement import runner, window_length
from suite.measurement.distributed import SingleProcess
from suite.reporting import summary
from suite.spec import RunSpec

sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import bare_loop  # noqa: E402

CUDABackend = backend_class("cuda")
STEP_S = 0.01  # what one training step takes on the fake clock
MIN_WINDOW_S = 0.045  # 4.5 steps: 5 fill it


class FakeClock:
    """The runner's window clock, advanced only by training steps: 10 ms each, nothing else."""

    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def fast_gpu(fake_gpu, monkeypatch):
    """The CUDA backend on the CPU with a step of 10 ms (fake time), windows of at least 45 ms, a default of
    2 steps per window. Each step and synchronisation is logged in fake_gpu.events."""
    fake_gpu.name = "NVIDIA L40S"  # no datasheet peak: no FLOP count (MFU is not what is checked here)
    clock = FakeClock()
    monkeypatch.setattr(runner, "clock", clock)
    original_end_step = CUDABackend.end_step

    def end_step(self):
        fake_gpu.events.append("step")
        clock.now += STEP_S
        original_end_step(self)

    monkeypatch.setattr(CUDABackend, "end_step", end_step)
    schedule = dataclasses.replace(
        CUDABackend.schedule, steps_per_window=2, min_window_s=MIN_WINDOW_S, max_steps_per_window=1000
    )
    monkeypatch.setattr(CUDABackend, "schedule", schedule)
    return fake_gpu


def run(**config) -> dict:
    values = {"warmup_steps": 3, "windows": 2, "precision": "fp32", **config}
    record = runner.execute(make_plan(CUDABackend, **values))
    assert record["status"] == "ok", record["error"]
    return record


# -- the choice ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "step_time_s, floor, ceiling, expected",
    [
        (0.01, 2, 1000, 5),  # 0.045 / 0.01 = 4.5: five steps fill the window
        (0.01, 10, 1000, 10),  # never fewer than the schedule's
        (0.00001, 2, 1000, 1000),  # never more than the ceiling
        (0.0, 2, 1000, 1000),  # a step too short to see
        (None, 2, 1000, 2),  # nothing timed: the schedule's
        (0.045, 1, 1000, 1),  # exactly one step long
    ],
)
def test_steps_to_fill(step_time_s, floor, ceiling, expected):
    assert window_length.steps_to_fill(MIN_WINDOW_S, step_time_s, floor, ceiling) == expected


def test_a_ratio_a_hair_over_a_whole_number_is_that_number():
    assert 0.07 / 0.01 > 7  # 7.000000000000001 in floating point
    assert window_length.steps_to_fill(0.07, 0.01, 1, 1000) == 7


def test_plan_leaves_the_steps_to_warm_up_only_where_the_backend_declares_a_minimum(fake_gpu):
    cuda = runner.plan_run(tiny_config(backend="cuda", steps_per_window=None, precision="fp32"))
    assert cuda.spec.schedule.steps_per_window is None and cuda.steps_chosen_by == "warm-up timing"
    given = runner.plan_run(tiny_config(backend="cuda", steps_per_window=7, precision="fp32"))
    assert given.spec.schedule.steps_per_window == 7 and given.steps_chosen_by == "--steps"
    cpu = runner.plan_run(tiny_config(steps_per_window=None))
    assert cpu.spec.schedule.steps_per_window == 4 and cpu.steps_chosen_by == "schedule"


def test_cuda_declares_a_one_second_minimum_and_a_bound():
    schedule = backend_class("cuda").schedule
    assert (schedule.min_window_s, schedule.steps_per_window, schedule.max_steps_per_window) == (
        1.0,
        10,
        1000,
    )
    assert backend_class("cpu").schedule.min_window_s is None  # CPU windows last seconds already


def test_the_steps_help_says_the_backends_schedules(capsys):
    from suite.cli import main

    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    cpu, cuda, hpu = (backend_class(name).schedule for name in ("cpu", "cuda", "hpu"))
    assert cpu.min_window_s is None and cuda.min_window_s == hpu.min_window_s
    assert cuda.max_steps_per_window == hpu.max_steps_per_window
    assert (
        f"(default: cpu 1 to {cpu.steps_per_window}, with --windows fitted to a time box of about "
        f"{cpu.window_budget_s:g} s from warm-up timing; cuda {cuda.steps_per_window} and hpu "
        f"{hpu.steps_per_window}, grown from warm-up timing so that a window lasts >= {cuda.min_window_s:g} s, "
        f"at most {cuda.max_steps_per_window})"
    ) in text
    assert f"(default {cuda.windows}; cpu {window_length.MIN_WINDOWS} to {cpu.windows}, fitted" in text


# -- the CPU's time box --------------------------------------------------------------------------------

BOX = dataclasses.replace(backend_class("cpu").schedule, window_budget_s=20.0, windows=5, steps_per_window=4)


@pytest.mark.parametrize(
    "step_time_s, expected",
    [
        (2.5, (5, 1)),  # 8 steps fit: the windows first, of one step each
        (2.0, (5, 2)),  # 10 fit: 5 windows of 2
        (1.0, (5, 4)),  # 20 fit: the whole schedule
        (0.01, (5, 4)),  # a fast machine: never more than the schedule
        (0.0, (5, 4)),  # a step too short to see
        (9.0, (2, 1)),  # 2 fit: the fewest windows
        (30.0, (2, 1)),  # none fits: still two windows of one step (a median and a spread)
        (None, (5, 4)),  # no warm-up step timed (--warmup 0): the schedule as it is
    ],
)
def test_a_time_box_takes_windows_first_then_steps(step_time_s, expected):
    assert window_length.fit_to_box(20.0, step_time_s, BOX) == expected


def test_the_cpu_is_time_boxed_unless_steps_or_windows_are_given():
    schedule = backend_class("cpu").schedule
    assert schedule.window_budget_s == 20.0 and schedule.warmup_steps == 1
    boxed = runner.plan_run(tiny_config(steps_per_window=None, windows=None))
    assert boxed.steps_chosen_by == "time box"
    # Both left to warm-up: the record's config keeps what was asked, so a rerun is time-boxed too.
    assert boxed.spec.schedule.windows is None and boxed.spec.schedule.steps_per_window is None
    assert boxed.record_config()["windows"] is None
    windows = runner.plan_run(tiny_config(steps_per_window=None, windows=3))
    assert windows.steps_chosen_by == "schedule" and windows.spec.schedule.steps_per_window == 4
    steps = runner.plan_run(tiny_config(steps_per_window=2, windows=None))
    assert steps.steps_chosen_by == "--steps" and steps.spec.schedule.windows == schedule.windows
    from suite.commands.run import start_line

    line = start_line(boxed)
    assert line.endswith(
        "1 warm-up step(s), then timed windows for about 20 s, fitted to the warm-up's step time "
        "(the cpu backend's time box; --steps or --windows fix them)"
    ), line
    # Real data: the warm-up also drains the batches the loader's workers made ahead (the summary counts them)
    boxed.spec = boxed.spec.replace(data="photos")
    assert "1 warm-up step(s) and one for each batch the loader's workers prefetched, then" in start_line(
        boxed
    )


def test_a_time_boxed_run_fits_its_windows_to_the_warm_up_step_and_says_so(monkeypatch):
    from suite.backends.cpu import CPUBackend

    clock = FakeClock()
    monkeypatch.setattr(runner, "clock", clock)
    original_end_step = CPUBackend.end_step

    def end_step(self):
        clock.now += 6.0  # a 6 s step: 3 fit a 20 s box, as 3 windows of 1
        original_end_step(self)

    monkeypatch.setattr(CPUBackend, "end_step", end_step)
    record = runner.execute(make_plan(CPUBackend, warmup_steps=1, steps_per_window=None, windows=None))
    assert record["status"] == "ok", record["error"]
    metrics = record["metrics"]
    assert metrics["steps_per_window_chosen_by"] == "time box" and metrics["window_budget_s"] == 20.0
    assert metrics["window_time_s"] == pytest.approx([6.0] * 3) and metrics["steps_per_window"] == 1
    assert metrics["steps_timed"] == 3 and metrics["warmup_step_time_s"] == pytest.approx(6.0)
    # Throughput is still the windows' images over their wall time.
    assert metrics["images_per_second"] == pytest.approx(4 / 6.0)
    assert run_record.check_record(record) is record
    assert summary.window_length_line(metrics) == (
        "time-boxed: 3 × 1 step fitted to about 20 s (a warm-up step took 6 s); --steps or --windows fix them"
    )


# -- the runner (wiring: fake torch.cuda, fake clock) --------------------------------------------------


def test_steps_grow_from_warm_up_timing_wiring(fast_gpu):
    record = run(steps_per_window=None)
    metrics = record["metrics"]
    # 0.045 s × WARMUP_MARGIN 1.5 = 0.0675 s of 10 ms steps: 7 steps
    assert metrics["steps_per_window"] == 7 and metrics["steps_timed"] == 14
    assert metrics["steps_per_window_chosen_by"] == "warm-up timing"
    assert metrics["min_window_s"] == MIN_WINDOW_S and metrics["steps_per_window_default"] == 2
    assert metrics["steps_per_window_max"] == 1000
    assert metrics["warmup_step_time_s"] == pytest.approx(STEP_S) and metrics["warmup_steps_timed"] == 2
    assert metrics["window_time_s"] == pytest.approx([7 * STEP_S] * 2)
    assert metrics["images_per_window"] == 7 * 4  # batch 4
    assert record["config"]["steps_per_window"] is None  # the config keeps what was asked
    assert not [w for w in record["warnings"] if "minimum" in w]
    # The last two warm-up steps are timed between the first step's synchronisation and warm-up's last:
    # no synchronisation is added, and none inside a window.
    warmup = ["step", "sync", "step", "step", "sync"]
    window = ["sync", *["step"] * 7, "sync"]
    assert fast_gpu.events == warmup + window * 2
    run_record.check_record(record)


def test_timed_warm_up_steps_after_the_loader_drain_start_on_an_idle_device_wiring(fast_gpu, monkeypatch):
    monkeypatch.setattr(runner, "_batches_ahead", lambda data: 2)  # 2 prefetched batches to drain first
    record = run(steps_per_window=None)
    assert record["metrics"]["warmup_steps_timed"] == 2
    # steps 0 (synchronised), 1, 2 (the drain), then a synchronisation before the 2 timed steps
    assert fast_gpu.events[:8] == ["step", "sync", "step", "step", "sync", "step", "step", "sync"]


def test_every_rank_takes_the_slowest_ranks_warm_up_step_wiring(fast_gpu, monkeypatch):
    class SlowerPeer(SingleProcess):
        def slowest(self, elapsed_s):
            return 2 * elapsed_s  # another rank took twice as long

    monkeypatch.setattr(runner.distributed, "process_group", lambda backend, config: SlowerPeer())
    metrics = run(steps_per_window=None)["metrics"]
    assert metrics["warmup_step_time_s"] == pytest.approx(2 * STEP_S)
    assert metrics["steps_per_window"] == 4  # 0.045 × 1.5 / 0.02 = 3.4


def test_given_steps_are_honoured_and_a_short_window_is_warned_about_wiring(fast_gpu):
    record = run(steps_per_window=3)
    metrics = record["metrics"]
    assert metrics["steps_per_window"] == 3 and metrics["steps_per_window_chosen_by"] == "--steps"
    assert metrics["warmup_step_time_s"] is None and metrics["window_time_s"] == pytest.approx([0.03] * 2)
    assert fast_gpu.events[:5] == ["step", "sync", "step", "step", "sync"]  # nothing added to warm-up
    (warning,) = [w for w in record["warnings"] if "minimum" in w]
    assert "windows lasted 30 ms (median), under the cuda backend's minimum of 0.045 s" in warning
    assert "give --steps 5 or more" in warning


def test_no_warm_up_step_to_time_keeps_the_default_and_says_so_wiring(fast_gpu):
    record = run(steps_per_window=None, warmup_steps=0)
    assert record["metrics"]["steps_per_window"] == 2 and record["metrics"]["warmup_step_time_s"] is None
    assert any("no warm-up step was timed (--warmup 0)" in w for w in record["warnings"])


def test_growth_stops_at_the_backends_bound_and_says_so_wiring(fast_gpu, monkeypatch):
    schedule = dataclasses.replace(CUDABackend.schedule, max_steps_per_window=4)
    monkeypatch.setattr(CUDABackend, "schedule", schedule)
    record = run(steps_per_window=None)
    assert record["metrics"]["steps_per_window"] == 4
    assert any("grown to their limit of 4" in w for w in record["warnings"])
    line = summary.window_length_line(record["metrics"])
    assert line.startswith("4 steps each, grown from 2 to the limit: >= 0.045 s would need more")


def test_the_cpu_schedule_is_untouched():
    record = runner.execute(make_plan(backend_class("cpu"), steps_per_window=None, windows=1))
    metrics = record["metrics"]
    assert (metrics["steps_per_window"], metrics["steps_per_window_chosen_by"]) == (4, "schedule")
    assert metrics["min_window_s"] is None and metrics["warmup_step_time_s"] is None


# -- the record and the summary ------------------------------------------------------------------------


def test_summary_says_how_the_steps_were_chosen():
    metrics = {
        "steps_per_window": 120,
        "steps_per_window_chosen_by": "warm-up timing",
        "steps_per_window_default": 10,
        "steps_per_window_max": 1000,
        "min_window_s": 1.0,
        "warmup_step_time_s": 0.0083,
    }
    assert summary.window_length_line(metrics) == (
        "120 steps each, grown from 10 so a window lasts >= 1 s (a warm-up step took 8.3 ms)"
    )
    assert summary.window_length_line({**metrics, "steps_per_window": 10, "warmup_step_time_s": 0.2}) == (
        "10 steps each, the backend's default: already a window of >= 1 s (a warm-up step took 200 ms)"
    )
    given = {"steps_per_window": 3, "steps_per_window_chosen_by": "--steps"}
    assert summary.window_length_line(given) == "3 steps each, as given by --steps"
    assert summary.window_length_line({"steps_per_window": 4}) is None  # a record from before


def test_summary_of_a_grown_run_shows_the_windows_it_timed_wiring(fast_gpu):
    text = summary.render(run(steps_per_window=None))
    assert "2 windows × 7 steps)" in text
    assert "  windows      7 steps each, grown from 2 so a window lasts >= 0.045 s" in text


@pytest.mark.parametrize(
    "field, value",
    [
        ("steps_per_window_chosen_by", "guessed"),
        ("steps_per_window", 0),
        ("min_window_s", 0),
        ("warmup_step_time_s", float("nan")),
    ],
)
def test_the_schema_refuses_a_bad_window_length(field, value):
    record = run_record.new_record("r", {"utc_time": "x"}, RunSpec().to_record_config())
    record["status"] = "ok"
    record["metrics"] = {"steps_per_window": 5, "steps_per_window_chosen_by": "warm-up timing"}
    run_record.check_record(record)
    record["metrics"][field] = value
    with pytest.raises(run_record.BadRecord, match=f"metrics.{field}"):
        run_record.check_record(record)


# -- the bare loop grows its windows the same way -------------------------------------------------------


def test_the_bare_loops_defaults_are_the_cuda_schedule():
    schedule = backend_class("cuda").schedule
    assert bare_loop.MIN_WINDOW_S["cuda"] == schedule.min_window_s
    assert bare_loop.WARMUP_MARGIN == window_length.WARMUP_MARGIN
    assert (bare_loop.DEFAULT_STEPS, bare_loop.MAX_STEPS) == (
        schedule.steps_per_window,
        schedule.max_steps_per_window,
    )
    assert bare_loop.MIN_WINDOW_S["cpu"] == backend_class("cpu").schedule.min_window_s


@pytest.mark.parametrize("steps, expected_steps, timed", [(None, 22, True), (3, 3, False)])
def test_the_bare_loop_grows_its_windows_unless_steps_are_given(steps, expected_steps, timed):
    clock, syncs = FakeClock(), []

    def step():
        clock.now += STEP_S

    rates, used, step_time_s = bare_loop.measure(
        step, 4, lambda: syncs.append(clock.now), 3, steps, 2, min_window_s=0.145, clock=clock
    )
    assert used == expected_steps
    assert rates == pytest.approx([4 / STEP_S] * 2)
    assert (step_time_s == pytest.approx(STEP_S)) if timed else step_time_s is None
    assert len(syncs) == 4 + (2 if timed else 0)  # two per window; two around the timed warm-up steps
