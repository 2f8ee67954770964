"""The order in which a run record's checks name its faults, pinned: a record with many bad fields is
refused for one at a time, and each fix reveals the next. Readers (and people fixing a record by hand) see
the same first fault whatever the checks' code looks like inside."""

from __future__ import annotations

import copy
import json

import pytest

from suite import run_record
from tests.test_record_identity import made

_DELETE = object()


def _walk(record: dict, path: str):
    """The mapping holding `path`'s last part, and that part (a key, or an index into a list)."""
    parts = path.replace("[", ".[").split(".")
    holder = record
    for part in parts[:-1]:
        holder = holder[int(part[1:-1])] if part.startswith("[") else holder[part]
    last = parts[-1]
    return holder, int(last[1:-1]) if last.startswith("[") else last


def _set(record: dict, path: str, value) -> None:
    holder, key = _walk(record, path)
    if value is _DELETE:
        holder.pop(key, None)
    else:
        holder[key] = value


def _faults_in_order(good: dict, bad: dict) -> list[str]:
    """Each refusal of `good` broken as `bad` ({path: value}) says, fixing the field it names each time."""
    record = copy.deepcopy(good)
    for path, value in bad.items():
        _set(record, path, value)
    said = []
    for _ in range(len(bad) + 1):
        try:
            run_record.check_record(json.loads(json.dumps(record)))
        except run_record.BadRecord as refused:
            said.append(str(refused))
            path = max((p for p in bad if refused.field.startswith(p)), key=len)
            try:
                holder, key = _walk(good, path)
                _set(record, path, copy.deepcopy(holder[key]))
            except (KeyError, IndexError):
                _set(record, path, _DELETE)
            continue
        return said
    pytest.fail(f"still refused after fixing every bad field: {said}")


FIELDS_BAD = {
    "warnings": 5,
    "telemetry": 5,
    "context.load.logical_cpus": -1,
    "context.load.cpu_mhz": -1,
    "context.instance_source.vendor": 5,
    "context.host": 5,
    "memory.peak_memory_bytes": -1,
    "sweep_point": {"k": [1]},
    "group.position": -1,
    "group.id": 5,
    "workload.description": 5,
    "workload.name": 5,
    "numerics.reason": 5,
    "numerics.verdict": 5,
    "diagnosis.suggestions": 5,
    "diagnosis.message": 5,
    "diagnosis.verdict": 5,
    "error.hint": 5,
    "error.type": 5,
    "error.message": 5,
    "per_device.images_per_second_sum": -1,
    "metrics.unit": "pixels",
    "metrics.steps_per_window_chosen_by": "luck",
    "metrics.mfu_peak_tflops": -1,
    "metrics.time_timed_s": -1,
    "metrics.images_per_second_per_device": 5,
    "metrics.window_images_per_second": [1.0, -1.0],
    "metrics.window_time_s": 5,
    "metrics.mfu": -1,
    "metrics.images_per_hour": 0,
    "data.pin_memory": "yes",
    "data.prefetch": -1,
    "data.workers": -1,
    "data.source": 5,
    "device.threads": -1,
    "device.count": -1,
    "device.execution_mode": 5,
    "device.name": 5,
    "config.batch_size": 0,
    "config.workload": 5,
    "backend_choice": 5,
    "kind": 5,
    "status": "fine",
    "run_id": "",
}


def _good_with_every_section() -> dict:
    good = made("run-a")
    good.update(
        warnings=["w"],
        error={"message": "m", "type": "t", "hint": "h"},
        diagnosis={"verdict": "v", "message": "m", "suggestions": ["s"]},
        numerics={"verdict": "v", "reason": "r"},
        workload={"name": "n", "description": "d"},
        group={"id": "g", "position": 1},
        per_device={"images_per_second_sum": 1.0},
        memory={"peak_memory_bytes": 1},
        context={
            **good["context"],
            "host": "h",
            "instance_source": {"vendor": "v"},
            "load": {"cpu_mhz": 1.0, "logical_cpus": 2},
        },
    )
    return good


def test_a_record_bad_in_every_field_is_refused_field_by_field_in_one_order():
    assert _faults_in_order(_good_with_every_section(), FIELDS_BAD) == PINNED_FIELDS


def test_disagreeing_window_figures_are_refused_one_by_one_in_one_order():
    good = made("run-a", windows=(10.0, 10.5, 9.5, 11.0))
    bad = {
        f"metrics.{name}": good["metrics"][name] * 2
        for name in (
            "images_per_second_cv",
            "images_per_second_stdev",
            "images_per_second_mean",
            "images_per_second_max",
            "images_per_second_min",
            "step_time_s",
            "time_timed_s",
            "images_timed",
        )
    }
    bad["metrics.window_images_per_second[2]"] = 3.0
    assert _faults_in_order(good, bad) == PINNED_WINDOWS


def test_a_window_count_and_a_window_of_no_time_are_refused_before_the_rest():
    good = made("run-a")
    bad = {
        "metrics.window_time_s[1]": 0,
        "metrics.window_images_per_second": [10.0],
        "metrics.step_time_s": 1.0,
    }
    assert _faults_in_order(good, bad) == PINNED_COUNTS


def test_windows_without_images_per_window_skip_the_per_window_checks():
    good = made("run-a")
    del good["metrics"]["images_per_window"]
    bad = {
        "metrics.images_per_second_min": 1.0,
        "metrics.images_timed": 1,
        "metrics.step_time_s": 1.0,
        "metrics.time_timed_s": 1.0,
    }
    assert _faults_in_order(good, bad) == PINNED_NO_PER_WINDOW


