"""Once a window is timed, a record exists, whatever happens next: a workload name too long for a run id,
Ctrl-C or SIGTERM after the windows (in the bottleneck probe, in a later window), a token file cut short
under the run (a memory map's SIGBUS, a loader worker's "out of shared memory"), a closed stderr. Each
stop comes at a point the test can see (a progress event, a hold file, a line on stderr), never after a
sleep."""

from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import sys

import numpy as np
import pytest
from conftest import (
    ROOT,
    TINY,
    TINY_OPTIONS,
    TINY_RUN,
    changed,
    model_override_options,
    only_record,
    suite_env,
    tiny_config,
)
from held_runs import hold_env, start_stoppable, wait_held

from suite import cli
from suite.measurement import bottleneck_probe, runner
from suite.run_record import RUN_ID_LENGTH, is_plain_name, new_run_id

CONTEXT, VOCABULARY = TINY["gpt2-small"]["context"], TINY["gpt2-small"]["vocabulary"]


def token_file(path, count: int = 4000) -> str:
    np.random.default_rng(0).integers(0, VOCABULARY, size=count).astype(np.uint16).tofile(path)
    return str(path)


def token_run(data: str, *extra: str) -> list[str]:
    """A tiny gpt2-small `suite run` on DATA: one warm-up step, three windows of two steps."""
    options = changed(TINY_OPTIONS, steps=2, windows=3)
    return [
        "run",
        *options,
        "--workload",
        "gpt2-small",
        *model_override_options(TINY["gpt2-small"]),
        "--data",
        data,
        *extra,
    ]


def token_plan(data: str, workers: int):
    spec = tiny_config("gpt2-small", windows=3, threads=1, data=data, workers=workers)
    return runner.plan_run(spec)


# -- a run id within its cap, whatever the workload's name ------------------------------------------------


def test_a_long_workload_name_gets_a_plain_run_id_of_its_own():
    stamp = "2026-12-01T23:06:32Z"
    names = ["hf:/" + "deep/" * 80 + "config.json", "m_" + "a" * 300 + ":f", "m_" + "a" * 300 + ":g"]
    ids = [new_run_id(name, "cpu", stamp) for name in names]
    for run_id in ids:
        assert is_plain_name(run_id) and len(run_id) <= RUN_ID_LENGTH, run_id
    # two long names that share their head are still told apart (a digest of the whole name)
    assert ids[1][:-7] != ids[2][:-7]
    short = new_run_id("dcgan64", "cpu", stamp)
    assert short.startswith("20261201T230632Z-dcgan64-cpu-") and len(short) == len(short.split("-")[0]) + 19


