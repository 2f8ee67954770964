"""SIGTERM gets the orderly stop of Ctrl-C: a real process group, a real signal, and afterwards not one
process of the group left running."""

from __future__ import annotations

import glob
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest
from conftest import ROOT, SAFETY_NET_S, TINY_RUN, TINY_SWEEP_SET, changed, only_record, suite_env
from held_runs import Lines, hold_env, wait_held


def group_members(pgid: int) -> list[psutil.Process]:
    members = []
    for process in psutil.process_iter(["pid"]):
        try:
            if os.getpgid(process.pid) == pgid and process.status() != psutil.STATUS_ZOMBIE:
                members.append(process)
        except (ProcessLookupError, psutil.Error):
            continue
    return members


def wait_until(condition, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return False


def assert_group_gone(pgid: int) -> None:
    # Children reparented to init keep the group id: any left running would show here.
    assert wait_until(lambda: not group_members(pgid), 60), [p.cmdline() for p in group_members(pgid)]


def start(command, tmp_path, env=None) -> subprocess.Popen:
    # A new session: the command and everything it starts share one process group, as under a shell job.
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env=env or suite_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


@pytest.mark.slow
@pytest.mark.parametrize("to_group", [False, True], ids=["kill-parent", "kill-group"])
def test_sigterm_stops_a_sweep_and_its_point_and_says_how_to_resume(tmp_path, to_group):
    out = tmp_path / "sweep"
    command = [
        sys.executable,
        "-m",
        "suite",
        "sweep",
        "--grid",
        "batch-size=2,3,4,5",
        *TINY_SWEEP_SET,
        "--out",
        str(out),
    ]
    env, hold = hold_env(tmp_path, at=1)
    sweep = start(command, tmp_path, env)
    pgid = sweep.pid
    try:
        wait_held(hold, sweep)  # a point is running: its `suite run` holds as its run starts, until stopped
        if to_group:
            os.killpg(pgid, signal.SIGTERM)  # a scheduler's preemption
        else:
            os.kill(sweep.pid, signal.SIGTERM)  # `kill PID`: the parent alone
        _, err = sweep.communicate(timeout=SAFETY_NET_S)
    finally:
        if sweep.poll() is None:
            os.killpg(pgid, signal.SIGKILL)
    assert sweep.returncode == 130, err
    assert "run the same command again to resume" in err and "Traceback" not in err
    assert_group_gone(pgid)
    assert not glob.glob(str(out / ".tmp-*"))


@pytest.mark.slow
def test_sigterm_stops_a_single_run_as_ctrl_c_does(tmp_path):
    command = [
        sys.executable,
        "-m",
        "suite",
        *changed(TINY_RUN, windows=100000),  # a run that lasts until it is stopped
        "--out",
        str(tmp_path / "out"),
    ]
    run = start(command, tmp_path)
    stderr = Lines(run.stderr)
    try:
        assert stderr.wait_for("suite: window 1/", SAFETY_NET_S), stderr.text()  # it is in its timed windows
        os.kill(run.pid, signal.SIGTERM)
        run.wait(timeout=SAFETY_NET_S)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    err = stderr.text()
    assert run.returncode == 130 and "interrupted" in err and "Traceback" not in err, err
    # Its first window was timed: the record of the windows timed before the stop, saying so.
    record = only_record(tmp_path / "out")
    assert record["status"] == "interrupted" and "(Ctrl-C or SIGTERM) during timed window" in err
    assert len(record["metrics"]["window_time_s"]) >= 1


@pytest.mark.slow
@pytest.mark.parametrize("to_group", [False, True], ids=["kill-parent", "kill-group"])
def test_sigterm_stops_a_launched_run_with_its_torchrun_and_workers(tmp_path, to_group):
    command = [
        sys.executable,
        "-m",
        "suite",
        *changed(TINY_RUN, windows=100000, nproc=2),  # a launched run that lasts until it is stopped
        "--out",
        str(tmp_path / "out"),
    ]
    launcher = start(command, tmp_path)
    stderr = Lines(launcher.stderr)
    pgid = launcher.pid
    try:
        # torchrun and its two workers are up, and rank 0 is in its timed windows.
        assert stderr.wait_for("suite: window 1/", SAFETY_NET_S), stderr.text()
        assert len(psutil.Process(launcher.pid).children(recursive=True)) >= 3
        if to_group:
            os.killpg(pgid, signal.SIGTERM)
        else:
            os.kill(launcher.pid, signal.SIGTERM)
        launcher.wait(timeout=SAFETY_NET_S)
    finally:
        if launcher.poll() is None:
            os.killpg(pgid, signal.SIGKILL)
    err = stderr.text()
    assert launcher.returncode == 130, err
    assert "Traceback" not in err.split("suite: interrupted")[-1]
    assert_group_gone(pgid)


def test_forked_helpers_keep_sigterms_default_while_the_command_stops_on_it():
    # Pool.terminate() stops decoding workers with SIGTERM: a KeyboardInterrupt raised in one instead can
    # leave a queue lock held and the pool's other workers (and its parent) waiting forever.
    from suite import cli

    previous = cli._stop_on_sigterm()
    try:
        assert signal.getsignal(signal.SIGTERM) is cli._interrupt
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child reports its handler and leaves at once
            os.write(write, b"default" if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL else b"python")
            os._exit(0)
        os.waitpid(pid, 0)
        assert os.read(read, 16) == b"default"
    finally:
        signal.signal(signal.SIGTERM, previous)
