"""The options of `suite run`, declared once: the `run` command, the launcher's workers and every
command that starts child runs (sweep, scale, diagnose, batch-size) read them from here."""

from __future__ import annotations

import argparse
import dataclasses

DEFAULT_OUT = "results"


def add_run_options(p: argparse.ArgumentParser) -> None:
    """Every `suite run` option, on parser `p`."""
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


def run_parser() -> argparse.ArgumentParser:
    """A parser of `suite run`'s options alone (what follows `suite run`)."""
    from suite.cli import Parser

    parser = Parser(prog="suite run")
    add_run_options(parser)
    return parser


def run_options() -> dict[str, argparse.Action]:
    """`suite run`'s options by name without dashes (e.g. "batch-size"), and their argparse actions;
    a switch with a `--no-` twin is listed once, under its positive name."""
    options = {}
    for action in run_parser()._actions:  # argparse has no public listing of a parser's options
        for string in action.option_strings:
            name = string.lstrip("-")
            if not string.startswith("--") or name == "help":
                continue
            if isinstance(action, argparse.BooleanOptionalAction) and name.startswith("no-"):
                continue
            options[name] = action
    return options


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

    from suite.config import RunConfig

    names = {f.name for f in dataclasses.fields(RunConfig)}
    return RunConfig(**{k: v for k, v in vars(args).items() if k in names and v is not None})
