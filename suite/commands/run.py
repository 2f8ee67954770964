"""`suite run`: measure one workload on one backend and write its record."""

from __future__ import annotations

import sys
import time

from suite import run_options
from suite.data import progress


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "run",
        help="measure training throughput of one workload on one backend",
        description="Measure training throughput: warm-up steps, then timed windows.",
    )
    run_options.add_run_options(p)
    p.add_argument(
        "--spec",
        metavar="FILE",
        help="run the RunSpec in this JSON file instead of the run options (docs/spec.md)",
    )
    p.set_defaults(func=run_command)


def progress_printer(stream):
    """Progress at a terminal: one line on stderr, rewritten in place."""

    def show(event, **info):
        if event == "warmup":
            text = f"warm-up step {info['step']}/{info['of']}"
        elif event == "window":
            text = f"window {info['window']}/{info['of']}: {window_rate(info)}"
        else:
            return
        stream.write(f"\r\033[K  {text}")
        if event == "window" and info["window"] == info["of"]:
            stream.write("\r\033[K")
        stream.flush()

    return show


def window_rate(info: dict) -> str:
    """A window's rate in the workload's unit: img/s, or tok/s for a token workload (its sequences × tokens),
    labelled as every other output labels a rate (child.rate_label)."""
    from suite.launching.child import rate_label

    unit = info.get("unit", "images")
    if unit == "images":
        return f"{info['images_per_second']:,.1f} {rate_label(unit)}"
    return f"{info['images_per_second'] * info['units_per_sample']:,.0f} {rate_label(unit)}"


def since_start() -> float:
    """Seconds since this Python started the suite (where time to first step counts from)."""
    from suite import context

    return time.time() - context.interpreter_start_time()


def line_printer(stream, clock=time.monotonic, every_s: float = 1.0, since=since_start):
    """Progress off a terminal (a log, a pipe, CI): plain lines, no carriage returns. Warm-up done, and each
    window's rate with about how long the windows have left; a window ending within EVERY_S of the last
    line is not said (the first and the last always are), so a run of many short windows stays readable."""
    marks = {"windows_from": clock(), "said": None}

    def say(text: str) -> None:
        marks["said"] = clock()
        stream.write(f"suite: {text}\n")
        stream.flush()

    def show(event, **info):
        now = clock()
        if event == "warmup" and info["step"] == info["of"]:
            marks["windows_from"] = now
            steps = f"{info['of']} step{'s' if info['of'] != 1 else ''}"
            say(f"warm-up done: {steps}, {since():.1f} s since the suite started")
        elif event == "window":
            done, total = info["window"], info["of"]
            if done not in (1, total) and now - (marks["said"] or marks["windows_from"]) < every_s:
                return
            left = (now - marks["windows_from"]) / done * (total - done)
            rest = f" ({progress.about(left)} of windows left)" if done < total else ""
            say(f"window {done}/{total}: {window_rate(info)}{rest}")

    return show


def start_line(plan) -> str:
    """What is about to run, in one line."""
    from suite.reporting import summary

    spec = plan.spec
    steps = (
        f"{spec.schedule.steps_per_window} step(s)"
        if spec.schedule.steps_per_window
        else "steps chosen after warm-up"
    )
    windows = f"{spec.schedule.windows} timed window(s) of {steps}"
    budget = plan.backend.schedule.window_budget_s
    if spec.schedule.windows is None and budget is not None:
        windows = (
            f"timed windows for about {budget:g} s, fitted to the warm-up's step time (the "
            f"{plan.backend.name} backend's time box; --steps or --windows fix them)"
        )
    batch = f"batch {spec.workload.batch_size}"
    if spec.workload.grad_accum > 1:  # a step of several micro-batches, one optimizer step
        batch += f" x {spec.workload.grad_accum} micro-batches a step"
    warmup = f"{spec.schedule.warmup_steps} warm-up step(s)"
    if spec.data.source != "synthetic":
        # the runner's warm-up also takes the batches the workers made while the model was being built
        warmup += " and one for each batch the loader's workers prefetched"
    return (
        f"suite: {plan.workload.name} on {plan.backend.name} ({summary.short_choice(plan.backend_choice)}), "
        f"{batch}, {spec.precision}: {warmup}, then {windows}"
    )


