"""A profiled run says what the user can act on, once, in the suite's own words: libkineto's device probing
on a host-only trace ("gpuGetDeviceCount failed with code 35" on a CUDA build of torch without a GPU) and
torch's "won't be using warmup" warning are not printed; the missing warm-up step is said in the profile's
note instead."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import torch.profiler as tp

from suite.measurement import profiling


def test_a_host_only_trace_quiets_libkineto_unless_the_user_set_its_level(tmp_path, monkeypatch):
    monkeypatch.delenv("KINETO_LOG_LEVEL", raising=False)  # conftest restores it after each test
    profiling.StepProfiler(str(tmp_path / "a"), 1).close()
    assert os.environ["KINETO_LOG_LEVEL"] == profiling.KINETO_SILENT
    monkeypatch.setenv("KINETO_LOG_LEVEL", "0")  # the user asked for everything: they get it
    profiling.StepProfiler(str(tmp_path / "b"), 1).close()
    assert os.environ["KINETO_LOG_LEVEL"] == "0"


@pytest.mark.filterwarnings("ignore:CUDA is not available")  # this machine may have no GPU
def test_a_trace_with_a_device_keeps_libkinetos_messages(tmp_path, monkeypatch):
    """On a GPU, libkineto's errors (a CUPTI permission refusal) are the user's to see."""
    monkeypatch.delenv("KINETO_LOG_LEVEL", raising=False)  # conftest restores it after each test
    activities = [tp.ProfilerActivity.CPU, tp.ProfilerActivity.CUDA]
    profiling.StepProfiler(str(tmp_path), 1, activities).close()
    assert "KINETO_LOG_LEVEL" not in os.environ


def test_the_missing_warm_up_step_is_said_in_the_note_and_torchs_warning_is_not(
    tmp_path, recwarn, monkeypatch
):
    monkeypatch.delenv("KINETO_LOG_LEVEL", raising=False)  # conftest restores it after each test
    short = profiling.StepProfiler(str(tmp_path / "short"), 1).close()
    assert short["schedule"]["warmup"] == 0 and profiling.NO_WARMUP in short["note"]
    assert not [w for w in recwarn if "warmup" in str(w.message)]
    profiler = profiling.StepProfiler(str(tmp_path / "long"), 5)
    for _ in range(5):
        profiler.step()
    long = profiler.close()
    assert long["schedule"]["warmup"] == 1 and profiling.NO_WARMUP not in long["note"]


@pytest.mark.slow  # libkineto reads its log level once per process: only a fresh one shows what a user sees
def test_a_fresh_host_only_profile_prints_no_libkineto_lines(tmp_path):
    script = textwrap.dedent(
        f"""
        import torch
        from suite.measurement.profiling import StepProfiler
        profiler = StepProfiler({str(tmp_path)!r}, 1)
        torch.ones(8).sum()
        profiler.step()
        print(profiler.close()["note"])
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "KINETO_LOG_LEVEL"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    kineto = [line for line in done.stderr.splitlines() if line.split(":")[0] in ("ERROR", "STAGE", "USDT")]
    assert kineto == [] and "gpuGetDeviceCount" not in done.stderr
    assert "won't be using warmup" not in done.stderr
    assert profiling.NO_WARMUP in done.stdout
