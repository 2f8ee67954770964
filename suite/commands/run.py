"""`suite run`: measure one workload on one backend and write its record."""

from __future__ import annotations

import sys

from suite import run_options


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "run",
        help="measure training throughput of one workload on one backend",
        description="Measure training throughput: warm-up steps, then timed windows.",
    )
    run_options.add_run_options(p)
    p.set_defaults(func=run_command)


def progress_printer(stream):
    """Progress on stderr, one line rewritten in place; only for a person at a terminal."""

    def show(event, **info):
        if event == "warmup":
            text = f"warm-up step {info['step']}/{info['of']}"
        else:
            text = f"window {info['window']}/{info['of']}: {info['images_per_second']:,.1f} img/s"
        stream.write(f"\r\033[K  {text}")
        if event == "window" and info["window"] == info["of"]:
            stream.write("\r\033[K")
        stream.flush()

    return show


def run_command(args) -> int:
    from suite import results
    from suite.measurement import distributed
    from suite.measurement.runner import execute
    from suite.orchestration import child
    from suite.reporting import summary

    plan = child.plan(run_options.config_from_args(args))
    if plan.config.nproc is not None and not distributed.launched():
        from suite.orchestration import launch

        return launch.launch(args, plan)  # workers come back here, under torchrun
    rank = distributed.rank_info()
    out_dir = results.check_out_dir(args.out)
    # Only rank 0 speaks and writes; the other ranks report to it (or, failing, to the launcher).
    interactive = not args.json and sys.stdout.isatty() and rank.rank == 0
    if interactive:
        print(
            f"suite: {plan.workload.name} on {plan.backend.name} ({plan.backend_choice}), "
            f"batch {plan.config.batch_size}, {plan.config.precision}",
            file=sys.stderr,
        )
    record = execute(plan, progress=progress_printer(sys.stderr) if interactive else lambda *a, **k: None)
    if rank.is_distributed:
        failed = record["status"] not in ("ok", "diverged")
        if rank.rank != 0:
            return 1 if failed else 0  # a finished rank's status reached rank 0's record
        if failed and distributed.launcher_run_id():
            return 1  # the launcher parent writes the record, naming the rank that failed first
    saved = results.save_record(record, out_dir)  # a bad disk loses no measurement: see results.Saved
    summary.show(record, saved.path, as_json=args.json)
    if not args.json and record.get("profile"):
        from suite.measurement import profiling

        print(profiling.render(record["profile"]))
    if saved.failed:
        print(saved.warning(out_dir), file=sys.stderr)
        return results.EXIT_RECORD_NOT_WRITTEN
    return 0 if record["status"] == "ok" else 1
