"""`suite run`: measure one workload on one backend and write its record."""

from __future__ import annotations

import argparse
import sys

DEFAULT_OUT = "results"


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "run",
        help="measure training throughput of one workload on one backend",
        description="Measure training throughput: warm-up steps, then timed windows.",
    )
    p.add_argument(
        "--backend", default="auto", help="auto (default: hpu, then cuda, then cpu), cpu, cuda, hpu"
    )
    p.add_argument(
        "--workload", default="dcgan64", help="a workload name (see `suite list`); default dcgan64"
    )
    p.add_argument(
        "--batch-size", help="images per step per process (default: the workload's, capped on cpu)"
    )
    p.add_argument("--precision", help="fp32, bf16, amp (cuda), ... (default: the backend's)")
    p.add_argument("--warmup", dest="warmup_steps", help="warm-up steps, excluded from throughput")
    p.add_argument("--steps", dest="steps_per_window", help="steps per timed window")
    p.add_argument("--windows", help="timed windows; the median and spread are reported")
    p.add_argument("--threads", help="host threads for CPU compute (torch.set_num_threads)")
    p.add_argument(
        "--out", default=DEFAULT_OUT, help=f"folder for the result record (default {DEFAULT_OUT}/)"
    )
    p.add_argument("--json", action="store_true", help="print the record on stdout instead of a summary")

    data = p.add_argument_group("data path")
    data.add_argument(
        "--data",
        help="synthetic (default: one batch reused, compute only), a folder of class "
        "sub-folders of JPEG/PNG images, or a cache made by `suite data prepare`",
    )
    data.add_argument(
        "--workers",
        help="loader workers (default 4 for images, at most the cores; 1 gather thread for a cache)",
    )
    data.add_argument(
        "--pin-memory",
        dest="pin_memory",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="page-locked host batches for faster copies (default: on when the device is not the host)",
    )
    data.add_argument("--prefetch", help="batches each worker prepares ahead (default 2)")

    cost = p.add_argument_group("where it runs (cost)")
    cost.add_argument(
        "--instance",
        metavar="NAME",
        help="the cloud instance this runs on (e.g. p3.2xlarge; see `suite prices list`); "
        "`suite report` prices the run with it",
    )
    cost.add_argument(
        "--prices",
        metavar="NAME|FILE",
        help="price catalog the instance is looked up in (default: any shipped catalog)",
    )

    cuda = p.add_argument_group("cuda")
    cuda.add_argument(
        "--device-index", dest="device_index", help="GPU to use (default: $LOCAL_RANK under torchrun, else 0)"
    )
    cuda.add_argument(
        "--tf32",
        dest="tf32",
        action="store_true",
        default=None,
        help="allow TF32 tensor cores for fp32 math (default off: fp32 means fp32)",
    )
    cuda.add_argument(
        "--channels-last",
        dest="channels_last",
        action="store_true",
        default=None,
        help="channels-last (NHWC) memory format for the model and image batches",
    )
    cuda.add_argument(
        "--compile",
        dest="compile",
        action="store_true",
        default=None,
        help="torch.compile the model(s); compile time shows in time-to-first-step",
    )

    hpu = p.add_argument_group("hpu")
    hpu.add_argument(
        "--hpu-mode",
        dest="hpu_mode",
        choices=["lazy", "eager", "compile"],
        help="Gaudi execution mode: lazy (mark_step graphs), eager, or compile (eager + "
        "torch.compile hpu_backend); default: PT_HPU_LAZY_MODE if set, else the installed "
        "Habana release's default",
    )
    hpu.add_argument(
        "--no-fused",
        dest="hpu_fused",
        action="store_false",
        default=None,
        help="use torch.optim's AdamW/SGD instead of Habana's FusedAdamW/FusedSGD",
    )
    hpu.add_argument(
        "--hpu-bf16-ops",
        dest="hpu_bf16_ops",
        metavar="FILE",
        help="op list run in bf16 (PT_HPU_AUTOCAST_LOWER_PRECISION_OPS_LIST, or HMP's bf16 list)",
    )
    hpu.add_argument(
        "--hpu-fp32-ops",
        dest="hpu_fp32_ops",
        metavar="FILE",
        help="op list kept in fp32 (PT_HPU_AUTOCAST_FP32_OPS_LIST, or HMP's fp32 list)",
    )

    diagnosis = p.add_argument_group("profiling and diagnosis")
    diagnosis.add_argument(
        "--profile",
        dest="profile_dir",
        metavar="DIR",
        help="trace the timed steps with torch.profiler into DIR (TensorBoard/Perfetto); "
        "a profiled run is slower and is marked so in its record",
    )
    diagnosis.add_argument(
        "--max-memory",
        dest="max_memory_bytes",
        metavar="SIZE",
        action=SizeAction,
        help="memory ceiling, e.g. 2GiB or 512MiB: on the CPU it stands in for device "
        "memory, and going over it is an out-of-memory failure",
    )
    diagnosis.add_argument(
        "--model-override",
        dest="model_overrides",
        metavar="KEY=VALUE",
        action=OverrideAction,
        help=argparse.SUPPRESS,
    )  # tiny models for tests and sweeps

    distributed = p.add_argument_group(
        "distributed",
        "run on N processes through torch's launcher (torchrun); --batch-size stays per process",
    )
    distributed.add_argument(
        "--nproc", help="processes on this node, one per device (default: 1, no launcher)"
    )
    distributed.add_argument(
        "--nnodes", help="nodes in the run (default 1); needs --node-rank and --rdzv-endpoint"
    )
    distributed.add_argument("--node-rank", dest="node_rank", help="this node's rank, 0 … nnodes-1")
    distributed.add_argument(
        "--rdzv-endpoint", dest="rdzv_endpoint", help="HOST:PORT of node 0, for every node"
    )
    distributed.add_argument(
        "--dist-timeout",
        dest="dist_timeout_s",
        help="seconds any rank waits for another before the run fails (default 600)",
    )
    p.set_defaults(run_parser=p)  # the launcher re-types these options for its workers

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
    from suite import results
    from suite.measurement import distributed
    from suite.measurement.runner import execute, plan_run
    from suite.reporting import summary
    from suite.reporting.pricing import resolve_run_instance

    plan = plan_run(config_from_args(args))
    plan.config = plan.backend.config = resolve_run_instance(plan.config)  # checked before measuring
    if plan.config.nproc is not None and not distributed.launched():
        from suite.orchestration import launch

        return launch.launch(args, args.run_parser, plan)  # workers come back here, under torchrun
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
