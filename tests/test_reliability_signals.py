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
from conftest import ROOT, TINY_RUN, TINY_SWEEP_SET, changed, suite_env


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


def start(command, tmp_path) -> subprocess.Popen:
    # A new session: the command and everything it starts share one process group, as under a shell job.
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env=suite_env(tmp_path),
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
    sweep = start(command, tmp_path)
    pgid = sweep.pid
    try:
        # A point is running: the sweep has a child `suite run`.
        assert wait_until(lambda: psutil.Process(sweep.pid).children(), 120), sweep.communicate()[1]
        time.sleep(2.0)
        if to_group:
            os.killpg(pgid, signal.SIGTERM)  # a scheduler's preemption
        else:
            os.kill(sweep.pid, signal.SIGTERM)  # `kill PID`: the parent alone
        _, err = sweep.communicate(timeout=120)
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
    try:
        assert wait_until(lambda: psutil.Process(run.pid).cpu_times().user > 3, 120)
        os.kill(run.pid, signal.SIGTERM)
        _, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    assert run.returncode == 130 and "interrupted" in err and "Traceback" not in err, err
    assert not glob.glob(str(tmp_path / "out" / "*.json"))


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
    pgid = launcher.pid
    try:
        # torchrun and its two workers are up.
        assert wait_until(lambda: len(psutil.Process(launcher.pid).children(recursive=True)) >= 3, 180)
        time.sleep(3.0)
        if to_group:
            os.killpg(pgid, signal.SIGTERM)
        else:
            os.kill(launcher.pid, signal.SIGTERM)
        _, err = launcher.communicate(timeout=120)
    finally:
        if launcher.poll() is None:
            os.killpg(pgid, signal.SIGKILL)
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
