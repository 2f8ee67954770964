"""`suite diagnose`: loader-only, compute-only and end-to-end throughput of one configuration, and a verdict."""

from __future__ import annotations

import os

from suite.exploring import grid_options
from suite.exploring.grid_options import AS_FOR_RUN
from suite.inputs import option_types

# The `suite run` options this command takes as its own, passed to every measurement.
PASSED = ("backend", "workload", "data", "batch-size", "precision", "workers")

DEFAULT_OUT = "results/diagnose"
# As suite.diagnosis.repeated's (not imported here: `suite diagnose --help` imports no torch).
DEFAULT_PROCESSES = 3
MIN_PROCESSES = 3


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "diagnose",
        help="find the bottleneck: loader-only, compute-only and end-to-end throughput, and a verdict",
        description="Measure the same configuration three ways — the data loader alone, the model on synthetic "
        "data (compute only), and the real run — and say which is the narrowest pipe. The verdict is "
        'stored in the end-to-end run\'s record under "diagnosis".',
    )
    grid_options.add_passed(
        p,
        "data",
        help="required: the image folder or prepared cache whose loader is judged, as for `suite run` "
        "(synthetic data has no loader: its verdict would be known before measuring)",
    )
    grid_options.add_passed(p, "backend", help=f"{AS_FOR_RUN} (default auto)")
    grid_options.add_passed(p, "workload", help=f"{AS_FOR_RUN} (default dcgan64)")
    for name in ("batch-size", "precision", "workers"):
        grid_options.add_passed(p, name, help=AS_FOR_RUN)
    grid_options.add_set(p, help="any other `suite run` option, e.g. --set warmup=1 (repeatable)")
    p.add_argument(
        "--out",
        default=DEFAULT_OUT,
        type=option_types.output_folder("--out"),
        help=f"folder for the records, one per process (default {DEFAULT_OUT}/)",
    )
    p.add_argument(
        "--processes",
        default=str(DEFAULT_PROCESSES),
        metavar="N",
        help=f"fresh processes per measurement, run interleaved (loader, compute, end to end, loader, ...); "
        f"a verdict only where their run-to-run intervals separate (default {DEFAULT_PROCESSES}, at least "
        f"{MIN_PROCESSES})",
    )
    p.set_defaults(func=diagnose_command)


def _processes(value: str) -> int:
    """--processes N: a whole number from MIN_PROCESSES (fewer give no run-to-run interval worth the name)
    to `--repeat`'s bound (each is a fresh process, one at a time: 10^30 of them was accepted), in ASCII
    digits (`int()` also read `1_000` and other scripts' digits)."""
    from suite.inputs.numbers import whole
    from suite.run_options import MAX_REPEAT

    return whole(
        "--processes",
        value,
        MIN_PROCESSES,
        MAX_REPEAT,
        f"a whole number ≥ {MIN_PROCESSES} (processes per measurement)",
    )


def refuse_without_data(args) -> None:
    """Synthetic data has no loader and no copy: its verdict (compute-bound) is known before anything is
    measured, so a diagnosis without a data source is refused at once rather than after minutes of runs."""
    from suite.inputs.errors import UserError

    data = grid_options.set_names(args.fixed).get("data", args.data)  # `--set data=PATH` names it too
    if data is None or data.strip() in ("", "synthetic"):
        why = "it judges a data loader against the model" if data is None else "synthetic data has no loader"
        raise UserError(
            f"suite diagnose needs --data FOLDER ({why}: without one the verdict, compute-bound, is known "
            "before anything runs): give an image folder or a prepared cache, e.g. "
            "`suite data synth --out photos --count 2048` then `suite diagnose --data photos`"
        )


def diagnose_command(args) -> int:
    refuse_without_data(args)  # before torch is imported or anything is measured
    processes = _processes(args.processes)
    from suite import run_record
    from suite.diagnosis import rules
    from suite.exploring import diagnose_arms
    from suite.measurement import plan as planning
    from suite.spec import RunSpec

    point = _checked_point(args)
    out_dir = run_record.check_out_dir(args.out)
    plan = planning.resolve_plan(
        RunSpec.from_record_config(point.config)
    )  # the backend's capabilities shape the advice
    records = diagnose_arms.measure_interleaved(plan, point, out_dir, processes)
    if _said_failures(records):
        return 1
    end_to_end = records["end_to_end"][-1]  # the last end-to-end run's record gains the verdict
    found = _diagnosis(records, plan)
    end_to_end["diagnosis"] = found
    # the same run id: the record gains its verdict
    path = run_record.write_record_or_stop(end_to_end, out_dir)
    print(rules.render(found))
    print(f"record: {path}")
    return 0


def _checked_point(args):
    """The one configuration diagnosed, as `suite run` would resolve it: every value checked (and the data
    opened) before anything is measured."""
    from suite.exploring import grid
    from suite.run_options import run_options

    options = run_options()
    own = grid_options.own_options(grid_options.given(args, PASSED), options)
    spec = grid_options.parse_inline([], args.fixed, options, own, require_grid=False)
    [point] = grid.expand(spec, options)
    grid.resolve([point])
    return point


def _said_failures(records: dict[str, list[dict]]) -> bool:
    """Say each process that failed, and that there is no verdict then; whether any did."""
    from suite.diagnosis import repeated
    from suite.launching import child

    failed = [
        (repeated.ARM_NAMES[arm], record)
        for arm, found in records.items()
        for record in found
        if record.get("status") != "ok"
    ]
    for name, record in failed:
        print(f"{name} measurement failed: {child.describe(record)}")
    if failed:
        print("no verdict: every measurement must complete")
    return bool(failed)


def _diagnosis(records: dict[str, list[dict]], plan) -> dict:
    """The verdict from the processes' rates and the last end-to-end run's settings, with the evidence
    behind it: each arm's processes, their ratios and rates, and the run ids they were recorded under."""
    from suite.compare import significance
    from suite.diagnosis import repeated, rules

    rates = repeated.rates_of(records)
    end_to_end = records["end_to_end"][-1]
    decided = repeated.decide(rates, significance.welch, rules.rate_unit_of(end_to_end))
    evidence = rules.BottleneckEvidence(
        **_median_rates(rates),
        **rules.from_records_settings(end_to_end),
        cores=os.cpu_count(),
        copies_to_device=getattr(plan.backend, "copies_to_device", True),
        precisions=tuple(plan.backend.precisions),
        decided=decided,
    )
    found = rules.verdict(evidence)
    found["processes"] = decided["processes"]
    found["ratios"] = decided["ratios"]
    found["process_images_per_second"] = rates
    found["records"] = {  # the last process of each arm, as a single-process diagnosis named them
        "loader_only": records["loader"][-1]["run_id"],
        "compute_only": records["compute"][-1]["run_id"],
        "end_to_end": end_to_end["run_id"],
    }
    found["runs"] = {name: [r["run_id"] for r in records[arm]] for arm, name in RECORD_NAMES.items()}
    return found


RECORD_NAMES = {"loader": "loader_only", "compute": "compute_only", "end_to_end": "end_to_end"}


def _median_rates(rates: dict[str, list[float]]) -> dict:
    """The arms' medians across processes, and each arm's run-to-run cv (its processes' rates)."""
    from suite import stats

    return {
        "loader_ips": stats.median(rates["loader"]),
        "compute_ips": stats.median(rates["compute"]),
        "end_to_end_ips": stats.median(rates["end_to_end"]),
        "loader_cv": stats.cv(rates["loader"]),
        "compute_cv": stats.cv(rates["compute"]),
        "end_to_end_cv": stats.cv(rates["end_to_end"]),
    }
