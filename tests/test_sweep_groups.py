"""Sweep points that launch groups (`repeat`, with `against`): a point's outcome comes from the records its
runs wrote, never from the group's progress lines; a group that really failed still says so."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from conftest import TINY_SWEEP_SET, records, suite_here

from suite import run_record
from suite.exploring import grid, grid_options, sweep_table
from suite.launching import child
from suite.run_options import run_options
from suite.run_record.windows import window_metrics


@pytest.fixture(scope="module")
def options():
    return run_options()


def run(run_id: str, rate: float | None, config: dict, status: str = "ok", **group) -> dict:
    record = run_record.new_record(run_id, {"utc_time": f"2026-01-01T00:00:0{run_id[-1]}Z"}, config)
    record["status"] = status
    if rate is not None:
        record["metrics"] = window_metrics(10, 1, [10 / rate]).to_json()
    if status != "ok":
        record["error"] = {"type": status, "message": "out of memory"}
    if group:
        record["group"] = group
    return record


def a_point(options, *knobs: str, fixed=("backend=cpu", "workload=dcgan64", "repeat=3")) -> grid.Point:
    spec = grid_options.parse_inline(list(knobs) or ["batch-size=2"], list(fixed), options)
    [point] = grid.expand(spec, options)
    grid.resolve([point])
    return point


REAL_POPEN = subprocess.Popen


class FakeGroupParent:
    """`suite run --repeat N --json` as a sweep's child sees it: its runs' records already in --out (each
    run wrote its own), the group's records on stdout, and a progress line per run on stderr."""

    printed: object = None
    returncode = 0
    written: list[tuple[str, dict]] = []
    started: list[dict] = []

    def __new__(cls, command, **kwargs):
        if "suite" not in command:  # another program, started while the point resolves: the real one
            return REAL_POPEN(command, **kwargs)
        return super().__new__(cls)

    def __init__(self, command, **kwargs):
        self.out = command[command.index("--out") + 1]
        FakeGroupParent.started.append(kwargs["env"])
        for folder, record in self.written:
            run_record.write_record(record, os.path.join(self.out, folder))

    def communicate(self, timeout=None):
        stdout = "" if self.printed is None else json.dumps(self.printed, indent=2)
        return stdout, "suite: run 3/3 of group g1: 12.0 img/s\n"


@pytest.fixture
def group_parent(monkeypatch):
    FakeGroupParent.started = []
    monkeypatch.setattr(child.subprocess, "Popen", FakeGroupParent)
    return FakeGroupParent


def test_a_repeat_point_takes_its_outcome_from_its_runs(tmp_path, options, group_parent):
    point = a_point(options)
    group = [
        run(f"r{i}", rate, point.config, id="g1", index=i, of=3)
        for i, rate in enumerate((10.0, 12.0, 11.0), 1)
    ]
    group_parent.written = [("", r) for r in group]
    group_parent.printed = group
    outcome = grid.run_point(point, str(tmp_path))
    assert outcome["run_id"] == "r3" and outcome["status"] == "ok"  # the run of median rate
    on_disk = records(tmp_path)
    assert sorted(on_disk) == ["r1.json", "r2.json", "r3.json"]  # no record of a "failure" beside them
    for record in on_disk.values():
        assert record["origin"] == "sweep" and record["sweep_point"] == {"batch-size": "2"}
        assert record["group"]["id"] == "g1"
    table = sweep_table.render([(point, outcome)], {"batch-size": ["2"]})
    assert "error" not in table and table.splitlines()[-1].rstrip().endswith("ok")


def test_a_group_with_a_failed_run_is_a_failed_point(tmp_path, options, group_parent):
    point = a_point(options)
    group = [
        run("r1", 10.0, point.config, id="g1", index=1, of=3),
        run("r2", None, point.config, status="oom", id="g1", index=2, of=3),
        run("r3", 11.0, point.config, id="g1", index=3, of=3),
    ]
    group_parent.written, group_parent.printed, group_parent.returncode = [("", r) for r in group], group, 1
    outcome = grid.run_point(point, str(tmp_path))
    assert outcome["run_id"] == "r2" and outcome["status"] == "oom"
    assert sorted(records(tmp_path)) == ["r1.json", "r2.json", "r3.json"]


def test_a_group_that_left_no_result_is_a_failure_record(tmp_path, options, group_parent):
    point = a_point(options)
    group_parent.written, group_parent.printed, group_parent.returncode = [], None, 2
    outcome = grid.run_point(point, str(tmp_path))
    assert outcome["status"] == "error" and outcome["error"]["type"] == "ChildFailed"
    [record] = records(tmp_path).values()
    assert record["sweep_point"] == {"batch-size": "2"}


def test_an_against_point_is_its_own_sides_median_and_fails_with_either_side(tmp_path, options, group_parent):
    point = a_point(options, fixed=("backend=cpu", "workload=dcgan64", "repeat=2", "against=batch-size=4"))
    assert point.repeat == 2 and point.candidate_config["batch_size"] == 4
    base = [
        run(f"b{i}", rate, point.config, id="gb", index=i, of=2, interleaved_with="gc")
        for i, rate in ((1, 10.0), (2, 20.0))
    ]
    cand = [
        run(f"c{i}", 99.0, point.candidate_config, id="gc", index=i, of=2, interleaved_with="gb")
        for i in (1, 2)
    ]
    group_parent.written = [("baseline", r) for r in base] + [("candidate", r) for r in cand]
    group_parent.printed = {"baseline": base, "candidate": cand}
    outcome = grid.run_point(point, str(tmp_path))
    assert outcome["run_id"] == "b1"  # the lower middle of the point's own side, never the other side's
    assert sorted(records(tmp_path / "baseline")) == ["b1.json", "b2.json"]
    assert sorted(records(tmp_path / "candidate")) == ["c1.json", "c2.json"]
    assert records(tmp_path) == {}  # nothing beside the two sides' folders
    assert all(r["origin"] == "sweep" for r in records(tmp_path / "candidate").values())

    cand[1] = run(
        "c2", None, point.candidate_config, status="oom", id="gc", index=2, of=2, interleaved_with="gb"
    )
    group_parent.written = [("baseline", r) for r in base] + [("candidate", r) for r in cand]
    group_parent.printed = {"baseline": base, "candidate": cand}
    assert grid.run_point(point, str(tmp_path / "again"))["run_id"] == "c2"


