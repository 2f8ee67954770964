"""`suite scale` runs its process counts through the grid engine (suite/exploring/scale_counts.py): each
count a point with a run id of its own, every count checked before the first runs, a count whose child left
no record said on stderr and kept out of the folder, and bad input from a child the end of the command."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from conftest import TINY_DCGAN_OPTIONS, TINY_OPTIONS, records

from suite import run_record
from suite.cli import main
from suite.exploring import grid, scale_counts
from suite.launching import child
from suite.run_record.windows import window_metrics

REAL_POPEN = subprocess.Popen
SCALE = ["scale", *TINY_OPTIONS, *TINY_DCGAN_OPTIONS]


class FakeLauncher:
    """`suite run --nproc N --json` as scale's child: the record under the run id it was handed, written to
    --out and printed; or, for a count in `crash_at`, no record and a traceback's end on stderr."""

    started: list[tuple[list[str], dict]] = []
    crash_at: dict[int, int] = {}  # count -> the exit status of a child that leaves no record

    def __new__(cls, command, **kwargs):
        if "suite" not in command:  # another program, started while a point resolves: the real one
            return REAL_POPEN(command, **kwargs)
        return super().__new__(cls)

    def __init__(self, command, **kwargs):
        FakeLauncher.started.append((command, kwargs["env"]))
        self.count = int(json.load(open(command[command.index("--spec") + 1]))["launch"]["nproc"])
        self.out, self.env = command[command.index("--out") + 1], kwargs["env"]
        self.returncode = self.crash_at.get(self.count, 0)

    def communicate(self, timeout=None):
        if self.returncode:
            return "", "Traceback (most recent call last):\n  ...\nRuntimeError: the launcher died\n"
        config = {"workload": "dcgan64", "backend": "cpu", "world_size": self.count, "batch_size": 2}
        record = run_record.new_record(self.env["SUITE_RUN_ID"], {"utc_time": "2026-01-01T00:00:00Z"}, config)
        record.update(status="ok", origin=self.env[run_record.ORIGIN_ENV])
        record["config"]["global_batch_size"] = 2 * self.count
        record["metrics"] = window_metrics(10 * self.count, 1, [1.0]).to_json()
        run_record.write_record(record, self.out)
        return json.dumps(record), ""

    def poll(self):
        return self.returncode


@pytest.fixture
def launcher(monkeypatch):
    FakeLauncher.started, FakeLauncher.crash_at = [], {}
    monkeypatch.setattr(child.subprocess, "Popen", FakeLauncher)
    return FakeLauncher


def test_each_count_is_a_point_with_its_own_run_id_and_record(tmp_path, capsys, launcher):
    assert main([*SCALE, "--nproc", "1,2", "--out", str(tmp_path), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    ids = [env["SUITE_RUN_ID"] for _, env in launcher.started]
    assert [row["run_id"] for row in rows] == ids
    assert "-dcgan64-cpu-n1-" in ids[0] and "-dcgan64-cpu-n2-" in ids[1]
    assert ids[0].split("-")[0] == ids[1].split("-")[0]  # one stamp for every count
    assert all(env[run_record.ORIGIN_ENV] == "scale" for _, env in launcher.started)
    assert sorted(records(tmp_path)) == sorted(f"{i}.json" for i in ids)
    assert [row["speedup"] for row in rows] == pytest.approx([1.0, 2.0])


def test_a_count_that_left_no_record_is_said_and_not_kept(tmp_path, capsys, launcher):
    launcher.crash_at = {2: 1}
    assert main([*SCALE, "--nproc", "1,2,4", "--out", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert "RuntimeError: the launcher died" in err  # its last words, the only place they are kept
    assert len(launcher.started) == 3  # the other counts went on
    assert len(records(tmp_path)) == 2 and all("-n2-" not in name for name in records(tmp_path))
    [two] = [line for line in out.splitlines() if line.split()[:1] == ["2"]]
    assert "error: RuntimeError: the launcher died" in two


def test_a_child_refusing_its_input_ends_the_command_with_exit_2(tmp_path, launcher):
    launcher.crash_at = {1: 2}
    assert main([*SCALE, "--nproc", "1,2", "--out", str(tmp_path)]) == 2
    assert len(launcher.started) == 1 and records(tmp_path) == {}


def test_bad_input_is_refused_before_any_count_runs(tmp_path, capsys, launcher):
    assert main([*SCALE, "--nproc", "1,2", "--workload", "nosuch", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert launcher.started == [] and err.startswith("suite: error: unknown workload 'nosuch'")
    assert len(err.strip().splitlines()) == 1


def test_a_point_without_a_kept_failure_writes_nothing(tmp_path, capsys, launcher):
    launcher.crash_at = {2: 1}
    [point] = scale_counts.count_points(
        [2], lambda n: ["--backend", "cpu", *TINY_DCGAN_OPTIONS, "--nproc", str(n)], "w", "cpu", "T"
    )
    record = grid.run_point(point, str(tmp_path), origin="scale", keep_failure=False)
    assert record["status"] == "error" and record["config"]["world_size"] == 2
    assert not os.listdir(tmp_path) and "the launcher died" in capsys.readouterr().err
    assert launcher.started[0][1]["SUITE_RUN_ID"] == point.env["SUITE_RUN_ID"]
