"""What `suite tune` says and keeps: the table of its trials (what each tried, its rate, × the default and
its verdict), the best configuration found with its gain over the default and that gain's interval, the
`suite run` line and the RunSpec that reproduce it, and the search's own record (`suite.tune-search`,
written after every trial: what `suite report` reads to tell a search's default and tuned best apart).
"""

from __future__ import annotations

from suite.exploring.tune.search import KEPT, Result, Trial
from suite.reporting.tuned import SEARCH_SCHEMA  # what `suite report` reads: one name for it

# The winner changed the batch: what it measures is speed, not convergence (docs/tune.md).
BATCH_CAVEAT = (
    "the batch changed: a learning rate tuned at one batch may not train as well at another (scale it, "
    "or keep the batch: the search keeps it unless --tune-batch)"
)


def setting(trial: Trial) -> str:
    """The trial's configuration beyond the default, as `suite run` options (`--threads 1 --precision bf16`)."""
    from suite.run_options import run_argv

    return " ".join(run_argv(trial.options)) or "(the default)"


def verdict_text(result: Result, trial: Trial) -> str:
    """The verdict, with the confirmation's ratio and interval where one ran."""
    decision = trial.decision
    if not decision or decision.get("ratio") is None:
        return trial.verdict
    against = f" #{trial.against}" if trial.against else ""
    shown = "kept, faster than" if trial.verdict == KEPT else trial.verdict + ", against"
    return (
        f"{shown}{against}: ×{decision['ratio']:.3f} ({decision['ci_low']:.3f}–{decision['ci_high']:.3f}, "
        f"p = {decision['p_adjusted']:.2g}, {decision['baseline_runs']} + {decision['candidate_runs']} runs)"
    )


def rows(result: Result) -> list[list[str]]:
    """One row per trial: #, what it tried, its setting, runs, rate, × default, MFU, verdict."""
    out = []
    for trial in result.trials:
        runs = result.runs_of(trial)
        rate = result.rate(trial)
        ratio = result.times_default(trial)
        mfus = [(r.record.get("metrics") or {}).get("mfu") for r in runs if r.ok]
        mfus = sorted(m for m in mfus if m is not None)
        out.append(
            [
                str(trial.number),
                trial.label,
                setting(trial),
                str(len(runs)),
                f"{rate:,.1f}" if rate is not None else "—",
                f"{ratio:.2f}" if ratio is not None else "—",
                f"{mfus[len(mfus) // 2]:.1%}" if mfus else "—",
                verdict_text(result, trial),
            ]
        )
    return out


def unit_label(result: Result) -> str:
    from suite.launching.child import rate_label

    for runs in result.runs.values():
        for run in runs:
            if run.ok:
                from suite.run_record.record import metrics_of

                return rate_label(metrics_of(run.record).unit_name)
    return "img/s"


def render(result: Result) -> str:
    from tabulate import tabulate

    headers = [
        "#",
        "trial",
        "setting",
        "runs",
        f"{unit_label(result)} (median)",
        "× default",
        "MFU",
        "verdict",
    ]
    lines = [tabulate(rows(result), headers=headers, disable_numparse=True)]
    for knob, why in result.skipped:
        lines.append(f"not searched: {knob}: {why}")
    return "\n".join(lines)


def best_config(result: Result) -> dict | None:
    """The record config of the best configuration's last run that ended ok, without its numerics check."""
    ok = [run for run in result.runs_of(result.best) if run.ok] if result.best else []
    if not ok:
        return None
    return {**ok[-1].record["config"], "check_numerics": False, "reference_backend": None}


def run_line(config: dict) -> str:
    """`suite run ...` that reproduces CONFIG (every option whose value is not the default, as recorded)."""
    import shlex

    from suite.run_options import config_argv

    argv = config_argv(
        config, leave_out=("check-numerics", "reference-backend"), always=("backend", "workload")
    )
    return "suite run " + " ".join(shlex.quote(arg) for arg in argv)


