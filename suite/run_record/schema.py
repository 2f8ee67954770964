"""What a run record is: its schema name and version, the statuses a run ends in, and the one check
(`check_record`) that every reader applies before it uses a record.

A record is JSON a person can edit, copy half of, or damage; the report must not crash on one bad file.
`check_record` refuses a file that is not a run record of this version, then checks the fields the
readers use (types, finiteness, ranges, hashable settings) and raises `BadRecord` naming the first bad
field, e.g. `field metrics.images_per_second: must be a finite number >= 0, got nan`; the report skips
that file with one line and goes on. Every text in a record, a field's name included, is valid Unicode
(a lone surrogate is refused wherever it is), and every figure derived from others agrees with them
(`derived.py`: 10 img/s beside 9.9e12 img/h is refused). Unknown fields are allowed (readers ignore
them), so records of this schema version from newer suites still load.
"""

from __future__ import annotations

import math
import re
import sys

from suite.run_record.derived import Disagreement, check_derived
from suite.spec import MAX_GRAD_ACCUM, RunSpec

SCHEMA = "suite.run"
SCHEMA_VERSION = 1

# "interrupted": stopped by Ctrl-C or SIGTERM after a timed window, whose figures the record keeps.
STATUSES = ("ok", "diverged", "oom", "error", "interrupted")


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

# Bounds on what a record may hold: every figure it reports is finite, every count one a run could have
# had (errors.COUNT_CEILING, as the options themselves), every text short and, where it names something
# (an id, a device, a setting), free of control characters: those go into terminals and markdown tables.
# What a terminal must never be handed raw (CONTROL, printable) lives with the messages, in suite/inputs/errors.py;
# run_record exports printable for every renderer of a record's text.
from suite.inputs.errors import CONTROL as _CONTROL  # noqa: E402, I001
from suite.inputs.errors import COUNT_CEILING, printable  # noqa: E402, F401

NAME_LENGTH = 500  # a run id, a workload, a device, a setting
MESSAGE_LENGTH = 20_000  # an error message, a warning, a diagnosis
LARGEST_WHOLE = 2**63  # bytes, seeds: what a C int64 holds
MAX_DEPTH = 32  # a record is a few levels deep; deeper is not one (and recursion on it could overflow)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _scalar(value) -> bool:
    """A setting value the report can group by and print: JSON's scalars, finite and bounded."""
    if isinstance(value, str):
        return len(value) <= NAME_LENGTH and not _CONTROL.search(value)
    if _is_number(value):
        return math.isfinite(value) and abs(value) <= LARGEST_WHOLE
    return value is None or isinstance(value, bool)


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

    def text(self, name, required=False, message=False):
        """A name (no control characters, at most NAME_LENGTH), or with `message` a longer free text."""
        value = self._get(name)
        if value is _MISSING or value is None:
            if required:
                raise BadRecord(self._path(name), "a non-empty text", None if value is _MISSING else value)
            return
        limit = MESSAGE_LENGTH if message else NAME_LENGTH
        if (
            not isinstance(value, str)
            or (required and not value.strip())
            or len(value) > limit
            or (not message and _CONTROL.search(value))
        ):
            what = "a text" + (" (non-empty)" if required else " or null")
            what += f" of at most {limit:,} characters" + ("" if message else " without control characters")
            raise BadRecord(self._path(name), what, value)

    def texts(self, name, message=True):
        value = self._get(name)
        if value is _MISSING or value is None:
            return
        if not isinstance(value, list):
            raise BadRecord(self._path(name), "a list of texts", value)
        items = _Section({f"{name}[{i}]": item for i, item in enumerate(value)}, self.where)
        for key in items.mapping:
            items.text(key, required=True, message=message)

    def whole(self, name, minimum=0, maximum=COUNT_CEILING):
        value = self._get(name)
        if value is _MISSING or value is None:
            return
        if (
            not _is_number(value)
            or not math.isfinite(value)
            or value != int(value)
            or not (minimum <= value <= maximum)
        ):
            raise BadRecord(self._path(name), f"a whole number from {minimum} to {maximum:,} or null", value)

    def number(self, name, positive=False, maximum=math.inf):
        """A finite number >= 0 (with `positive`, > 0: a rate of nothing is no rate), at most `maximum`."""
        value = self._get(name)
        if value is _MISSING or value is None:
            return
        if (
            not _is_number(value)
            or not math.isfinite(value)
            or value < 0
            or (positive and value <= 0)
            or value > maximum
        ):
            what = f"a finite number {'> 0' if positive else '>= 0'}"
            what += f" and at most {maximum:.4g}" if maximum < math.inf else ""
            raise BadRecord(self._path(name), what + " or null", value)

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

    def scalars(self, name=None):
        """A mapping of plain values (model overrides, a sweep point; with no name, this section itself):
        the report prints and groups by them."""
        section = self if name is None else self.section(name)
        for key, item in section.mapping.items():
            where = section._path(key)
            if not isinstance(key, str) or len(key) > NAME_LENGTH or _CONTROL.search(key):
                raise BadRecord(where, "a name without control characters", key)
            if not _scalar(item):
                raise BadRecord(where, "a plain value (a short text, a finite number, true/false)", item)

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
# The rates themselves: a ratio, a logarithm or a price per image is computed from them, so never 0.
RATES = ("images_per_second", "images_per_hour")
# Other figures a report or comparison prints or divides by.
OTHER_FIGURES = ("images_per_second_mean", "mfu", "energy_per_image_j", "time_to_first_step_s")
# How a run's steps per window were chosen (`metrics.steps_per_window_chosen_by`, from
# suite/measurement/window_length.py): as given by --steps, the backend's default schedule, grown from
# warm-up timing so that a window lasts the backend's minimum, or, with the windows, fitted to the
# backend's time box from warm-up timing.
STEPS_CHOSEN_BY = ("--steps", "schedule", "warm-up timing", "time box")


