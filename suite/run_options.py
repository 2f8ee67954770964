"""The options of `suite run`, declared once: the `run` command, the launcher's workers and every
command that starts child runs (sweep, scale, diagnose, batch-size) read them from here."""

from __future__ import annotations

import argparse
import functools

from suite.inputs import option_types
from suite.spec import MAX_GRAD_ACCUM  # declared with its field (suite/spec/parts.py)

DEFAULT_OUT = "results"
MAX_REPEAT = 1000


class _Declaring:
    """A parser or one of its argument groups that also lists every option declared on it, in order: the
    suite's own listing of `suite run`'s options (argparse keeps none that is public)."""

    def __init__(self, target, declared: list[argparse.Action]):
        self._target = target
        self._declared = declared

    def add_argument(self, *names, **settings) -> argparse.Action:
        action = self._target.add_argument(*names, **settings)
        self._declared.append(action)
        return action

    def add_argument_group(self, *title, **settings) -> _Declaring:
        return _Declaring(self._target.add_argument_group(*title, **settings), self._declared)


def add_run_options(p: argparse.ArgumentParser) -> list[argparse.Action]:
    """Every `suite run` option, on parser `p`, group by group as `suite run --help` shows them; returns
    the options declared, in order."""
    declared: list[argparse.Action] = []
    target = _Declaring(p, declared)
    for declare in (
        _workload_options,
        _schedule_options,
        _output_options,
        _data_options,
        _cost_options,
        _backend_options,
        _diagnosis_options,
        _numerics_options,
        _several_options,
        _distributed_options,
    ):
        declare(target)
    return declared


def _workload_options(p: _Declaring) -> None:
    from suite.backends import declared
    from suite.inputs.option_types import positive_int

    p.add_argument(
        "--backend",
        default="auto",
        help=f"auto (default: {', then '.join(declared.auto_order())}), {', '.join(declared.names())}",
    )
    p.add_argument(
        "--workload",
        default="dcgan64",
        help="a workload name (see `suite list`), torchvision:NAME, timm:NAME or module.path:factory; "
        "default dcgan64",
    )
    p.add_argument(
        "--num-classes",
        dest="num_classes",
        type=positive_int("--num-classes"),
        help="classes of a classifier's head (default: the workload's; named models 1000)",
    )
    p.add_argument(
        "--image-size",
        dest="image_size",
        type=positive_int("--image-size"),
        help="input size in px (default: the workload's; named models their published size)",
    )
    p.add_argument(
        "--batch-size",
        type=positive_int("--batch-size"),
        help="images per step per process (default: the workload's, or the backend's cap)",
    )
    p.add_argument("--precision", help="fp32, bf16, amp (cuda), ... (default: the backend's)")
    p.add_argument(
        "--grad-accum",
        dest="grad_accum",
        type=positive_int("--grad-accum", most=MAX_GRAD_ACCUM),
        metavar="N",
        help="one optimizer step per N batches of --batch-size (gradient accumulation; a step's samples are "
        "N x the batch); language models only (default 1)",
    )
    p.add_argument(
        "--activation-checkpointing",
        dest="activation_checkpointing",
        action="store_true",
        default=None,
        help="recompute each decoder block's activations in the backward pass instead of keeping them "
        "(torch.utils.checkpoint); language models only",
    )


def _schedule_options(p: _Declaring) -> None:
    from suite.inputs.option_types import non_negative_int, positive_int

    p.add_argument(
        "--warmup",
        dest="warmup_steps",
        type=non_negative_int("--warmup"),
        # The defaults are each backend's Schedule (backends/*.py): the CPU's steps are slow, the HPU's
        # graphs need more warm-up.
        help="warm-up steps, excluded from throughput (default: cpu 1, cuda 3, hpu 10)",
    )
    p.add_argument(
        "--steps",
        dest="steps_per_window",
        type=positive_int("--steps"),
        # Without it, a backend that declares a minimum window grows its steps from warm-up timing
        # (suite/measurement/window_length.py).
        help="steps per timed window, as given (default: cpu 1 to 4, with --windows fitted to a time box of "
        "about 20 s from warm-up timing; cuda 10 and hpu 20, grown from warm-up timing so that a window "
        "lasts >= 1 s, at most 1000)",
    )
    p.add_argument(
        "--windows",
        type=positive_int("--windows"),
        help="timed windows; the median and spread are reported (default 5; cpu 2 to 5, fitted to its "
        "time box unless --steps is given)",
    )
    p.add_argument(
        "--threads",
        type=positive_int("--threads"),
        help="host threads for CPU compute (torch.set_num_threads)",
    )


