"""`suite run` says what it is doing wherever its stderr goes: rewritten in place at a terminal, plain lines
(no carriage returns) in a log or a pipe, nothing with --quiet; commands that start runs keep their
children quiet and say their own progress."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from conftest import ROOT, SAFETY_NET_S, TINY, TINY_OPTIONS, TINY_RUN, model_override_options, suite_env

from suite.commands.run import line_printer, progress_printer


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_plain_lines_say_warm_up_done_each_window_and_the_time_left():
    stream, clock = io.StringIO(), Clock()
    show = line_printer(stream, clock=clock, since=lambda: 12.25)
    show("warmup", step=1, of=2)  # not the last warm-up step: nothing
    clock.now += 1
    show("warmup", step=2, of=2)
    for window in range(1, 5):
        clock.now += 10  # each window takes 10 s
        show("window", window=window, of=4, images_per_second=1234.5)
    assert stream.getvalue().splitlines() == [
        "suite: warm-up done: 2 steps, 12.2 s since the suite started",
        "suite: window 1/4: 1,234.5 img/s (about 30 s of windows left)",
        "suite: window 2/4: 1,234.5 img/s (about 20 s of windows left)",
        "suite: window 3/4: 1,234.5 img/s (about 10 s of windows left)",
        "suite: window 4/4: 1,234.5 img/s",
    ]
    assert "\r" not in stream.getvalue()


def test_a_token_workloads_windows_are_said_in_tokens_per_second():
    for make in (progress_printer, lambda stream: line_printer(stream, since=lambda: 0.0)):
        stream = io.StringIO()
        make(stream)("window", window=1, of=1, images_per_second=233.5, unit="tokens", units_per_sample=1024)
        assert "window 1/1: 239,104 tok/s" in stream.getvalue() and "img/s" not in stream.getvalue()


def test_a_token_run_says_tok_s_on_its_progress_lines(capsys, tmp_path):
    from suite import cli

    overrides = model_override_options(TINY["gpt2-small"])
    argv = [
        "run",
        *TINY_OPTIONS,
        "--workload",
        "gpt2-small",
        *overrides,
        "--windows",
        "2",
        "--out",
        str(tmp_path),
    ]
    assert cli.main(argv) == 0
    windows = [line for line in capsys.readouterr().err.splitlines() if line.startswith("suite: window")]
    assert len(windows) == 2 and all(line.endswith("tok/s") or "tok/s (" in line for line in windows), windows


def test_many_short_windows_are_said_about_once_a_second_first_and_last_always():
    stream, clock = io.StringIO(), Clock()
    show = line_printer(stream, clock=clock, since=lambda: 1.0)
    for window in range(1, 101):
        clock.now += 0.1
        show("window", window=window, of=100, images_per_second=10.0)
    said = [int(line.split()[2].split("/")[0]) for line in stream.getvalue().splitlines()]
    assert said[0] == 1 and said[-1] == 100 and 9 <= len(said) <= 12


def test_printers_pass_over_events_they_do_not_know():
    for make in (progress_printer, lambda stream: line_printer(stream, since=lambda: 0.0)):
        stream = io.StringIO()
        make(stream)("steps_chosen", steps=10)
        assert stream.getvalue() == ""


def test_a_child_run_is_started_quiet_its_parent_says_the_progress(monkeypatch, tmp_path):
    from suite.launching import child
    from suite.run_options import read_spec
    from suite.spec import RunSpec

    started = []

    class Popen:
        returncode = 0

        def __init__(self, command, **kwargs):
            started.append((command, read_spec(command[5])))  # the run, as the child reads it

        def communicate(self, timeout=None):
            return "", ""

    monkeypatch.setattr(child.subprocess, "Popen", Popen)
    child.spawn(["--backend", "cpu"], str(tmp_path))
    [(command, spec)] = started
    assert command[3:] == ["run", "--spec", command[5], "--json", "--quiet", "--out", str(tmp_path)]
    assert spec == RunSpec().replace(backend="cpu")


@pytest.mark.slow  # a fresh Python that trains
def test_a_run_whose_stderr_is_a_file_leaves_progress_lines_in_it(tmp_path):
    err_path = tmp_path / "err"
    command = [sys.executable, "-m", "suite", *TINY_RUN, "--windows", "2", "--out", str(tmp_path / "out")]
    with open(err_path, "w") as err:
        done = subprocess.run(
            command,
            cwd=ROOT,
            env=suite_env(tmp_path),
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            timeout=SAFETY_NET_S,
        )
    text = err_path.read_text()
    assert done.returncode == 0, text
    assert "\r" not in text and "\033" not in text
    lines = text.splitlines()
    assert lines[0].startswith("suite: dcgan64 on cpu")
    assert any(line.startswith("suite: warm-up done: 1 step") for line in lines)
    assert any(line.startswith("suite: window 1/2: ") for line in lines)
    assert any(line.startswith("suite: window 2/2: ") for line in lines)
    assert lines[-1].startswith("suite: record written to ")


def test_a_sweep_says_each_point_as_it_starts_and_the_time_its_rest_takes(tmp_path, monkeypatch):
    from suite import run_record
    from suite.exploring import grid

    def run_point(point, out_dir, timeout_s=None, origin="sweep"):
        record = run_record.new_record(f"p{point.index}", {"utc_time": "2026-01-01T00:00:00Z"}, point.config)
        record["status"] = "ok"
        run_record.write_record(record, out_dir)
        return record

    monkeypatch.setattr(grid, "run_point", run_point)
    points = [
        grid.Point(i, {"batch-size": str(i + 1)}, [], {"workload": "dcgan64", "batch_size": i + 1})
        for i in range(3)
    ]
    said: list[str] = []
    grid.run_points(points, str(tmp_path), log=said.append)
    starts = [line for line in said if ": running" in line]
    assert starts[0] == "[1/3] batch-size=1: running"  # nothing to go by yet
    assert (
        starts[1].startswith("[2/3] batch-size=2: running (about ")
        and "left for 2 points, from 1 run" in starts[1]
    )
    assert "left for 1 point, from 2 run so far)" in starts[2]


def test_a_sweeps_pace_is_the_mean_of_its_points_times_those_left():
    from suite.exploring.grid import Pace

    pace = Pace(total=5, to_run=4)
    pace.ran(None)  # recorded by another sweep: no time of its own
    pace.ran(60.0)
    pace.ran(120.0)
    assert pace.running() == "running (about 2 min left for 1 point, from 2 run so far)"


def test_a_batch_size_search_says_each_try_and_at_most_how_many_follow():
    from suite.exploring import batch_size

    said: list[str] = []
    batch_size.search(
        lambda n: batch_size.Try(n, "ok" if n <= 46 else "oom", 100.0 if n <= 46 else None),
        start=1,
        max_batch=1024,
        log=said.append,
    )
    tries = [line for line in said if ": trying (" in line]
    assert tries[0] == "batch      1: trying (try 1, at most 20 more)"
    assert tries[1].startswith("batch      2: trying (try 2, at most 19 more; about ")
    assert "a try so far" in tries[1]
    # 32 fits, 64 does not: bisecting takes 5 more tries (48, 40, 44, 46, 47).
    assert tries[7].startswith("batch     48: trying (try 8, at most 4 more;")
    assert tries[-1].startswith("batch     47: trying (try 12, the last;")
    assert len(tries) == 12


def test_a_running_fleet_says_how_many_still_run_the_time_the_plan_gives_them_and_the_cost():
    from types import SimpleNamespace

    from suite.fleet import fleet_ledger

    def launch(phase, started, hours):
        return SimpleNamespace(phase=phase, started=started, target=SimpleNamespace(hours=hours))

    launches = [launch("requested", 0.0, 2.0), launch("done", 0.0, 1.0), launch("requested", 600.0, 1.0)]
    line = fleet_ledger.progress_line(launches, now=1200.0, spent_usd=4.1)
    assert line == (
        "2 of 3 instance(s) still running, 20 min 00 s since the first request; about 1.7 h left by the "
        "plan's hours; $4.10 so far"
    )
    late = fleet_ledger.progress_line(launches, now=9000.0, spent_usd=9.0)
    assert "past the plan's hours" in late