# A lone UTF-16 surrogate: JSON's escape "\udc80" parses to one, but it is no character, and every text
# it reaches (a terminal, a UTF-8 file, a CSV or HTML report) fails to encode it. Refused wherever it is.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _child_path(where: str, key) -> str:
    if isinstance(key, int):
        return f"{where}[{key}]"
    return f"{where}.{key}" if where else str(key)


def _check_tree(data) -> None:
    """The whole record, walked without recursion (a hostile one could exhaust the stack): nested at most
    MAX_DEPTH levels, and every text in it, a field's name included, valid Unicode (no lone surrogate)."""
    stack = [(data, "", 1)]
    while stack:
        value, where, level = stack.pop()
        if isinstance(value, str):
            if _SURROGATE.search(value):
                raise BadRecord(where or "record", "valid Unicode text (no lone surrogate)", value)
        elif isinstance(value, (dict, list)):
            if level > MAX_DEPTH:
                raise BadRecord("record", f"nested at most {MAX_DEPTH} levels deep", "deeper")
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                if isinstance(key, str) and _SURROGATE.search(key):
                    raise BadRecord(
                        f"{where or 'record'} (a field's name)", "valid Unicode text (no lone surrogate)", key
                    )
                stack.append((item, _child_path(where, key), level + 1))


def _check_config(config: _Section) -> None:
    config.text("workload", required=True)
    for name in (
        "backend",
        "precision",
        "instance",
        "prices",
        "data",
        "hpu_mode",
        "profile_dir",
        "compile_mode",
    ):
        config.text(name)
    for name in ("reference_backend", "hpu_bf16_ops", "hpu_fp32_ops", "rdzv_endpoint"):
        config.text(name)
    for name in ("batch_size", "world_size", "nnodes", "nproc", "global_batch_size", "per_device"):
        config.whole(name, minimum=1)
    for name in ("num_classes", "image_size"):
        config.whole(name, minimum=1)
    config.whole("accelerators_used", minimum=1)  # a rate is divided by it
    for name in ("threads", "steps_per_window", "windows", "warmup_steps"):
        config.whole(name)
    for name in ("workers", "prefetch", "device_index", "node_rank"):
        config.whole(name)
    for name in ("seed", "max_memory_bytes"):
        config.whole(name, maximum=LARGEST_WHOLE)
    config.number("dist_timeout_s")
    config.whole("grad_accum", minimum=1, maximum=MAX_GRAD_ACCUM)  # micro-batches of one optimizer step
    for name in ("tf32", "channels_last", "compile", "hpu_fused", "check_numerics", "pin_memory"):
        config.flag(name)
    for name in ("fsdp", "activation_checkpointing"):
        config.flag(name)
    config.scalars("model_overrides")

    settings = set(RunSpec().to_record_config()) - {"model_overrides"}
    for name, value in config.mapping.items():  # every setting is grouped by and printed: plain values
        if name in settings and not _scalar(value):
            raise BadRecord(
                config._path(name), "a plain value (a short text, a finite number, true/false)", value
            )


def _check_window_length(metrics: _Section) -> None:
    """The steps a window held and how they were chosen (absent from records made before it was kept)."""
    for name in ("steps_per_window", "steps_per_window_default", "steps_per_window_max"):
        metrics.whole(name, minimum=1)
    metrics.whole("warmup_steps_timed")
    metrics.number("min_window_s", positive=True)
    metrics.number("window_budget_s", positive=True)
    metrics.number("warmup_step_time_s")
    how = metrics.mapping.get("steps_per_window_chosen_by")
    if how is not None and how not in STEPS_CHOSEN_BY:
        raise BadRecord(
            metrics._path("steps_per_window_chosen_by"), f"one of {', '.join(STEPS_CHOSEN_BY)}", how
        )


# What a throughput counts beyond the samples the windows count (suite/measurement/units.py): a record
# without `metrics.unit` counts images, as every record made before the unit was kept.
UNITS = ("images", "tokens")


