"""A diagnosis from repeated evidence: each arm (loader only, compute only, end to end) measured in several
processes, and a verdict only where the arms' run-to-run intervals separate.

One process per arm is not evidence on a shared host: the same setup measured five times on a 2-core host
varied 3 to 7x from run to run, while each process's own windows agreed to 2-17 %. A spread test on the
windows of one process then separates rates that the next process contradicts (input-bound on one run,
host-contention on the next). So:

- the arms run interleaved, A B C A B C ... (one process each), so that a slow spell of the host falls on
  every arm alike rather than on whichever ran during it;
- each pair of arms is judged by the interval of its ratio across processes: Welch's unequal-variance
  interval (B. L. Welch, Biometrika 34, 1947) on log throughput, 95 %, the one `suite compare` uses
  (suite/compare/significance.py, `welch`; docs/compare.md). `diagnosis` sits beside `compare`
  (docs/architecture.md's layers), so the caller hands that function in as `interval`;
- a rule of suite.diagnosis.rules holds only where the ratio's whole interval lies on its side of the
  rule's line (end to end at 90 % of compute-only, the loader at 90 % of compute, end to end above a part
  alone); an interval that takes in the line is `inconclusive`, with the numbers. Two processes' rates
  that agree to the last digit show no noise at all, and no test is made (as in `suite compare`).

Everything here is a function of the rates and of the `measure` callables handed in, so the order and the
rule are tested with a fake measurement.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass

from suite.diagnosis.rules import COMPUTE_BOUND_EFFICIENCY, LOADER_SHORTFALL
from suite.run_record.record import metrics_of

ARMS = ("loader", "compute", "end_to_end")
ARM_NAMES = {"loader": "loader only", "compute": "compute only", "end_to_end": "end to end"}
MIN_PROCESSES = 3  # an arm; as `suite compare`'s least runs a side (suite/compare/significance.py, MIN_RUNS)
DEFAULT_PROCESSES = 3


def interleaved(arms: tuple[str, ...], rounds: int) -> list[tuple[int, str]]:
    """The order the processes run in: every arm once per round, rounds one after another (A B C A B C)."""
    return [(round_, arm) for round_ in range(rounds) for arm in arms]


def measure_interleaved(
    measure: dict[str, Callable[[int], dict]],
    rounds: int,
    ok: Callable[[dict], bool] = lambda record: True,
    said: Callable[[int, str, dict], None] | None = None,
) -> dict[str, list[dict]]:
    """Each arm's records, measured in interleaved order (`measure[arm](round)` gives one process's
    record). Stops at the first record that is not `ok`: a failure (out of memory, a crash) repeats."""
    records: dict[str, list[dict]] = {arm: [] for arm in measure}
    for round_, arm in interleaved(tuple(measure), rounds):
        record = measure[arm](round_)
        records[arm].append(record)
        if said:
            said(round_, arm, record)
        if not ok(record):
            break
    return records


@dataclass(frozen=True)
class Ratio:
    """numerator ÷ denominator across processes: the ratio of their geometric means and its interval
    (None where neither arm's rates vary: no noise can be estimated)."""

    numerator: str
    denominator: str
    ratio: float
    low: float | None
    high: float | None

    def above(self, line: float) -> bool:
        return self.low is not None and self.low > line

    def below(self, line: float) -> bool:
        return self.high is not None and self.high < line

    def text(self) -> str:
        span = (
            "no spread: noise unknown"
            if self.low is None
            else f"95% interval ×{self.low:.2f} … ×{self.high:.2f}"
        )
        return f"{ARM_NAMES[self.numerator]} ÷ {ARM_NAMES[self.denominator]} ×{self.ratio:.2f} ({span})"


def ratio(rates: dict[str, list[float]], numerator: str, denominator: str, interval) -> Ratio:
    """The ratio of two arms' rates with `interval`'s (Welch's) interval, computed on their logs."""
    test = interval([math.log(r) for r in rates[denominator]], [math.log(r) for r in rates[numerator]])
    if test.df is None:  # identical rates on both sides: the interval would be a point
        return Ratio(numerator, denominator, math.exp(test.difference), None, None)
    return Ratio(
        numerator, denominator, math.exp(test.difference), math.exp(test.ci_low), math.exp(test.ci_high)
    )


def rates_of(records: dict[str, list[dict]]) -> dict[str, list[float]]:
    return {arm: [metrics_of(r).images_per_second for r in found] for arm, found in records.items()}


def decide(rates: dict[str, list[float]], interval, unit: str = "img/s") -> dict:
    """The rule the arms' processes meet, for diagnose.verdict(decided=...): its case, the evidence (each
    ratio with its interval), the words of an inconclusive one, and for an input-bound one the interval
    of compute ÷ loader that sizes the workers' advice. `unit`: what the rates count (seq/s for tokens)."""
    runs = {arm: len(values) for arm, values in rates.items()}
    end_compute = ratio(rates, "end_to_end", "compute", interval)
    loader_compute = ratio(rates, "loader", "compute", interval)
    end_loader = ratio(rates, "end_to_end", "loader", interval)
    evidence = [
        f"run to run ({', '.join(f'{n} {ARM_NAMES[a]}' for a, n in runs.items())} processes, interleaved): "
        + "; ".join(r.text() for r in (end_compute, loader_compute))
    ]
    found = {
        "evidence": evidence,
        "processes": runs,
        "ratios": {
            f"{r.numerator}_over_{r.denominator}": {"ratio": r.ratio, "low": r.low, "high": r.high}
            for r in (end_compute, loader_compute, end_loader)
        },
    }
    line, shortfall = COMPUTE_BOUND_EFFICIENCY, LOADER_SHORTFALL
    advice = (
        f"measure again with more processes (--processes), or on a quieter host: {_spread_text(rates, unit)}"
    )

    def undecided(why: str) -> dict:
        return found | {"case": "inconclusive", "message": f"inconclusive: {why}", "advice": advice}

    if min(runs.values()) < 2:
        return undecided(f"an arm has fewer than 2 processes ({runs}): no run-to-run spread to judge by")
    if None in (end_compute.low, loader_compute.low, end_loader.low):
        return undecided("the processes' rates show no spread at all, so their noise cannot be estimated")
    if end_compute.above(1.0) or end_loader.above(1.0):
        return found | {"case": "disturbed"}
    if end_compute.above(line):
        return found | {"case": "compute-bound"}
    if not end_compute.below(line):
        return undecided(
            f"end to end reaches ×{end_compute.ratio:.2f} of compute-only, but across processes anywhere in "
            f"×{end_compute.low:.2f} … ×{end_compute.high:.2f}, which takes in the {line:.0%} line of a "
            f"compute-bound run{_ruled_out(loader_compute, shortfall)}"
        )
    if loader_compute.below(shortfall):
        return found | {
            "case": "input-bound",
            "need_factor": (1 / loader_compute.high, 1 / loader_compute.low),
        }
    if loader_compute.above(shortfall):
        return found | {"case": "apart"}
    return undecided(
        f"end to end falls short of compute-only (×{end_compute.low:.2f} … ×{end_compute.high:.2f}), but the "
        f"loader alone reaches ×{loader_compute.ratio:.2f} of compute, anywhere in ×{loader_compute.low:.2f} … "
        f"×{loader_compute.high:.2f} across processes, which takes in the {shortfall:.0%} line between "
        "input-bound and the parts competing"
    )


def _ruled_out(loader_compute: Ratio, shortfall: float) -> str:
    """What undecided evidence still settles: a loader whose whole interval clears the shortfall line is
    not the limit, whatever end to end turns out to be ("" where its interval takes in the line)."""
    if not loader_compute.above(shortfall):
        return ""
    return (
        f"; not input-bound: the loader alone delivers ×{loader_compute.ratio:.2f} of compute-only "
        f"(×{loader_compute.low:.2f} … ×{loader_compute.high:.2f} across processes)"
    )


def _spread_text(rates: dict[str, list[float]], unit: str) -> str:
    """Each arm's run-to-run spread: max ÷ min of its processes' rates."""
    parts = [
        f"{ARM_NAMES[arm]} {min(values):,.1f} … {max(values):,.1f} {unit}"
        for arm, values in rates.items()
        if values
    ]
    return "run to run " + "; ".join(parts)


def medians(rates: dict[str, list[float]]) -> dict[str, float]:
    return {arm: statistics.median(values) for arm, values in rates.items()}
