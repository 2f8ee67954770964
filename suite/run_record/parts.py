"""The parts of a run record as types: each a frozen dataclass whose fields are the JSON fields readers use,
named as in the file, with every field it does not model kept in `extra`, so that a part read from JSON
writes back the same JSON (`Part.from_json(d).to_json() == d`, key order included).

A part is only a view of a checked mapping: `schema.check_record` decides what a record may hold, and these
types never refuse anything. Lists and free-form mappings (telemetry series, counters) are kept as they were
read, not copied: building a part must stay cheap, since a report reads thousands of records.

`Metrics` is unit-aware: its `images_*` fields are the sample figures every statistic, comparison and
price is computed from (a token workload's samples are sequences, suite/measurement/units.py), and its
`throughput*` properties are the same figures in the record's unit (images, or tokens).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

_EMPTY: Mapping[str, Any] = {}
_BOOKKEEPING = ("keys", "extra", "nulls")


@dataclasses.dataclass(frozen=True)
class Part:
    """One mapping of a record. `keys`: the fields the JSON held, in its order (None: built in code, where
    the modelled fields that are set are written in their declared order); `extra`: the fields no type
    models, as read."""

    keys: Sequence[str] | None = None
    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    # Parts the JSON held as null: readers see an empty part, and null is written back.
    nulls: frozenset = frozenset()

    # {JSON field: part type} for fields that are parts themselves; filled per class. Those in _always are
    # an empty part where the JSON has none (readers never test for None); the others stay None.
    _nested: ClassVar[Mapping[str, type]] = _EMPTY
    _always: ClassVar[frozenset] = frozenset()
    _names: ClassVar[tuple] = ()  # the modelled JSON fields in declared order, computed once per class
    _name_set: ClassVar[frozenset] = frozenset()
    _plain: ClassVar[dict] = {}  # fields with a default value, and those made by a factory, per class
    _made: ClassVar[dict] = {}

    @classmethod
    def names(cls) -> tuple:
        if "_names" not in cls.__dict__:
            cls._names = tuple(f.name for f in dataclasses.fields(cls) if f.name not in _BOOKKEEPING)
            cls._name_set = frozenset(cls._names)
        return cls._names

    @classmethod
    def from_json(cls, data: Mapping[str, Any]):
        """The part of a mapping (a checked record's section); a field a type does not model goes to extra."""
        cls.names()
        names = cls._name_set
        values = {}
        extra = {}
        nulls = ()
        nested = cls._nested
        for key, value in data.items():
            if key not in names:
                extra[key] = value
            elif key not in nested:
                values[key] = value
            elif isinstance(value, dict):
                values[key] = nested[key].from_json(value)
            elif value is None and key in cls._always:
                values[key] = nested[key]._blank()
                nulls += (key,)
            else:
                values[key] = value
        values.update(keys=tuple(data), extra=extra, nulls=frozenset(nulls))
        return cls._made_of(values)

    # A report reads thousands of records: a part is made by filling its fields directly, not through the
    # frozen dataclass's __init__ (one object.__setattr__ per field, ten times slower for the 50 of Metrics).
    @classmethod
    def _made_of(cls, values: dict):
        if "_plain" not in cls.__dict__:
            plain, made = {}, {}
            for f in dataclasses.fields(cls):
                if f.default is not dataclasses.MISSING:
                    plain[f.name] = f.default
                else:
                    made[f.name] = f.default_factory
            cls._plain, cls._made = plain, made
        part = object.__new__(cls)
        state = part.__dict__
        state.update(cls._plain)
        for name, factory in cls._made.items():
            if name not in values:
                state[name] = (
                    factory._blank() if isinstance(factory, type) and issubclass(factory, Part) else factory()
                )
        state.update(values)
        return part

    @classmethod
    def _blank(cls):
        return cls._made_of({})

    @classmethod
    def with_every_field(cls, **values):
        """A part built in code whose JSON holds every modelled field in declared order, null where unset:
        an entry of a list (a record's `ranks`, a per-device run's `devices`) whose entries all have the
        same fields."""
        return cls(keys=cls.names(), **values)

    @classmethod
    def list_of(cls, entries) -> list:
        """Each mapping of a list as this part (a list the schema does not check: anything else is left
        out)."""
        return [cls.from_json(entry) for entry in entries or () if isinstance(entry, dict)]

    def to_json(self) -> dict:
        """The mapping this part stands for: read from JSON, the same JSON."""
        out = {}
        names = self._name_set if self.names() else ()
        for key in self.keys or ():
            if key in self.extra:
                out[key] = self.extra[key]
            elif key in self.nulls and getattr(self, key).is_empty():
                out[key] = None
            elif key in names:
                out[key] = _json_of(getattr(self, key))
        for name in self.names():  # set in code after it was read, or built in code
            if name not in out:
                value = getattr(self, name)
                if value is not None and not (isinstance(value, Part) and value.is_empty()):
                    out[name] = _json_of(value)
        for key, value in self.extra.items():
            if key not in out:
                out[key] = value
        return out

    def is_empty(self) -> bool:
        return not self.keys and not self.extra and all(getattr(self, n) is None for n in self.names())

    def get(self, name: str, default=None):
        """A field by its JSON name, modelled or not (for the rare reader of a field no type models)."""
        self.names()
        if name in self._name_set:
            value = getattr(self, name)
            return default if value is None else value
        return self.extra.get(name, default)

    def replaced(self, **changes):
        """This part with some fields changed (modelled ones as keywords), keeping its key order."""
        return dataclasses.replace(self, **changes)


def _json_of(value):
    return value.to_json() if isinstance(value, Part) else value


@dataclasses.dataclass(frozen=True)
class Error(Part):
    """Why a run failed: the exception's type and one line, and what to do (an out-of-memory's hint)."""

    type: str | None = None
    message: str | None = None
    hint: str | None = None
    exit_status: int | None = None


@dataclasses.dataclass(frozen=True)
class Context(Part):
    """The machine and software a run ran on (suite/context.py)."""

    utc_time: str | None = None
    host: str | None = None
    cpu_model: str | None = None
    suite_version: str | None = None
    git_commit: str | None = None
    torch: str | None = None
    instance_source: Mapping[str, Any] | None = None
    load: Mapping[str, Any] | None = None


@dataclasses.dataclass(frozen=True)
class Device(Part):
    """The device that ran the steps (Backend.device_info)."""

    backend: str | None = None
    name: str | None = None
    index: int | None = None
    count: int | None = None
    threads: int | None = None
    execution_mode: str | None = None
    total_memory_bytes: int | None = None
    peak_tflops: float | None = None


@dataclasses.dataclass(frozen=True)
class Data(Part):
    """Where the batches came from and how they were loaded."""

    source: str | None = None
    path: str | None = None
    images: int | None = None
    workers: int | None = None
    prefetch: int | None = None
    pin_memory: bool | None = None


IMAGES = "images"
# How an output names a rate in a record's unit (Metrics.unit_name): images, or a token workload's tokens.
RATE_LABELS = {IMAGES: "img/s", "tokens": "tok/s"}


def rate_label(unit: str) -> str:
    return RATE_LABELS.get(unit, f"{unit}/s")


@dataclasses.dataclass(frozen=True)
class Metrics(Part):
    """What the timed windows measured (windows.window_metrics, the runner, flops.mfu_metrics, units.py)."""

    # the sample figures (images, or a token workload's sequences): what statistics and prices use
    images_per_second: float | None = None
    images_per_hour: float | None = None
    images_per_second_mean: float | None = None
    images_per_second_stdev: float | None = None
    images_per_second_min: float | None = None
    images_per_second_max: float | None = None
    images_per_second_cv: float | None = None
    step_time_s: float | None = None
    window_images_per_second: Sequence[float] | None = None
    window_time_s: Sequence[float] | None = None
    images_per_window: float | None = None
    images_timed: float | None = None
    time_timed_s: float | None = None
    images_per_step: float | None = None
    steps_timed: int | None = None
    # warm-up and the window length (suite/measurement/window_length.py)
    warmup_steps: int | None = None
    warmup_time_s: float | None = None
    time_to_first_step_s: float | None = None
    steps_per_window: int | None = None
    steps_per_window_chosen_by: str | None = None
    steps_per_window_default: int | None = None
    steps_per_window_max: int | None = None
    min_window_s: float | None = None
    warmup_step_time_s: float | None = None
    warmup_steps_timed: int | None = None
    final_loss: Any | None = None
    # efficiency (suite/measurement/flops.py) and energy
    flops_per_image: float | None = None
    model_tflops_per_second: float | None = None
    mfu: float | None = None
    mfu_peak_tflops: float | None = None
    energy_per_image_j: float | None = None
    energy_method: str | None = None
    # a per-device run's sum (suite/launching/per_device.py)
    images_per_second_per_device: Sequence[float] | None = None
    per_device_spread: float | None = None
    # a token workload's figures (suite/measurement/units.py)
    unit: str | None = None
    tokens_per_sample: int | None = None
    tokens_per_second: float | None = None
    tokens_per_hour: float | None = None
    tokens_per_second_min: float | None = None
    tokens_per_second_max: float | None = None
    tokens_per_second_stdev: float | None = None
    tokens_per_step: float | None = None
    flops_per_token: float | None = None
    energy_per_token_j: float | None = None

    # The JSON name of the median rate, `images_per_second`: also the id that outputs give the figure
    # (`suite compare`'s metric, `suite scale`'s row), taken from here so that it is the record's.
    RATE: ClassVar[str] = "images_per_second"

    # -- in the record's unit -------------------------------------------------------------------------------
    @property
    def unit_name(self) -> str:
        """What the throughput counts: "images" (every record without a unit), or "tokens"."""
        return self.unit or IMAGES

    @property
    def rate_label(self) -> str:
        """The throughput's label: img/s, or tok/s."""
        return rate_label(self.unit_name)

    @property
    def per_sample(self) -> float:
        """Units in one sample: 1 for images, a sequence's tokens for a token workload."""
        if self.unit in (None, IMAGES):
            return 1
        found = self.tokens_per_sample if self.unit == "tokens" else self.extra.get(f"{self.unit}_per_sample")
        return found or 1

    def _in_unit(self, stored_name: str, sample_value):
        """A figure in the record's unit: the one the record stores, else the sample figure × per sample."""
        if self.unit not in (None, IMAGES):
            stored = self.get(f"{self.unit}_{stored_name}")
            if stored is not None:
                return stored
        return None if sample_value is None else sample_value * self.per_sample

    @property
    def throughput(self) -> float | None:
        """Images or tokens per second (the median over the windows), by the record's unit."""
        return self._in_unit("per_second", self.images_per_second)

    @property
    def throughput_per_hour(self) -> float | None:
        return self._in_unit("per_hour", self.images_per_hour)

    @property
    def throughput_mean(self) -> float | None:
        return self._in_unit("per_second_mean", self.images_per_second_mean)

    @property
    def throughput_stdev(self) -> float | None:
        return self._in_unit("per_second_stdev", self.images_per_second_stdev)

    @property
    def throughput_min(self) -> float | None:
        return self._in_unit("per_second_min", self.images_per_second_min)

    @property
    def throughput_max(self) -> float | None:
        return self._in_unit("per_second_max", self.images_per_second_max)

    @property
    def throughput_cv(self) -> float | None:
        """The windows' coefficient of variation: the same in every unit."""
        return self.images_per_second_cv

    @property
    def window_throughputs(self) -> list | None:
        """Each window's rate in the record's unit."""
        rates = self.window_images_per_second
        if rates is None or self.per_sample == 1:
            return None if rates is None else list(rates)
        return [rate * self.per_sample for rate in rates]

    @property
    def items_per_window(self) -> float | None:
        return self._in_unit("per_window", self.images_per_window)

    @property
    def items_timed(self) -> float | None:
        return self._in_unit("timed", self.images_timed)


@dataclasses.dataclass(frozen=True)
class Memory(Part):
    """The run's peak memory (Backend.memory_stats)."""

    peak_memory_bytes: int | None = None
    peak_allocated_bytes: int | None = None
    peak_reserved_bytes: int | None = None
    allocated_bytes: int | None = None
    total_memory_bytes: int | None = None
    rss_bytes: int | None = None


@dataclasses.dataclass(frozen=True)
class Telemetry(Part):
    """Samples taken inside the timed windows (suite/measurement/telemetry.py); series and counters stay
    mappings."""

    interval_s: float | None = None
    samples: int | None = None
    summary: Mapping[str, Any] | None = None
    series: Mapping[str, Any] | None = None
    windows_s: Sequence[Any] | None = None
    counters: Mapping[str, Any] | None = None
    failed: Mapping[str, str] | None = None
    own_cpu_cores: float | None = None


@dataclasses.dataclass(frozen=True)
class Workload(Part):
    """What was trained (a workload's name, description, size and parameter counts)."""

    name: str | None = None
    description: str | None = None
    image_size: int | None = None
    num_classes: int | None = None
    parameters: Mapping[str, Any] | None = None
    unit: str | None = None
    tokens_per_sample: int | None = None


@dataclasses.dataclass(frozen=True)
class Numerics(Part):
    """The numerics check's verdict (suite/numerics/check.py); its evidence stays in extra."""

    verdict: str | None = None
    reason: str | None = None
    time_s: float | None = None
    run_s: float | None = None
    ledger: Any | None = None


@dataclasses.dataclass(frozen=True)
class Diagnosis(Part):
    """Where a real-data run's bottleneck is (suite/diagnosis/rules.py)."""

    verdict: str | None = None
    message: str | None = None
    suggestions: Sequence[str] | None = None


@dataclasses.dataclass(frozen=True)
class Group(Part):
    """The group of runs a run belongs to (`suite run --repeat`, `--against`)."""

    id: str | None = None
    index: int | None = None
    of: int | None = None
    position: int | None = None
    interleaved_with: str | None = None


@dataclasses.dataclass(frozen=True)
class DeviceCopy(Part):
    """One copy of a per-device run, as its `devices` list holds it: its pin, outcome and rates (a rate
    only where it succeeded)."""

    copy: int | None = None
    pin: Mapping[str, str] | None = None
    run_id: str | None = None
    status: str | None = None
    error: Mapping[str, Any] | None = None
    device: Mapping[str, Any] | None = None
    images_per_second: float | None = None
    window_images_per_second: Sequence[float] | None = None
    time_timed_s: float | None = None


@dataclasses.dataclass(frozen=True)
class PerDevice(Part):
    """A `suite run --per-device N` run's copies (suite/launching/per_device.py)."""

    copies: int | None = None
    devices: Sequence[Mapping[str, Any]] | None = None
    images_per_second_sum: float | None = None
    timed_overlap: float | None = None

    @property
    def entries(self) -> list[DeviceCopy]:
        """The copies of `devices`, each as the type."""
        return DeviceCopy.list_of(self.devices)


@dataclasses.dataclass(frozen=True)
class Rank(Part):
    """One rank of a distributed run, as the record's `ranks` list holds it: what it told rank 0
    (suite/measurement/distributed.py), or why the launcher saw it fail (its other fields in extra)."""

    rank: int | None = None
    local_rank: int | None = None
    node_rank: int | None = None
    host: str | None = None
    pid: int | None = None
    status: str | None = None
    error: Mapping[str, Any] | None = None
    window_time_s: Sequence[float] | None = None
    images_per_second: float | None = None
    final_loss: Any | None = None
    peak_memory_bytes: int | None = None
    device: str | None = None
