"""What a `suite tune` search is before it runs: its base options (the command's, each checked as `suite
run` checks it), the default configuration they resolve to, the backend's declared tunables in order,
the search's id (the same command, the same id: how a search finds its own records to resume), and the
plan in words, stated up front (`suite tune --plan` prints it alone)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from suite.exploring import grid_options
from suite.exploring.tune import knobs as tune_knobs
from suite.exploring.tune.search import CLEAR, REPEATS
from suite.inputs.errors import UserError

# What no trial changes, whatever the backend declares (docs/tune.md).
NEVER_CHANGED = (
    "the model and its optimizer's hyper-parameters (learning rate, betas, weight decay)",
    "the data",
    "the measurement's schedule (warm-up, steps, windows: --set them for every trial)",
)
RULE_WORDS = {
    "threads": "half the threads the best run computed with, down to 1, and every logical core",
    "workers": "twice the loader's workers and half of them",
    "pin-memory": "pinned host memory off where it was on, on where it was off",
    "batch": f"the batch doubled, {tune_knobs.BATCH_DOUBLINGS} times, while it fits; the fastest",
    "grad-accum": "the batch split into 2, 4, ... micro-batches a step, until one fits",
    "checkpointing": "recomputed activations with micro-batches twice as large, half as many",
}


@dataclass
class Planned:
    base: dict[str, list[str]]  # every trial's options: the command's own and its --set ones, as typed
    default_config: dict  # the default run's resolved record config
    backend: str
    unit: str  # images, or a language model's tokens
    tunables: tuple
    tune_batch: bool
    min_change: float

    def search_id(self, version: int) -> str:
        """The same command (options, tunables, rules), the same id: a new search otherwise."""
        asked = {
            "config": {k: v for k, v in self.default_config.items() if k != "check_numerics"},
            "tunables": [repr(t) for t in self.tunables],
            "tune_batch": self.tune_batch,
            "min_change": self.min_change,
            "version": version,
        }
        return hashlib.sha256(json.dumps(asked, sort_keys=True, default=str).encode()).hexdigest()[:12]


def plan(fixed: list[str], own: dict, tune_batch: bool, min_change: float) -> Planned:
    """The search's base options and default configuration, every value checked before anything runs."""
    from suite.backends import declared
    from suite.exploring.tune import lab as tune_lab
    from suite.launching import child
    from suite.measurement.plan import resolve_plan
    from suite.run_options import run_options

    options = run_options()
    names = grid_options.set_names(fixed)
    for reserved in ("check-numerics", "repeat", "against", "profile", "nproc", "per-device"):
        if reserved in names:
            raise UserError(f"--set {reserved}=... cannot be used here: each trial is one plain run")
    spec = grid_options.own_options(own, options)
    spec = grid_options.parse_inline([], fixed, options, spec, require_grid=False)
    try:
        point = tune_lab.point_of(dict(spec.fixed), {})
    except tune_lab.Refused as refusal:
        raise UserError(str(refusal)) from None
    planned = resolve_plan(child.request_of(point.argv).spec)
    backend = point.config["backend"]
    return Planned(
        dict(spec.fixed),
        point.config,
        backend,
        planned.workload.unit,
        declared.tunables(backend),
        tune_batch,
        min_change,
    )


def describe(planned: Planned, search_id: str, out_dir: str, budget_s: float) -> str:
    """The plan in words: the budget, what runs first, each knob in order (or why it is not searched, where
    that is known before the default has run), how a change is kept, and what never changes."""
    from suite.data.progress import seconds
    from suite.exploring.tune import table as tune_table

    config = planned.default_config
    lines = [
        f"tune: {config['workload']} on {planned.backend}, search {search_id} into {out_dir}; budget "
        f"{seconds(budget_s)}, never exceeded (a run starts only where it fits; one running is stopped at the end)",
        f"  1. the default, twice (the host's run-to-run noise): {tune_table.run_line(config)}",
        "  then each knob on top of the best so far, its values screened once each:",
    ]
    facts = tune_knobs.Facts(unit=planned.unit, real_data=config.get("data") not in (None, "synthetic"))
    fixed = set(planned.base)
    for number, tunable in enumerate(planned.tunables, 2):
        why = _known_left_out(tunable, facts, fixed, planned.tune_batch)
        values = RULE_WORDS.get(tunable.rule or "") or ", ".join(
            tune_knobs.Candidate(tunable.name, v).label for v in tunable.values
        )
        check = "; kept only after --check-numerics passes" if tunable.numerics else ""
        lines.append(
            f"  {number}. {tunable.name}: "
            + (f"not searched: {why}" if why else f"{values} ({tunable.why}{check})")
        )
    lines += [
        f"  a value is dropped where its one run is slower than the best's by more than {CLEAR:g} × the noise; "
        f"otherwise {REPEATS} + {REPEATS} runs, best and candidate interleaved (A B B A A B), and it is kept "
        f"only where `suite compare`'s test says faster"
        + (f" by at least {planned.min_change:.0%}" if planned.min_change else ""),
        f"  last: the best against the default, {REPEATS} + {REPEATS} runs interleaved, for the gain and its "
        "interval (the time kept for it once a change is kept)",
        "  never changed: " + "; ".join(NEVER_CHANGED) + ("" if planned.tune_batch else "; the global batch"),
    ]
    return "\n".join(lines)


def _known_left_out(tunable, facts, fixed: set[str], tune_batch: bool) -> str | None:
    """Why a knob is not searched, where the default's run is not needed to say it."""
    why = tune_knobs.left_out(tunable, facts, fixed, tune_batch)
    if tunable.applies_to not in ("all", facts.unit):
        return why
    if why and tunable.stage == "loader" and facts.real_data:
        return None  # decided by the default run's bottleneck probe
    if why and tunable.rule == "checkpointing":
        return "only where memory binds (the batch split into micro-batches)"
    return why
