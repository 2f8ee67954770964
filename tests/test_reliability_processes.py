"""Processes: every count that starts processes at once is held to what the machine can run and hold
(`limits.check_processes`, the bound `--workers` had), and every child ends with the process that started
it (Linux's PR_SET_PDEATHSIG: `limits.end_with_parent` for the suite's own children and pool workers,
`limits.end_with_launcher` for torchrun's ranks, which torch starts in sessions of their own).

Nothing here lets a count run: whatever would start a process is replaced by one that fails the test, and
the machine is stood in for (2 cores, 64 GiB free, or 1 GiB to test the memory bound). The tests of
children ending start real processes (a `sleep`, never a training run), kill their parent with SIGKILL
and wait at most 20 s for the child to end; whatever is left is killed when the test ends.
"""

from __future__ import annotations

import multiprocessing.pool
import os
import subprocess
import sys
import textwrap
import time

import psutil
import pytest
from conftest import SAFETY_NET_S

from suite import limits
from suite.cli import main
from suite.inputs.errors import UserError

GIB = 1024**3


@pytest.fixture
def machine(monkeypatch):
    """A 2-core machine with 64 GiB free on which nothing may start a process; returns a setter for the
    free memory."""
    monkeypatch.setattr(limits, "cores", lambda: 2)
    free = {"bytes": 64 * GIB}
    monkeypatch.setattr(limits, "available_memory_bytes", lambda: free["bytes"])

    real_popen = subprocess.Popen

    def popen(command, *args, **kwargs):
        if "suite" in " ".join(map(str, command)):  # a run, a launcher (importing torch runs ldconfig)
            raise AssertionError(f"a process was started: {command}")
        return real_popen(command, *args, **kwargs)

    def pool(*args, **kwargs):
        raise AssertionError("a pool of processes was started")

    monkeypatch.setattr(subprocess, "Popen", popen)
    monkeypatch.setattr(multiprocessing.pool.Pool, "__init__", pool)
    monkeypatch.delenv(limits.OVERRIDE_ENV, raising=False)
    return lambda gib: free.update(bytes=int(gib * GIB))


def _images(folder, count=2):
    from PIL import Image

    (folder / "a").mkdir(parents=True)
    for i in range(count):
        Image.new("RGB", (8, 8)).save(folder / "a" / f"{i}.png")


