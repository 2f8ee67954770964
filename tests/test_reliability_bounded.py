"""Bounds estimated before anything is allocated or started: a token batch's host memory (a batch of a
million sequences grew to 23 GB and the OOM killer ended the run without a word), `suite diagnose
--processes` (10^30 was accepted)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import TINY

from suite import cli, limits
from suite.data.token_file import sequence_host_bytes
from suite.inputs.errors import UserError
from suite.measurement.runner import plan_run
from suite.spec import RunSpec

GIB = 1024**3


@pytest.fixture
def small_host(monkeypatch):
    """A host with 16 GiB, 8 GiB of it available: what the estimate is held to, whatever this machine has."""
    monkeypatch.setattr(limits, "available_memory_bytes", lambda: 8 * GIB)
    monkeypatch.setattr(limits, "total_memory_bytes", lambda: 16 * GIB)
    monkeypatch.delenv(limits.OVERRIDE_ENV, raising=False)


def token_file(path) -> str:
    np.random.default_rng(0).integers(0, 50_000, size=5000).astype(np.uint16).tofile(path)
    return str(path)


def gpt2_small(data: str, batch_size: int, **loader) -> RunSpec:
    return RunSpec().replace(backend="cpu", workload="gpt2-small", data=data, batch_size=batch_size, **loader)


def test_a_sequence_is_counted_as_read_widened_and_split():
    # 1,025 uint16 ids read, widened to int64, then inputs and targets of 1,024 int64 each
    assert sequence_host_bytes(1024, "uint16") == 1025 * 2 + 1025 * 8 + 2 * 1024 * 8 == 26_634
    assert sequence_host_bytes(1024, "uint32") == 1025 * 4 + 1025 * 8 + 2 * 1024 * 8


def test_a_million_sequence_batch_is_refused_at_plan_time(tmp_path, small_host):
    with pytest.raises(UserError) as refused:
        plan_run(gpt2_small(token_file(tmp_path / "t.bin"), 1_000_000, workers=0))
    message = str(refused.value)
    assert "--batch-size 1,000,000" in message and "24.8 GiB" in message  # 10^6 × 26,634 bytes
    assert "8.0 GiB" in message and "this host's 16.0 GiB" in message and limits.OVERRIDE_ENV in message
    assert "\n" not in message


def test_the_loader_command_refuses_it_in_one_line_exit_2(tmp_path, small_host, capsys):
    argv = ["loader", "--workload", "gpt2-small", "--data", token_file(tmp_path / "t.bin")]
    argv += ["--batch-size", "1000000", "--workers", "0", "--out", str(tmp_path / "out")]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("suite: error: --batch-size 1,000,000") and "GiB" in err[0]
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_the_batches_the_workers_make_ahead_count_too(tmp_path, small_host):
    data = token_file(tmp_path / "t.bin")
    fits_alone = int(8 * GIB / sequence_host_bytes(1024, "uint16")) - 1000  # one batch just fits
    plan_run(gpt2_small(data, fits_alone, workers=0))
    with pytest.raises(UserError, match=r"5 batch\(es\) at once"):  # one in use, 2 workers x 2 ahead
        plan_run(gpt2_small(data, fits_alone, workers=2, prefetch=2))


def test_the_override_lets_a_person_go_past_the_estimate(tmp_path, small_host, monkeypatch):
    monkeypatch.setenv(limits.OVERRIDE_ENV, "1")
    plan = plan_run(gpt2_small(token_file(tmp_path / "t.bin"), 1_000_000, workers=0))
    assert plan.spec.workload.batch_size == 1_000_000


def test_a_tiny_batch_is_never_refused(tmp_path, small_host):
    spec = gpt2_small(token_file(tmp_path / "t.bin"), 4, workers=0).replace(
        model_overrides=TINY["gpt2-small"]
    )
    np.random.default_rng(0).integers(0, 64, size=5000).astype(np.uint16).tofile(tmp_path / "t.bin")
    assert plan_run(spec).spec.workload.batch_size == 4


@pytest.mark.parametrize("value", ["1000000000000000000000000000000", "1001", "1_000", "٣", "2"])
def test_diagnose_processes_is_bounded(tmp_path, capsys, value):
    (tmp_path / "photos").mkdir()
    argv = [
        "diagnose",
        "--data",
        str(tmp_path / "photos"),
        "--processes",
        value,
        "--out",
        str(tmp_path / "o"),
    ]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "--processes must be a whole number ≥ 3" in err and "Traceback" not in err
    if value in ("1001", "1000000000000000000000000000000"):
        assert "at most 1,000" in err


def test_a_cache_s_batches_gathered_ahead_are_bounded_too(tmp_path, small_host):
    import io

    from suite.data.prepare import prepare
    from suite.data.progress import Progress
    from suite.data.synth import synthesize

    quiet = Progress("t", 0, io.StringIO())
    synthesize(str(tmp_path / "src"), 8, size=(64, 64), workers=1, progress=quiet)
    prepare(str(tmp_path / "src"), 64, str(tmp_path / "cache"), workers=1, progress=quiet)
    spec = RunSpec().replace(backend="cpu", workload="dcgan64", data=str(tmp_path / "cache"), batch_size=8)
    plan_run(spec.replace(workers=2))  # 8 images of 12 KiB, 5 batches at once
    with pytest.raises(UserError, match=r"--batch-size 8 would take about .* 2,000,001 batch\(es\) at once"):
        plan_run(spec.replace(workers=2, prefetch=1_000_000))  # the gather threads' queue, unbounded