def test_a_groups_runs_are_started_as_the_sweeps(tmp_path, options, group_parent, monkeypatch):
    """The group's own runs are started by the group, not the sweep: the origin reaches them through
    the environment, and a run started by a sweep's child says so without being told again."""
    group_parent.written, group_parent.printed = [], None
    monkeypatch.setenv(run_record.ORIGIN_ENV, "sweep")
    child.run(["--backend", "cpu"], {"workload": "dcgan64", "backend": "cpu"}, str(tmp_path))
    assert group_parent.started[-1][run_record.ORIGIN_ENV] == "sweep"
    monkeypatch.delenv(run_record.ORIGIN_ENV)
    child.run(["--backend", "cpu"], {"workload": "dcgan64", "backend": "cpu"}, str(tmp_path))
    assert group_parent.started[-1][run_record.ORIGIN_ENV] == "run"


@pytest.mark.parametrize(
    "stdout, kind",
    [
        (json.dumps(run("r1", 1.0, {"workload": "w"})), "record"),
        (json.dumps([run("r1", 1.0, {"workload": "w"})]), "group"),
        (json.dumps({"baseline": [run("r1", 1.0, {})], "candidate": [run("r2", 1.0, {})]}), "group"),
        ("", None),
        ("[]", None),
        (json.dumps([{"schema": "other"}]), None),
        (json.dumps({"baseline": [], "candidate": []}), None),
        (json.dumps({"baseline": [run("r1", 1.0, {})], "candidate": [run("r2", 1.0, {})], "x": 1}), None),
    ],
)
def test_what_a_child_printed_is_a_record_a_group_or_nothing(stdout, kind):
    record, group = child.reported_runs(stdout)
    assert (record is not None, group is not None) == (kind == "record", kind == "group")


# -- resume ------------------------------------------------------------------------------------------------


def test_a_repeat_point_is_recorded_only_by_a_whole_group_of_its_size(options):
    point = a_point(options)
    whole = [
        run(f"r{i}", rate, point.config, id="g1", index=i, of=3)
        for i, rate in enumerate((10.0, 12.0, 11.0), 1)
    ]
    assert grid.find_record(point, whole)["run_id"] == "r3"
    assert grid.find_record(point, whole[:2]) is None  # cut short: the point runs again
    single = run("s1", 10.0, point.config)  # a lone run of the configuration is no group of three
    assert grid.find_record(point, [single]) is None
    other_size = [run(f"q{i}", 10.0, point.config, id="g2", index=i, of=2) for i in (1, 2)]
    assert grid.find_record(point, other_size) is None
    failed = [*whole[:2], run("r9", None, point.config, status="error", id="g1", index=3, of=3)]
    assert grid.find_record(point, failed) is None  # an error is run again
    oom = [*whole[:2], run("r9", None, point.config, status="oom", id="g1", index=3, of=3)]
    assert grid.find_record(point, oom)["status"] == "oom"  # an oom would only repeat
    assert grid.find_record(point, [*whole, *other_size])["run_id"] == "r3"


def test_an_against_point_is_recorded_only_with_both_sides_whole(options):
    point = a_point(options, fixed=("backend=cpu", "workload=dcgan64", "repeat=2", "against=batch-size=4"))
    base = [
        run(f"b{i}", 10.0 * i, point.config, id="gb", index=i, of=2, interleaved_with="gc") for i in (1, 2)
    ]
    cand = [
        run(f"c{i}", 5.0, point.candidate_config, id="gc", index=i, of=2, interleaved_with="gb")
        for i in (1, 2)
    ]
    assert grid.find_record(point, [*base, *cand])["run_id"] == "b1"
    assert grid.find_record(point, [*base, cand[0]]) is None
    wrong = [
        run(f"w{i}", 5.0, {**point.candidate_config, "batch_size": 8}, id="gc", index=i, of=2) for i in (1, 2)
    ]
    assert grid.find_record(point, [*base, *wrong]) is None  # another --against's group
    plain = a_point(options, fixed=("backend=cpu", "workload=dcgan64", "repeat=2"))
    assert grid.find_record(plain, [*base, *cand]) is None  # an against group is not a plain repeat's


@pytest.mark.slow  # trains in child processes
def test_a_sweep_with_repeat_records_its_runs_and_reports_the_point_done(tmp_path, capsys):
    out = tmp_path / "sweep"
    command = ["sweep", "--grid", "batch-size=2", *TINY_SWEEP_SET, "--set", "repeat=2", "--out", str(out)]
    status, stdout, stderr = suite_here(capsys, command)
    assert status == 0, stderr + stdout
    made = records(out)
    assert len(made) == 2 and all(r["status"] == "ok" for r in made.values())
    assert {r["origin"] for r in made.values()} == {"sweep"}
    assert {r["group"]["of"] for r in made.values()} == {2}
    assert "did not complete" not in stdout and "error" not in stdout
    status, _, stderr = suite_here(capsys, command)
    assert status == 0 and "1 already recorded" in stderr
    assert len(records(out)) == 2
