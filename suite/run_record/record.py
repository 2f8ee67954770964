"""The run record as a type: `RunRecord`, a frozen dataclass of the record's top fields and its parts
(parts.py), read from JSON by `RunRecord.from_json` (which applies `schema.check_record`, the one check every
reader applies, and raises what it raises) and written back by `to_json`, field for field and in the same
order: `RunRecord.from_json(d).to_json() == d` for every record the suite reads.

`config` stays a plain mapping (the run's settings as `RunSpec.to_record_config` writes them). A top field no type
models (`loader`, `ranks`, `profile`, `non_finite` ...) is kept in `extra`, read with `record.get(name)`; the
`ranks` entries are read as `Rank` parts through `RunRecord.ranks`.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from typing import Any

from suite.run_record.parts import (
    Context,
    Data,
    Device,
    Diagnosis,
    Error,
    Group,
    Memory,
    Metrics,
    Numerics,
    Part,
    PerDevice,
    Rank,
    Telemetry,
    Workload,
)
from suite.run_record.schema import SCHEMA, SCHEMA_VERSION, check_record

# Set by a command for the runs it starts (`suite sweep` -> "sweep"): the record says which command made
# it, so a report can leave sub-runs out unless asked for.
ORIGIN_ENV = "SUITE_ORIGIN"
# Set by `suite tune` for its trials: {"search", "run", "trial", "role"} as JSON, kept as the record's
# `tune` (which search made it, its place in the search, what it tried; suite/exploring/tune/lab.py).
TUNE_ENV = "SUITE_TUNE"

# A new record's fields, in the order every record has had them (the rest follow as a run adds them).
_SKELETON = (
    "schema",
    "schema_version",
    "run_id",
    "status",
    "error",
    "warnings",
    "origin",
    "context",
    "config",
    "device",
    "data",
    "metrics",
    "memory",
    "telemetry",
)

_PARTS = {
    "error": Error,
    "context": Context,
    "device": Device,
    "data": Data,
    "metrics": Metrics,
    "memory": Memory,
    "telemetry": Telemetry,
    "workload": Workload,
    "numerics": Numerics,
    "diagnosis": Diagnosis,
    "group": Group,
    "per_device": PerDevice,
}


@dataclasses.dataclass(frozen=True)
class RunRecord(Part):
    """One run: what was asked (`config`), where it ran (`context`, `device`, `data`), what was measured
    (`metrics`, `memory`, `telemetry`) and how it ended (`status`, `error`, `warnings`). Every part is there
    (empty where the JSON has none); `error` is None unless the run failed."""

    schema: str = SCHEMA
    schema_version: int = SCHEMA_VERSION
    run_id: str | None = None
    status: str | None = None
    error: Error | None = None
    warnings: Sequence[str] = dataclasses.field(default_factory=list)
    origin: str | None = None
    kind: str | None = None
    backend_choice: str | None = None
    context: Context = dataclasses.field(default_factory=Context)
    config: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    device: Device = dataclasses.field(default_factory=Device)
    data: Data = dataclasses.field(default_factory=Data)
    metrics: Metrics = dataclasses.field(default_factory=Metrics)
    memory: Memory = dataclasses.field(default_factory=Memory)
    telemetry: Telemetry = dataclasses.field(default_factory=Telemetry)
    workload: Workload = dataclasses.field(default_factory=Workload)
    numerics: Numerics = dataclasses.field(default_factory=Numerics)
    diagnosis: Diagnosis = dataclasses.field(default_factory=Diagnosis)
    group: Group = dataclasses.field(default_factory=Group)
    sweep_point: Mapping[str, Any] | None = None
    per_device: PerDevice = dataclasses.field(default_factory=PerDevice)

    _nested = _PARTS
    _always = frozenset(_PARTS) - {"error"}

    @classmethod
    def new(cls, run_id: str, context: Mapping[str, Any], config: Mapping[str, Any]) -> RunRecord:
        """A run's record before it has measured anything: an error until the run says otherwise. A
        tuning trial's says which search made it (`tune`, after `origin`)."""
        tag = tune_tag(os.environ.get(TUNE_ENV))
        keys = _SKELETON if tag is None else (*_SKELETON[:7], "tune", *_SKELETON[7:])
        return cls(
            keys=keys,
            extra={} if tag is None else {"tune": tag},
            run_id=run_id,
            status="error",
            origin=os.environ.get(ORIGIN_ENV) or "run",
            context=Context.from_json(context),
            config=config,
        )

    @classmethod
    def from_json(cls, data) -> RunRecord:
        """The record of parsed JSON, checked as every reader checks it: NotARecord (OtherSuiteRecord,
        BadRecord naming the field) for what is not a run record this suite reads."""
        return cls.from_checked(check_record(data))

    @classmethod
    def from_checked(cls, data: Mapping[str, Any]) -> RunRecord:
        """The record of a mapping already checked, or made by the suite itself (no check: cheap)."""
        return Part.from_json.__func__(cls, data)

    @classmethod
    def of(cls, record) -> RunRecord:
        """`record` as a RunRecord: itself, a gathered record's (built once), or a checked mapping's record
        (readers that take either)."""
        if isinstance(record, RunRecord):
            return record
        if isinstance(record, GatheredRecord):
            return record.typed
        return cls.from_checked(record)

    # -- what readers ask of every record ----------------------------------------------------------------
    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def workload_name(self) -> str | None:
        return self.config.get("workload")

    @property
    def backend(self) -> str | None:
        return self.config.get("backend")

    @property
    def ranks(self) -> list[Rank]:
        """A distributed run's ranks (the `ranks` list, kept in extra as read), each as the type."""
        return Rank.list_of(self.extra.get("ranks"))