def spec_json(config: dict) -> str:
    from suite.spec import RunSpec
    from suite.spec.json_form import to_json

    return to_json(RunSpec.from_record_config(config))


def gain_line(result: Result) -> str:
    """The best against the default: `×1.42 the default (95% interval 1.21–1.66; Welch's t-test, 3 + 3
    runs interleaved, p = 0.004)`."""
    final = result.final
    if result.best is result.default:
        return "the default: no change was faster beyond the noise"
    if not final or final.get("ratio") is None:
        ratio = result.times_default(result.best)
        shown = f"×{ratio:.2f} the default by the medians" if ratio else "no rate"
        return f"{shown}; no interval: the final comparison did not run ({result.stopped})"
    return (
        f"×{final['ratio']:.3f} the default (95% interval {final['ci_low']:.3f}–{final['ci_high']:.3f}; "
        f"Welch's t-test, {final['baseline_runs']} + {final['candidate_runs']} runs, "
        f"p = {final['p_adjusted']:.2g}: {final['verdict']})"
    )


def winner_lines(result: Result, spec_path: str | None) -> list[str]:
    best = result.best
    if best is None or result.rate(best) is None:
        return [f"no configuration finished: {result.stopped}"]
    config = best_config(result)
    lines = [
        f"best found:  #{best.number} {best.label if best is not result.default else '(the default)'}: "
        f"{result.rate(best):,.1f} {unit_label(result)}, {gain_line(result)}",
        f"reproduce:   {run_line(config)}",
    ]
    if spec_path:
        lines.append(f"RunSpec:     {spec_path} (suite run --spec {spec_path})")
    default_config = best_config_of(result, result.default)
    if default_config and config.get("batch_size") != default_config.get("batch_size"):
        lines.append(f"caveat:      {BATCH_CAVEAT}")
    lines.append(f"stopped:     {result.stopped}")
    return lines


def best_config_of(result: Result, trial: Trial | None) -> dict | None:
    ok = [run for run in result.runs_of(trial) if run.ok] if trial else []
    return ok[-1].record["config"] if ok else None


def summary_record(result: Result, search: dict) -> dict:
    """The search as a record of its own (schema suite.tune-search): its trials, its default and its best
    with their runs, the gain; SEARCH holds what the command knows (id, context, command, budget)."""

    def runs(trial: Trial | None) -> list[str]:
        return [str(r.record.get("run_id")) for r in result.runs_of(trial)] if trial else []

    best, config = result.best, best_config(result)
    return {
        "schema": SEARCH_SCHEMA,
        "schema_version": 1,
        "run_id": f"tune-{search['search_id']}",
        **search,
        "trials": [
            {
                "number": t.number,
                "knob": t.knob,
                "trial": t.label,
                "setting": setting(t),
                "verdict": verdict_text(result, t),
                "kept": t.kept,
                "rate": result.rate(t),
                "times_default": result.times_default(t),
                "run_ids": runs(t),
            }
            for t in result.trials
        ],
        "skipped": [{"knob": knob, "why": why} for knob, why in result.skipped],
        "default": {"number": result.default.number, "run_ids": runs(result.default)}
        if result.default
        else None,
        "best": None
        if best is None or config is None
        else {
            "number": best.number,
            "trial": best.label,
            "setting": setting(best),
            "run_ids": runs(best),
            "rate": result.rate(best),
            "suite_run": run_line(config),
        },
        "gain": _gain(result),
        "stopped": result.stopped,
    }


def _gain(result: Result) -> dict | None:
    final = result.final
    if result.best is None or result.best is result.default:
        return {"ratio": 1.0, "verdict": "the default is the best found"} if result.best else None
    if not final or final.get("ratio") is None:
        return {"ratio": result.times_default(result.best), "verdict": "no final comparison"}
    return {key: final.get(key) for key in ("ratio", "ci_low", "ci_high", "p_value", "verdict")} | {
        "runs": [final["baseline_runs"], final["candidate_runs"]]
    }