def _output_options(p: _Declaring) -> None:
    p.add_argument(
        "--out",
        default=DEFAULT_OUT,
        type=option_types.output_folder("--out"),
        help=f"folder for the result record (default {DEFAULT_OUT}/)",
    )
    p.add_argument("--json", action="store_true", help="print the record on stdout instead of a summary")
    p.add_argument(
        "--quiet",
        action="store_true",
        help="no progress on stderr (at a terminal one line rewritten in place; otherwise plain lines: the "
        "start, warm-up done, each window's rate, the record's path); errors and warnings still show",
    )


def _data_options(p: _Declaring) -> None:
    from suite.inputs.option_types import Switch, non_negative_int, positive_int

    data = p.add_argument_group("data path")
    data.add_argument(
        "--data",
        help="synthetic (default: one batch reused, compute only), a folder of class "
        "sub-folders of JPEG/PNG images, or a cache made by `suite data prepare`; for a language model, "
        "a file of token ids (nanoGPT's uint16 train.bin or llm.c's .bin)",
    )
    data.add_argument(
        "--workers",
        type=non_negative_int("--workers"),
        help="loader workers (default 4 for images, at most the cores; 1 gather thread for a cache)",
    )
    data.add_argument(
        "--pin-memory",
        dest="pin_memory",
        action=Switch,
        help="page-locked host batches for faster copies (default: on when the device is not the host)",
    )
    data.add_argument(
        "--prefetch", type=positive_int("--prefetch"), help="batches each worker prepares ahead (default 2)"
    )


def _cost_options(p: _Declaring) -> None:
    from suite.inputs.option_types import Once

    cost = p.add_argument_group("where it runs (cost)")
    cost.add_argument(
        "--instance",
        action=Once,
        metavar="NAME",
        help="the cloud instance this runs on (e.g. p5.48xlarge; see `suite prices list`); "
        "`suite report` prices the run with it",
    )
    cost.add_argument(
        "--prices",
        metavar="NAME|FILE",
        help="price catalog the instance is looked up in (default: any shipped catalog)",
    )


def _backend_options(p: _Declaring) -> None:
    from suite.backends import declared

    for backend in declared.DECLARED:  # each backend's own options, as it declares them
        if backend.options:
            group = p.add_argument_group(backend.name)
            for option in backend.options:
                group.add_argument(option.flag, dest=option.field, help=option.help, **option.argparse)


def _diagnosis_options(p: _Declaring) -> None:
    diagnosis = p.add_argument_group("profiling and diagnosis")
    diagnosis.add_argument(
        "--profile",
        dest="profile_dir",
        metavar="DIR",
        help="trace the timed steps with torch.profiler into DIR (TensorBoard/Perfetto); "
        "a profiled run is slower and is marked so in its record",
    )
    diagnosis.add_argument(
        "--model-override",
        dest="model_overrides",
        metavar="KEY=VALUE",
        action=OverrideAction,
        help="change one field of the workload's model (repeatable): `--model-override ngf=16 "
        "--model-override ndf=16` makes a small dcgan64 for a quick look; a wrong KEY's error lists the "
        "settable ones",
    )


def _numerics_options(p: _Declaring) -> None:
    numerics = p.add_argument_group(
        "numerics",
        "after the timed windows (no figure changes): 8 steps of the workload's recipe in fp32 (TF32 off) "
        "twice, in two batch orders (the run-to-run noise), and in the asked precision; losses, weight drift "
        "and gradient norms per layer group within 3 x the noise (docs/numerics.md)",
    )
    numerics.add_argument(
        "--check-numerics",
        dest="check_numerics",
        action="store_true",
        default=None,
        help="check that the asked precision trains the same model as fp32",
    )
    numerics.add_argument(
        "--reference-backend",
        dest="reference_backend",
        metavar="NAME",
        help="run the fp32 reference on this backend instead (e.g. cpu: the device against the CPU)",
    )


