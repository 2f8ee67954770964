"""Records: atomic writes, schema checks, and reading folders of them."""

from __future__ import annotations

import json
import os

import pytest

from suite import run_record
from suite.inputs.errors import UserError


def make_record(run_id="r1"):
    return run_record.new_record(run_id, {"utc_time": "2026-01-01T00:00:00Z"}, {"workload": "dcgan64"})


def test_write_is_atomic_and_leaves_no_temporary_file(tmp_path):
    path = run_record.write_record(make_record(), str(tmp_path))
    assert os.listdir(tmp_path) == ["r1.json"]
    assert run_record.read_record(path)["run_id"] == "r1"


def test_a_failed_write_leaves_nothing_behind(tmp_path):
    record = make_record()
    record["metrics"] = {"cycle": record}  # a reference cycle cannot be serialised: json.dump fails midway
    with pytest.raises(ValueError):
        run_record.write_record(record, str(tmp_path))
    assert os.listdir(tmp_path) == []


def test_foreign_or_future_records_are_refused_not_misread(tmp_path):
    (tmp_path / "foreign.json").write_text(json.dumps({"hello": "world"}))
    future = make_record()
    future["schema_version"] = 99
    (tmp_path / "future.json").write_text(json.dumps(future))
    (tmp_path / "broken.json").write_text("{not json")
    with pytest.raises(run_record.NotARecord, match="not a suite run record"):
        run_record.read_record(str(tmp_path / "foreign.json"))
    with pytest.raises(run_record.NotARecord, match="schema version 99, this suite reads version 1"):
        run_record.read_record(str(tmp_path / "future.json"))
    with pytest.raises(run_record.NotARecord, match="not valid JSON"):
        run_record.read_record(str(tmp_path / "broken.json"))


def test_iter_record_paths_walks_folders_and_skips_temporary_files(tmp_path):
    (tmp_path / "sub").mkdir()
    for name in ("b.json", "a.json", ".tmp-x.json", "notes.txt", "sub/c.json"):
        (tmp_path / name).write_text("{}")
    found = [os.path.relpath(p, tmp_path) for p in run_record.iter_record_paths([str(tmp_path)])]
    assert found == ["a.json", "b.json", os.path.join("sub", "c.json")]
    with pytest.raises(UserError, match="no such file or folder"):
        list(run_record.iter_record_paths([str(tmp_path / "missing")]))