# What the checks say, in order, as the suite said it when these tests were written.
PINNED_FIELDS = [
    "field run_id: must be a text (non-empty) of at most 500 characters without control characters, got ''",
    "field status: must be one of ok, diverged, oom, error, interrupted, got 'fine'",
    "field kind: must be a text or null of at most 500 characters without control characters, got 5",
    "field backend_choice: must be a text or null of at most 500 characters without control characters, got 5",
    "field config.workload: must be a text (non-empty) of at most 500 characters without control characters, got 5",
    "field config.batch_size: must be a whole number from 1 to 1,000,000 or null, got 0",
    "field device.name: must be a text or null of at most 500 characters without control characters, got 5",
    "field device.execution_mode: must be a text or null of at most 500 characters without control characters, got 5",
    "field device.count: must be a whole number from 0 to 1,000,000 or null, got -1",
    "field device.threads: must be a whole number from 0 to 1,000,000 or null, got -1",
    "field data.source: must be a text or null of at most 500 characters without control characters, got 5",
    "field data.workers: must be a whole number from 0 to 1,000,000 or null, got -1",
    "field data.prefetch: must be a whole number from 0 to 1,000,000 or null, got -1",
    "field data.pin_memory: must be true, false or null, got 'yes'",
    "field metrics.images_per_hour: must be a finite number > 0 or null, got 0",
    "field metrics.mfu: must be a finite number >= 0 or null, got -1",
    "field metrics.window_time_s: must be a list of finite numbers >= 0, got 5",
    "field metrics.window_images_per_second[1]: must be a finite number >= 0, got -1.0",
    "field metrics.images_per_second_per_device: must be a list of finite numbers >= 0, got 5",
    "field metrics.time_timed_s: must be a finite number >= 0 or null, got -1",
    "field metrics.mfu_peak_tflops: must be a finite number >= 0 or null, got -1",
    "field metrics.steps_per_window_chosen_by: must be one of --steps, schedule, warm-up timing, time box, got 'luck'",
    "field metrics.unit: must be one of images, tokens, got 'pixels'",
    "field per_device.images_per_second_sum: must be a finite number >= 0 or null, got -1",
    "field error.message: must be a text or null of at most 20,000 characters, got 5",
    "field error.type: must be a text or null of at most 500 characters without control characters, got 5",
    "field error.hint: must be a text or null of at most 20,000 characters, got 5",
    "field diagnosis.verdict: must be a text or null of at most 500 characters without control characters, got 5",
    "field diagnosis.message: must be a text or null of at most 20,000 characters, got 5",
    "field diagnosis.suggestions: must be a list of texts, got 5",
    "field numerics.verdict: must be a text or null of at most 500 characters without control characters, got 5",
    "field numerics.reason: must be a text or null of at most 20,000 characters, got 5",
    "field workload.name: must be a text or null of at most 500 characters without control characters, got 5",
    "field workload.description: must be a text or null of at most 20,000 characters, got 5",
    "field group.id: must be a text or null of at most 500 characters without control characters, got 5",
    "field group.position: must be a whole number from 0 to 1,000,000 or null, got -1",
    "field sweep_point.k: must be a plain value (a short text, a finite number, true/false), got [1]",
    "field memory.peak_memory_bytes: must be a finite number >= 0 or null, got -1",
    "field context.host: must be a text or null of at most 500 characters without control characters, got 5",
    "field context.instance_source.vendor: must be a text or null of at most 500 characters without control characters, got 5",
    "field context.load.cpu_mhz: must be a finite number >= 0 or null, got -1",
    "field context.load.logical_cpus: must be a whole number from 0 to 1,000,000 or null, got -1",
    "field telemetry: must be an object (a mapping of fields), got 5",
    "field warnings: must be a list of texts, got 5",
]

PINNED_WINDOWS = [
    "field metrics.window_images_per_second[2]: must be images_per_window ÷ window_time_s (9.5), got 3.0",
    "field metrics.images_timed: must be images_per_window × windows (400), got 800.0",
    "field metrics.time_timed_s: must be the sum of window_time_s (39.141), got 78.28206880838461",
    "field metrics.step_time_s: must be median(window_time_s) ÷ steps_per_window (2.44048), got 4.880952380952381",
    "field metrics.images_per_second_min: must be the least of window_images_per_second (9.5), got 19.0",
    "field metrics.images_per_second_max: must be the most of window_images_per_second (11), got 21.999999999999996",
    "field metrics.images_per_second_mean: must be the mean of window_images_per_second (10.25), got 20.5",
    "field metrics.images_per_second_stdev: must be the standard deviation of window_images_per_second (0.645497), got 1.2909944487358043",
    "field metrics.images_per_second_cv: must be images_per_second_stdev ÷ images_per_second_mean (0.0629753), got 0.12595067792544432",
]

PINNED_COUNTS = [
    "field metrics.window_images_per_second: must be one rate per window (3), got '1'",
    "field metrics.window_time_s[1]: must be > 0 (a window's images took time), got 0",
    "field metrics.step_time_s: must be median(window_time_s) ÷ steps_per_window (2.5), got 1.0",
]

PINNED_NO_PER_WINDOW = [
    "field metrics.time_timed_s: must be the sum of window_time_s (30.0501), got 1.0",
    "field metrics.step_time_s: must be median(window_time_s) ÷ steps_per_window (2.5), got 1.0",
    "field metrics.images_per_second_min: must be the least of window_images_per_second (9.5), got 1.0",
]
