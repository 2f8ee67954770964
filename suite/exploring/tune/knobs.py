"""What `suite tune` tries, knob by knob: a backend's declared tunables (backends/declared.py) made into
candidates, each a set of `suite run` options put on top of the best configuration found so far, for this
workload and this data, with the values a rule takes from what the best run recorded (its threads, its
loader's workers, its batch).

Which knobs apply, and why one is left out, is decided here too (`left_out`): a knob that changes an
option the person fixed (`--set threads=1`) is theirs, not the search's; channels-last is for image
models; the loader's knobs wait for real data whose bottleneck probe says the input side limits; the
batch is changed only when asked (it changes the global batch); a language model's micro-batches are
split only where the batch does not fit.
"""

from __future__ import annotations

from dataclasses import dataclass

from suite.backends.declared import Tunable

# The options each rule's values set (a declared knob's are the names its values use).
RULE_OPTIONS = {
    "threads": ("threads",),
    "workers": ("workers",),
    "pin-memory": ("pin-memory",),
    "batch": ("batch-size",),
    "grad-accum": ("batch-size", "grad-accum"),
    "checkpointing": ("activation-checkpointing", "batch-size", "grad-accum"),
}
# The bottleneck probe's verdicts that say the input side limits (suite/diagnosis/cases.py):
# the loader, the copy to the device, or the loader's workers and compute's threads on one host's cores.
INPUT_SIDE = ("input-bound", "transfer-bound", "host-contention")
# Batch doublings tried on top of the best batch (2x, 4x, 8x): a larger batch past 8x is another recipe.
BATCH_DOUBLINGS = 3


@dataclass(frozen=True)
class Candidate:
    """One thing to try: the knob, the options it sets, and whether numerics must pass to keep it."""

    knob: str
    options: dict
    numerics: bool = False

    @property
    def label(self) -> str:
        """`precision=bf16`, `compile compile-mode=max-autotune`, `batch-size=32 grad-accum=2`."""
        return " ".join(name if value is True else f"{name}={value}" for name, value in self.options.items())


@dataclass(frozen=True)
class Facts:
    """What the best run so far recorded that the rules and the choice of knobs read."""

    unit: str = "images"  # what the workload counts: images, or a language model's tokens
    threads: int | None = None  # compute threads it ran
    cores: int | None = None  # the host's logical cores
    workers: int | None = None  # loader workers it ran (real data)
    pin_memory: bool | None = None
    batch_size: int | None = None
    grad_accum: int = 1
    real_data: bool = False
    bottleneck: str | None = None  # the probe's verdict (real data only)

    @classmethod
    def of(cls, record: dict) -> Facts:
        config, data = record.get("config") or {}, record.get("data") or {}
        device, context = record.get("device") or {}, record.get("context") or {}
        metrics = record.get("metrics") or {}
        return cls(
            unit=metrics.get("unit") or "images",
            threads=device.get("threads"),
            cores=context.get("cpu_cores_logical") or device.get("cores_logical"),
            workers=data.get("workers"),
            pin_memory=data.get("pin_memory"),
            batch_size=config.get("batch_size"),
            grad_accum=config.get("grad_accum") or 1,
            real_data=(config.get("data") or "synthetic") != "synthetic",
            bottleneck=(record.get("diagnosis") or {}).get("verdict"),
        )


def knob_options(tunable: Tunable) -> tuple[str, ...]:
    """The `suite run` options a knob sets: a rule's, or every name its values use, in order."""
    if tunable.rule:
        return RULE_OPTIONS[tunable.rule]
    return tuple(dict.fromkeys(name for value in tunable.values for name in value))


def left_out(tunable: Tunable, facts: Facts, fixed: set[str], tune_batch: bool) -> str | None:
    """Why the knob is not searched here (None: it is)."""
    if tunable.applies_to not in ("all", facts.unit):
        return f"only for {'language models' if tunable.applies_to == 'tokens' else 'image models'}"
    taken = [name for name in knob_options(tunable) if name in fixed]
    if taken:
        return f"--{taken[0]} is given (--set): the search leaves it as given"
    if tunable.stage == "loader":
        if not facts.real_data:
            return "synthetic data: no loader to tune (give --data)"
        if facts.bottleneck not in INPUT_SIDE:
            return f"the bottleneck probe says {facts.bottleneck or 'nothing'}: the input side does not limit"
    if tunable.stage == "batch" and not tune_batch:
        return "the global batch is kept (--tune-batch searches it)"
    if tunable.rule == "grad-accum":
        return "used only where the default batch does not fit"
    if tunable.rule == "checkpointing" and facts.grad_accum < 2:
        return "only where memory binds (micro-batches): the batch fits without it"
    return None


def candidates(tunable: Tunable, facts: Facts) -> list[Candidate]:
    """The knob's values as candidates, in the order they are tried."""
    if tunable.rule is None:
        return [Candidate(tunable.name, dict(value), tunable.numerics) for value in tunable.values]
    values = _RULES[tunable.rule](facts)
    return [Candidate(tunable.name, value, tunable.numerics) for value in values]


def stops_after(tunable: Tunable) -> str | None:
    """When a knob's candidates stop early: "failure" (a larger batch than one that did not fit fails
    too), "fit" (the first split that fits is the one: smaller micro-batches only cost more)."""
    return {"batch": "failure", "grad-accum": "fit"}.get(tunable.rule or "")


def _threads(facts: Facts) -> list[dict]:
    """Halving the threads the best run computed with, down to one, and every logical core where it used
    fewer: on a shared host fewer threads can be faster (less contention), on a large one more."""
    ran = facts.threads or facts.cores or 1
    values, count = [], ran // 2
    while count >= 1:
        values.append(count)
        count //= 2
    if facts.cores and facts.cores > ran:
        values.insert(0, facts.cores)
    return [{"threads": value} for value in values]


def _workers(facts: Facts) -> list[dict]:
    """Twice the workers the loader ran (at most two a core) and half of them."""
    ran = facts.workers or 0
    most = 2 * (facts.cores or 1)
    values = [min(max(2 * ran, 2), most), ran // 2 if ran > 1 else None]
    return [{"workers": value} for value in dict.fromkeys(values) if value is not None and value != ran]


def _pin_memory(facts: Facts) -> list[dict]:
    return [{"pin-memory": not facts.pin_memory}] if facts.pin_memory is not None else []


def _batch(facts: Facts) -> list[dict]:
    batch = facts.batch_size or 1
    return [{"batch-size": batch * 2**k} for k in range(1, BATCH_DOUBLINGS + 1)]


def _grad_accum(facts: Facts) -> list[dict]:
    """The global batch in ever smaller micro-batches (half, a quarter, ...), one optimizer step each."""
    batch, accum, values = facts.batch_size or 1, facts.grad_accum, []
    while batch % 2 == 0:
        batch, accum = batch // 2, accum * 2
        values.append({"batch-size": batch, "grad-accum": accum})
    return values


def _checkpointing(facts: Facts) -> list[dict]:
    """Recomputed activations with micro-batches twice as large, half as many (the global batch kept)."""
    if facts.grad_accum % 2 or not facts.batch_size:
        return []
    return [
        {
            "activation-checkpointing": True,
            "batch-size": facts.batch_size * 2,
            "grad-accum": facts.grad_accum // 2,
        }
    ]


_RULES = {
    "threads": _threads,
    "workers": _workers,
    "pin-memory": _pin_memory,
    "batch": _batch,
    "grad-accum": _grad_accum,
    "checkpointing": _checkpointing,
}
