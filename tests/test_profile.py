"""`suite run --profile DIR`, `--max-memory` and `--model-override` on the CPU."""

from __future__ import annotations

import json

import pytest
from conftest import TINY, TINY_RUN, changed, only_record

from suite.cli import main
from suite.inputs.sizes import parse_byte_size
from suite.measurement.profiling import schedule_for


@pytest.mark.parametrize(
    "steps, expected",
    [
        (1, {"wait": 0, "warmup": 0, "active": 1, "repeat": 1}),
        (4, {"wait": 0, "warmup": 1, "active": 3, "repeat": 1}),
        (5, {"wait": 1, "warmup": 1, "active": 3, "repeat": 1}),
        (40, {"wait": 1, "warmup": 1, "active": 3, "repeat": 1}),
    ],
)
def test_schedule_fits_the_timed_steps(steps, expected):
    assert schedule_for(steps) == expected


def test_profiled_run_writes_a_chrome_trace_and_a_top_operator_table(tmp_path, capsys):
    traces = tmp_path / "traces"
    assert (
        main([*changed(TINY_RUN, steps=3, windows=2), "--profile", str(traces), "--out", str(tmp_path / "r")])
        == 0
    )
    out = capsys.readouterr().out
    assert "profile: top operators over 3 active step(s) (schedule wait=1 warmup=1 active=3)" in out
    assert "aten::" in out and "ui.perfetto.dev" in out
    record = only_record(tmp_path / "r")
    profile = record["profile"]
    assert record["config"]["profile_dir"] == str(traces)
    assert any("this run was profiled" in w for w in record["warnings"])
    [trace] = profile["trace_files"]
    with open(trace) as handle:
        events = json.load(handle)["traceEvents"]  # Chrome trace format: what Perfetto and TensorBoard read
    names = {e.get("name") for e in events}
    assert any(str(n).startswith("ProfilerStep#") for n in names)
    assert sum(1 for n in names if str(n).startswith("ProfilerStep#")) == 3  # the active steps only
    top = profile["top_operators"]
    assert 0 < len(top) <= 10 and all(row["calls"] >= 1 for row in top)
    assert top == sorted(top, key=lambda r: (r["self_device_time_s"], r["self_cpu_time_s"]), reverse=True)


def test_unprofiled_run_has_no_profile(tmp_path):
    assert main([*TINY_RUN, "--json", "--out", str(tmp_path)]) == 0
    record = only_record(tmp_path)
    assert "profile" not in record and record["config"]["profile_dir"] is None
    assert record["config"]["model_overrides"] == TINY["dcgan64"]


def test_max_memory_ceiling_is_an_out_of_memory_failure(tmp_path, capsys):
    assert main([*TINY_RUN, "--max-memory", "1KiB", "--out", str(tmp_path)]) == 1
    record = only_record(tmp_path)
    assert record["status"] == "oom" and record["config"]["max_memory_bytes"] == 1024
    assert "over --max-memory" in record["error"]["message"] and "suite batch-size" in record["error"]["hint"]


def test_max_memory_generous_ceiling_passes(tmp_path):
    assert (
        main(
            [
                *TINY_RUN,
                "--max-memory",
                "8GiB",
                "--json",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )


@pytest.mark.parametrize(
    "text, size",
    [
        ("2GiB", 2 * 2**30),
        ("512MiB", 512 * 2**20),
        ("1.5GB", 1_500_000_000),
        ("1000", 1000),
        ("64 kib", 65536),
    ],
)
def test_sizes(text, size):
    assert parse_byte_size("--max-memory", text) == size


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--max-memory", "2XB"], "--max-memory must be a size such as 2GiB"),
        (["--max-memory", "0"], "--max-memory must be larger than zero"),
        (["--model-override", "ngf"], "--model-override takes KEY=VALUE"),
        (["--model-override", "wings=2"], "unknown model override(s) wings"),
    ],
)
def test_bad_run_options_exit_2(tmp_path, capsys, argv, needle):
    assert main(["run", "--backend", "cpu", *argv, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err