def test_a_run_of_a_factory_with_a_long_name_is_recorded(tmp_path, monkeypatch, capsys):
    module = "m_" + "a" * 190  # as a file name it fits; as a run id, with the stamp and backend, it did not
    (tmp_path / f"{module}.py").write_text(
        "from torch import nn\n\ndef f(num_classes=10):\n"
        "    return nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, num_classes))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"
    argv = ["run", *TINY_OPTIONS, "--image-size", "8", "--workload", f"{module}:f", "--out", str(out)]
    assert cli.main(argv) == 0, capsys.readouterr().err
    record = only_record(out)
    assert record["status"] == "ok" and record["config"]["workload"] == f"{module}:f"
    assert len(record["run_id"]) <= RUN_ID_LENGTH


# -- Ctrl-C or SIGTERM after a timed window -------------------------------------------------------------


def test_an_interrupt_in_the_bottleneck_probe_keeps_the_timed_windows(tmp_path, monkeypatch, capsys):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt  # as Ctrl-C (or SIGTERM, which the command line turns into it) here

    monkeypatch.setattr(bottleneck_probe, "measure", interrupted)
    out = tmp_path / "out"
    code = cli.main([*token_run(token_file(tmp_path / "t.bin"), "--workers", "0"), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 130, err
    record = only_record(out)
    assert record["status"] == "interrupted" and record["error"]["type"] == "Interrupted"
    assert "after its 3 timed windows" in record["error"]["message"]
    metrics = record["metrics"]
    assert len(metrics["window_time_s"]) == 3 and metrics["images_per_second"] > 0
    assert metrics["tokens_per_second"] == pytest.approx(metrics["images_per_second"] * CONTEXT)
    assert "after its 3 timed windows" in err and "nothing was written" not in err


def dcgan_plan(windows: int):
    """A tiny dcgan64 on the CPU: one warm-up step, then WINDOWS windows of one step."""
    return runner.plan_run(tiny_config(steps_per_window=1, windows=windows, threads=1))


def test_an_interrupt_in_a_later_window_keeps_the_windows_before_it():
    plan = dcgan_plan(windows=3)

    def progress(event, **info):
        if event == "window" and info["window"] == 1:
            raise KeyboardInterrupt  # as the second window starts

    with pytest.raises(runner.RunInterrupted) as stopped:
        runner.execute(plan, progress=progress)
    record = stopped.value.record
    assert record["status"] == "interrupted"
    assert "during timed window 2 of 3" in record["error"]["message"]
    assert len(record["metrics"]["window_time_s"]) == 1 and record["metrics"]["steps_timed"] == 1
    from suite.run_record import check_record

    check_record(json.loads(json.dumps(record)))  # every reader takes it: its figures agree with its windows


def test_an_interrupt_before_any_window_still_leaves_no_record():
    plan = dcgan_plan(windows=2)

    def progress(event, **info):
        if event == "warmup":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as stopped:
        runner.execute(plan, progress=progress)
    assert not isinstance(stopped.value, runner.RunInterrupted)


@pytest.mark.slow  # a real `suite run` process, stopped by a real signal in its bottleneck probe
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_signal_in_the_probe_of_a_real_data_run_leaves_its_record(tmp_path, stop):
    env, hold = hold_env(tmp_path, SUITE_FAULT_HOLD_IN="probe")
    out = tmp_path / "out"
    command = [sys.executable, "-m", "suite", *token_run(token_file(tmp_path / "t.bin"), "--workers", "0")]
    run = start_stoppable([*command, "--out", str(out)], env)
    try:
        wait_held(hold, run)  # its three windows are timed; the probe is about to start
        os.kill(run.pid, stop)
        _, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    assert run.returncode == 130 and "Traceback" not in err, err
    record = only_record(out)
    assert record["status"] == "interrupted" and len(record["metrics"]["window_time_s"]) == 3
    assert "after its 3 timed windows" in err


# -- a token file cut short under the run ---------------------------------------------------------------

_READ_AFTER_TRUNCATION = """
import sys
from suite.data.token_file import TokenFileShrank, read_token_file
found = read_token_file(sys.argv[1])
tokens = found.open()
first = tokens.read(0, 100)
open(sys.argv[1], "r+b").truncate(0)
try:
    tokens.read(found.tokens - 100, 100)
except TokenFileShrank as error:
    print(error)
"""


def test_a_token_file_cut_short_is_named_not_a_sigbus(tmp_path):
    # In a fresh Python (numpy only, no torch): a memory map's SIGBUS would end pytest itself.
    path = token_file(tmp_path / "t.bin")
    done = subprocess.run(
        [sys.executable, "-c", _READ_AFTER_TRUNCATION, path],
        cwd=ROOT,
        env=suite_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, (done.returncode, done.stderr)
    assert "the file holds fewer tokens than the 4,000 it held when the run was planned" in done.stdout


@pytest.mark.parametrize("workers", [0, pytest.param(1, marks=pytest.mark.slow)])
def test_a_token_file_cut_short_mid_run_fails_the_run_and_keeps_its_windows(tmp_path, workers):
    path = token_file(tmp_path / "t.bin")
    plan = token_plan(path, workers)

    def progress(event, **info):
        if event == "window" and info["window"] == 1:
            os.truncate(path, 0)  # after the first window: the rest of the run reads a file of nothing

    record = runner.execute(plan, progress=progress)
    assert record["status"] == "error" and record["error"]["type"] == "LoaderFailed"
    message = record["error"]["message"]
    assert path in message and "fewer tokens than the 4,000" in message, message
    assert "shared memory" not in message and "TokenFileShrank" not in message
    assert len(record["metrics"]["window_time_s"]) >= 1


# -- a closed stderr -------------------------------------------------------------------------------------


@pytest.mark.slow  # a fresh `suite run`, its stderr closed as `2>&-` closes it
def test_a_run_with_stderr_closed_writes_its_record(tmp_path):
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "suite", *TINY_RUN, "--out", str(out)],
        cwd=ROOT,
        env=suite_env(tmp_path),
        stdout=subprocess.PIPE,
        text=True,
        timeout=300,
        preexec_fn=lambda: os.close(2),
    )
    assert done.returncode == 0
    assert only_record(out)["status"] == "ok" and "record" in done.stdout
    assert not glob.glob(str(out / ".tmp-*"))


# -- a stop that comes as a record is written: what is said agrees with what is on disk -------------------


def test_a_sweep_stopped_as_its_point_recorded_counts_that_point(tmp_path, monkeypatch):
    from suite import run_record
    from suite.exploring import grid

    points = [
        grid.Point(i, {"batch-size": str(i + 1)}, [], {"workload": "dcgan64", "batch_size": i + 1})
        for i in range(3)
    ]

    def run_point(point, out_dir, timeout_s=None, origin="sweep"):
        record = run_record.new_record(f"p{point.index}", {"utc_time": "2026-01-01T00:00:00Z"}, point.config)
        record["status"] = "ok"
        run_record.write_record(record, out_dir)
        if point.index == 1:
            raise KeyboardInterrupt  # the stop reached the sweep as its second point's run had written
        return record

    monkeypatch.setattr(grid, "run_point", run_point)
    said: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        grid.run_points(points, str(tmp_path), log=said.append)
    assert len(glob.glob(str(tmp_path / "*.json"))) == 2
    assert "interrupted. 2 of 3 points are recorded" in said[-1], said[-1]


def test_a_launched_run_stopped_after_rank_0_wrote_its_record_says_it_is_kept(tmp_path, monkeypatch):
    import types

    from suite import context, run_record
    from suite.cli import _interrupted, build_parser
    from suite.launching import launch
    from suite.run_options import spec_from_args

    out = tmp_path / "out"

    class Agent:  # torchrun whose rank 0 wrote the record before the stop reached it
        def __init__(self, command, env, **kwargs):
            self.run_id = env["SUITE_RUN_ID"]

        def wait(self):
            record = run_record.new_record(
                self.run_id, {"utc_time": "2026-01-01T00:00:00Z"}, {"workload": "w"}
            )
            out.mkdir(exist_ok=True)  # by another process: this one has not noted it
            (out / f"{self.run_id}.json").write_text(run_record.record_json(dict(record, status="ok")))
            return launch.INTERRUPTED

    monkeypatch.setattr(launch.subprocess, "Popen", Agent)
    monkeypatch.setattr(context, "collect", lambda: {"utc_time": context.utc_now()})
    args = build_parser(["run"]).parse_args(["run", "--backend", "cpu", "--nproc", "2", "--out", str(out)])
    names = types.SimpleNamespace(name="w")
    plan = types.SimpleNamespace(spec=spec_from_args(args), workload=names, backend=names)
    before = len(run_record.written_since(0))
    with pytest.raises(KeyboardInterrupt):
        launch.launch(args, plan)
    [path] = glob.glob(str(out / "*.json"))
    said = _interrupted(before, ["run", "--nproc", "2"])
    assert path in said and "kept" in said and "nothing was written" not in said
    assert "nothing was written" in _interrupted(len(run_record.written_since(0)), ["run"])
    assert _interrupted(before, ["sweep"]) == _interrupted(before, ["run", "--repeat", "3"]) == "interrupted"
