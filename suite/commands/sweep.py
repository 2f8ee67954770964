"""`suite sweep`: run a grid of `suite run` configurations, one fresh process each, resumable."""

from __future__ import annotations

from suite.exploring import grid_options
from suite.inputs import option_types

DEFAULT_OUT = "results/sweep"


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "sweep",
        help="run every combination of a grid of run options (resumable)",
        description="Run every combination of a grid of `suite run` options, each point in its own process. "
        "Points already recorded in --out are skipped, so an interrupted sweep resumes where it "
        "stopped; a failed point is recorded and the others go on. Ends with a table sorted by "
        "throughput and the effect of each knob.",
    )
    p.add_argument(
        "file",
        nargs="?",
        metavar="FILE.yaml",
        help="sweep file: a 'grid' of option: [values] and optionally 'fixed' options",
    )
    p.add_argument(
        "--grid",
        nargs="+",
        default=[],
        metavar="OPTION=V1,V2",
        help="swept options inline, e.g. --grid batch-size=16,32 precision=fp32,bf16",
    )
    grid_options.add_set(p, help="an option for every point, e.g. --set workload=dcgan64 (repeatable)")
    p.add_argument(
        "--model-list",
        dest="model_list",
        metavar="FILE",
        help="a file of workload names, one per line (# comments), swept as the 'workload' option",
    )
    p.add_argument(
        "--out",
        default=DEFAULT_OUT,
        type=option_types.output_folder("--out"),
        help=f"folder for the point records (default {DEFAULT_OUT}/)",
    )
    p.add_argument(
        "--point-timeout",
        type=option_types.seconds("--point-timeout"),
        metavar="S",
        help="give up on a point after S seconds (recorded as an error)",
    )
    p.add_argument(
        "--dry-run", action="store_true", help="list the points and which are recorded; run nothing"
    )
    p.set_defaults(func=sweep_command)


def sweep_command(args) -> int:
    from suite import run_record
    from suite.exploring import grid, sweep, sweep_table
    from suite.inputs.errors import UserError
    from suite.launching.child import log
    from suite.run_options import run_options

    options = run_options()
    spec = sweep.load_spec(args.file, options) if args.file else None
    spec = grid_options.parse_inline(args.grid, args.fixed, options, spec, require_grid=not args.model_list)
    if args.model_list:
        from suite.workloads.named import read_model_list

        if "workload" in spec.grid or "workload" in spec.fixed:
            raise UserError("--model-list sweeps the workload: drop workload from the grid and --set")
        spec.grid = {"workload": read_model_list(args.model_list), **spec.grid}
    points = grid.expand(spec, options)
    grid.resolve(points)
    if args.dry_run:  # reads the folder, if there is one; makes nothing
        records = grid.existing_records(args.out)
        for point in points:
            recorded = grid.find_record(point, records)
            print(
                f"{point.index + 1:>3}  {point.label()}  "
                + ("recorded" if recorded else "to run")
                + f"\n     suite run {' '.join(point.argv)}"
            )
        return 0
    out_dir = run_record.check_out_dir(args.out)
    outcome = grid.run_points(points, out_dir, log=log, timeout_s=args.point_timeout)
    print(sweep_table.render(outcome, spec.grid))
    failed = [record for _, record in outcome if record.get("status") != "ok"]
    if failed:
        print(f"\n{len(failed)} of {len(outcome)} points did not complete; their records say why")
        return 1  # a sweep with failed points did not do what was asked: a script must see it
    return 0
