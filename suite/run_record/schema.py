"""What a run record is: its schema name and version, the statuses a run ends in, and the one check
(`check_record`) that every reader applies before it uses a record.

A record is JSON a person can edit, copy half of, or damage; the report must not crash on one bad file.
`check_record` refuses a file that is not a run record of this version, then checks the fields the
readers use (types, finiteness, ranges, hashable settings) and raises `BadRecord` naming the first bad
field, e.g. `field metrics.images_per_second: must be a finite number >= 0, got nan`; the report skips
that file with one line and goes on. Unknown fields are allowed (readers ignore them), so records of this
schema version from newer suites still load.
"""

from __future__ import annotations

import math

SCHEMA = "suite.run"
SCHEMA_VERSION = 1

STATUSES = ("ok", "diverged", "oom", "error")


class NotARecord(ValueError):
    """A JSON file that is not a suite run record of a version this suite reads."""


class OtherSuiteRecord(NotARecord):
    """A record the suite wrote that is not a run (a batch-size search's summary, say)."""


class BadRecord(NotARecord):
    """A suite.run record with a field of the wrong type or value."""

    def __init__(self, field: str, expected: str, value):
        shown = repr(value)
        super().__init__(
            f"field {field}: must be {expected}, got {shown[:60]}{'…' if len(shown) > 60 else ''}"
        )
        self.field = field


_MISSING = object()


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _scalar(value) -> bool:
    """A setting value the report can group by and print: JSON's scalars."""
    return value is None or isinstance(value, (str, bool, int, float))


class _Section:
    """Checks on one mapping of the record (`where` names it in messages)."""

    def __init__(self, mapping, where: str, required: bool = False):
        if mapping is _MISSING or (mapping is None and not required):
            mapping = {}
        if not isinstance(mapping, dict):
            raise BadRecord(where, "an object (a mapping of fields)", mapping)
        self.mapping, self.where = mapping, where

    def _get(self, name):
        return self.mapping.get(name, _MISSING)

    def _path(self, name) -> str:
        return f"{self.where}.{name}" if self.where else name

    def text(self, name, required=False):
        value = self._get(name)
        if value is _MISSING or value is None:
            if required:
                raise BadRecord(self._path(name), "a non-empty text", None if value is _MISSING else value)
            return
        if not isinstance(value, str) or (required and not value.strip()):
            raise BadRecord(self._path(name), "a text" + (" (non-empty)" if required else " or null"), value)

    def whole(self, name, minimum=0):
        value = self._get(name)
        if value is _MISSING or value is None:
            return
        if not _is_number(value) or not math.isfinite(value) or value != int(value) or value < minimum:
            raise BadRecord(self._path(name), f"a whole number >= {minimum} or null", value)

    def number(self, name):
        value = self._get(name)
        if value is _MISSING or value is None:
            return
        if not _is_number(value) or not math.isfinite(value) or value < 0:
            raise BadRecord(self._path(name), "a finite number >= 0 or null", value)

    def numbers(self, name):
        value = self._get(name)
        if value is _MISSING or value is None:
            return
        if not isinstance(value, list):
            raise BadRecord(self._path(name), "a list of finite numbers >= 0", value)
        for i, item in enumerate(value):
            if not _is_number(item) or not math.isfinite(item) or item < 0:
                raise BadRecord(f"{self._path(name)}[{i}]", "a finite number >= 0", item)

    def flag(self, name):
        value = self._get(name)
        if value is not _MISSING and value is not None and not isinstance(value, bool):
            raise BadRecord(self._path(name), "true, false or null", value)

    def scalars(self, name):
        """A mapping of plain values (model overrides): the report prints and groups by them."""
        value = self._get(name)
        if value is _MISSING or value is None:
            return
        if not isinstance(value, dict):
            raise BadRecord(self._path(name), "an object of plain values", value)
        for key, item in value.items():
            if not _scalar(item) or (isinstance(item, float) and not math.isfinite(item)):
                raise BadRecord(f"{self._path(name)}.{key}", "a plain value (text, number, true/false)", item)

    def section(self, name, required=False) -> _Section:
        return _Section(self._get(name), self._path(name), required)


# Throughput figures: what a report's median, spread and prices are computed from.
THROUGHPUT_FIGURES = (
    "images_per_second",
    "images_per_hour",
    "images_per_second_stdev",
    "images_per_second_min",
    "images_per_second_max",
    "images_per_second_cv",
    "step_time_s",
    "warmup_time_s",
)


def _check_fields(record: dict) -> dict:
    """`record` if every field the suite's readers use has the right type and value, else BadRecord."""
    top = _Section(record, "", required=True)
    top.text("run_id", required=True)
    if record.get("status") not in STATUSES:
        raise BadRecord("status", f"one of {', '.join(STATUSES)}", record.get("status"))
    top.text("kind")

    config = top.section("config", required=True)
    config.text("workload", required=True)
    for name in ("backend", "precision", "instance", "prices", "data", "hpu_mode", "profile_dir"):
        config.text(name)
    for name in ("batch_size", "world_size", "nnodes", "nproc", "global_batch_size"):
        config.whole(name, minimum=1)
    for name in ("accelerators_used", "threads", "steps_per_window", "windows", "warmup_steps"):
        config.whole(name)
    for name in ("tf32", "channels_last", "compile", "hpu_fused"):
        config.flag(name)
    config.scalars("model_overrides")

    device = top.section("device")
    device.text("name")
    device.whole("count")

    data = top.section("data")
    data.text("source")
    data.whole("workers")
    data.whole("prefetch")
    data.flag("pin_memory")

    metrics = top.section("metrics")
    for name in THROUGHPUT_FIGURES:
        metrics.number(name)
    metrics.numbers("window_time_s")
    metrics.numbers("window_images_per_second")

    error = top.section("error")
    error.text("message")
    error.text("type")
    diagnosis = top.section("diagnosis")
    diagnosis.text("verdict")
    diagnosis.text("message")
    for name in ("context", "memory", "telemetry"):
        top.section(name)
    if not isinstance(record.get("warnings", []), list):
        raise BadRecord("warnings", "a list of texts", record.get("warnings"))
    return record


def check_record(data) -> dict:
    """THE check every reader applies to a record it did not just make (report, compare, plots, sweep
    resume, scale, fleet): `data` (parsed JSON) if it is a run record of this version whose fields the
    readers can use, else NotARecord (OtherSuiteRecord: the suite's own non-run record; BadRecord: a
    field of the wrong type or value, named). Readers go through here, never around it, so that what a
    record must hold is decided in this one place."""
    if (
        isinstance(data, dict)
        and str(data.get("schema", "")).startswith("suite.")
        and data["schema"] != SCHEMA
    ):
        raise OtherSuiteRecord(f"a {data['schema']} record, not a run record")
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise NotARecord('not a suite run record (no "schema": "suite.run")')
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise NotARecord(f"schema version {version!r}, this suite reads version {SCHEMA_VERSION}")
    return _check_fields(data)
