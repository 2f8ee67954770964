"""`suite diagnose`: loader-only, compute-only and end-to-end throughput of one configuration, and a verdict."""

from __future__ import annotations

import os
import time

from suite import option_types

DEFAULT_OUT = "results/diagnose"


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "diagnose",
        help="find the bottleneck: loader-only, compute-only and end-to-end throughput, and a verdict",
        description="Measure the same configuration three ways — the data loader alone, the model on synthetic "
        "data (compute only), and the real run — and say which is the narrowest pipe. The verdict is "
        'stored in the end-to-end run\'s record under "diagnosis".',
    )
    p.add_argument(
        "--data",
        help="required: the image folder or prepared cache whose loader is judged, as for `suite run` "
        "(synthetic data has no loader: its verdict would be known before measuring)",
    )
    p.add_argument("--backend", help="as for `suite run` (default auto)")
    p.add_argument("--workload", help="as for `suite run` (default dcgan64)")
    p.add_argument("--batch-size", help="as for `suite run`")
    p.add_argument("--precision", help="as for `suite run`")
    p.add_argument("--workers", help="as for `suite run`")
    p.add_argument(
        "--set",
        dest="fixed",
        action="append",
        default=[],
        metavar="OPTION=VALUE",
        help="any other `suite run` option, e.g. --set warmup=1 (repeatable)",
    )
    p.add_argument(
        "--out",
        default=DEFAULT_OUT,
        type=option_types.output_folder("--out"),
        help=f"folder for the three records (default {DEFAULT_OUT}/)",
    )
    p.set_defaults(func=diagnose_command)


def refuse_without_data(args) -> None:
    """Synthetic data has no loader and no copy: its verdict (compute-bound) is known before anything is
    measured, so a diagnosis without a data source is refused at once rather than after minutes of runs."""
    from suite.errors import UserError

    data = args.data
    for item in args.fixed:  # `--set data=PATH` names it too
        name, sep, value = item.partition("=")
        if sep and name.strip().replace("_", "-") == "data":
            data = value.strip()
    if data is None or data.strip() in ("", "synthetic"):
        why = "it judges a data loader against the model" if data is None else "synthetic data has no loader"
        raise UserError(
            f"suite diagnose needs --data FOLDER ({why}: without one the verdict, compute-bound, is known "
            "before anything runs): give an image folder or a prepared cache, e.g. "
            "`suite data synth --out photos --count 2048` then `suite diagnose --data photos`"
        )


def diagnose_command(args) -> int:
    refuse_without_data(args)  # before torch is imported or anything is measured
    from suite import run_record
    from suite.config import RunConfig
    from suite.measurement import diagnose
    from suite.orchestration import child, sweep
    from suite.run_options import run_options

    options = run_options()
    own = {
        "backend": args.backend,
        "workload": args.workload,
        "data": args.data,
        "batch-size": args.batch_size,
        "precision": args.precision,
        "workers": args.workers,
    }
    spec = sweep.parse_inline([], args.fixed, options, sweep.own_options(own, options), require_grid=False)
    [point] = sweep.expand(spec, options)
    sweep.resolve([point])  # every value checked (and the data opened) before anything is measured
    config = point.config
    out_dir = run_record.check_out_dir(args.out)

    plan = child.plan(RunConfig(**config))  # the backend's capabilities shape the advice
    loader, compute, end_to_end = _measure_three(plan, point, out_dir)

    failed = [
        (name, record)
        for name, record in (("loader-only", loader), ("compute-only", compute), ("end-to-end", end_to_end))
        if record is not None and record.get("status") != "ok"
    ]
    if failed:
        for name, record in failed:
            print(f"{name} measurement failed: {child.describe(record)}")
        print("no verdict: every measurement must complete")
        return 1
    found = diagnose.from_records(
        end_to_end,
        compute,
        loader,
        cores=os.cpu_count(),
        copies_to_device=getattr(plan.backend, "copies_to_device", True),
        precisions=tuple(plan.backend.precisions),
    )
    found["records"] = {
        "loader_only": loader and loader["run_id"],
        "compute_only": compute and compute["run_id"],
        "end_to_end": end_to_end["run_id"],
    }
    end_to_end["diagnosis"] = found
    # the same run id: the record gains its verdict
    path = run_record.write_record_or_stop(end_to_end, out_dir)
    print(diagnose.render(found))
    print(f"record: {path}")
    return 0


def _measure_three(plan, point, out_dir: str) -> tuple[dict, dict, dict]:
    """The loader alone (in this process), the model on synthetic data and the real run (fresh `suite run`s),
    each said as it starts and ends, with the time the rest should take."""
    from suite import run_record
    from suite.data import progress
    from suite.measurement.loader_only import measure_setting
    from suite.orchestration import child, sweep

    config = point.config
    started = time.monotonic()
    child.log("1/3 loader only (no model), in this process ...")
    loader = measure_setting(
        plan,
        # None where the backend grows a training window from warm-up timing: the loader grows its own
        # windows from the backend's default steps (suite/data/loader_bench.py).
        batches=config["steps_per_window"] or plan.backend.schedule.steps_per_window,
        windows=config["windows"],
        warmup=config["warmup_steps"],
        to_device=False,
    )
    run_record.write_record_or_stop(loader, out_dir)
    child.log(f"1/3 loader only: {child.describe(loader)} ({progress.seconds(time.monotonic() - started)})")
    child.log("2/3 compute only (synthetic data), a fresh `suite run` ...")
    started = time.monotonic()
    compute_point = sweep.Point(
        0, {"data": "synthetic"}, [*point.argv, "--data", "synthetic"], {**config, "data": "synthetic"}
    )
    compute = sweep.run_point(compute_point, out_dir, origin="diagnose")
    took = time.monotonic() - started
    child.log(f"2/3 compute only: {child.describe(compute)} ({progress.seconds(took)})")
    # The end-to-end run has the compute-only run's schedule and start-up; a slower loader stretches it.
    child.log(
        f"3/3 end to end, a fresh `suite run` ... ({progress.about(took)} left, as long as the compute-only "
        "run took; longer where the loader is the slower)"
    )
    end_to_end = sweep.run_point(point, out_dir, origin="diagnose")
    return loader, compute, end_to_end
