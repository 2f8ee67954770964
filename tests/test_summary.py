"""The terminal summary shows what the record holds, and only that."""

from __future__ import annotations

import os

from suite import run_record
from suite.reporting import summary


def record_with(**metrics) -> dict:
    record = run_record.new_record(
        "r",
        {"utc_time": "x"},
        {
            "workload": "dcgan64",
            "backend": "cuda",
            "precision": "amp",
            "batch_size": 256,
            "steps_per_window": 10,
            "data": "synthetic",
        },
    )
    record["status"] = "ok"
    record["device"] = {"name": "NVIDIA H100 80GB HBM3"}
    record["metrics"] = {
        "images_per_second": 1000.0,
        "images_per_hour": 3.6e6,
        "images_per_second_stdev": 5.0,
        "images_per_second_min": 990.0,
        "images_per_second_max": 1010.0,
        "images_per_second_cv": 0.005,
        "window_time_s": [2.56] * 3,
        "step_time_s": 0.256,
        "warmup_steps": 3,
        "warmup_time_s": 4.0,
        "time_to_first_step_s": 9.5,
        "final_loss": [1.0, 2.0],
        **metrics,
    }
    record["telemetry"] = {
        "summary": {
            "gpu_util_percent": {"mean": 87.4, "min": 80, "max": 95},
            "host_cpu_util_percent": {"mean": 12.2, "min": 5, "max": 20},
        }
    }
    return record


def test_summary_shows_throughput_mfu_energy_and_telemetry():
    text = summary.render(
        record_with(
            mfu=0.123,
            mfu_peak_tflops=989.0,
            flops_per_image=2.48e9,
            energy_per_image_j=0.25,
            energy_method="NVML energy counter",
        )
    )
    assert "1,000.0 img/s median ± 5.0 σ (990.0 … 1,010.0, cv 0.5%; 3 windows × 10 steps)" in text
    assert "3,600,000 img/h" in text
    assert "MFU          12.3% of 989 TFLOP/s" in text and "2.48 GFLOP per image" in text
    assert "0.250 J per image (NVML energy counter)" in text
    assert "host CPU 12%, GPU 87%" in text


def test_summary_leaves_out_what_is_unknown():
    text = summary.render(record_with(mfu=None, energy_per_image_j=None))
    assert "MFU" not in text and "energy" not in text


def test_summary_lines_come_in_a_fixed_order():
    """Every part a record can hold, each on its own line, in the order a reader scans them."""
    record = record_with(
        mfu=0.123,
        mfu_peak_tflops=989.0,
        flops_per_image=2.48e9,
        energy_per_image_j=0.25,
        energy_method="NVML energy counter",
    )
    record["config"].update(world_size=2, nproc=2, global_batch_size=512)
    record["ranks"] = [{"images_per_second": 500.0}, {"images_per_second": 499.5}]
    record["backend_choice"] = "first available of hpu, cuda (hpu: no device)"
    record["diagnosis"] = {"message": "data loader bound", "suggestions": ["--workers 8"]}
    record["memory"] = {"peak_memory_bytes": 3 * 2**30}
    record["warnings"] = ["windows vary widely"]
    assert summary.render(record, "results/r.json").splitlines() == [
        "dcgan64 on cuda (NVIDIA H100 80GB HBM3), amp, batch 256, synthetic data",
        "  processes    world size 2 (1 node(s) × 2), global batch 512; per rank 500.0, 499.5 img/s",
        "  backend      cuda: first available of hpu, cuda (`suite list` says why others are unavailable)",
        "  throughput   1,000.0 img/s median ± 5.0 σ (990.0 … 1,010.0, cv 0.5%; 3 windows × 10 steps)",
        "               3,600,000 img/h",
        "  step time    256.0 ms",
        "  warm-up      3 steps in 4.00 s; time to first step 9.50 s (from Python's start)",
        "  MFU          12.3% of 989 TFLOP/s (datasheet peak; 2.48 GFLOP per image)",
        "  energy       0.250 J per image (NVML energy counter)",
        "  telemetry    host CPU 12%, GPU 87% (means over the timed windows)",
        "  bottleneck   data loader bound",
        "               next: --workers 8",
        "  peak memory  3.00 GiB",
        "  final loss   1.000, 2.000",
        "  warning      windows vary widely",
        "  record       results/r.json",
    ]


def test_summary_of_a_failed_run_names_the_error_and_no_throughput():
    record = record_with()
    record["status"] = "oom"
    record["error"] = {"message": "CUDA out of memory", "hint": "try --batch-size 128"}
    record["metrics"] = {}
    assert summary.render(record).splitlines() == [
        "dcgan64 on cuda (NVIDIA H100 80GB HBM3), amp, batch 256, synthetic data",
        "  FAILED       oom: CUDA out of memory",
        "  hint         try --batch-size 128",
        "  telemetry    host CPU 12%, GPU 87% (means over the timed windows)",
    ]


def test_one_warm_up_step_is_said_in_the_singular():
    record = record_with(warmup_steps=1)
    [line] = [line for line in summary.render(record).splitlines() if line.startswith("  warm-up")]
    assert line.startswith("  warm-up      1 step in ")


def test_the_warm_up_says_the_steps_that_drained_the_loader_which_its_time_covers():
    # a real-data run with 4 workers x 2 prefetched: 1 warm-up step and 8 more served from the queue, as the
    # progress line's "warm-up done: 9 steps" counts; the summary said "1 step in 0.22 s"
    record = record_with(warmup_steps=1)
    record["metrics"]["warmup_loader_drain_steps"] = 8
    [line] = [line for line in summary.render(record).splitlines() if line.startswith("  warm-up")]
    assert line.startswith("  warm-up      1 step + 8 draining the loader's prefetched batches in "), line


def test_final_losses_say_whose_they_are_where_the_record_names_them():
    named = summary.render(record_with(final_loss_names=["discriminator", "generator"]))
    assert "  final loss   1.000 (discriminator), 2.000 (generator)" in named.splitlines()
    # A record made before the names were kept, or with names that do not fit: the numbers alone.
    for names in ({}, {"final_loss_names": ["generator"]}, {"final_loss_names": "dg"}):
        assert "  final loss   1.000, 2.000" in summary.render(record_with(**names)).splitlines()


def test_a_record_outside_the_working_folder_is_named_by_its_whole_path(tmp_path, monkeypatch):
    from suite.inputs.errors import shown_path

    inside = tmp_path / "here"
    inside.mkdir()
    monkeypatch.chdir(inside)
    assert shown_path(str(inside / "results" / "r.json")) == os.path.join("results", "r.json")
    assert shown_path(str(tmp_path / "elsewhere" / "r.json")) == str(tmp_path / "elsewhere" / "r.json")