def _check_unit(metrics: _Section) -> None:
    """A token workload's figures: its unit, the tokens one sample holds, and the rates in tokens."""
    unit = metrics.mapping.get("unit")
    if unit is None:
        return
    if unit not in UNITS:
        raise BadRecord(metrics._path("unit"), f"one of {', '.join(UNITS)}", unit)
    metrics.whole(f"{unit}_per_sample", minimum=1)
    for name in ("per_second", "per_hour"):
        metrics.number(f"{unit}_{name}", positive=True)
    for name in ("per_second_min", "per_second_max", "per_second_stdev", "per_step"):
        metrics.number(f"{unit}_{name}")
    for name in ("flops_per_token", "energy_per_token_j"):
        metrics.number(name)


def _check_fields(record: dict) -> dict:
    """`record` if every field the suite's readers use has the right type and value, else BadRecord."""
    _check_tree(record)
    top = _Section(record, "", required=True)
    _check_run(top)
    _check_config(top.section("config", required=True))
    _check_device_and_data(top)
    _check_metrics(top.section("metrics"))
    top.section("per_device").number("images_per_second_sum")
    _check_explanations(top)
    _check_group(top)
    top.section("memory").number("peak_memory_bytes")
    _check_context(top.section("context"))
    for name in ("telemetry", "profile"):
        top.section(name)
    top.texts("warnings")
    _check_derived(record)  # after the types and ranges above, which its arithmetic builds on
    return record


def _check_run(top: _Section) -> None:
    """What names the run and how it ended."""
    top.text("run_id", required=True)
    status = top.mapping.get("status")
    if status not in STATUSES:
        raise BadRecord("status", f"one of {', '.join(STATUSES)}", status)
    for name in ("kind", "origin", "backend_choice"):
        top.text(name)


def _check_device_and_data(top: _Section) -> None:
    device = top.section("device")
    for name in ("name", "backend", "execution_mode"):
        device.text(name)
    device.whole("count")
    device.whole("threads")

    data = top.section("data")
    data.text("source")
    data.whole("workers")
    data.whole("prefetch")
    data.flag("pin_memory")


def _check_metrics(metrics: _Section) -> None:
    for name in THROUGHPUT_FIGURES + OTHER_FIGURES:
        metrics.number(name, positive=name in RATES)
    # times an hour, a rate per second must still be a number (the report works in images per hour)
    metrics.number("images_per_second", maximum=sys.float_info.max / 3600)
    metrics.numbers("window_time_s")
    metrics.numbers("window_images_per_second")
    metrics.numbers("images_per_second_per_device")
    for name in ("images_per_window", "images_timed", "time_timed_s"):
        metrics.number(name)
    for name in ("flops_per_image", "model_tflops_per_second", "mfu_peak_tflops"):
        metrics.number(name)
    _check_window_length(metrics)
    _check_unit(metrics)


def _check_explanations(top: _Section) -> None:
    """The texts that say what happened: an error, a diagnosis, the numerics' verdict, the workload."""
    error = top.section("error")
    error.text("message", message=True)
    error.text("type")
    error.text("hint", message=True)
    diagnosis = top.section("diagnosis")
    diagnosis.text("verdict")
    diagnosis.text("message", message=True)
    diagnosis.texts("suggestions")
    numerics = top.section("numerics")
    numerics.text("verdict")
    numerics.text("reason", message=True)
    workload = top.section("workload")
    workload.text("name")
    workload.text("description", message=True)


def _check_group(top: _Section) -> None:
    """Where the run sits among others: its group of repeats, its sweep point, its tuning search."""
    group = top.section("group")
    for name in ("id", "interleaved_with"):
        group.text(name)
    for name in ("index", "of", "position"):
        group.whole(name)
    top.section("sweep_point").scalars()
    tune = top.section("tune")  # a `suite tune` trial: its search, its place in it, what it tried
    for name in ("search", "trial", "role"):
        tune.text(name)
    tune.whole("run")


def _check_context(context: _Section) -> None:
    for name in ("utc_time", "host", "suite_version", "torch"):
        context.text(name)
    instance_source = context.section("instance_source")  # what the machine said it is, or null
    for name in ("instance", "vendor", "file"):
        instance_source.text(name)
    load = context.section("load")
    for name in ("load_average_1m", "load_average_5m", "others_cpu_percent", "cpu_mhz", "cpu_max_mhz"):
        load.number(name)
    load.whole("logical_cpus")


def _check_derived(record: dict) -> None:
    """Every derived figure agrees with its sources (derived.py), refused as a BadRecord naming it."""
    try:
        check_derived(record)
    except Disagreement as disagreement:
        raise BadRecord(disagreement.field, disagreement.expected, disagreement.value) from None


# The results the project's own benchmarks write beside run records (benchmarks/bare_loop.py and
# benchmarks/timm_peer.py: results/gpu-bench), known by their `kind`: the suite's, not run records, and
# nothing a reader of a results folder should be warned about.
BENCHMARK_KINDS = ("bare_loop", "timm_benchmark_train")


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
    if isinstance(data, dict) and "schema" not in data and data.get("kind") in BENCHMARK_KINDS:
        raise OtherSuiteRecord(f"a {data['kind']} benchmark result, not a run record")
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise NotARecord('not a suite run record (no "schema": "suite.run")')
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise NotARecord(f"schema version {version!r}, this suite reads version {SCHEMA_VERSION}")
    return _check_fields(data)