def _several_options(p: _Declaring) -> None:
    from suite.inputs.option_types import positive_int

    several = p.add_argument_group("several runs")
    several.add_argument(
        "--repeat",
        # Each repeat is a fresh process of seconds to minutes: a thousand is already a day.
        type=positive_int("--repeat", most=MAX_REPEAT),
        metavar="N",
        help="N runs of this configuration, one after another, each in a fresh process, recorded as a "
        "group: the run-level samples `suite compare` tests",
    )
    several.add_argument(
        "--against",
        action="append",
        metavar="OPTION=VALUE",
        help="with --repeat: also run this configuration with OPTION changed (repeatable), interleaved "
        "with the first (A B B A …) so that both sides meet the same host load; records go to "
        "OUT/baseline and OUT/candidate, for `suite compare`",
    )
    several.add_argument(
        "--per-device",
        dest="per_device",
        type=positive_int("--per-device"),
        metavar="N",
        help="N independent copies at once, each pinned to its own device (on the CPU: a group of "
        "cores), no collectives; one record holds each copy's rate and their sum",
    )


def _distributed_options(p: _Declaring) -> None:
    from suite.inputs.option_types import non_negative_int, positive_int

    distributed = p.add_argument_group(
        "distributed",
        "run on N processes through torch's launcher (torchrun); --batch-size stays per process",
    )
    distributed.add_argument(
        "--nproc",
        "--nproc-per-node",  # torchrun's name for the same thing
        dest="nproc",
        type=positive_int("--nproc"),
        help="processes on this node, one per device (default: 1, no launcher); --nproc-per-node as in torchrun",
    )
    distributed.add_argument(
        "--nnodes",
        type=positive_int("--nnodes"),
        help="nodes in the run (default 1); needs --node-rank and --rdzv-endpoint",
    )
    distributed.add_argument(
        "--node-rank",
        dest="node_rank",
        type=non_negative_int("--node-rank"),
        help="this node's rank, 0 … nnodes-1",
    )
    distributed.add_argument(
        "--rdzv-endpoint", dest="rdzv_endpoint", help="HOST:PORT of node 0, for every node"
    )
    distributed.add_argument(
        "--dist-timeout",
        dest="dist_timeout_s",
        type=option_types.seconds("--dist-timeout"),
        help="seconds any rank waits for another before the run fails (default 600)",
    )
    distributed.add_argument(
        "--fsdp",
        action="store_true",
        default=None,
        help="shard the model's parameters, gradients and optimizer state across the processes (torch's "
        "FSDP2 fully_shard, torch 2.4 or newer) instead of a copy on each (DDP); needs --nproc 2 or more; "
        "language models only",
    )


def run_parser() -> argparse.ArgumentParser:
    """A parser of `suite run`'s options alone (what follows `suite run`)."""
    from suite.inputs.option_types import Parser

    parser = Parser(prog="suite run")
    parser.run_options = add_run_options(parser)  # the suite's own listing, read by run_options()
    return parser


def run_options() -> dict[str, argparse.Action]:
    """`suite run`'s options by name without dashes (e.g. "batch-size"), and their argparse actions;
    a switch with a `--no-` twin is listed once, under its positive name."""
    return dict(_listed_options())


@functools.cache  # the options are declared once: `suite compare` writes a rerun command per configuration
def _listed_options() -> dict[str, argparse.Action]:
    from suite.inputs.option_types import Switch

    options = {}
    for action in run_parser().run_options:
        for string in action.option_strings:
            name = string.lstrip("-")
            if not string.startswith("--") or name == "help":
                continue
            if isinstance(action, Switch) and string == action.negative:
                continue
            options[name] = action
    return options


def option_argv(name: str, value, action) -> list[str]:
    """One option as typed: `--name value`, or for a switch `--name` / `--no-name` (or nothing)."""
    from suite.inputs.errors import truth
    from suite.inputs.option_types import Switch

    if isinstance(action, Switch):
        return [f"--{name}" if truth(f"option {name!r}", value) else f"--no-{name}"]
    if action.nargs == 0:  # store_true: given or not
        return [f"--{name}"] if truth(f"option {name!r}", value) else []
    if isinstance(value, dict):  # repeatable KEY=VALUE options
        return [arg for key, item in value.items() for arg in (f"--{name}", f"{key}={item}")]
    if isinstance(value, (list, tuple)):
        return [arg for item in value for arg in (f"--{name}", str(item))]
    return [f"--{name}", str(value)]


