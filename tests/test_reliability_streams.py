"""Output streams that cannot be written: `suite report >&-` and `> /dev/full` ended in tracebacks, `suite run
> /dev/full` wrote its record and then a traceback; a read-only /dev/shm under a loader worker printed
"Exception ignored" and recorded an error naming nothing. Each is one line now, and what was measured is kept."""

from __future__ import annotations

import errno
import multiprocessing.synchronize
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT, TINY, TINY_OPTIONS, TINY_RUN, model_override_options, only_record, suite_env
from test_record_identity import made, put

from suite import cli


@pytest.fixture
def full_stdout(monkeypatch):
    """put(): stdout on /dev/full from now on (in the test's body: pytest's capture puts its own stream in
    place as the test starts), where every write that reaches the device fails with ENOSPC."""
    stream = open("/dev/full", "w")  # noqa: SIM115 - closed below
    yield lambda: monkeypatch.setattr(sys, "stdout", stream)
    os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())  # what it still buffers goes nowhere
    stream.close()


def one_error_line(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line.startswith("suite: error:")]
    assert len(lines) == 1 and "Traceback" not in err and "Exception ignored" not in err, err
    return lines[0]


@pytest.mark.parametrize("form", ["md", "csv", "json"])
def test_a_report_to_a_full_stdout_is_one_line(tmp_path, capsys, full_stdout, form):
    put(tmp_path, made("run-a"))
    full_stdout()
    assert cli.main(["report", str(tmp_path), "--format", form]) == 2
    said = one_error_line(capsys.readouterr().err)
    assert "standard output could not be written (No space left on device)" in said


def test_a_report_to_a_closed_stdout_is_one_line(tmp_path, capsys, monkeypatch):
    put(tmp_path, made("run-a"))
    monkeypatch.setattr(sys, "stdout", None)  # as Python starts when `>&-` closed descriptor 1
    assert cli.main(["report", str(tmp_path)]) == 2
    assert "standard output could not be written (it is closed)" in one_error_line(capsys.readouterr().err)


def test_a_comparison_to_a_full_stdout_is_one_line(tmp_path, capsys, full_stdout):
    put(tmp_path / "a", made("run-a"))
    put(tmp_path / "b", made("run-b"))
    full_stdout()
    assert cli.main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 2
    assert "standard output could not be written" in one_error_line(capsys.readouterr().err)


def test_a_run_to_a_full_stdout_keeps_its_record_and_names_it(tmp_path, capsys, full_stdout):
    out = tmp_path / "out"
    full_stdout()
    assert cli.main([*TINY_RUN, "--out", str(out)]) == 2
    said = one_error_line(capsys.readouterr().err)
    record = only_record(out)
    assert record["status"] == "ok" and "the run's record is written to" in said and record["run_id"] in said


# -- shared memory ----------------------------------------------------------------------------------------


@pytest.fixture
def no_shared_memory(monkeypatch):
    """Every POSIX semaphore refused as on a read-only /dev/shm (EROFS): what a loader's queues and a
    decoding pool's make first."""

    def refused(self, *args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(multiprocessing.synchronize.SemLock, "__init__", refused)


def token_file(path) -> str:
    np.random.default_rng(0).integers(0, 64, size=4000).astype(np.uint16).tofile(path)
    return str(path)


def test_loader_workers_without_shared_memory_are_refused_at_plan_time(tmp_path, capsys, no_shared_memory):
    argv = ["run", *TINY_OPTIONS, "--workload", "gpt2-small", *model_override_options(TINY["gpt2-small"])]
    argv += ["--data", token_file(tmp_path / "t.bin"), "--workers", "1", "--out", str(tmp_path / "out")]
    assert cli.main(argv) == 2
    said = one_error_line(capsys.readouterr().err)
    assert "--workers 1: worker processes need shared memory (/dev/shm)" in said and "--workers 0" in said
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_data_synth_and_prepare_work_in_one_process_without_shared_memory(tmp_path, capsys, no_shared_memory):
    assert (
        cli.main(["data", "synth", "--out", str(tmp_path / "src"), "--count", "64", "--size", "16x16"]) == 0
    )
    argv = ["data", "prepare", str(tmp_path / "src"), "--size", "16", "--out", str(tmp_path / "cache")]
    assert cli.main([*argv, "--workers", "2"]) == 0
    err = capsys.readouterr().err
    assert "drawing in one process: worker processes need shared memory (/dev/shm)" in err
    assert "decoding in one process: worker processes need shared memory (/dev/shm)" in err
    assert "Traceback" not in err and (tmp_path / "cache" / "images.u8").exists()


@pytest.mark.slow  # a fresh `suite run` in a mount namespace of its own, where /dev/shm is read-only
def test_a_read_only_dev_shm_is_named_at_plan_time(tmp_path):
    argv = ["run", *TINY_OPTIONS, "--workload", "gpt2-small", *model_override_options(TINY["gpt2-small"])]
    argv += ["--data", token_file(tmp_path / "t.bin"), "--workers", "1", "--out", str(tmp_path / "out")]
    command = " ".join(["mount -t tmpfs -o ro tmpfs /dev/shm &&", sys.executable, "-m suite", *argv])
    done = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", command],
        cwd=ROOT,
        env=suite_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    if "mount:" in done.stderr or "unshare:" in done.stderr:
        pytest.skip(f"cannot mount a read-only /dev/shm here: {done.stderr.strip()[:200]}")
    assert done.returncode == 2, done.stderr
    said = one_error_line(done.stderr)
    assert "shared memory (/dev/shm), which cannot be written here: Read-only file system" in said
