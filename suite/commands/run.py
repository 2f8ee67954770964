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
    from suite import run_record
    from suite.measurement import distributed
    from suite.measurement.runner import execute
    from suite.orchestration import child
    from suite.reporting import summary
    from suite.reporting.pricing import device_mismatch_warning

    plan = child.plan(run_options.config_from_args(args))
    if args.against and args.repeat is None:
        from suite.errors import UserError

        raise UserError("--against needs --repeat N: it runs N of each side, interleaved")
    if args.against:
        return run_against(args, plan)
    if args.repeat is not None:
        return run_repeated(args, plan)
    if plan.config.per_device is not None:
        return run_per_device(args, plan)
    if plan.config.nproc is not None and not distributed.launched():
        from suite.orchestration import launch

        return launch.launch(args, plan)  # workers come back here, under torchrun
    rank = distributed.rank_info()
    out_dir = run_record.check_out_dir(args.out)
    # Only rank 0 speaks and writes; the other ranks report to it (or, failing, to the launcher).
    interactive = not args.json and sys.stdout.isatty() and rank.rank == 0
    if interactive:
        print(
            f"suite: {plan.workload.name} on {plan.backend.name} ({summary.short_choice(plan.backend_choice)}), "
            f"batch {plan.config.batch_size}, {plan.config.precision}",
            file=sys.stderr,
        )
    record = execute(plan, progress=progress_printer(sys.stderr) if interactive else lambda *a, **k: None)
    mismatch = device_mismatch_warning(record)
    if mismatch:
        record["warnings"].append(mismatch)
    if rank.is_distributed:
        failed = record["status"] not in ("ok", "diverged")
        if rank.rank != 0:
            return 1 if failed else 0  # a finished rank's status reached rank 0's record
        if failed and distributed.launcher_run_id():
            return 1  # the launcher parent writes the record, naming the rank that failed first
    saved = run_record.save_record(record, out_dir)  # a bad disk loses no measurement: see run_record.Saved
    summary.show(record, saved.path, as_json=args.json)
    if not args.json and record.get("profile"):
        from suite.measurement import profiling

        print(profiling.render(record["profile"]))
    if saved.failed:
        print(saved.warning(out_dir), file=sys.stderr)
        return run_record.EXIT_RECORD_NOT_WRITTEN
    return 0 if record["status"] == "ok" else 1


def _child_argv(args, **without) -> list[str]:
    """The options of this `suite run`, as typed, less those the parent handles itself."""
    import argparse

    from suite.orchestration import child

    return child.argv_from_args(argparse.Namespace(**{**vars(args), **without}))[1:]


def run_repeated(args, plan) -> int:
    """`--repeat N`: N fresh processes, one after another, each a whole `suite run` of its own."""
    import json

    from suite import run_record
    from suite.orchestration import repeat

    out_dir = run_record.check_out_dir(args.out)
    records = repeat.run_group(
        _child_argv(args, repeat=None, against=None), plan.config.to_dict(), out_dir, args.repeat
    )
    if args.json:
        print(json.dumps(records, indent=2, default=str))
    else:
        print(repeat.summary(records))
    return 0 if all(r.get("status") == "ok" for r in records) else 1


def run_against(args, plan) -> int:
    """`--repeat N --against OPTION=VALUE`: N runs of this configuration and N of the changed one,
    interleaved A B B A …, into OUT/baseline and OUT/candidate."""
    import json
    import os

    from suite import run_record
    from suite.orchestration import child, repeat

    base_argv = _child_argv(args, repeat=None, against=None)
    cand_argv = base_argv + repeat.against_argv(args.against)
    cand_config = child.resolved_config(cand_argv)  # a bad candidate option is refused before any run
    out_dir = run_record.check_out_dir(args.out)
    folders = [run_record.check_out_dir(os.path.join(out_dir, name)) for name in ("baseline", "candidate")]
    base, cand = repeat.run_interleaved(
        [(base_argv, plan.config.to_dict(), folders[0]), (cand_argv, cand_config, folders[1])], args.repeat
    )
    if args.json:
        print(json.dumps({"baseline": base, "candidate": cand}, indent=2, default=str))
    else:
        print(repeat.summary(base).split("\n")[0] + " (baseline)")
        print(repeat.summary(cand).split("\n")[0] + " (candidate)")
        print(f"  compare them: suite compare {folders[0]} {folders[1]}")
    return 0 if all(r.get("status") == "ok" for r in base + cand) else 1


def run_per_device(args, plan) -> int:
    """`--per-device N`: N copies at once, each pinned to its own device by the backend."""
    from suite import run_record
    from suite.orchestration import child, per_device

    copies = plan.config.per_device
    per_device.check(plan.config, copies)
    envs = plan.backend.pin_envs(copies)  # refused here when there are fewer devices than copies
    out_dir = run_record.check_out_dir(args.out)
    config = plan.config.to_dict()
    finished = per_device.run_copies(_child_argv(args, per_device=None), envs)
    record = per_device.combine(
        config,
        [(one.record or child.failure_of(one, config), env, end) for (one, end), env in zip(finished, envs)],
    )
    # as a single run's: a full or read-only disk sends the record to the fallback folder or stdout
    saved = run_record.save_record(record, out_dir)
    if args.json or saved.path is None:
        sys.stdout.write(run_record.record_json(record))
    if not args.json:
        print(per_device.render(record, saved.path or "not written: the JSON above is the record"))
    if saved.failed:
        print(saved.warning(out_dir), file=sys.stderr)
        return run_record.EXIT_RECORD_NOT_WRITTEN
    return 0 if record["status"] == "ok" else 1