def run_argv(options: dict) -> list[str]:
    """`suite run` options {name without dashes: value or list of values} -> argv, in the given order."""
    from suite.inputs.errors import UserError

    known = run_options()
    argv = []
    for name, value in options.items():
        if name not in known:
            raise UserError(f"unknown `suite run` option {name!r}")
        argv += option_argv(name, value, known[name])
    return argv


def config_argv(config: dict, leave_out: tuple[str, ...] = (), always: tuple[str, ...] = ()) -> list[str]:
    """The `suite run` options that reproduce a recorded config: the `always` ones first, then every option
    whose field holds a value other than its default (a run's record keeps what it was asked, resolved)."""
    from suite.spec import RunSpec

    defaults = RunSpec().to_record_config()
    known = run_options()
    options = {name: config[known[name].dest] for name in always if config.get(known[name].dest) is not None}
    for name, action in known.items():
        value = config.get(action.dest)
        if name in (*leave_out, *options) or value in (None, {}, []):
            continue
        if value == action.default or value == defaults.get(action.dest):
            continue
        options[name] = value
    return run_argv(options)


class OverrideAction(argparse.Action):
    """`--model-override ngf=8` (repeatable) -> {"ngf": 8}."""

    def __call__(self, parser, namespace, value, option_string=None):
        from suite.inputs.sizes import parse_override

        overrides = dict(getattr(namespace, self.dest, None) or {})
        key, parsed = parse_override(option_string, value)
        overrides[key] = parsed
        setattr(namespace, self.dest, overrides)


def spec_from_args(args):
    """The one way a run's RunSpec is built from `suite run`'s options (typed, or a sweep point's or a
    campaign run's, both typed back into options): the file given to --spec, else the run options given."""
    from suite.spec.run_spec import FLAT, RunSpec

    path = getattr(args, "spec", None)
    if path is None:
        return RunSpec.from_flat({k: v for k, v in vars(args).items() if k in FLAT and v is not None})
    typed = [
        name
        for name, action in run_options().items()
        if action.dest in FLAT and getattr(args, action.dest, None) not in (None, action.default)
    ]
    if typed:
        from suite.inputs.errors import UserError

        raise UserError(f"--spec {path!r} gives the whole run: drop --{typed[0]}, or change it in the file")
    return read_spec(path)


def read_spec(path: str):
    """The RunSpec in the JSON file PATH, or one line naming the file and what is wrong."""
    from suite.inputs.files import read_user_file
    from suite.spec.json_form import from_json

    source = f"--spec {path!r}"
    spec = from_json(read_user_file(path, "--spec"), source)
    _check_as_options_would(spec, source)
    return spec


def _check_as_options_would(spec, source: str) -> None:
    """Each value a spec file gives passes the check its `suite run` option makes when typed (a file is
    no way round `--batch-size 0` or `--max-memory -1`): the option's own parser, given the value as text."""
    from suite.inputs.errors import UserError
    from suite.spec.run_spec import FLAT

    flat = spec.flat()
    for action in run_options().values():
        value = flat.get(action.dest)
        if action.dest not in FLAT or value is None:
            continue
        part, attribute = FLAT[action.dest]
        where = f"{part}.{attribute}" if part else attribute
        try:
            if isinstance(action, OverrideAction):
                for key, item in value.items():
                    _check_override_as_typed(action, key, item)
            elif not isinstance(value, bool):
                check_text(action, str(value))
        except UserError as error:
            raise UserError(f"{source}: {where}: {error}") from None


def _check_override_as_typed(action: argparse.Action, key: str, item) -> None:
    """A spec's model override is what `--model-override KEY=VALUE` gives, of the same type: a number, true
    or false, or text, never null, a list or an object (each ended in an internal TypeError)."""
    from suite.inputs.errors import UserError, shown
    from suite.inputs.sizes import parse_override

    _, typed = parse_override(action.option_strings[0], f"{key}={item}")
    if type(typed) is not type(item) or typed != item:
        raise UserError(
            f"{key}: {shown(item)} is no value --model-override {key}=VALUE gives (a number, true or "
            "false, or text)"
        )


def check_text(action: argparse.Action, text: str) -> None:
    """TEXT as `suite run` would take it for the option ACTION: its type's check (a UserError naming the
    option and what it accepts), or for `--model-override` its KEY=VALUE check."""
    from suite.inputs.sizes import parse_override

    if isinstance(action, OverrideAction):
        parse_override(action.option_strings[0], text)
    elif action.type is not None:
        action.type(text)
