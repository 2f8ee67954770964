"""`suite tune`: the fastest configuration of one workload on one backend, found by searching the knobs the
backend declares, each trial a fresh `suite run`, inside a wall-time budget, resumable (docs/tune.md)."""

from __future__ import annotations

import sys

from suite.exploring import grid_options
from suite.exploring.grid_options import AS_FOR_RUN
from suite.inputs import option_types

# The `suite run` options this command takes as its own, given to every trial.
PASSED = ("backend", "workload", "data")
DEFAULT_OUT = "results/tune"
DEFAULT_BUDGET = "15m"
SEARCH_VERSION = 1  # a change to how a search decides is another search: its id changes with it


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "tune",
        help="find the fastest configuration of a workload on a backend (within a time budget, resumable)",
        description="Start from the default run, then try the knobs the backend declares (precision, memory "
        "format, compile, threads, the loader's where the input side limits ...), each in a fresh "
        "`suite run`; a change is kept only when it is faster beyond the noise (interleaved runs, "
        "`suite compare`'s test) and, for a precision or a compiled graph, after its numerics check "
        "passes. Ends with a table of the trials, the best configuration's gain over the default with "
        "its interval, and the `suite run` line that reproduces it. Run the same command again to resume.",
    )
    grid_options.add_passed(p, "workload", help=f"{AS_FOR_RUN} (default dcgan64)")
    grid_options.add_passed(p, "backend", help=f"{AS_FOR_RUN} (default auto)")
    grid_options.add_passed(
        p, "data", help=f"{AS_FOR_RUN} (default synthetic; real data also tunes the loader)"
    )
    grid_options.add_set(
        p, help="any other `suite run` option for every trial, kept as given (e.g. --set steps=2); repeatable"
    )
    p.add_argument(
        "--budget",
        default=DEFAULT_BUDGET,
        type=option_types.duration("--budget"),
        metavar="TIME",
        help=f"wall time the search may take, e.g. 10m, 90s, 1h (default {DEFAULT_BUDGET}); never exceeded",
    )
    p.add_argument(
        "--out",
        default=DEFAULT_OUT,
        type=option_types.output_folder("--out"),
        help=f"folder for the trials' records and the search's (default {DEFAULT_OUT}/)",
    )
    p.add_argument(
        "--tune-batch",
        action="store_true",
        help="also search the batch size (it changes the global batch, and with it what the learning rate means)",
    )
    p.add_argument(
        "--min-change",
        default="0%",
        metavar="PCT",
        help="the least gain worth a change (e.g. 3%%; default 0%%), as for `suite compare`",
    )
    p.add_argument(
        "--trial-timeout",
        type=option_types.seconds("--trial-timeout"),
        metavar="S",
        help="give up on one run after S seconds (recorded as failed; default: only the budget bounds it)",
    )
    p.add_argument("--plan", action="store_true", help="say what the search would try, in order; run nothing")
    p.set_defaults(func=tune_command)


def tune_command(args) -> int:
    from suite import run_record
    from suite.compare.comparison import parse_min_change
    from suite.exploring.tune import lab as tune_lab
    from suite.exploring.tune import plan as tune_plan
    from suite.launching.child import log

    budget = tune_lab.Budget(args.budget)  # the clock starts with the command
    min_change = parse_min_change(args.min_change)
    planned = tune_plan.plan(args.fixed, grid_options.given(args, PASSED), args.tune_batch, min_change)
    out_dir = run_record.check_out_dir(args.out)
    search_id = planned.search_id(SEARCH_VERSION)
    text = tune_plan.describe(planned, search_id, out_dir, args.budget)
    if args.plan:
        print(text)
        return 0
    log(text)
    with tune_lab.claim(out_dir, search_id):
        return _search(args, planned, out_dir, search_id, budget, min_change)


def _search(args, planned, out_dir: str, search_id: str, budget, min_change: float) -> int:
    from suite.exploring.tune import lab as tune_lab
    from suite.exploring.tune import table as tune_table
    from suite.exploring.tune.search import Search
    from suite.launching.child import log

    lab = tune_lab.Lab(planned.base, out_dir, search_id, budget, trial_timeout=args.trial_timeout, log=log)
    search = Search(lab, planned.tunables, set(planned.base), args.tune_batch, min_change)
    keep = _keeper(args, planned, out_dir, search_id, budget)
    search.progress = keep
    try:
        result = search.run()
    except KeyboardInterrupt:
        keep(search.result)
        log(
            f"tune: interrupted. {lab.asked} run(s) of search {search_id} are recorded in {out_dir}; run the "
            "same command again to resume (recorded runs are not run again)"
        )
        return 130
    spec_path = _write_spec(result, out_dir, search_id)
    print(tune_table.render(result))
    print()
    print("\n".join(tune_table.winner_lines(result, spec_path)))
    print(
        f"spent:       {budget.spent():.0f} s of the budget's {args.budget:.0f} s; {lab.replayed} run(s) taken from the records"
    )
    print(f"report:      suite report {out_dir}")
    return 0 if result.best is not None and result.rate(result.best) is not None else 1


def _keeper(args, planned, out_dir: str, search_id: str, budget):
    """`keep(result)`: the search's record, written again (atomically) after every trial."""
    from suite import context, run_record
    from suite.exploring.tune import table as tune_table

    about = {
        "search_id": search_id,
        "context": context.collect(),
        "command": "suite " + " ".join(sys.argv[1:]) if sys.argv[1:2] == ["tune"] else "suite tune",
        "config": planned.default_config,
        "budget_s": args.budget,
    }

    def keep(result) -> None:
        record = tune_table.summary_record(result, {**about, "spent_s": budget.spent()})
        run_record.write_record_or_stop(record, out_dir)

    return keep


def _write_spec(result, out_dir: str, search_id: str) -> str | None:
    """The best configuration's RunSpec as JSON, beside the records (named .spec: not read as a record)."""
    import os

    from suite import atomic
    from suite.exploring.tune import table as tune_table

    config = tune_table.best_config(result)
    if config is None:
        return None
    path = os.path.join(out_dir, f"tune-{search_id}.spec")
    atomic.write_atomic(path, tune_table.spec_json(config))
    return path
