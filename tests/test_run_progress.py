"""`suite run` says what it is doing wherever its stderr goes: rewritten in place at a terminal, plain lines
(no carriage returns) in a log or a pipe, nothing with --quiet; commands that start runs keep their
children quiet and say their own progress."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from conftest import ROOT, TINY_RUN, suite_env

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
    from suite.orchestration import child

    started = []

    class Popen:
        returncode = 0

        def __init__(self, command, **kwargs):
            started.append(command)

        def communicate(self, timeout=None):
            return "", ""

    monkeypatch.setattr(child.subprocess, "Popen", Popen)
    child.spawn(["--backend", "cpu"], str(tmp_path))
    [command] = started
    assert command[3:] == ["run", "--backend", "cpu", "--json", "--quiet", "--out", str(tmp_path)]


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
            timeout=300,
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
