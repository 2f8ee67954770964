"""What each backend declares about itself: the options only it honours, its place in `auto` selection
and the gauges a run's summary shows. Read without importing the backend (torch, a vendor SDK), so that
`suite --help` and `suite report` stay light.

The command line (`suite run`'s option groups), the refusal of an option on another backend, the
report's grouping of runs and the summary's gauges are all derived from these declarations: adding a
backend option is one entry here (and the RunSpec field it sets, by its flat name). What `suite tune`
searches on a backend is declared here too, beside its options (`Tunable`; docs/tune.md).
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
class Tunable:
    """A knob `suite tune` searches on a backend, in the order the backend lists them.

    `values`: the alternatives it tries, each a set of `suite run` options (by name without dashes, as a
    sweep names them) put on top of the best configuration so far; options of the knob that a value does
    not name go back to their default (precision amp drops fp32's --tf32). `rule` instead names values
    made from what the default run recorded (its threads, workers, batch: suite/exploring/tune/knobs.py).
    `applies_to`: "all", "images" (the convolutional image models: channels-last) or "tokens" (the
    language models). `numerics`: a value is kept only after `--check-numerics` passes for it (a
    reduced precision, a compiled graph). `stage`: "loader" knobs run first and only on real data whose
    bottleneck probe says the input side limits; "batch" ones only when `suite tune --tune-batch` asks."""

    name: str
    values: tuple[dict, ...] = ()
    rule: str | None = None
    applies_to: str = "all"
    numerics: bool = False
    stage: str = "device"
    why: str = ""


# The loader's knobs, the suite's own (not a device's): tuned first, where the input side limits (seed
# 000's order). Pinned memory only where batches are copied to a device.
WORKERS = Tunable("workers", rule="workers", stage="loader", why="loader processes decoding in parallel")
PREFETCH = Tunable(
    "prefetch", ({"prefetch": 4},), stage="loader", why="batches each worker prepares ahead (default 2)"
)
PIN_MEMORY = Tunable(
    "pin-memory", rule="pin-memory", stage="loader", why="page-locked batches: faster, asynchronous copies"
)
# Every backend's: the batch (only asked for: it changes the global batch, and with it what the
# optimizer's learning rate means) and a language model's memory for speed.
BATCH = Tunable(
    "batch-size",
    rule="batch",
    stage="batch",
    why="doubled while it fits, then the fastest; changes the global batch (the learning rate may need to follow)",
)
ACCUMULATION = Tunable(
    "grad-accum",
    rule="grad-accum",
    applies_to="tokens",
    why="where the batch does not fit: micro-batches of half the size, twice as many a step (the global batch kept)",
)
CHECKPOINTING = Tunable(
    "activation-checkpointing",
    rule="checkpointing",
    applies_to="tokens",
    why="recomputed activations, tried only where they let a larger micro-batch fit",
)


@dataclass(frozen=True)
class Declared:
    name: str
    module: str  # the module whose import registers the Backend class
    auto_order: int | None  # place in `auto` selection, lowest first; None: never chosen by `auto`
    options: tuple[Option, ...] = ()
    gauges: tuple[tuple[str, str, str], ...] = ()  # (telemetry key, label, unit) for the summary
    tunables: tuple[Tunable, ...] = ()  # what `suite tune` searches, in this order


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
        # No pinned memory (nothing is copied), no channels-last or compile: the CPU backend honours
        # neither (they are CUDA options here; docs/tune.md).
        tunables=(
            WORKERS,
            PREFETCH,
            ACCUMULATION,
            Tunable("threads", rule="threads", why="compute threads: fewer can be faster on a shared host"),
            Tunable("precision", ({"precision": "bf16"},), numerics=True, why="bf16 autocast"),
            CHECKPOINTING,
            BATCH,
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
        # Fused AdamW / SGD are always on where torch has them (backends/cuda.py): nothing to search. The
        # attention kernel is torch's own choice, recorded (backends/cuda_sdpa.py): no option forces one.
        tunables=(
            WORKERS,
            PIN_MEMORY,
            PREFETCH,
            ACCUMULATION,
            Tunable(
                "precision",
                ({"precision": "bf16"}, {"precision": "fp32", "tf32": True}),
                numerics=True,
                why="from amp: bf16 autocast (no scaler), or fp32 with TF32 tensor cores",
            ),
            Tunable(
                "channels-last",
                ({"channels-last": True},),
                applies_to="images",
                why="NHWC: cuDNN's tensor-core convolutions without transposes",
            ),
            Tunable(
                "compile",
                (
                    {"compile": True},
                    {"compile": True, "compile-mode": "reduce-overhead"},
                    {"compile": True, "compile-mode": "max-autotune"},
                ),
                numerics=True,
                why="torch.compile; reduce-overhead replays CUDA graphs, max-autotune also searches kernels",
            ),
            CHECKPOINTING,
            BATCH,
        ),
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
        # A mode the installed release lacks is refused by the run (its record says so) and the search
        # goes on. HPU graphs (habana_frameworks' wrap_in_hpu_graph) have no option here yet.
        tunables=(
            WORKERS,
            PIN_MEMORY,
            PREFETCH,
            ACCUMULATION,
            Tunable(
                "hpu-mode",
                ({"hpu-mode": "lazy"}, {"hpu-mode": "eager"}, {"hpu-mode": "compile"}),
                numerics=True,
                why="the execution mode, each where the release has it (lazy graphs, eager, eager + torch.compile)",
            ),
            Tunable(
                "precision", ({"precision": "hmp"},), numerics=True, why="Habana's mixed precision (HMP)"
            ),
            Tunable(
                "fused", ({"no-fused": True},), why="torch.optim's AdamW/SGD instead of Habana's fused ones"
            ),
            CHECKPOINTING,
            BATCH,
        ),
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


def tunables(name: str) -> tuple[Tunable, ...]:
    """What `suite tune` searches on backend NAME, in order."""
    entry = declaration(name)
    return entry.tunables if entry else ()


def gauges() -> list[tuple[str, str, str]]:
    """The telemetry gauges the backends show in a run's summary: (key, label, unit)."""
    return [gauge for d in DECLARED for gauge in d.gauges]
