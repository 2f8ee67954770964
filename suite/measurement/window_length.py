"""How many steps a timed window holds: as given (--steps), the backend's default, or grown from warm-up.

A window must last long enough for what is measured over it. A small model's step on a large GPU can
take milliseconds: the telemetry thread (every 0.15 s) samples a window of ten such steps once or not at
all, a power reading averaged over a second mixes in what came before it, and an energy counter moves by
few of its own units. A backend whose steps can be that short declares a minimum window (`Schedule.min_window_s`,
backends/base.py). Unless the person gave --steps, the runner then times the last warm-up steps (the
device synchronised at both edges: still warm-up, never a window) and takes the fewest steps that fill
the minimum with a margin (WARMUP_MARGIN: warm-up steps run slower than timed ones), never fewer than the schedule's steps nor more than its maximum. --steps is honoured as
given. However they were chosen, windows shorter than the minimum are said in a warning after them.

A backend whose steps take seconds declares a time box instead (`Schedule.window_budget_s`: the CPU's).
Unless the person gave --steps or --windows, the warm-up's last steps are timed as above and the windows
become as many of the schedule's as fit the box, then their steps as many as fit, each at least
MIN_WINDOWS windows of one step and at most the schedule's: a first run on a small machine ends in about
a minute, and a fast one runs the whole schedule. Throughput is still the windows' samples over their
wall time; the record says how the schedule was chosen and the box it was fitted to.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from suite.run_record import STEPS_CHOSEN_BY

# --steps as given; the backend's default (it declares no minimum window); the fewest steps that fill the
# backend's minimum window, from warm-up timing; windows and steps fitted to the backend's time box, from
# warm-up timing. The record's words for them (suite/run_record/schema.py).
GIVEN, SCHEDULE, WARMUP_TIMING, TIME_BOX = STEPS_CHOSEN_BY

# The fewest windows a time box leaves: a median and a spread need two.
MIN_WINDOWS = 2

# Warm-up's steps run slower than timed ones: timed from an idle device, two or three steps never fill the
# queue the way a window's hundreds do, and the allocator and cuDNN may still be settling. On an H200
# (torch 2.11) a warm-up step took 1.01 to 1.41 times a timed one (dcgan64, dcgan64-safe, dcgan128,
# resnet50 at amp, bf16, fp32 and TF32), and windows grown to exactly the minimum lasted 0.71 to 0.99 s of
# 1 s. So a window is grown to this multiple of the minimum: the warm-up's slowness is absorbed, and a
# window costs at most half as much time again.
WARMUP_MARGIN = 1.5

# A ratio a hair over a whole number (0.3 / 0.1 = 2.9999999999999996 the other way round) is that number.
_ROUNDING = 1e-9


@dataclass(frozen=True)
class WindowLength:
    """The steps each timed window of a run holds, and how they were chosen (all of it in the record)."""

    steps: int
    chosen_by: str  # GIVEN, SCHEDULE, WARMUP_TIMING or TIME_BOX
    default_steps: int  # the schedule's steps per window: the floor of any growth
    max_steps: int  # the ceiling of growth
    min_window_s: float | None  # the backend's minimum window; None where it declares none
    warmup_step_time_s: float | None = None  # one timed warm-up step (the slowest rank's); None: not timed
    warmup_steps_timed: int = 0
    windows: int = 0  # the timed windows
    window_budget_s: float | None = None  # the time box the windows were fitted to; None: none

    def metrics(self) -> dict:
        figures = {
            "steps_per_window": self.steps,
            "steps_per_window_chosen_by": self.chosen_by,
            "steps_per_window_default": self.default_steps,
            "steps_per_window_max": self.max_steps,
            "min_window_s": self.min_window_s,
            "warmup_step_time_s": self.warmup_step_time_s,
            "warmup_steps_timed": self.warmup_steps_timed,
        }
        if self.chosen_by == TIME_BOX:
            figures["window_budget_s"] = self.window_budget_s
        return figures


def planned(schedule, steps_given: int | None, windows_given: int | None = None) -> tuple[int | None, str]:
    """At plan time: (the config's steps per window, how they are chosen). None where warm-up decides
    (a time box decides the windows too: None as well): a record's config keeps what was asked, so a
    rerun or a resumed sweep asks the same (no --steps)."""
    if steps_given is not None:
        return steps_given, GIVEN
    if schedule.window_budget_s is not None and windows_given is None:
        return None, TIME_BOX
    if schedule.min_window_s is None:
        return schedule.steps_per_window, SCHEDULE
    return None, WARMUP_TIMING


def chosen_by(steps_per_window: int | None, schedule, windows: int | None = None) -> str:
    """How a plan made without `planned` (a config already resolved) chooses: None means the time box
    where the backend declares one and the windows are None too, warm-up timing where it declares a
    minimum, else the schedule; a number, as given."""
    if steps_per_window is not None:
        return GIVEN
    if schedule.window_budget_s is not None and windows is None:
        return TIME_BOX
    return SCHEDULE if schedule.min_window_s is None else WARMUP_TIMING


def steps_to_time(how: str, warmup_steps: int, batches_ahead: int = 0) -> int:
    """How many of the last warm-up steps to time (0: none). The first step is left out where there is
    another (it holds compilation and autotuning); with a single warm-up step it is all there is."""
    if how not in (WARMUP_TIMING, TIME_BOX) or warmup_steps == 0:
        return 0
    return min(warmup_steps + batches_ahead, max(1, warmup_steps - 1))


def steps_to_fill(min_window_s: float, step_time_s: float | None, floor: int, ceiling: int) -> int:
    """The fewest steps of `step_time_s` that last `min_window_s`, within floor … ceiling (floor wins)."""
    if step_time_s is None:
        return floor
    needed = ceiling if step_time_s <= 0 else math.ceil(min_window_s / step_time_s * (1 - _ROUNDING))
    return max(floor, min(ceiling, needed))


def fit_to_box(budget_s: float, step_time_s: float | None, schedule) -> tuple[int, int]:
    """(windows, steps per window) for a time box of BUDGET_S: as many of the schedule's windows as fit,
    then as many of its steps each; at least MIN_WINDOWS windows of one step, at most the schedule. With
    no step timed (--warmup 0), the schedule as it is."""
    if step_time_s is None:
        return schedule.windows, schedule.steps_per_window
    steps_in_box = math.floor(budget_s / step_time_s * (1 + _ROUNDING)) if step_time_s > 0 else math.inf
    windows = min(schedule.windows, max(MIN_WINDOWS, steps_in_box))
    return windows, max(1, min(schedule.steps_per_window, steps_in_box // windows))


def decide(
    schedule,
    how: str,
    steps_per_window: int | None,
    step_time_s: float | None,
    steps_timed: int,
    windows: int | None = None,
) -> WindowLength:
    """The window length of this run, after warm-up (`step_time_s` from the last `steps_timed` steps),
    and its windows (WINDOWS as planned; a time box decides them here)."""
    common = {
        "chosen_by": how,
        "default_steps": schedule.steps_per_window,
        "max_steps": schedule.max_steps_per_window,
        "min_window_s": schedule.min_window_s,
    }
    windows = windows or schedule.windows
    if how == TIME_BOX:
        windows, steps = fit_to_box(schedule.window_budget_s, step_time_s, schedule)
        return WindowLength(
            steps=steps,
            warmup_step_time_s=step_time_s,
            warmup_steps_timed=steps_timed if step_time_s is not None else 0,
            windows=windows,
            window_budget_s=schedule.window_budget_s,
            **{**common, "max_steps": schedule.steps_per_window},
        )
    if how != WARMUP_TIMING:
        return WindowLength(steps=steps_per_window or schedule.steps_per_window, windows=windows, **common)
    steps = steps_to_fill(
        schedule.min_window_s * WARMUP_MARGIN,
        step_time_s,
        schedule.steps_per_window,
        schedule.max_steps_per_window,
    )
    return WindowLength(
        steps=steps,
        warmup_step_time_s=step_time_s,
        warmup_steps_timed=steps_timed if step_time_s is not None else 0,
        windows=windows,
        **common,
    )


def short_window_warnings(length: WindowLength, window_times_s: list[float], backend: str) -> list[str]:
    """A warning where the median window lasted less than the backend's minimum, saying what to change."""
    if length.min_window_s is None or not window_times_s:
        return []
    median = statistics.median(window_times_s)
    if median >= length.min_window_s:
        return []
    step_s = median / length.steps
    enough = steps_to_fill(length.min_window_s, step_s, length.steps + 1, 1_000_000)
    said = (
        f"windows lasted {_seconds(median)} (median), under the {backend} backend's minimum of "
        f"{length.min_window_s:g} s: power and energy per image cover too little time"
    )
    if length.chosen_by == GIVEN:
        return [
            f"{said}; give --steps {enough} or more, or leave --steps out to have them grown from warm-up"
        ]
    if length.steps >= length.max_steps:
        return [f"{said}; steps per window were grown to their limit of {length.max_steps}"]
    if length.warmup_step_time_s is None:
        return [
            f"{said}; no warm-up step was timed (--warmup 0): give --warmup 2 or more, or --steps {enough}"
        ]
    return [
        f"{said}; a warm-up step took {_seconds(length.warmup_step_time_s)}, a timed one "
        f"{_seconds(step_s)}: consider more --warmup, or --steps {enough}"
    ]


def _seconds(value: float) -> str:
    return f"{value:.3g} s" if value >= 1 else f"{value * 1000:.3g} ms"
