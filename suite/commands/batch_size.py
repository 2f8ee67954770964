"""`suite batch-size`: the largest batch that fits and the smallest nearly as fast, each try a fresh process."""

from __future__ import annotations

from suite.exploring import grid_options
from suite.exploring.grid_options import AS_FOR_RUN
from suite.inputs import option_types

# The `suite run` options this command takes as its own, passed to every try.
PASSED = ("backend", "workload", "precision", "max-memory")

DEFAULT_OUT = "results/batch-size"
SEARCH_SCHEMA = "suite.batch-size-search"


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "batch-size",
        help="find the largest batch that fits, and the smallest that is nearly as fast",
        description="Double the batch until it runs out of memory, then bisect; each try is a fresh `suite run`. "
        "On the CPU, --max-memory stands in for device memory. Also reports the smallest batch that "
        "reaches 95% of the best throughput seen.",
    )
    grid_options.add_passed(p, "backend", help=f"{AS_FOR_RUN} (default auto)")
    grid_options.add_passed(p, "workload", help=f"{AS_FOR_RUN} (default dcgan64)")
    grid_options.add_passed(p, "precision", help=AS_FOR_RUN)
    grid_options.add_passed(
        p,
        "max-memory",
        metavar="SIZE",
        help="memory ceiling, e.g. 2GiB (the CPU's stand-in for "
        "device memory; without it the search stops at --max-batch)",
    )
    p.add_argument("--start", default="1", help="first batch size tried (default 1)")
    p.add_argument("--max-batch", default="1024", help="largest batch size tried (default 1024)")
    p.add_argument(
        "--granularity",
        default="1",
        help="stop bisecting when the fitting and failing batches are this close (default 1)",
    )
    grid_options.add_set(
        p, help="any other `suite run` option for every try, e.g. --set warmup=1 (repeatable)"
    )
    p.add_argument(
        "--out",
        default=DEFAULT_OUT,
        type=option_types.output_folder("--out"),
        help=f"folder for the try records and the search record (default {DEFAULT_OUT}/)",
    )
    p.add_argument(
        "--try-timeout",
        type=option_types.seconds("--try-timeout"),
        metavar="S",
        help="give up on a try after S seconds",
    )
    p.set_defaults(func=batch_size_command)


def batch_size_command(args) -> int:
    from suite import context, run_record
    from suite.exploring import batch_size, grid
    from suite.inputs.errors import UserError
    from suite.inputs.numbers import positive_int
    from suite.launching.child import log
    from suite.run_options import run_options

    start = positive_int("--start", args.start)
    max_batch = positive_int("--max-batch", args.max_batch)
    granularity = positive_int("--granularity", args.granularity)
    if start > max_batch:
        raise UserError(f"--start {start} is larger than --max-batch {max_batch}")

    options = run_options()
    if "batch-size" in grid_options.set_names(args.fixed):
        raise UserError("--set batch-size=... cannot be used here: the search chooses the batch size")
    own = grid_options.own_options(grid_options.given(args, PASSED), options)
    spec = grid_options.parse_inline([f"batch-size={start}"], args.fixed, options, own)
    first = grid.expand(spec, options)[0]
    grid.resolve([first])  # every value checked before anything runs
    config = {k: v for k, v in first.config.items() if k != "batch_size"}
    out_dir = run_record.check_out_dir(args.out)
    try_batch = batch_size.try_in_child(first, out_dir, args.try_timeout)

    log(
        f"batch-size search: {config['workload']} on {config['backend']}, from {start} up to {max_batch}"
        + (f", memory ceiling {args.max_memory}" if args.max_memory else "")
    )
    found = batch_size.search(try_batch, start=start, max_batch=max_batch, granularity=granularity, log=log)
    ctx = context.collect()
    record = {
        "schema": SEARCH_SCHEMA,
        "schema_version": 1,
        "run_id": run_record.new_run_id(
            f"batch-size-{config['workload']}", config["backend"], ctx["utc_time"]
        ),
        "context": ctx,
        "config": config,
        **found.to_dict(),
    }
    path = run_record.write_record_or_stop(record, out_dir)
    print(batch_size.render(found, config["workload"], config["backend"]))
    print(f"record: {path}")
    return 0 if found.largest_fit else 1