def say_start(plan, asked) -> None:
    """What is about to run, on stderr; and the instance it is priced as where the machine named it
    rather than the RunSpec ASKED."""
    print(start_line(plan), file=sys.stderr, flush=True)
    if plan.spec.cost.instance and not asked.cost.instance:
        print(
            f"suite: priced as {plan.spec.cost.instance}, the instance this machine's DMI product name names "
            "(--instance NAME names another)",
            file=sys.stderr,
            flush=True,
        )


def progress_for(args, rank) -> tuple[object, bool]:
    """The progress callback of this run, and whether it speaks at all: rank 0 alone, unless --quiet;
    rewritten in place at a terminal, plain lines on stderr otherwise."""
    if args.quiet or rank.rank != 0:
        return (lambda *a, **k: None), False
    if sys.stderr.isatty():
        return progress_printer(sys.stderr), True
    return line_printer(sys.stderr), True


def run_command(args) -> int:
    """`suite run`, with the ways a model's own code could end or hang it closed (workloads/user_code.py):
    whatever happens, the process ends at most user_code.THREAD_GRACE_S after the command is done."""
    from suite.workloads import user_code

    with user_code.Guard() as guard:
        try:
            guard.status = _run_command(args, guard)
        except BaseException as error:
            guard.status = _exit_status_of(error)
            raise
        finally:
            guard.exit_without_threads()
    return guard.status


def _exit_status_of(error: BaseException) -> int:
    """The status the command line exits with for ERROR (suite/cli.py's main), for a process that must end
    with it while threads the model's code started would keep it alive."""
    from suite import run_record
    from suite.inputs.errors import UserError
    from suite.launching import child

    if isinstance(error, run_record.RecordNotWritten):
        return run_record.EXIT_RECORD_NOT_WRITTEN
    if isinstance(error, UserError):
        return 2  # the command line's EXIT_USER_ERROR
    if isinstance(error, KeyboardInterrupt):
        return child.INTERRUPTED
    return 1  # what Python exits with after a traceback


def _run_command(args, guard) -> int:
    from suite import run_record
    from suite.launching import child
    from suite.measurement import distributed
    from suite.measurement import plan as planning

    asked = run_options.spec_from_args(args)
    plan = planning.resolve_plan(asked)
    if args.against and args.repeat is None:
        from suite.inputs.errors import UserError

        raise UserError("--against needs --repeat N: it runs N of each side, interleaved")
    if args.against:
        return run_against(args, asked, plan)
    if args.repeat is not None:
        return run_repeated(args, asked, plan)
    if plan.spec.launch.per_device is not None:
        return run_per_device(args, asked, plan)
    if plan.spec.launch.nproc is not None and not distributed.launched():
        from suite.launching import launch

        return launch.launch(args, plan)  # workers come back here, under torchrun
    rank = distributed.rank_info()
    out_dir = run_record.check_out_dir(args.out)
    # Only rank 0 speaks and writes; the other ranks report to it (or, failing, to the launcher).
    show, speaks = progress_for(args, rank)
    if speaks:
        say_start(plan, asked)  # before torch's import: planning needs none
    from suite.measurement.runner import RunInterrupted, execute

    try:
        record = execute(plan, progress=show)
    except RunInterrupted as stopped:  # after a timed window: its record is written, then the stop goes on
        guard.end_if_a_copy()
        status = _keep(args, stopped.record, guard, out_dir, speaks)
        print(f"suite: {stopped.record['error']['message']}", file=sys.stderr, flush=True)
        return status if status == run_record.EXIT_RECORD_NOT_WRITTEN else child.INTERRUPTED
    guard.end_if_a_copy()  # a copy forked by the model's code writes nothing
    if rank.is_distributed:
        failed = record["status"] not in ("ok", "diverged")
        if rank.rank != 0:
            return 1 if failed else 0  # a finished rank's status reached rank 0's record
        if failed and distributed.launcher_run_id():
            return 1  # the launcher parent writes the record, naming the rank that failed first
    return _keep(args, record, guard, out_dir, speaks)


