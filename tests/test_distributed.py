"""Distributed runs: rank environment, launch options, failure reports, and real gloo runs via torchrun.

The end-to-end tests start real processes through torch's launcher on this machine's CPU (gloo);
they use two processes at most and a tiny DCGAN.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest
from conftest import ROOT, SAFETY_NET_S, TINY_RUN, changed, only_record, suite_env

from suite.cli import build_parser, main
from suite.launching import launch
from suite.measurement import distributed
from suite.spec import RunSpec

# Two steps a window, so that the images counted per window show each factor (ranks × batch × steps).
TINY_RUN_2_STEPS = changed(TINY_RUN, steps=2)
# Start-up of two torch processes on a shared 2-core machine takes tens of seconds; a hang would not end.
RUN_TIMEOUT_S = SAFETY_NET_S


def clean_env(tmp_path, **extra):
    """The child's environment, its cache and temporary folders under TMP_PATH/env (beside, not among, the
    records a test reads)."""
    path = [ROOT]
    if any(k.startswith("SUITE_FAULT") for k in extra):  # tests/faults/sitecustomize.py injects it
        path.append(os.path.join(ROOT, "tests", "faults"))
    return suite_env(tmp_path / "env", PYTHONPATH=os.pathsep.join(path), **extra)


def suite_run(args, out, **env):
    return subprocess.run(
        [sys.executable, "-m", "suite", *TINY_RUN_2_STEPS, "--out", str(out), *args],
        cwd=ROOT,
        env=clean_env(out, **env),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# -- rank environment -----------------------------------------------------------------------------


def test_rank_info_outside_a_launcher_is_rank_0_of_1():
    info = distributed.rank_info({})
    assert (info.rank, info.world_size, info.is_distributed) == (0, 1, False)


def test_rank_info_reads_torchrun_environment():
    env = {
        "RANK": "3",
        "WORLD_SIZE": "4",
        "LOCAL_RANK": "1",
        "LOCAL_WORLD_SIZE": "2",
        "GROUP_RANK": "1",
        "GROUP_WORLD_SIZE": "2",
    }
    info = distributed.rank_info(env)
    assert (
        info.rank,
        info.world_size,
        info.local_rank,
        info.local_world_size,
        info.node_rank,
        info.nnodes,
    ) == (3, 4, 1, 2, 1, 2)
    assert info.is_distributed


def test_single_process_has_no_process_group(monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    group = distributed.process_group(object(), RunSpec())
    assert isinstance(group, distributed.SingleProcess) and not group.info.is_distributed
    assert group.slowest(1.5) == 1.5 and group.gather("x") == ["x"]


# -- wiring of the backend hooks (a fake backend records the calls) -------------------------------


class RecordingBackend:
    dist_backend = "fake-collectives"

    def __init__(self, calls):
        self.calls = calls

    def init_distributed(self):
        self.calls.append(("init_distributed",))

    def wrap_ddp(self, module):
        self.calls.append(("wrap_ddp", module))
        return ("ddp", module)


def test_wiring_init_hook_runs_before_init_process_group_with_bounded_timeout(monkeypatch):
    import torch.distributed as dist

    calls = []
    monkeypatch.setattr(
        dist,
        "init_process_group",
        lambda **kw: calls.append(("init_process_group", kw["backend"], kw["timeout"])),
    )
    info = distributed.RankInfo(rank=1, world_size=2)
    distributed.ProcessGroup(RecordingBackend(calls), info, timeout_s=42).start()
    assert [c[0] for c in calls] == ["init_distributed", "init_process_group"]
    assert calls[1][1] == "fake-collectives"
    assert calls[1][2].total_seconds() == 42


def test_wiring_wrap_puts_every_module_through_the_backend_ddp_verb():
    calls = []

    class Training:
        modules = {"generator": "G", "discriminator": "D"}

    training = Training()
    distributed.ProcessGroup(RecordingBackend(calls), distributed.RankInfo(0, 2)).wrap(training)
    assert training.modules == {"generator": ("ddp", "G"), "discriminator": ("ddp", "D")}


def test_cpu_backend_wraps_in_ddp_without_device_ids():
    import torch
    import torch.distributed as dist
    from suite.backends.cpu import CPUBackend

    store = dist.HashStore()
    dist.init_process_group("gloo", store=store, rank=0, world_size=1)
    try:
        wrapped = CPUBackend(RunSpec()).wrap_ddp(torch.nn.Linear(2, 2))
        assert isinstance(wrapped, torch.nn.parallel.DistributedDataParallel)
        assert wrapped.device_ids is None and wrapped.broadcast_buffers is False
        group = distributed.ProcessGroup(CPUBackend(RunSpec()), distributed.RankInfo(0, 1))
        assert group.slowest(0.25) == pytest.approx(0.25)
        assert group.gather({"rank": 0}) == [{"rank": 0}]
    finally:
        dist.destroy_process_group()


# -- options --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, message",
    [
        (["--nproc", "0"], "--nproc must be a positive integer, got '0'"),
        (["--nproc", "two"], "--nproc must be a positive integer, got 'two'"),
        (["--nproc", "2", "--nnodes", "2"], "--nnodes 2 needs --node-rank"),
        (
            ["--nproc", "1", "--nnodes", "2", "--node-rank", "2", "--rdzv-endpoint", "h:29500"],
            "--node-rank 2 is out of range for --nnodes 2",
        ),
        (["--nproc", "1", "--rdzv-endpoint", "nohost"], "--rdzv-endpoint 'nohost' is not HOST:PORT"),
        (["--nnodes", "2"], "--nnodes needs --nproc N"),
        (
            ["--dist-timeout", "0"],
            "--dist-timeout must be a positive number of seconds from 0.001 to 604,800, got '0'",
        ),
        (["--model-override", "ngf"], "--model-override takes KEY=VALUE (e.g. ngf=8), got 'ngf'"),
    ],
)
def test_bad_launch_options_are_user_errors(args, message, capsys, tmp_path):
    status = main(["run", "--backend", "cpu", "--out", str(tmp_path), *args])
    err = capsys.readouterr().err
    assert status == 2
    assert message in err
    assert "Traceback" not in err
    assert not os.listdir(tmp_path)  # nothing was launched or written


def test_model_override_is_a_dict_of_ints():
    args = build_parser().parse_args(["run", "--model-override", "ngf=8", "--model-override", "ndf=16"])
    assert args.model_overrides == {"ngf": 8, "ndf": 16}


def started_ranks(monkeypatch, tmp_path, *argv: str):
    """What `suite run ARGV --nproc ...` hands torchrun's ranks: their argv, and the RunSpec its file holds
    while they run (the file is gone once the launcher is done)."""
    import types

    from suite import context
    from suite.run_options import read_spec, spec_from_args

    seen = {}

    class Agent:  # torchrun, as the launcher sees it: started, then finished
        def __init__(self, command, **kwargs):
            seen["ranks"] = command[command.index("--") + 1 :]
            seen["spec"] = read_spec(seen["ranks"][2])

        def wait(self):
            return 0

    monkeypatch.setattr(launch.subprocess, "Popen", Agent)
    monkeypatch.setattr(context, "collect", lambda: {"utc_time": context.utc_now()})
    args = build_parser().parse_args(["run", *argv, "--out", str(tmp_path / "out")])
    names = types.SimpleNamespace(name="w")
    plan = types.SimpleNamespace(spec=spec_from_args(args), workload=names, backend=names)
    assert launch.launch(args, plan) == 0
    assert not os.path.exists(seen["ranks"][2]) and not os.listdir(tmp_path / "out")
    return args, seen


def test_the_ranks_run_the_spec_as_asked(monkeypatch, tmp_path):
    from suite.run_options import spec_from_args

    args, seen = started_ranks(
        monkeypatch,
        tmp_path,
        *("--backend", "cpu", "--batch-size", "2", "--json", "--model-override", "ngf=8"),
        *("--nproc", "2", "--dist-timeout", "30"),
    )
    assert seen["ranks"] == ["run", "--spec", seen["ranks"][2], "--out", str(tmp_path / "out"), "--json"]
    assert seen["spec"] == spec_from_args(args)
    assert seen["spec"] == RunSpec().replace(
        backend="cpu", batch_size=2, model_overrides={"ngf": 8}, nproc=2, dist_timeout_s=30.0
    )


@pytest.mark.parametrize("switch", [["--pin-memory"], ["--no-pin-memory"], ["--tf32"], ["--no-fused"]])
def test_the_ranks_keep_every_switch(monkeypatch, tmp_path, switch):
    """`suite run --nproc 2 --pin-memory` must hand the switch on to its ranks."""
    from suite.run_options import spec_from_args

    args, seen = started_ranks(monkeypatch, tmp_path, "--nproc", "2", *switch)
    assert seen["spec"] == spec_from_args(args) != RunSpec().replace(nproc=2)


def test_torchrun_options_single_node_and_static_multi_node():
    single = launch.torchrun_options(RunSpec().replace(nproc=2))
    assert single[:4] == ["--nproc-per-node", "2", "--nnodes", "1"] and "--rdzv-endpoint" not in single
    multi = launch.torchrun_options(
        RunSpec().replace(nproc=8, nnodes=2, node_rank=1, rdzv_endpoint="10.0.0.1:29500")
    )
    assert multi[multi.index("--rdzv-backend") + 1] == "static"
    assert multi[multi.index("--node-rank") + 1] == "1"


# -- failure reports ------------------------------------------------------------------------------


def test_report_failure_writes_what_torch_elastic_reads(tmp_path):
    from torch.distributed.elastic.multiprocessing.errors import ProcessFailure

    path = tmp_path / "error.json"
    info = distributed.RankInfo(rank=1, world_size=2, local_rank=1)
    distributed.report_failure(
        info,
        {"type": "InjectedFault", "message": "at step 2"},
        "error",
        env={"TORCHELASTIC_ERROR_FILE": str(path)},
    )
    failure = ProcessFailure(local_rank=1, pid=123, exitcode=1, error_file=str(path))
    assert "rank 1: InjectedFault: at step 2" in str(failure.message)


def test_failure_record_names_the_first_failed_rank_not_the_stopped_one():
    from suite.workloads import get_workload

    class Plan:
        workload = get_workload("dcgan64")

        @staticmethod
        def record_config():
            return RunSpec().replace(backend="cpu", nproc=2).to_record_config(world_size=2)

    failures = {
        "0": {
            "local_rank": 0,
            "pid": 10,
            "exitcode": 1,
            "message": "rank 0: RuntimeError: Connection closed by peer",
            "timestamp": 100,
            "extra": {"suite_rank": 0, "suite_time": 100.9, "suite_status": "error"},
        },
        "1": {
            "local_rank": 1,
            "pid": 11,
            "exitcode": 1,
            "message": "rank 1: InjectedFault: injected fault at step 2",
            "timestamp": 100,
            "extra": {"suite_rank": 1, "suite_time": 100.5, "suite_status": "error"},
        },
        "2": {"local_rank": 2, "pid": 12, "exitcode": -15, "message": "", "timestamp": 99, "extra": {}},
    }
    record = launch.failure_record("run-id", {"utc_time": "x"}, Plan, 1, failures)
    assert record["status"] == "error"
    assert record["error"]["rank"] == 1
    assert "InjectedFault" in record["error"]["message"]
    assert [r["rank"] for r in record["ranks"]] == [1, 0, 2]
    assert record["ranks"][2]["message"] == "rank 2: killed by signal SIGTERM"


# -- end to end, through torch's launcher (gloo on this CPU) --------------------------------------


@pytest.mark.slow  # trains in a child process
def test_nproc_2_over_gloo_records_world_size_global_batch_and_ranks(tmp_path):
    done = suite_run(["--nproc", "2"], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    record = only_record(tmp_path)
    assert record["status"] == "ok"
    config, metrics = record["config"], record["metrics"]
    assert (config["world_size"], config["batch_size"], config["global_batch_size"], config["nproc"]) == (
        2,
        2,
        4,
        2,
    )
    assert metrics["images_per_window"] == 2 * 2 * 2  # ranks x batch x steps
    assert [r["rank"] for r in record["ranks"]] == [0, 1]
    slowest = max(r["window_time_s"][0] for r in record["ranks"])
    assert metrics["window_time_s"][0] == pytest.approx(slowest, rel=1e-6)
    assert metrics["images_per_second"] == pytest.approx(8 / slowest, rel=1e-6)
    assert "world size 2" in done.stdout


@pytest.mark.slow  # trains in a child process
def test_a_failing_rank_ends_the_run_with_a_record_naming_it(tmp_path):
    started = time.monotonic()
    done = suite_run(["--nproc", "2"], tmp_path, SUITE_FAULT_RANK="1", SUITE_FAULT_STEP="2")
    assert time.monotonic() - started < RUN_TIMEOUT_S  # ended by itself: no hang
    assert done.returncode == 1
    record = only_record(tmp_path)
    assert record["status"] == "error"
    assert record["error"]["rank"] == 1
    assert "rank 1: InjectedFault: injected fault at step 2" in record["error"]["message"]
    assert "rank 1: InjectedFault" in done.stdout  # the summary says it too
    assert record["config"]["world_size"] == 2


@pytest.mark.slow  # trains in a child process
def test_torchrun_runs_the_suite_module_directly(tmp_path):
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        "2",
        "--monitor-interval",
        "0.1",
        "-m",
        "suite",
        *TINY_RUN_2_STEPS,
        "--out",
        str(tmp_path),
        "--json",
    ]
    done = subprocess.run(
        command, cwd=ROOT, env=clean_env(tmp_path), capture_output=True, text=True, timeout=RUN_TIMEOUT_S
    )
    assert done.returncode == 0, done.stderr[-2000:]
    record = only_record(tmp_path)  # rank 0 wrote the one record
    assert record["config"]["world_size"] == 2 and len(record["ranks"]) == 2
    assert json.loads(done.stdout)["run_id"] == record["run_id"]  # only rank 0 printed


@pytest.mark.slow  # trains in a child process
def test_two_nodes_on_loopback(tmp_path):
    endpoint = f"127.0.0.1:{free_port()}"
    options = ["--nproc", "1", "--nnodes", "2", "--rdzv-endpoint", endpoint]
    command = [sys.executable, "-m", "suite", *TINY_RUN_2_STEPS, "--out", str(tmp_path), *options]
    node1 = subprocess.Popen(
        [*command, "--node-rank", "1"],
        cwd=ROOT,
        env=clean_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        node0 = subprocess.run(
            [*command, "--node-rank", "0"],
            cwd=ROOT,
            env=clean_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
        )
        node1_out, node1_err = node1.communicate(timeout=RUN_TIMEOUT_S)
    finally:
        if node1.poll() is None:
            node1.kill()
    assert node0.returncode == 0, node0.stderr[-2000:]
    assert node1.returncode == 0, node1_err[-2000:]
    record = only_record(tmp_path)  # node 0's rank 0 wrote it; node 1 wrote nothing
    assert (record["config"]["world_size"], record["config"]["nnodes"]) == (2, 2)
    assert [(r["rank"], r["node_rank"]) for r in record["ranks"]] == [(0, 0), (1, 1)]
