"""Sweeps run end to end on the CPU with a tiny DCGAN: interrupted and resumed (a fresh `suite sweep`, which
Ctrl-C reaches with its child), and, in this process (each point still a fresh `suite run`), with a failing
point and resumed on a priced instance."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from conftest import (
    ROOT,
    SAFETY_NET_S,
    TINY_DCGAN_OPTIONS,
    TINY_OPTIONS,
    as_sets,
    records,
    suite_env,
    suite_here,
)
from held_runs import hold_env, start_stoppable, wait_held


def sweep_command(out, *grid):
    """The tiny sweep over GRID: every option the grid does not vary is set once (a sweep refuses one
    given twice)."""
    varied = {axis.split("=")[0] for axis in grid}
    fixed = as_sets([*TINY_OPTIONS, *TINY_DCGAN_OPTIONS], leave_out=varied)
    return [sys.executable, "-m", "suite", "sweep", "--grid", *grid, *fixed, "--out", str(out)]


@pytest.mark.slow  # trains in a child process
def test_sweep_interrupted_with_sigint_resumes_without_redoing_or_losing_points(tmp_path):
    out = tmp_path / "sweep"
    command = sweep_command(out, "batch-size=2,3", "precision=fp32,bf16")  # 4 points
    env, hold = hold_env(tmp_path, at=3)  # the third point's run holds as it starts, until stopped
    first = start_stoppable(command, env)  # SIGINT then reaches the sweep and its child, as Ctrl-C does
    try:
        wait_held(hold, first)  # two points recorded, the third running: never finished before the stop
        os.killpg(first.pid, signal.SIGINT)
        _, err = first.communicate(timeout=SAFETY_NET_S)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
    assert first.returncode == 130, err
    assert "run the same command again to resume" in err and "Traceback" not in err
    assert "[3/4]" in err and "interrupted. 2 of 4 points are recorded" in err
    before = records(out)
    assert len(before) == 2
    assert all(r["status"] == "ok" for r in before.values())

    second = subprocess.run(
        command, cwd=ROOT, env=suite_env(tmp_path), capture_output=True, text=True, timeout=SAFETY_NET_S
    )
    assert second.returncode == 0, second.stderr
    assert f"{len(before)} already recorded" in second.stderr
    assert second.stderr.count(": recorded (") == len(before)

    after = records(out)
    assert len(after) == 4  # nothing redone, nothing lost
    for name, record in before.items():  # the first run's records are untouched
        assert after[name] == record
    configs = {(r["config"]["batch_size"], r["config"]["precision"]) for r in after.values()}
    assert len(configs) == 4
    table = second.stdout.split("\n\n")[0].splitlines()[2:]
    assert len(table) == 4 and all(line.rstrip().endswith("ok") for line in table)
    rates = [float(line.split()[2].replace(",", "")) for line in table]  # img/s, the third column
    assert rates == sorted(rates, reverse=True)
    assert "precision fp32→bf16:" in second.stdout and "batch-size 2→3:" in second.stdout


@pytest.mark.slow  # trains in child processes
def test_sweep_records_a_failed_point_and_completes_the_others(tmp_path, capsys):
    out = tmp_path / "sweep"
    # 512 images of 64 px need far more than 64 MiB for activations; 2 images do not. The failing point
    # first: the one after it still runs.
    command = sweep_command(out, "batch-size=512,2") + ["--set", "max-memory=64MiB"]
    status, stdout, stderr = suite_here(capsys, command[3:])
    assert status == 1, stderr  # the other completed, but a script must see the failure
    by_batch = {r["config"]["batch_size"]: r for r in records(out).values()}
    assert sorted(by_batch) == [2, 512]
    assert by_batch[512]["status"] == "oom"
    assert "--max-memory" in by_batch[512]["error"]["message"]
    assert by_batch[2]["status"] == "ok"
    assert "oom: out of memory" in stdout
    assert "1 of 2 points did not complete" in stdout


@pytest.mark.slow  # trains in a child process
def test_sweep_on_a_priced_instance_resumes_without_rerunning_its_points(tmp_path, capsys):
    """A run on `--instance` records the accelerators it used and the catalog: the sweep's own view
    of a point must be resolved the same way, or a resumed sweep never finds its points."""
    out = tmp_path / "sweep"
    command = sweep_command(out, "batch-size=2") + ["--set", "instance=p3.2xlarge"]
    status, _, stderr = suite_here(capsys, command[3:])
    assert status == 0, stderr
    [record] = records(out).values()
    assert record["status"] == "ok" and record["config"]["accelerators_used"] == 1
    status, _, stderr = suite_here(capsys, command[3:])
    assert status == 0, stderr
    assert "1 already recorded" in stderr and "0 to run" in stderr
    assert len(records(out)) == 1
