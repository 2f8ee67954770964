"""Batch-size search: doubling then bisection, the recommended batch, and one real search on the CPU."""

from __future__ import annotations

import glob
import json

import pytest
from conftest import TINY_OPTIONS, as_sets, model_override_options, suite_here

from suite.cli import main
from suite.exploring.batch_size import Try, recommend, search

# TINY_SWEEP_SET's settings with dcgan64 at narrower widths than TINY's: the 85 MiB ceiling of the search
# below is set for these, so that it falls between batch 32 and 256. `--backend` is the command's own.
NARROW_DCGAN_SET = as_sets(
    [*TINY_OPTIONS, "--workload", "dcgan64", *model_override_options({"ngf": 4, "ndf": 4})],
    leave_out=("batch-size", "backend"),
)


def fake_device(capacity: int, saturation: int = 32, error_at: int | None = None):
    """Fits up to `capacity`; throughput grows until `saturation`, then stays flat."""
    calls = []

    def try_batch(n):
        calls.append(n)
        if n == error_at:
            return Try(n, "error", message="segfault")
        if n > capacity:
            return Try(n, "oom", message="out of memory")
        return Try(n, "ok", 1000.0 * min(n, saturation) / saturation)

    return try_batch, calls


def test_doubling_then_bisection_finds_the_exact_largest_batch():
    try_batch, calls = fake_device(capacity=100)
    found = search(try_batch, start=1, max_batch=1024)
    assert calls[:8] == [1, 2, 4, 8, 16, 32, 64, 128]
    assert calls[8:] == [96, 112, 104, 100, 102, 101]
    assert (found.largest_fit, found.smallest_oom) == (100, 101)
    assert found.to_dict()["largest_batch_size"] == 100


def test_granularity_stops_bisection_early():
    try_batch, calls = fake_device(capacity=100)
    found = search(try_batch, start=16, max_batch=1024, granularity=16)
    assert calls == [16, 32, 64, 128, 96, 112]
    assert (found.largest_fit, found.smallest_oom) == (96, 112)


def test_recommended_is_the_smallest_batch_within_95_percent_of_the_best():
    try_batch, _ = fake_device(capacity=100, saturation=32)
    found = search(try_batch, start=1, max_batch=1024)
    assert found.best_images_per_second == 1000.0
    assert found.recommended == 32
    tries = [Try(8, "ok", 90.0), Try(16, "ok", 96.0), Try(32, "ok", 100.0), Try(64, "oom")]
    assert recommend(tries) == (16, 100.0)
    assert recommend([Try(8, "oom")]) == (None, None)


def test_max_batch_caps_the_doubling():
    try_batch, calls = fake_device(capacity=10_000)
    found = search(try_batch, start=3, max_batch=20)
    assert calls == [3, 6, 12, 20]
    assert found.largest_fit == 20 and found.smallest_oom is None
    assert "without running out of memory" in found.stopped


def test_first_batch_too_big_and_other_errors_stop_the_search():
    try_batch, _ = fake_device(capacity=1)
    found = search(try_batch, start=4)
    assert found.largest_fit is None and "does not fit" in found.stopped
    try_batch, calls = fake_device(capacity=100, error_at=8)
    found = search(try_batch, start=1)
    assert calls == [1, 2, 4, 8] and found.largest_fit == 4 and "segfault" in found.stopped


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--start", "0"], "--start must be a positive integer, got '0'"),
        (["--start", "64", "--max-batch", "8"], "--start 64 is larger than --max-batch 8"),
        (["--max-memory", "lots"], "--max-memory must be a size such as 2GiB"),
        (["--set", "batch-size=4"], "cannot be used here"),
        (["--workload", "nope"], "unknown workload 'nope'"),
        (
            ["--workload", "dcgan64", "--set", "workload=resnet18"],
            "option 'workload' is given twice: 'workload' (--workload) and 'workload' (--set)",
        ),
        (["--set", "backend=cpu"], "option 'backend' is given twice: 'backend' (--backend)"),
    ],
)
def test_bad_input_exits_2(tmp_path, capsys, argv, needle):
    assert main(["batch-size", "--backend", "cpu", "--out", str(tmp_path), *argv]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err


@pytest.mark.slow  # trains in a child process
def test_search_on_the_cpu_under_a_memory_ceiling(tmp_path, capsys):
    out = tmp_path / "bs"
    command = [
        "batch-size",
        "--backend",
        "cpu",
        "--max-memory",
        "85MiB",
        "--start",
        "32",
        "--max-batch",
        "256",
        "--granularity",
        "64",
        "--out",
        str(out),
        *NARROW_DCGAN_SET,
    ]
    status, stdout, stderr = suite_here(capsys, command)  # each try is a fresh run
    assert status == 0, stderr
    [path] = glob.glob(str(out / "*batch-size*.json"))
    with open(path) as handle:
        found = json.load(handle)
    largest, failing = found["largest_batch_size"], found["smallest_failing_batch_size"]
    assert largest is not None and failing is not None and 0 < failing - largest <= 64
    statuses = {t["batch_size"]: t["status"] for t in found["tries"]}
    assert statuses[largest] == "ok" and statuses[failing] == "oom"
    # each try is a run record of its own
    runs = [json.load(open(p)) for p in glob.glob(str(out / "*.json")) if p != path]
    assert sorted(r["config"]["batch_size"] for r in runs) == sorted(statuses)
    assert found["recommended_batch_size"] in statuses
    assert f"largest batch that fits:  {largest}" in stdout
    assert f"recommended batch:        {found['recommended_batch_size']}" in stdout
