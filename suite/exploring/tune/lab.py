"""`suite tune`'s runs as a strategy of the grid engine: each a grid point started as a fresh `suite run`
(`grid.run_point`) into the search's folder, tagged as a trial of its search, resumed from the records
there, and held inside the search's wall-time budget.

Resume: the search asks for its runs in an order its own decisions fix, and the N-th is tagged with N
(`tune.run`, beside `tune.search`, the search's id, in the record: run_record.TUNE_ENV). A run the folder
already holds under its search and number is taken from its record, not run again; since every decision
is made from records, a search started again after a kill (`kill -9` included) takes the same decisions
up to where it stopped and runs only what no record holds. A folder whose run N is another configuration
holds another search's plan: refused, naming both.

The budget: a run is started only where its estimate (the mean time of its configuration's runs so far,
else of this search's) fits in what is left, less what the final comparison needs once a change is kept
(`reserve`); a started run is bounded by the same (so a trial slower than its estimate cannot eat the
final comparison's time), and a run cut short by the budget leaves no record (it is run again on resume,
with a budget of its own). One search runs into a folder at a time: it holds the search's claim
(`grid.try_claim`) while it runs.
"""

from __future__ import annotations

import json
import os
import time

from suite.exploring import grid
from suite.exploring.sweep_resume import matches
from suite.exploring.tune.search import BudgetSpent, Outcome, Refused
from suite.inputs.errors import UserError
from suite.launching import child
from suite.run_record.record import TUNE_ENV, metrics_of

ORIGIN = "tune"
# A first run has no time of its own yet to estimate from: it is started if this much is left.
FIRST_RUN_S = 1.0
# A run stopped at the budget's end is stopped this much before it: killing it, reading what it left and
# writing the search's record take a few seconds, inside the budget too.
STOP_S = 5.0


class Budget:
    """A wall-time cap, from the moment the search started; `reserved` seconds are kept for the end."""

    def __init__(self, seconds: float, clock=time.monotonic):
        self.seconds, self.clock = seconds, clock
        self.started = clock()
        self.reserved = 0.0

    def left(self) -> float:
        return self.seconds - (self.clock() - self.started)

    def spent(self) -> float:
        return self.clock() - self.started