def tune_tag(text: str | None) -> dict | None:
    """SUITE_TUNE's JSON as a record's `tune`: a mapping of plain values, else None (a value only a suite
    parent hands down, context.HANDED_DOWN; anything else is not a tag)."""
    import json

    if not text:
        return None
    try:
        tag = json.loads(text)
    except ValueError:
        return None
    plain = (str, int, float, bool, type(None))
    if not isinstance(tag, dict) or not all(isinstance(v, plain) for v in tag.values()):
        return None
    return tag


class GatheredRecord(dict):
    """A checked record as a report reads it: the mapping its stages read, whose RunRecord (`typed`) and
    metrics are each built at most once, when first asked, so that what every row asks of each run
    (facts.images_per_hour, per group, per sort, per comparison) reads fields instead of building parts on
    every call. A copy made with `{**record}` is a plain mapping again: changed, it is another record."""

    __slots__ = ("_typed", "_metrics")

    def __init__(self, checked: Mapping[str, Any]):
        super().__init__(checked)
        self._typed = self._metrics = None

    @property
    def typed(self) -> RunRecord:
        if self._typed is None:
            self._typed = RunRecord.from_checked(self)
        return self._typed

    @property
    def metrics(self) -> Metrics:
        # Only the metrics, where that is all a report asks: the whole record costs five times as much.
        if self._metrics is None:
            self._metrics = self._typed.metrics if self._typed is not None else _metrics_of_mapping(self)
        return self._metrics


def metrics_of(record: RunRecord | Mapping[str, Any] | None) -> Metrics:
    """A record's metrics as the type, from a RunRecord or from a record still held as a mapping (a child's
    record as it reported it): readers ask for fields, never for a mapping's keys."""
    if isinstance(record, RunRecord):
        return record.metrics
    if isinstance(record, GatheredRecord):
        return record.metrics
    return _metrics_of_mapping(record)


def _metrics_of_mapping(record: Mapping[str, Any] | None) -> Metrics:
    metrics = (record or {}).get("metrics")
    return Metrics.from_json(metrics) if isinstance(metrics, dict) else Metrics()
