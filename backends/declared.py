"""What each backend declares about itself: the options only it honours, its place in `auto` selection
and the gauges a run's summary shows. Read without importing the backend (torch, a vendor SDK), so that
`suite --help` and `suite report` stay light.

The command line (`suite run`'s option groups), the refusal of an option on another backend, the
report's grouping of runs and the summary's gauges are all derived from these declarations: adding a
backend option is one entry here (and the RunSpec field it sets, by its flat name).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Option:
    """A `suite run` option that only some backends honour.

    `argparse` holds the rest of the option's declaration (action, choices, metavar, type) as given to
    `add_argument`; `changes_number` says whether two runs that differ in it measure different things
    (and so are two report rows)."""

    field: str  # the RunSpec field it sets, by its flat name (suite.spec.run_spec.FLAT)
    flag: str  # what a person types, e.g. "--tf32"
    help: str
    changes_number: bool = True
    argparse: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Declared:
    name: str
    module: str  # the module whose import registers the Backend class
    auto_order: int | None  # place in `auto` selection, lowest first; None: never chosen by `auto`
    options: tuple[Option, ...] = ()
    gauges: tuple[tuple[str, str, str], ...] = ()  # (telemetry key, label, unit) for the summary


def _byte_size(flag: str):
    from suite.inputs.option_types import byte_size

    return byte_size(flag)


def _non_negative_int(flag: str):
    from suite.inputs.option_types import non_negative_int

    return non_negative_int(flag)


# torch.compile's modes beside its default (torch/__init__.py, `compile`'s docstring): "reduce-overhead"
# replays the graph as CUDA graphs, "max-autotune" also times Triton kernels and matmul choices. Its
# default is no --compile-mode (torch's "default" by another name would split a report's rows).
COMPILE_MODES = ("reduce-overhead", "max-autotune")

# The most specialised device first in `auto`: hpu, then cuda, then cpu.
DECLARED = (
    Declared(
        "cpu",
        "cpu",
        auto_order=2,
        options=(
            Option(
                "max_memory_bytes",
                "--max-memory",
                "memory ceiling, e.g. 2GiB or 512MiB: on the CPU it stands in for device memory, and "
                "going over it is an out-of-memory failure",
                changes_number=False,
                argparse={"metavar": "SIZE", "type": _byte_size("--max-memory")},
            ),
        ),
    ),
    Declared(
        "cuda",
        "cuda",
        auto_order=1,
        options=(
            Option(
                "device_index",
                "--device-index",
                "GPU to use (default: $LOCAL_RANK under torchrun, else 0)",
                changes_number=False,
                # A whole number when typed, as the spec and the record hold it (not the text "1").
                argparse={"type": _non_negative_int("--device-index")},
            ),
            Option(
                "tf32",
                "--tf32",
                "allow TF32 tensor cores for fp32 math (default off: fp32 means fp32)",
                argparse={"action": "store_true", "default": None},
            ),
            Option(
                "channels_last",
                "--channels-last",
                "channels-last (NHWC) memory format for the model and image batches",
                argparse={"action": "store_true", "default": None},
            ),
            Option(
                "compile",
                "--compile",
                "torch.compile the model(s); compile time shows in time-to-first-step",
                argparse={"action": "store_true", "default": None},
            ),
            Option(
                "compile_mode",
                "--compile-mode",
                "with --compile: torch.compile's mode, reduce-overhead (CUDA graphs) or max-autotune (also "
                "searches kernels; minutes of compiling); default: torch's own",
                argparse={"choices": list(COMPILE_MODES)},
            ),
        ),
        gauges=(("gpu_util_percent", "GPU", "%"), ("gpu_power_w", "GPU power", " W")),
    ),
    Declared(
        "hpu",
        "hpu",
        auto_order=0,
        options=(
            Option(
                "hpu_mode",
                "--hpu-mode",
                "Gaudi execution mode: lazy (mark_step graphs), eager, or compile (eager + torch.compile "
                "hpu_backend); default: PT_HPU_LAZY_MODE if set, else the installed Habana release's default",
                argparse={"choices": ["lazy", "eager", "compile"]},
            ),
            Option(
                "hpu_fused",
                "--no-fused",
                "use torch.optim's AdamW/SGD instead of Habana's FusedAdamW/FusedSGD",
                argparse={"action": "store_false", "default": None},
            ),
            Option(
                "hpu_bf16_ops",
                "--hpu-bf16-ops",
                "op list run in bf16 (PT_HPU_AUTOCAST_LOWER_PRECISION_OPS_LIST, or HMP's bf16 list)",
                argparse={"metavar": "FILE"},
            ),
            Option(
                "hpu_fp32_ops",
                "--hpu-fp32-ops",
                "op list kept in fp32 (PT_HPU_AUTOCAST_FP32_OPS_LIST, or HMP's fp32 list)",
                argparse={"metavar": "FILE"},
            ),
        ),
        gauges=(("hpu_util_percent", "HPU (AIP)", "%"), ("hpu_power_w", "HPU power", " W")),
    ),
)


def declaration(name: str) -> Declared | None:
    return next((d for d in DECLARED if d.name == name), None)


def names() -> list[str]:
    return sorted(d.name for d in DECLARED)


def auto_order() -> tuple[str, ...]:
    """The order `auto` tries the backends in."""
    ranked = [d for d in DECLARED if d.auto_order is not None]
    return tuple(d.name for d in sorted(ranked, key=lambda d: d.auto_order))


def device_options() -> dict[str, Option]:
    """Every backend-owned option by its flat RunSpec field."""
    return {option.field: option for d in DECLARED for option in d.options}


def owners(field_name: str) -> list[str]:
    return [d.name for d in DECLARED if any(o.field == field_name for o in d.options)]


def setting_fields() -> tuple[str, ...]:
    """The backend-owned flat RunSpec fields that change what is measured (runs differing in one differ)."""
    return tuple(name for name, option in device_options().items() if option.changes_number)


def gauges() -> list[tuple[str, str, str]]:
    """The telemetry gauges the backends show in a run's summary: (key, label, unit)."""
    return [gauge for d in DECLARED for gauge in d.gauges]
