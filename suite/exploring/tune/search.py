"""`suite tune`'s search: from the default run, each knob the backend declares (suite/exploring/tune/knobs.py)
tried on top of the best configuration so far, a change kept only when it is faster beyond the noise.

Knob by knob, in the backend's order:

    screen    each of the knob's values once, a fresh process each; a reduced precision or a compiled
              graph with `--check-numerics`, refused unless the check passes. A run that fails (out of
              memory, a mode the model refuses) is a trial that failed: the search goes on.
    pick      the fastest screened value. Where its one run is slower or faster than the best's by more
              than CLEAR × the noise (the runs' own: their windows' spread, and the host's spread between
              fresh processes, pooled over every configuration run more than once), and the hosts' load
              recorded with the runs cannot explain it (`suite compare`'s rule, host_load.py), it is
              dropped or kept without more runs.
    confirm   nearer the noise, REPEATS runs a side, best and candidate interleaved A B B A A B (so that
              a drift in the host's load falls on both), judged by `suite compare`'s test (Welch's t-test on the log
              rates, suite/compare/significance.py); where undecided, MORE_REPEATS a side (each look at
              α/2): kept only on a verdict of faster that the load cannot explain.

The default runs twice first: two fresh processes are the first estimate of the host's run-to-run noise.
A screened value past CLEAR × the noise from the best is kept (or dropped) on its one run; nearer, it is
confirmed as above. The search ends with the best configuration against the default, each topped up to
REPEATS runs, the new ones interleaved, for the gain and its 95% interval (unless its one kept change was
confirmed against the default itself); the budget keeps the time for it once a change is kept.

Pure: every run goes through `lab` (suite/exploring/tune/lab.py runs each as a fresh `suite run`,
resumably, inside the budget; the tests give it a fake). Every decision is taken from the runs' records,
so a search resumed over the records of an interrupted one takes the same decisions again.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass, field

from suite.compare import host_load, significance
from suite.exploring.tune import knobs as tune_knobs
from suite.exploring.tune.knobs import Candidate, Facts

REPEATS = significance.MIN_RUNS  # runs a side in a confirmation: the fewest the test decides with
# Where REPEATS a side leave it undecided, a second look at this many a side (the A B B A order carried
# on); each of the two looks is judged at α/2 (Bonferroni), so that looking twice does not double the
# chance of keeping a change that is noise.
MORE_REPEATS = 5
LOOKS = 2
CLEAR = 3.0  # a screened value slower than the best by more than this many noises is dropped at once
NOISE_FLOOR = 0.02  # no two runs in fresh processes agree closer than this (2%): the least noise assumed
# The spread of a median of n windows, relative: about 1.25 σ/√n (the median's efficiency under normal noise).
MEDIAN_SPREAD = 1.2533

SCREENED = "screened"
KEPT = "kept"


class BudgetSpent(Exception):
    """The next run cannot finish inside what the budget has left: the search stops there."""


class Refused(Exception):
    """`suite run` refuses the configuration before anything runs (exit 2 for a person): its message."""


@dataclass
class Outcome:
    """One run of a configuration, as its record says."""

    record: dict

    @property
    def ok(self) -> bool:
        return self.record.get("status") == "ok" and self.rate is not None

    @property
    def rate(self) -> float | None:
        from suite.run_record.record import metrics_of

        return metrics_of(self.record).throughput

    @property
    def cv(self) -> float:
        metrics = self.record.get("metrics") or {}
        return metrics.get("images_per_second_cv") or 0.0

    @property
    def windows(self) -> int:
        return len((self.record.get("metrics") or {}).get("window_time_s") or []) or 1

    @property
    def numerics(self) -> str | None:
        return (self.record.get("numerics") or {}).get("verdict")

    @property
    def failure(self) -> str:
        error = self.record.get("error") or {}
        return f"{self.record.get('status')}: {error.get('message') or error.get('type') or ''}".strip()


@dataclass
class Trial:
    """A row of the search's table: what it tried, on top of which best, its runs and its verdict."""

    number: int
    knob: str  # the knob's name; "default" for the default run
    label: str  # what it tried (`precision=bf16`)
    options: dict  # the whole configuration's options beyond the default's (its setting)
    verdict: str = ""
    decision: dict | None = None  # significance.decide of its confirmation (or the final comparison)
    against: int | None = None  # the number of the trial it was confirmed against

    @property
    def kept(self) -> bool:
        return self.verdict.startswith(KEPT)

    @property
    def key(self) -> str:
        return json.dumps(self.options, sort_keys=True, default=str)


