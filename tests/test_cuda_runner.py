"""The runner with the CUDA backend on the CPU (fake torch.cuda queries, fake pynvml): where the
device is synchronised, what an OOM leaves behind, and the record's MFU and energy. Wiring only."""

from __future__ import annotations

import pytest
import torch
from fakes import pynvml as fake_nvml
from suite.backends import backend_class
from tiny_workload import FLOPS_PER_IMAGE, make_plan

from suite.measurement.runner import execute

# Through the registry, so that backends register in its own order (cpu, cuda, hpu).
CUDABackend = backend_class("cuda")


def test_synchronize_only_at_window_edges_wiring(fake_gpu, monkeypatch):
    original_end_step = CUDABackend.end_step

    def end_step(self):
        fake_gpu.events.append("step")  # once per training iteration
        original_end_step(self)

    monkeypatch.setattr(CUDABackend, "end_step", end_step)
    plan = make_plan(CUDABackend, warmup_steps=3, steps_per_window=4, windows=3, precision="amp")
    record = execute(plan)
    assert record["status"] == "ok", record["error"]
    warmup = ["step", "sync", "step", "step", "sync"]  # first step timed for time-to-first-step
    window = ["sync", "step", "step", "step", "step", "sync"]
    assert fake_gpu.events == warmup + window * 3


def test_cuda_oom_becomes_a_record_with_a_hint_wiring(fake_gpu, monkeypatch):
    calls = []

    def step(self, optimizer):
        calls.append(1)
        if len(calls) == 2:
            raise torch.OutOfMemoryError(
                "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 39.4 GiB total)"
            )

    monkeypatch.setattr(CUDABackend, "step", step)
    record = execute(make_plan(CUDABackend, batch_size=512, precision="fp32"))
    assert record["status"] == "oom", record["error"]
    assert record["error"]["type"] == "OutOfMemoryError"
    assert record["error"]["message"].startswith("CUDA out of memory")
    assert "batch size 512" in record["error"]["hint"] and "suite batch-size" in record["error"]["hint"]
    assert record["config"]["batch_size"] == 512
    assert record["memory"]["peak_memory_bytes"] == 3_000_000  # device queries still ran
    assert "mfu" not in record["metrics"]


def test_amp_record_has_mfu_energy_and_nvml_telemetry_wiring(fake_gpu):
    record = execute(make_plan(CUDABackend, precision="amp"))
    assert record["status"] == "ok", record["error"]
    metrics, device = record["metrics"], record["device"]
    assert device["peak_tflops"] == 312.0  # A100 SXM fp16 tensor, datasheet
    assert metrics["flops_per_image"] == FLOPS_PER_IMAGE
    assert metrics["mfu"] == pytest.approx(FLOPS_PER_IMAGE * metrics["images_per_second"] / 312e12)
    assert metrics["model_tflops_per_second"] == pytest.approx(
        FLOPS_PER_IMAGE * metrics["images_per_second"] / 1e12
    )
    # The fake counter advances one second at 215.5 W per read, and is read at each window's two edges:
    # each window's energy is the difference, 215.5 J.
    windows = len(record["telemetry"]["windows_s"])
    assert record["telemetry"]["counters"]["gpu_energy_j"] == pytest.approx(215.5 * windows)
    assert metrics["energy_method"] == "device energy counter at window edges"
    assert metrics["energy_per_image_j"] == pytest.approx(
        record["telemetry"]["counters"]["gpu_energy_j"] / metrics["images_timed"]
    )
    assert fake_nvml.count("nvmlInit") == fake_nvml.count("nvmlShutdown")  # every init closed


def test_unknown_gpu_leaves_mfu_blank_without_counting_wiring(fake_gpu, monkeypatch):
    fake_gpu.name = "NVIDIA H200"  # not in the datasheet table
    import suite.measurement.flops

    monkeypatch.setattr(
        suite.measurement.flops, "count_flops_per_image", lambda w: pytest.fail("counted without a peak")
    )
    record = execute(make_plan(CUDABackend, precision="fp32"))
    assert record["status"] == "ok"
    assert record["metrics"]["mfu"] is None and record["device"]["peak_tflops"] is None
    assert "no datasheet peak" in record["device"]["peak_tflops_note"]


def test_nvml_missing_turns_telemetry_off_with_one_warning_run_goes_on(fake_gpu, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "pynvml", None)  # import pynvml -> ImportError
    record = execute(make_plan(CUDABackend, precision="fp32"))
    assert record["status"] == "ok"
    nvml_warnings = [w for w in record["warnings"] if "telemetry 'nvml' off" in w]
    assert len(nvml_warnings) == 1 and "pip install 'suite[cuda]'" in nvml_warnings[0]
    assert record["metrics"]["energy_per_image_j"] is None


def test_nvml_init_failure_turns_telemetry_off_with_one_warning(fake_gpu):
    fake_nvml.reset(fail_init=True)
    record = execute(make_plan(CUDABackend, precision="fp32"))
    assert record["status"] == "ok"
    assert [w for w in record["warnings"] if "telemetry" in w] == [
        "telemetry 'nvml' off: NVMLError: Driver Not Loaded"
    ]
