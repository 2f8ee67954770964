"""`suite scale`: one workload at several process counts; speedup, scaling efficiency and $ per image."""

from __future__ import annotations

import argparse
import json
import sys

from suite.exploring import grid_options
from suite.exploring.grid_options import AS_FOR_RUN
from suite.inputs import option_types

# The `suite run` options this command takes as its own, passed to the run at every count.
PASSED = ("backend", "workload", "batch-size", "precision", "warmup", "steps", "windows", "threads")

DEFAULT_OUT = "results"


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "scale",
        help="run at several process counts: speedup, scaling efficiency, cost",
        description="Run one workload with each process count (through `suite run "
        "--nproc`), then compare throughput with the smallest count.",
    )
    p.add_argument("--nproc", required=True, help="process counts, comma-separated (for example 1,2,4,8)")
    helps = {
        "backend": f"{AS_FOR_RUN} (see `suite list`)",
        "workload": "a workload name (see `suite list`)",
        "batch-size": "images per step per process",
        "precision": AS_FOR_RUN,
        "warmup": "warm-up steps per run",
        "steps": "steps per timed window",
        "windows": "timed windows per run",
        "threads": "host threads per process (default: torchrun's, 1 per process when N > 1)",
    }
    defaults = {"backend": "auto", "workload": "dcgan64"}
    for name in PASSED:
        grid_options.add_passed(p, name, help=helps[name], default=defaults.get(name))
    # Its own: one instance per count (COUNT=NAME), each count's run given its own.
    p.add_argument("--instance", help="NAME, or COUNT=NAME,…: price each count from the price catalog")
    grid_options.add_passed(p, "prices", help="price catalog NAME or FILE (with --instance)")
    p.add_argument("--usd-per-hour", help="the machine's price in $/hour, instead of --instance")
    p.add_argument(
        "--out",
        default=DEFAULT_OUT,
        type=option_types.output_folder("--out"),
        help=f"folder for the runs' records (default {DEFAULT_OUT}/)",
    )
    p.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    grid_options.add_passed(p, "model-override", action="append", default=[], help=argparse.SUPPRESS)
    p.set_defaults(func=scale_command)


def _run_options(args, count: int, instance: str | None) -> dict:
    """The `suite run` options of the run with COUNT processes."""
    options = {
        **grid_options.given(args, (*PASSED, "model-override")),
        "nproc": count,
        "instance": instance,  # the record says where it ran, as `suite run --instance` would
        "prices": args.prices if instance else None,
    }
    return {name: value for name, value in options.items() if value not in (None, [])}


def _prices(args, counts) -> tuple[dict, dict]:
    from suite.inputs import numbers
    from suite.inputs.errors import UserError
    from suite.reporting import scale

    if args.usd_per_hour is not None and args.instance:
        raise UserError("give --instance (priced from the catalog) or --usd-per-hour, not both")
    if args.usd_per_hour is not None:
        usd = numbers.number("--usd-per-hour", args.usd_per_hour, numbers.PRICE_PER_HOUR)
        return {n: (usd, None, "given with --usd-per-hour") for n in counts}, {}
    instances = scale.parse_instances(args.instance, counts)
    return {n: scale.hourly_price(name, args.prices) for n, name in instances.items()}, instances


def scale_command(args) -> int:
    from suite import context, run_record
    from suite.exploring import scale_counts
    from suite.launching import child
    from suite.reporting import scale

    counts = scale.parse_counts(args.nproc)
    prices, instances = _prices(args, counts)
    run_record.check_out_dir(args.out)
    points = scale_counts.count_points(
        counts,
        lambda count: child.run_argv(_run_options(args, count, instances.get(count))),
        args.workload,
        args.backend,
        context.collect()["utc_time"],
    )
    records = scale_counts.run_counts(points, args.out)
    if records is None:
        return 2  # bad input: the same for every count
    rows = scale.scaling_rows(records, prices, instances)
    if args.json:
        json.dump(rows, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        config = next(iter(records.values())).get("config", {})
        print(
            f"{args.workload} on {config.get('backend', args.backend)}, batch {config.get('batch_size', '?')} "
            f"per process, {config.get('precision', '?')}, {config.get('data', '?')} data"
        )
        print(scale.render(rows, instances))
    return 0 if all(row["status"] == "ok" for row in rows) else 1