@dataclass
class Result:
    trials: list[Trial] = field(default_factory=list)
    runs: dict[str, list[Outcome]] = field(default_factory=dict)  # each configuration's runs (Trial.key)
    best: Trial | None = None
    default: Trial | None = None
    final: dict | None = None  # the best against the default: significance.decide's fields
    stopped: str = ""  # why the search ended where it did
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (knob, why it was not searched)

    def runs_of(self, trial: Trial) -> list[Outcome]:
        return self.runs.get(trial.key, [])

    def rate(self, trial: Trial) -> float | None:
        rates = [run.rate for run in self.runs_of(trial) if run.ok]
        return statistics.median(rates) if rates else None

    def times_default(self, trial: Trial) -> float | None:
        rate, default = self.rate(trial), self.rate(self.default) if self.default else None
        return rate / default if rate and default else None


class Search:
    """One search: LAB runs configurations (`lab.run(options, trial, role, numerics) -> Outcome`, raising
    BudgetSpent or Refused; `lab.affords(runs)`; `lab.reserve(runs)`), TUNABLES are the backend's, in order."""

    def __init__(self, lab, tunables, fixed: set[str], tune_batch: bool = False, min_change: float = 0.0):
        self.lab, self.tunables, self.fixed = lab, tuple(tunables), set(fixed)
        self.tune_batch, self.min_change = tune_batch, min_change
        self.result = Result()
        self.progress = lambda result: None  # called after every trial (the command keeps its summary)

    def run(self) -> Result:
        reached = 0
        try:
            if self._start():
                for tunable in self.tunables:
                    reached += 1  # where the budget stops it, the knobs after this one were not reached
                    self._knob(tunable)
                self.result.stopped = "every knob searched"
        except BudgetSpent as spent:
            self.result.stopped = f"budget: {spent}"
            for trial in self.result.trials:
                if trial.verdict in ("", SCREENED):
                    trial.verdict = "not judged: the budget ended first"
            for tunable in self.tunables[reached:]:
                self.result.skipped.append((tunable.name, "not reached: the budget ended first"))
        try:
            self._final()  # in the time kept for it
        except BudgetSpent as spent:
            self.result.stopped += f"; the final comparison: {spent}"
        self.progress(self.result)
        return self.result

    # -- the default, and where it does not fit --------------------------------------------------------

    def _start(self) -> bool:
        """The default, in two fresh processes (their spread is the first estimate of the host's run-to-run
        noise); where a language model's batch does not fit, the first split into micro-batches that does.
        False where nothing runs to start from."""
        default = self._trial("default", "the default run", {})
        self.result.default = self.result.best = default
        outcome = self._measure(default, {}, "default")
        if outcome.ok:
            default.verdict = "default"
            self._measure(default, {}, "default")
            self.progress(self.result)
            return True
        default.verdict = f"failed: {outcome.failure}"
        if outcome.record.get("status") == "oom" and Facts.of(outcome.record).unit == "tokens":
            return self._fit(Facts.of(outcome.record))
        self.result.stopped = f"the default run did not finish ({outcome.failure}): nothing to start from"
        return False

    def _fit(self, facts: Facts) -> bool:
        accumulation = next((t for t in self.tunables if t.rule == "grad-accum"), None)
        for candidate in tune_knobs.candidates(accumulation, facts) if accumulation else []:
            trial = self._trial(candidate.knob, candidate.label, candidate.options)
            outcome = self._measure(trial, candidate.options, "fit")
            if outcome.ok:
                trial.verdict = (
                    "kept: the first split of the default's batch that fits (the global batch kept)"
                )
                self.result.best = self.result.default = trial  # the rates are compared with it from here
                return True
            trial.verdict = f"failed: {outcome.failure}"
        self.result.stopped = "the default batch does not fit, nor any split of it into micro-batches"
        return False

    # -- a knob ----------------------------------------------------------------------------------------

    def _knob(self, tunable) -> None:
        facts = Facts.of(self._last(self.result.best).record)
        why = tune_knobs.left_out(tunable, facts, self.fixed, self.tune_batch)
        if why:
            self.result.skipped.append((tunable.name, why))
            return
        screened = []
        stop = tune_knobs.stops_after(tunable)
        for candidate in tune_knobs.candidates(tunable, facts):
            if self._on_best(tunable, candidate) == self.result.best.options:
                continue  # the best's own setting: nothing to try
            trial = self._screen(tunable, candidate)
            if trial.verdict == SCREENED:
                screened.append(trial)
            if stop == "failure" and trial.verdict.startswith("failed"):
                break
        if screened:
            self._pick(screened)

    def _screen(self, tunable, candidate: Candidate) -> Trial:
        options = self._on_best(tunable, candidate)
        trial = self._trial(candidate.knob, candidate.label, options)
        try:
            outcome = self._measure(trial, options, "screen", candidate.numerics)
        except Refused as refusal:
            trial.verdict = f"refused by `suite run`: {refusal}"
            self.progress(self.result)
            return trial
        if not outcome.ok:
            trial.verdict = f"failed: {outcome.failure}"
        elif candidate.numerics and outcome.numerics != "pass":
            reason = (outcome.record.get("numerics") or {}).get("reason") or ""
            trial.verdict = f"refused: numerics {outcome.numerics or 'not checked'}" + (
                f" ({reason})" if reason else ""
            )
        else:
            trial.verdict = SCREENED
        self.progress(self.result)
        return trial

    def _on_best(self, tunable, candidate: Candidate) -> dict:
        """The best configuration's options with the knob's set to the candidate's (the knob's others back
        to their defaults)."""
        options = {
            k: v for k, v in self.result.best.options.items() if k not in tune_knobs.knob_options(tunable)
        }
        return {**options, **candidate.options}

    def _pick(self, screened: list[Trial]) -> None:
        """The fastest screened value: dropped, or kept, at once where its run is past CLEAR × the noise
        from the best's; confirmed by interleaved runs where it is nearer."""
        result = self.result
        pick = max(screened, key=lambda t: result.rate(t))
        for other in screened:
            if other is not pick:
                other.verdict = f"slower than #{pick.number} when screened"
        best, rate = result.best, result.rate(pick)
        noise = self._noise(best, pick)
        ratio = rate / result.rate(best)
        past = f"{ratio:.2f} of #{best.number}, past {CLEAR:g} × the noise ({noise:.1%})"
        clear = abs(math.log(ratio)) > CLEAR * noise and not self._load_explains(best, pick, ratio)
        if clear and ratio < 1:
            pick.verdict = f"slower: ×{past}"
        elif clear:
            pick.verdict, pick.against = f"{KEPT}: ×{past}", best.number
            self._keep(pick)
        else:
            self._confirm(pick)

    def _load_explains(self, best: Trial, pick: Trial, ratio: float) -> bool:
        """Whether the hosts' load could explain the screened difference (`suite compare`'s rule: the
        slower side ran busier), so that interleaved runs must decide it instead of one run."""
        sides = [
            host_load.side_load([r.record for r in self.result.runs_of(t) if r.ok]) for t in (best, pick)
        ]
        return host_load.could_be_busier(*sides, "baseline" if ratio > 1 else "candidate") is not None

    def _keep(self, pick: Trial) -> None:
        self.result.best = pick
        self.lab.reserve(self._final_runs())  # the final comparison, with the default, must still fit
        self.progress(self.result)

    def _final_runs(self) -> int:
        """The runs the final comparison needs: the best and the default topped up to REPEATS each (none
        where the best was confirmed against the default itself)."""
        result = self.result
        if result.best.against == result.default.number and result.best.decision:
            return 0
        return sum(
            max(0, REPEATS - sum(1 for r in result.runs_of(t) if r.ok)) for t in (result.best, result.default)
        )

    def _noise(self, best: Trial, candidate: Trial) -> float:
        """The relative noise of one run's rate: the spread of a median of its windows (both runs'), the
        host's run-to-run spread (pooled over every configuration run more than once), at least
        NOISE_FLOOR."""
        last = [self._last(best), self.result.runs_of(candidate)[-1]]
        within = math.sqrt(sum((MEDIAN_SPREAD * r.cv / math.sqrt(r.windows)) ** 2 for r in last))
        variances = [
            statistics.variance([math.log(r.rate) for r in runs if r.ok])
            for runs in self.result.runs.values()
            if sum(1 for r in runs if r.ok) > 1
        ]
        between = math.sqrt(statistics.fmean(variances)) if variances else 0.0
        return max(NOISE_FLOOR, within, between)

    def _confirm(self, pick: Trial) -> None:
        """REPEATS runs a side, the best and the pick interleaved, and MORE_REPEATS where that is undecided;
        kept only where the test says faster."""
        from suite.launching.repeat import interleaved_order

        best = self.result.best
        if not self.lab.affords(2 * REPEATS):
            # not kept; the next knobs' screening runs may still fit, and one may be clear on its own
            pick.verdict = f"not confirmed: the budget cannot fit its {2 * REPEATS} interleaved runs"
            self.progress(self.result)
            return
        order = interleaved_order(MORE_REPEATS)
        sides: tuple[list[Outcome], list[Outcome]] = ([], [])
        decision = None
        for done, side in enumerate(order, 1):
            trial = (best, pick)[side]
            outcome = self._measure(trial, trial.options, "confirm")
            if not outcome.ok:
                pick.verdict = f"failed when confirmed: {outcome.failure}"
                return
            sides[side].append(outcome)
            if done == 2 * REPEATS:
                decision = self._decide(*sides, looks=LOOKS)
                more = 2 * (MORE_REPEATS - REPEATS)
                if decision["verdict"] != significance.UNDECIDED or not self.lab.affords(more):
                    break
        else:
            decision = self._decide(*sides, looks=LOOKS)
        pick.decision, pick.against = decision, best.number
        if decision["verdict"] == "faster":
            pick.verdict = KEPT
            self._keep(pick)
        else:
            pick.verdict = f"{decision['verdict']}: not kept"
            self.progress(self.result)

    def _decide(self, baseline: list[Outcome], candidate: list[Outcome], looks: int = 1) -> dict:
        """`suite compare`'s test of the two sides' rates; with LOOKS, its p-value times the looks (the
        verdict at α ÷ looks)."""
        words = ("faster", "slower")
        decision = significance.decide(
            [r.rate for r in baseline], [r.rate for r in candidate], self.min_change, words
        )
        if looks > 1 and decision["p_value"] is not None:
            decision["p_adjusted"] = min(1.0, decision["p_value"] * looks)
            decision["verdict"] = significance.verdict(
                decision, decision["p_adjusted"], self.min_change, words
            )
        if decision["verdict"] in words:  # a call the hosts' load could explain is withheld, as compare's
            loads = [host_load.side_load([r.record for r in side]) for side in (baseline, candidate)]
            reason = host_load.withhold(decision, *loads)
            if reason:
                decision["verdict"] = f"{host_load.WITHHELD} ({reason})"
        return decision

    # -- the end ---------------------------------------------------------------------------------------

    def _final(self) -> None:
        """The best against the default, for the gain and its interval: each topped up to REPEATS runs
        that ended ok, the new ones interleaved, and judged on all of them (the confirmation itself where
        the one change kept was confirmed against the default)."""
        result = self.result
        best, default = result.best, result.default
        if best is None or best is default or result.rate(best) is None:
            return
        if best.against == default.number and best.decision:
            result.final = best.decision
            return
        needed = {id(t): REPEATS - sum(1 for r in result.runs_of(t) if r.ok) for t in (best, default)}
        turn = [best, default]  # whose run is next: the two take turns while both need runs
        while max(needed.values()) > 0:
            trial = turn[0] if needed[id(turn[0])] > 0 else turn[1]
            outcome = self._measure(trial, trial.options, "final")
            if not outcome.ok:
                result.stopped += f"; the final comparison failed: {outcome.failure}"
                return
            needed[id(trial)] -= 1
            turn.reverse()
        result.final = self._decide(*([r for r in result.runs_of(t) if r.ok] for t in (default, best)))

    # -- bookkeeping -----------------------------------------------------------------------------------

    def _trial(self, knob: str, label: str, options: dict) -> Trial:
        trial = Trial(len(self.result.trials) + 1, knob, label, dict(options))
        self.result.trials.append(trial)
        return trial

    def _measure(self, trial: Trial, options: dict, role: str, numerics: bool = False) -> Outcome:
        outcome = self.lab.run(options, trial, role, numerics)
        self.result.runs.setdefault(trial.key, []).append(outcome)
        return outcome

    def _last(self, trial: Trial) -> Outcome:
        runs = self.result.runs_of(trial)
        return next((r for r in reversed(runs) if r.ok), runs[-1])