def _keep(args, record: dict, guard, out_dir: str, speaks: bool) -> int:
    """The record finished with what the run's end adds (warnings of the device and of the model's code),
    written (a bad disk loses no measurement: see run_record.Saved), and its summary shown; the exit
    status."""
    from suite import run_record
    from suite.inputs import streams
    from suite.prices.catalog import device_mismatch_warning
    from suite.reporting import summary

    mismatch = device_mismatch_warning(record)
    if mismatch:
        record["warnings"].append(mismatch)
    record["warnings"].extend([*guard.notes, *filter(None, [guard.thread_note()])])
    saved = run_record.save_record(record, out_dir)
    if speaks and saved.path and not sys.stderr.isatty():
        print(f"suite: record written to {saved.path}", file=sys.stderr, flush=True)
    try:
        summary.show(record, saved.path, as_json=args.json)
        if not args.json and record.get("profile"):
            from suite.measurement import profiling

            print(profiling.render(record["profile"]))
        streams.flush_stdout()
    except streams.OutputFailed as error:
        if saved.path is None:
            raise
        raise streams.OutputFailed(f"{error}; the run's record is written to {saved.path}") from None
    if saved.failed:
        print(saved.warning(out_dir), file=sys.stderr)
        return run_record.EXIT_RECORD_NOT_WRITTEN
    return 0 if record["status"] == "ok" else 1


def run_repeated(args, asked, plan) -> int:
    """`--repeat N`: N fresh processes, one after another, each a whole `suite run` of its own (of the
    RunSpec ASKED)."""
    import json

    from suite import run_record
    from suite.launching import child, repeat

    out_dir = run_record.check_out_dir(args.out)
    records = repeat.run_group(child.Request(asked), plan.record_config(), out_dir, args.repeat)
    if args.json:
        print(json.dumps(records, indent=2, default=str))
    else:
        print(repeat.summary(records))
    return 0 if all(r.get("status") == "ok" for r in records) else 1


def run_against(args, asked, plan) -> int:
    """`--repeat N --against OPTION=VALUE`: N runs of this configuration (the RunSpec ASKED) and N of the
    changed one, interleaved A B B A …, into OUT/baseline and OUT/candidate."""
    import json
    import os

    from suite import run_record
    from suite.launching import child, repeat

    candidate = child.with_options(asked, repeat.against_argv(args.against))
    cand_config = child.resolved_config(candidate)  # a bad candidate option is refused before any run
    out_dir = run_record.check_out_dir(args.out)
    folders = [run_record.check_out_dir(os.path.join(out_dir, name)) for name in ("baseline", "candidate")]
    base, cand = repeat.run_interleaved(
        [
            (child.Request(asked), plan.record_config(), folders[0]),
            (child.Request(candidate), cand_config, folders[1]),
        ],
        args.repeat,
    )
    if args.json:
        print(json.dumps({"baseline": base, "candidate": cand}, indent=2, default=str))
    else:
        print(repeat.summary(base).split("\n")[0] + " (baseline)")
        print(repeat.summary(cand).split("\n")[0] + " (candidate)")
        print(f"  compare them: suite compare {folders[0]} {folders[1]}")
    return 0 if all(r.get("status") == "ok" for r in base + cand) else 1


def run_per_device(args, asked, plan) -> int:
    """`--per-device N`: N copies at once of the RunSpec ASKED, each a single process pinned to its own
    device by the backend."""
    from suite import run_record
    from suite.launching import child, per_device

    copies = plan.spec.launch.per_device
    per_device.check(plan.spec, copies)
    envs = plan.backend.pin_envs(copies)  # refused here when there are fewer devices than copies
    out_dir = run_record.check_out_dir(args.out)
    config = plan.record_config()
    finished = per_device.run_copies(child.Request(asked.replace(per_device=None)), envs)
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
