"""`suite run`: measure one workload on one backend and write its record."""

from __future__ import annotations

import argparse
import json
import os
import sys

DEFAULT_OUT = "results"


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("run", help="measure training throughput of one workload on one backend",
                              description="Measure training throughput: warm-up steps, then timed windows.")
    p.add_argument("--backend", default="auto", help="auto (default: hpu, then cuda, then cpu), cpu, cuda, hpu")
    p.add_argument("--workload", default="dcgan64", help="a workload name (see `suite list`); default dcgan64")
    p.add_argument("--batch-size", help="images per step per process (default: the workload's, capped on cpu)")
    p.add_argument("--precision", help="fp32, bf16, amp (cuda), ... (default: the backend's)")
    p.add_argument("--warmup", dest="warmup_steps", help="warm-up steps, excluded from throughput")
    p.add_argument("--steps", dest="steps_per_window", help="steps per timed window")
    p.add_argument("--windows", help="timed windows; the median and spread are reported")
    p.add_argument("--threads", help="host threads for CPU compute (torch.set_num_threads)")
    p.add_argument("--out", default=DEFAULT_OUT, help=f"folder for the result record (default {DEFAULT_OUT}/)")
    p.add_argument("--json", action="store_true", help="print the record on stdout instead of a summary")

    data = p.add_argument_group("data path")
    data.add_argument("--data", help="synthetic (default: one batch reused, compute only), a folder of class "
                      "sub-folders of JPEG/PNG images, or a cache made by `suite data prepare`")
    data.add_argument("--workers", help="loader workers (default 4 for images, at most the cores; 1 gather "
                      "thread for a cache)")
    data.add_argument("--pin-memory", dest="pin_memory", action=argparse.BooleanOptionalAction, default=None,
                      help="page-locked host batches for faster copies (default: on when the device is not "
                      "the host)")
    data.add_argument("--prefetch", help="batches each worker prepares ahead (default 2)")

    cost = p.add_argument_group("where it runs (cost)")  # noqa: F841

    cuda = p.add_argument_group("cuda")  # noqa: F841

    hpu = p.add_argument_group("hpu")  # noqa: F841

    diagnosis = p.add_argument_group("profiling and diagnosis")
    diagnosis.add_argument("--profile", dest="profile_dir", metavar="DIR",
                           help="trace the timed steps with torch.profiler into DIR (TensorBoard/Perfetto); "
                                "a profiled run is slower and is marked so in its record")
    diagnosis.add_argument("--max-memory", dest="max_memory_bytes", metavar="SIZE", action=SizeAction,
                           help="memory ceiling, e.g. 2GiB or 512MiB: on the CPU it stands in for device "
                                "memory, and going over it is an out-of-memory failure")
    diagnosis.add_argument("--model-override", dest="model_overrides", metavar="KEY=VALUE",
                           action=OverrideAction, help=argparse.SUPPRESS)  # tiny models for tests and sweeps

    distributed = p.add_argument_group("distributed")  # noqa: F841

    p.set_defaults(func=run_command)


class SizeAction(argparse.Action):
    """`--max-memory 2GiB` -> bytes."""

    def __call__(self, parser, namespace, value, option_string=None):
        from suite.sizes import parse_size

        setattr(namespace, self.dest, parse_size(option_string, value))


class OverrideAction(argparse.Action):
    """`--model-override ngf=8` (repeatable) -> {"ngf": 8}."""

    def __call__(self, parser, namespace, value, option_string=None):
        from suite.sizes import parse_override

        overrides = dict(getattr(namespace, self.dest, None) or {})
        key, parsed = parse_override(option_string, value)
        overrides[key] = parsed
        setattr(namespace, self.dest, overrides)


def config_from_args(args):
    """RunConfig from parsed options: every option whose dest names a RunConfig field."""
    import dataclasses

    from suite.config import RunConfig

    names = {f.name for f in dataclasses.fields(RunConfig)}
    return RunConfig(**{k: v for k, v in vars(args).items() if k in names and v is not None})


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
    from suite import results, summary
    from suite.runner import execute, plan_run

    plan = plan_run(config_from_args(args))
    out_dir = results.check_out_dir(args.out)
    interactive = not args.json and sys.stdout.isatty()
    if interactive:
        print(f"suite: {plan.workload.name} on {plan.backend.name} ({plan.backend_choice}), "
              f"batch {plan.config.batch_size}, {plan.config.precision}", file=sys.stderr)
    record = execute(plan, progress=progress_printer(sys.stderr) if interactive else lambda *a, **k: None)
    path = results.write_record(record, out_dir)
    if args.json:
        json.dump(record, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        print(summary.render(record, os.path.relpath(path)))
        if record.get("profile"):
            from suite import profiling

            print(profiling.render(record["profile"]))
    return 0 if record["status"] == "ok" else 1