RUN = ["run", "--backend", "cpu", "--workload", "dcgan64", "--steps", "1", "--windows", "1"]


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--nproc", "100000"], "--nproc 100000 would take about 100,000 training processes, more than 8"),
        (["--nproc", "9"], "--nproc 9 would take about 9 training processes, more than 8"),
        (["--per-device", "100000"], "--per-device 100000 would take about 100,000 training processes"),
        (["--per-device", "9"], "--per-device 9 would take about 9 training processes"),
    ],
    ids=["nproc-huge", "nproc-over-cores", "per-device-huge", "per-device-over-cores"],
)
def test_run_counts_that_start_processes_are_refused_before_any_starts(
    tmp_path, capsys, machine, argv, words
):
    assert main([*RUN, *argv, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert words in err and limits.OVERRIDE_ENV in err and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()


def test_nproc_is_held_to_the_memory_available(tmp_path, capsys, machine):
    machine(1)  # 1 GiB free: four training processes of about 512 MiB do not fit
    assert main([*RUN, "--nproc", "4", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "--nproc 4 would take about 2.0 GiB" in err and "per training process" in err, err


def test_scale_refuses_a_count_the_machine_cannot_hold_before_the_first_runs(tmp_path, capsys, machine):
    argv = ["scale", "--nproc", "1,2,100000", "--backend", "cpu", "--workload", "dcgan64"]
    assert main([*argv, "--out", str(tmp_path / "out")]) == 2
    assert "--nproc 100000 would take about 100,000 training processes" in capsys.readouterr().err


@pytest.mark.parametrize("workers", ["100000", "9"])
def test_data_prepare_workers_are_held_to_the_machine(tmp_path, capsys, machine, workers):
    _images(tmp_path / "src")
    argv = ["data", "prepare", str(tmp_path / "src"), "--size", "8", "--workers", workers]
    assert main([*argv, "--out", str(tmp_path / "cache")]) == 2
    assert (
        f"--workers {workers} would take about {int(workers):,} decoding processes" in capsys.readouterr().err
    )


def test_the_bound_is_the_one_workers_had_and_the_override_lifts_it(machine, monkeypatch):
    from suite.data import check_worker_bounds

    with pytest.raises(UserError, match="3,000 loader processes, more than 8 loader processes"):
        check_worker_bounds(3000)
    limits.check_processes("--nproc 8", 8, limits.TRAINING_PROCESS_BYTES, "training process")  # at the bound
    monkeypatch.setenv(limits.OVERRIDE_ENV, "1")
    limits.check_processes("--nproc 100000", 100000, limits.TRAINING_PROCESS_BYTES, "training process")


def test_a_child_whose_parent_ended_before_it_asked_exits_at_once(monkeypatch):
    in_child = limits.end_with_parent()
    monkeypatch.setattr(os, "getppid", lambda: 1)  # reparented: the parent is gone

    def exited(status):
        raise SystemExit(status)

    monkeypatch.setattr(os, "_exit", exited)
    with pytest.raises(SystemExit) as ended:
        in_child()
    assert ended.value.code == limits.EXIT_PARENT_GONE


def test_a_launcher_pid_left_in_a_shell_is_ignored_with_a_warning(capsys):
    env = {limits.LAUNCHER_PID_ENV: "1"}  # not this process's parent, and no torchrun agent here
    assert "ignored" in limits.end_with_launcher(env) and limits.LAUNCHER_PID_ENV not in env
    assert "ignored" in limits.end_with_launcher({limits.LAUNCHER_PID_ENV: "x"})
    assert limits.end_with_launcher({}) is None


# -- children end with their parent, however it ends (real processes) ---------------------------------


def _is_sleep(process: psutil.Process, parent: psutil.Process) -> bool:
    return os.path.basename((process.cmdline() or [""])[0]) == "sleep"


def _is_forked(process: psutil.Process, parent: psutil.Process) -> bool:
    """A pool's worker: forked from the parent, so its command line is the parent's."""
    return process.ppid() == parent.pid and process.cmdline() == parent.cmdline()


def _wait_for_children(
    parent: psutil.Process, chosen, timeout_s: float = SAFETY_NET_S
) -> list[psutil.Process]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            found = [c for c in parent.children(recursive=True) if chosen(c, parent)]
        except psutil.NoSuchProcess:
            found = []
        if found:
            return found
        assert parent.is_running() and parent.status() != psutil.STATUS_ZOMBIE, "the parent ended first"
        time.sleep(0.1)
    raise AssertionError("the parent started no child")


def _kill_parent_and_expect_the_child_to_end(tmp_path, script: str, chosen=_is_sleep):
    """Run SCRIPT, wait for its CHOSEN descendants (a `sleep`), kill it with SIGKILL, and check that they end."""
    parent = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)], cwd=tmp_path)
    children = []
    try:
        children = _wait_for_children(psutil.Process(parent.pid), chosen)
        time.sleep(0.5)  # past any start-up
        parent.kill()
        parent.wait()
        gone, alive = psutil.wait_procs(children, timeout=SAFETY_NET_S)
        assert not alive, f"{[c.pid for c in alive]} outlived their parent"
    finally:
        parent.kill()
        for child in children:
            try:
                child.kill()
            except psutil.Error:
                pass


@pytest.fixture
def sleeper(tmp_path):
    """A stand-in for the Python a child would run: it sleeps."""
    path = tmp_path / "python"
    path.write_text("#!/bin/sh\nexec sleep 120\n")
    path.chmod(0o755)
    return str(path)


@pytest.mark.slow
def test_a_child_run_ends_with_a_parent_killed_with_sigkill(tmp_path, sleeper):
    _kill_parent_and_expect_the_child_to_end(
        tmp_path,
        f"""
        import sys
        from suite.launching import child
        sys.executable = {sleeper!r}
        child.spawn(["--backend", "cpu"], {str(tmp_path / "out")!r})
        """,
    )


@pytest.mark.slow
def test_the_torchrun_agent_ends_with_a_launcher_killed_with_sigkill(tmp_path, sleeper):
    _kill_parent_and_expect_the_child_to_end(
        tmp_path,
        f"""
        import sys, types
        from suite import context, run_options
        from suite.launching import launch
        context.collect = lambda: {{"utc_time": context.utc_now()}}  # what it needs, without torch
        args = run_options.run_parser().parse_args(
            ["--backend", "cpu", "--nproc", "2", "--out", {str(tmp_path / "out")!r}]
        )
        launch_part = types.SimpleNamespace(nproc=2, nnodes=None, rdzv_endpoint=None, node_rank=None)
        plan = types.SimpleNamespace(
            spec=types.SimpleNamespace(launch=launch_part),
            workload=types.SimpleNamespace(name="w"),
            backend=types.SimpleNamespace(name="cpu"),
        )
        sys.executable = {sleeper!r}
        launch.launch(args, plan)
        """,
    )


@pytest.mark.slow
def test_a_torchrun_rank_ends_with_its_agent_killed_with_sigkill(tmp_path):
    # The agent (a stand-in for torch's) starts its rank in a session of its own, as torch does; the rank
    # is the suite's command line, held just after start-up in a `sleep` child of its own.
    rank = """
        import subprocess, sys
        import suite.cli as cli
        cli.preset_device_environment = lambda argv: subprocess.run(["sleep", "120"])
        cli.main(["run"])
    """
    _kill_parent_and_expect_the_child_to_end(
        tmp_path,
        f"""
        import os, subprocess, sys, time
        os.environ["{limits.LAUNCHER_PID_ENV}"] = str(os.getpid())
        os.environ["TORCHELASTIC_RUN_ID"] = "test"
        subprocess.Popen([sys.executable, "-c", {textwrap.dedent(rank)!r}], start_new_session=True)
        time.sleep(120)
        """,
    )


@pytest.mark.slow
def test_a_decoding_pool_ends_with_a_prepare_killed_with_sigkill(tmp_path):
    _images(tmp_path / "src", 4)
    script = f"""
        import time
        from suite.data import prepare
        def hold(path):
            time.sleep(120)
        prepare._decode = hold
        prepare.prepare({str(tmp_path / "src")!r}, 8, {str(tmp_path / "cache")!r}, workers=2)
        """
    _kill_parent_and_expect_the_child_to_end(tmp_path, script, chosen=_is_forked)  # the pool's workers
