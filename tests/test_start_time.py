"""Time to first step counts from this Python's start of the suite, never from work the process's pid did
before it: a shell line that ends in `exec suite run` hands its pid (and its sleep or install) on."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import psutil
import pytest
from conftest import ROOT, SAFETY_NET_S, TINY_RUN, suite_env, tiny_config

import suite
from suite import context
from suite.measurement import runner


def test_the_start_is_the_suites_import_not_a_process_created_long_before(monkeypatch):
    now = time.time()
    monkeypatch.setattr(psutil.Process, "create_time", lambda self: now - 3600)  # an exec'd shell's pid
    monkeypatch.setattr(suite, "IMPORTED_AT", now - 2)
    assert context.interpreter_start_time() == now - 2
    assert runner.process_start_time() == now - 2


def test_a_process_forked_after_the_import_starts_at_its_own_creation(monkeypatch):
    now = time.time()
    monkeypatch.setattr(psutil.Process, "create_time", lambda self: now - 1)  # forked from a warm parent
    monkeypatch.setattr(suite, "IMPORTED_AT", now - 600)
    assert context.interpreter_start_time() == now - 1


def test_a_runs_time_to_first_step_leaves_out_what_the_pid_did_before_python(monkeypatch):
    monkeypatch.setattr(psutil.Process, "create_time", lambda self: time.time() - 3600)
    monkeypatch.setattr(suite, "IMPORTED_AT", time.time())
    record = runner.execute(runner.plan_run(tiny_config(windows=1)))
    assert record["status"] == "ok", record["error"]
    assert 0 < record["metrics"]["time_to_first_step_s"] < 600


@pytest.mark.slow  # a fresh Python that trains
def test_exec_after_a_shell_sleep_does_not_count_the_sleep(tmp_path):
    sleep_s = 3
    command = [sys.executable, "-m", "suite", *TINY_RUN, "--json", "--out", str(tmp_path)]
    line = f"sleep {sleep_s}; exec " + " ".join(f"'{part}'" for part in command)
    started = time.monotonic()
    done = subprocess.run(
        ["sh", "-c", line],
        cwd=ROOT,
        env=suite_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=SAFETY_NET_S,
    )
    wall_s = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    first_step_s = json.loads(done.stdout)["metrics"]["time_to_first_step_s"]
    # The shell slept before Python started: the first step came at most wall - sleep after Python did.
    assert 0 < first_step_s <= wall_s - sleep_s, (first_step_s, wall_s)
