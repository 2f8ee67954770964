"""The record's figures are built and read through its type: the windows' rate fields by one constructor
(run_record/windows.py) whose JSON is the one records have always held, a distributed run's ranks and a
per-device run's copies as parts, and the figures' names spelt in the record's definition only."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import ROOT

from suite.measurement import distributed
from suite.reporting import summary
from suite.run_record.parts import DeviceCopy, Metrics, PerDevice, Rank
from suite.run_record.record import RunRecord
from suite.run_record.windows import spread_warnings, window_metrics

# What the suite wrote for these windows before the constructor moved beside the record's type, key order
# included (96 images a window of 3 steps, four windows).
KEPT_WINDOWS = (
    '{"images_per_second": 273.6, "images_per_hour": 984960.0000000001, "images_per_second_mean": 280.8, '
    '"images_per_second_stdev": 83.46112867676784, "images_per_second_min": 192.0, '
    '"images_per_second_max": 384.0, "images_per_second_cv": 0.29722624172638124, '
    '"step_time_s": 0.11875000000000001, "window_images_per_second": [192.0, 384.0, 240.0, 307.2], '
    '"window_time_s": [0.5, 0.25, 0.4, 0.3125], "images_per_window": 96, "images_timed": 384, '
    '"time_timed_s": 1.4625}'
)


def test_the_windows_figures_are_the_json_records_have_always_held():
    figures = window_metrics(96, 3, [0.5, 0.25, 0.4, 0.3125])
    assert json.dumps(figures.to_json()) == KEPT_WINDOWS
    assert figures.throughput == 273.6 and figures.unit_name == "images"


def test_one_window_has_no_spread_and_no_warning():
    figures = window_metrics(8, 2, [1.0])
    assert figures.to_json()["images_per_second_stdev"] == 0.0
    assert figures.images_per_second_cv == 0.0 and spread_warnings(figures) == []


def test_the_spread_warnings_read_the_typed_figures():
    said = spread_warnings(window_metrics(96, 3, [0.5, 0.25, 0.4, 0.3125]))
    assert said == [
        "windows vary widely (cv 29.7%): results may be noisy; close other programs, or use more "
        "--steps / --windows",
        "the first window was much slower than the rest: warm-up may be too short (consider --warmup N)",
    ]


def test_the_rate_id_outputs_use_is_the_records_field():
    assert Metrics.RATE in Metrics.names() and "RATE" not in Metrics.names()  # a name, never a JSON field
    assert Metrics.RATE == "images_per_second"  # `suite compare`'s and `suite scale`'s JSON keep their ids


class _Rank1:
    rank, local_rank, node_rank, world_size = 1, 1, 0, 2


def test_a_ranks_figures_hold_every_field_null_included_in_the_kept_order():
    record = {
        "status": "ok",
        "error": None,
        "metrics": {"images_per_window": 64, "rank_window_time_s": [0.5]},
    }
    entry = distributed.rank_figures(_Rank1, record)
    assert list(entry) == list(Rank.names())  # every entry alike: the fields in the order records have had
    assert entry["images_per_second"] == 64.0 and entry["error"] is None and entry["device"] is None
    assert entry["local_rank"] == 1 and entry["window_time_s"] == [0.5]


def test_the_first_bad_rank_fails_the_record_by_its_typed_entry():
    record = {
        "status": "ok",
        "ranks": [
            {"rank": 0, "status": "ok", "error": None},
            {"rank": 1, "status": "oom", "error": {"type": "OOM", "message": "boom"}},
            "not a rank",  # the schema does not check the list: what is no mapping is left out
        ],
    }
    distributed._fail_as_first_bad_rank(record)
    assert record["status"] == "oom"
    assert record["error"] == {"type": "OOM", "message": "rank 1: boom", "rank": 1}


def test_ranks_and_copies_are_read_as_parts():
    record = RunRecord.from_checked({"ranks": [{"rank": 0, "images_per_second": 5.0, "exitcode": 1}, None]})
    [rank] = record.ranks
    assert rank.images_per_second == 5.0 and rank.extra == {"exitcode": 1}
    assert record.to_json()["ranks"][1] is None  # read, not rewritten
    copies = PerDevice.from_json({"copies": 1, "devices": [{"copy": 0, "pin": {}, "images_per_second": 2.0}]})
    assert [(c.copy, c.images_per_second) for c in copies.entries] == [(0, 2.0)]
    assert list(DeviceCopy.with_every_field(copy=3).to_json()) == list(DeviceCopy.names())


def test_the_summary_lists_each_ranks_rate_from_the_typed_ranks():
    record = json.loads((Path(ROOT) / "tests/data/records/dcgan64-cpu.json").read_text())
    record["config"] = {**record["config"], "world_size": 2, "nproc": 2}
    record["ranks"] = [{"rank": 0, "images_per_second": 10.5}, {"rank": 1, "images_per_second": None}]
    assert "; per rank 10.5 img/s" in summary.render(record)


def test_only_the_records_definition_spells_the_rate_as_a_string():
    """Readers and writers elsewhere name the figure through the type (`metrics.images_per_second`,
    `Metrics.RATE`), so that its name is the record's in one place."""
    spelt = sorted(
        str(path.relative_to(ROOT))
        for place in ("suite", "backends", "workloads")
        for path in (Path(ROOT) / place).rglob("*.py")
        if '"images_per_second"' in path.read_text(encoding="utf-8")
    )
    assert spelt == ["suite/run_record/parts.py", "suite/run_record/schema.py"]
