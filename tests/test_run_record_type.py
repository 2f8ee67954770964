"""The run record as a type (suite/run_record/record.py): every record already on disk reads through it and
writes back the same JSON, a bad record is refused as `check_record` refuses it, and its metrics answer in
the record's unit."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from conftest import ROOT

from suite.run_record import BadRecord, NotARecord, check_record
from suite.run_record.parts import Metrics
from suite.run_record.record import RunRecord

RECORDS = sorted((Path(ROOT) / "tests" / "data" / "records").glob("*.json"))
GPU_RECORDS = sorted(  # both H200 leases
    path
    for lease in ("gpu", "gpu-2026-11-27", "gpu-2026-11-27-lm")
    for path in (Path(ROOT) / "results" / lease).glob("*.json")
)
# the CPU runs whose reports docs/report.md and docs/compare.md show, each under its command
EXAMPLE_RECORDS = sorted((Path(ROOT) / "docs" / "examples").rglob("*.json"))


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_kept_records_are_there():
    assert len(RECORDS) >= 8 and len(GPU_RECORDS) >= 40 and len(EXAMPLE_RECORDS) >= 24


@pytest.mark.parametrize(
    "path", RECORDS + GPU_RECORDS + EXAMPLE_RECORDS, ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_a_record_on_disk_reads_and_writes_back_the_same_json(path):
    data = _load(path)
    record = RunRecord.from_json(copy.deepcopy(data))
    # the same fields, values and order
    assert json.dumps(record.to_json()) == json.dumps(data)
    assert record.run_id == data["run_id"] and record.status == data["status"]


def test_the_type_reads_what_the_json_says():
    record = RunRecord.from_json(_load(Path(ROOT) / "tests/data/records/dcgan64-cpu.json"))
    metrics = record.metrics
    assert record.ok and record.error is None and record.workload_name == "dcgan64"
    assert metrics.unit_name == "images" and metrics.per_sample == 1
    assert metrics.throughput == metrics.images_per_second > 0
    assert metrics.throughput_per_hour == pytest.approx(metrics.throughput * 3600)
    assert metrics.window_throughputs == metrics.window_images_per_second
    assert metrics.items_timed == metrics.images_timed
    assert record.device.name and record.context.utc_time and record.memory.peak_memory_bytes


def test_a_token_records_throughput_counts_tokens():
    record = RunRecord.from_json(_load(Path(ROOT) / "tests/data/records/gpt2-small-tokens.json"))
    metrics = record.metrics
    assert metrics.unit_name == "tokens" and metrics.per_sample == 16
    assert metrics.throughput == metrics.tokens_per_second == pytest.approx(metrics.images_per_second * 16)
    assert metrics.throughput_min == pytest.approx(metrics.images_per_second_min * 16)
    assert metrics.throughput_mean == pytest.approx(metrics.images_per_second_mean * 16)
    assert metrics.items_per_window == pytest.approx(metrics.images_per_window * 16)
    assert metrics.window_throughputs == pytest.approx([r * 16 for r in metrics.window_images_per_second])
    assert metrics.throughput_cv == metrics.images_per_second_cv


def test_a_failed_records_error_and_empty_parts():
    record = RunRecord.from_json(_load(Path(ROOT) / "tests/data/records/child-failure.json"))
    assert record.status == "error" and record.error.type == "Timeout"
    assert record.error.exit_status is None and "exit_status" in record.error.to_json()
    assert record.metrics.throughput is None and record.numerics.verdict is None


@pytest.mark.parametrize(
    "change, error",
    [
        (lambda d: d.update(schema="suite.batch_size"), NotARecord),
        (lambda d: d.update(schema_version=2), NotARecord),
        (lambda d: d["metrics"].update(images_per_second=float("nan")), BadRecord),
        (lambda d: d["metrics"].update(images_per_hour=1.0), BadRecord),  # disagrees with img/s × 3600
        (lambda d: d.update(metrics=[1]), BadRecord),
    ],
)
def test_a_bad_record_is_refused_as_check_record_refuses_it(change, error):
    data = _load(Path(ROOT) / "tests/data/records/dcgan64-cpu.json")
    change(data)
    with pytest.raises(error) as by_type:
        RunRecord.from_json(copy.deepcopy(data))
    with pytest.raises(error) as by_check:
        check_record(data)
    assert str(by_type.value) == str(by_check.value)


def test_a_null_part_reads_as_empty_and_writes_back_null():
    data = _load(Path(ROOT) / "tests/data/records/dcgan64-cpu.json")
    data["numerics"] = None
    record = RunRecord.from_json(data)
    assert record.numerics.verdict is None
    assert record.to_json()["numerics"] is None


def test_a_part_built_in_code_writes_its_set_fields_in_declared_order():
    metrics = Metrics(images_per_hour=7200.0, images_per_second=2.0)
    assert list(metrics.to_json()) == ["images_per_second", "images_per_hour"]
    changed = RunRecord.from_checked(
        {"schema": "suite.run", "schema_version": 1, "run_id": "r", "status": "error"}
    )
    changed = changed.replaced(status="ok", metrics=metrics)
    assert changed.to_json() == {
        "schema": "suite.run",
        "schema_version": 1,
        "run_id": "r",
        "status": "ok",
        "metrics": {"images_per_second": 2.0, "images_per_hour": 7200.0},
        "warnings": [],  # a record built in code always has these two
        "config": {},
    }


def test_a_failure_record_made_now_has_the_kept_ones_fields_in_order():
    from conftest import tiny_config

    from suite.launching import child

    kept = _load(Path(ROOT) / "tests/data/records/child-failure.json")
    made = child.failure_record(tiny_config().to_record_config(), "Timeout", "no result within 5 s")
    # Run options added since the kept record was written: a config made now holds them, at their defaults.
    added_since = {"grad_accum": 1, "activation_checkpointing": False, "fsdp": False, "compile_mode": None}
    assert list(made) == list(kept) and made["error"] == kept["error"]
    assert made["config"] == {**kept["config"], **added_since}
    assert RunRecord.from_json(made).error.type == "Timeout"


def test_a_run_record_is_written_as_its_json(tmp_path):
    from suite import run_record

    record = RunRecord.from_json(_load(Path(ROOT) / "tests/data/records/dcgan64-cpu.json"))
    path = run_record.write_record(record, str(tmp_path))
    assert Path(path).name == f"{record.run_id}.json"
    assert json.loads(Path(path).read_text(encoding="utf-8")) == record.to_json()
    assert run_record.record_json(record) == run_record.record_json(record.to_json())


@pytest.mark.parametrize("name", ["dcgan64-cpu", "gpt2-small-tokens", "per-device-2", "oom-max-memory"])
def test_the_facts_of_a_record_are_the_same_from_the_type_and_the_mapping(name):
    from suite.run_record import facts

    data = _load(Path(ROOT) / f"tests/data/records/{name}.json")
    record = RunRecord.from_json(data)
    for fact in (
        facts.data_path,
        facts.nodes,
        facts.accelerators_used,
        facts.numerics_failed,
        facts.profiled,
        facts.images_per_hour,
        facts.log_images_per_hour,
        facts.per_device,
    ):
        assert fact(record) == fact(data), fact.__name__


def test_a_report_builds_each_gathered_records_metrics_once(tmp_path, monkeypatch):
    """A report asks every run's rate many times (per group, per sort, per comparison): the record's
    metrics are built once, when first asked, never per question."""
    import shutil

    from suite.rows.gather import load_records, repriced
    from suite.run_record import facts

    for name in ("dcgan64-cpu", "gpt2-small-tokens", "per-device-2"):
        shutil.copy(Path(ROOT) / f"tests/data/records/{name}.json", tmp_path / f"{name}.json")
    built = []
    real = Metrics.from_json.__func__
    monkeypatch.setattr(
        Metrics, "from_json", classmethod(lambda cls, data: built.append(1) or real(cls, data))
    )
    loaded = load_records([str(tmp_path)], warn=lambda _: None)
    assert len(loaded) == 3
    for _ in range(5):
        for _, record in loaded:
            facts.images_per_hour(record), facts.log_images_per_hour(record)
    # Twice each, however often asked: once by the check on read, once when first asked for a figure
    # (which may be while the records are gathered: the report completes an old record's MFU there).
    assert len(built) == 2 * len(loaded)
    # the record read as a mapping is unchanged, and its type agrees with it
    for path, record in loaded:
        assert record == _load(Path(path)) and RunRecord.of(record).run_id == record["run_id"]
    # a copy priced as another instance is a record of its own, with its own type
    (copy_,), _ = repriced([loaded[0][1]], [_Instance("other", "AMD EPYC", 1)], price_as_if=True)
    assert (
        RunRecord.of(copy_).config["instance"] == "other"
        and loaded[0][1]["config"].get("instance") != "other"
    )


class _Instance:
    def __init__(self, name, accelerator, count):
        self.name, self.accelerator, self.accelerator_count = name, accelerator, count