class Lab:
    """The runs of one search (SEARCH_ID) into OUT_DIR: BASE are the options every run is given (the
    command's, each a list of values as typed), a run's own options go on top of them."""

    def __init__(self, base: dict, out_dir: str, search_id: str, budget: Budget, **settings):
        self.base, self.out_dir, self.search_id, self.budget = base, out_dir, search_id, budget
        self.runner = settings.get("runner", grid.run_point)
        self.trial_timeout = settings.get("trial_timeout")
        self.log = settings.get("log", lambda line: None)
        self.recorded = self._recorded()
        self.asked = 0  # runs the search has asked for so far (the next one's number)
        self.took: list[float] = []  # how long each run started here took
        self.took_by: dict[str, list[float]] = {}  # the same, by configuration (Trial.key)
        self.replayed = 0

    # -- what the folder holds -------------------------------------------------------------------------

    def _recorded(self) -> dict[int, dict]:
        """This search's runs in the folder, by their number (the newest where one is held twice)."""
        found: dict[int, dict] = {}
        for record in grid.existing_records(self.out_dir):
            tag = record.get("tune") or {}
            if tag.get("search") == self.search_id and isinstance(tag.get("run"), int):
                held = found.get(tag["run"])
                if held is None or _utc(record) > _utc(held):
                    found[tag["run"]] = record
        return found

    # -- a run -----------------------------------------------------------------------------------------

    def point(self, options: dict, numerics: bool = False) -> grid.Point:
        return point_of(self.base, options, numerics, self.asked)

    def run(self, options: dict, trial, role: str, numerics: bool = False) -> Outcome:
        point = self.point(options, numerics)
        number = self.asked
        held = self.recorded.get(number)
        if held is not None:
            if not matches(point.config, held):
                raise UserError(
                    f"{self.out_dir} holds run {number} of search {self.search_id} as another configuration "
                    f"than this search asks ({trial.label}): the records are of another plan; give another --out"
                )
            self.asked += 1
            self.replayed += 1
            self.log(f"tune: #{trial.number} {trial.label} ({role}): recorded ({child.describe(held)})")
            return Outcome(held)
        return self._start(point, number, trial, role)

    def _start(self, point: grid.Point, number: int, trial, role: str) -> Outcome:
        estimate = self.estimate(trial.key)
        kept = self.budget.reserved * (role != "final")  # the final comparison's time is its own
        left = self.budget.left() - kept - STOP_S
        beside = f" beside the {kept:.0f} s kept for the final comparison" if kept else ""
        if estimate > left:
            raise BudgetSpent(
                f"#{trial.number} {trial.label} needs about {estimate:.0f} s, {max(left, 0):.0f} s left{beside}"
            )
        tag = {"search": self.search_id, "run": number, "trial": trial.label, "role": role}
        point.env = {TUNE_ENV: json.dumps(tag)}
        budget_binds = self.trial_timeout is None or left < self.trial_timeout
        timeout = max(1.0, left) if budget_binds else self.trial_timeout
        self.log(f"tune: #{trial.number} {trial.label} ({role}): running, {_left(self.budget)}")
        started = self.budget.clock()
        record = self.runner(
            point, self.out_dir, timeout, origin=ORIGIN, keep_failure=not budget_binds, tune=tag
        )
        self.took.append(self.budget.clock() - started)
        self.took_by.setdefault(trial.key, []).append(self.took[-1])
        if budget_binds and (record.get("error") or {}).get("type") == "Timeout":
            raise BudgetSpent(
                f"#{trial.number} {trial.label} was stopped at the budget's end{beside} (not recorded)"
            )
        self.asked += 1
        self.log(
            f"tune: #{trial.number} {trial.label} ({role}): {child.describe(record)} ({self.took[-1]:.0f} s)"
        )
        return Outcome(record)

    # -- the budget ------------------------------------------------------------------------------------

    def estimate(self, key: str | None = None) -> float:
        """Seconds the next run should take: the mean of this configuration's runs started here (KEY: a
        trial's), else of every run this search started here, else of what its recorded runs say they
        took, else FIRST_RUN_S."""
        if self.took_by.get(key):
            return sum(self.took_by[key]) / len(self.took_by[key])
        if self.took:
            return sum(self.took) / len(self.took)
        recorded = [_took(record) for record in self.recorded.values()]
        recorded = [seconds for seconds in recorded if seconds]
        return sum(recorded) / len(recorded) if recorded else FIRST_RUN_S

    def affords(self, runs: int) -> bool:
        """Whether RUNS more runs fit in the budget (those the folder holds cost nothing)."""
        held = sum(1 for number in range(self.asked, self.asked + runs) if number in self.recorded)
        return (runs - held) * self.estimate() <= self.budget.left() - self.budget.reserved - STOP_S

    def reserve(self, runs: int) -> None:
        """Keep the time of RUNS runs for the end (the final comparison)."""
        self.budget.reserved = runs * self.estimate()


def point_of(base: dict, options: dict, numerics: bool = False, index: int = 0) -> grid.Point:
    """The grid point of BASE (options as lists of values, as typed) with OPTIONS on top (and the numerics
    check where asked), resolved: every value checked by `suite run`'s own parser and planner. Refused
    where `suite run` would refuse it."""
    from suite.run_options import run_options

    known = run_options()
    merged = {**base, **{name: [value] for name, value in options.items()}}
    argv = []
    for name, values in merged.items():
        for value in values:
            argv += child.option_argv(name, value, known[name])
    if numerics:
        argv.append("--check-numerics")
    point = grid.Point(index, {name: str(value) for name, value in options.items()}, argv)
    try:
        grid.resolve([point], name_points=False)
    except UserError as error:
        raise Refused(str(error)) from None
    return point


def _utc(record: dict) -> str:
    return str((record.get("context") or {}).get("utc_time") or "")


def _took(record: dict) -> float | None:
    """What a recorded run took, from its own figures: time to first step, its windows, its checks."""
    metrics = metrics_of(record)
    if metrics.time_to_first_step_s is None:
        return None
    numerics = (record.get("numerics") or {}).get("time_s") or 0.0
    return metrics.time_to_first_step_s + sum(metrics.window_time_s or ()) + numerics


def _left(budget: Budget) -> str:
    from suite.data.progress import seconds

    return f"{seconds(max(budget.left(), 0))} of the budget left"


def claim(out_dir: str, search_id: str):
    """Hold the search's claim in OUT_DIR while the block runs (the kernel releases it when the process
    ends, however it ends), or refuse where another `suite tune` holds it."""
    import contextlib

    @contextlib.contextmanager
    def held():
        path = os.path.join(out_dir, f"{grid.CLAIM_PREFIX}tune-{search_id}")
        fd = grid.try_claim(path)
        if fd is None:
            raise UserError(
                f"another `suite tune` is running search {search_id} into {out_dir}: wait for it, or give "
                "another --out"
            )
        try:
            yield
        finally:
            grid.release_claim(path, fd)

    return held()
