"""On a real NVIDIA GPU: what the CUDA backend's wiring tests prove against fakes, checked on the device.
Collected everywhere (a broken import fails CI); every test skips with "no CUDA device" without one.
Run them with `pytest -m gpu tests/gpu` (benchmarks/gpu_matrix.py does, in its part 3)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from conftest import ROOT, TINY, suite_env
from suite.backends import backend_class
from suite.workloads import get_workload
from tiny_workload import make_plan

from suite.measurement.runner import execute

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")]

CUDABackend = backend_class("cuda") if torch.cuda.is_available() else None


def dcgan_plan(**config):
    workload = get_workload("dcgan64").with_overrides(**TINY["dcgan64"])
    return make_plan(CUDABackend, workload=workload, **config)


def test_synchronize_only_at_window_edges(monkeypatch):
    events = []
    real_sync, real_end_step = torch.cuda.synchronize, CUDABackend.end_step

    def synchronize(device=None):
        events.append("sync")
        real_sync(device)

    def end_step(self):
        events.append("step")
        real_end_step(self)

    monkeypatch.setattr(torch.cuda, "synchronize", synchronize)
    monkeypatch.setattr(CUDABackend, "end_step", end_step)
    record = execute(dcgan_plan(warmup_steps=3, steps_per_window=4, windows=3, precision="amp"))
    assert record["status"] == "ok", record["error"]
    warmup = ["step", "sync", "step", "step", "sync"]  # the first step is timed for time-to-first-step
    window = ["sync", "step", "step", "step", "step", "sync"]
    assert events[: len(warmup) + 3 * len(window)] == warmup + window * 3


def test_grad_scaler_updates_once_per_dcgan_iteration(monkeypatch):
    updates = []
    real_update = torch.amp.GradScaler.update

    def update(self, new_scale=None):
        updates.append(1)
        return real_update(self, new_scale)

    monkeypatch.setattr(torch.amp.GradScaler, "update", update)
    record = execute(dcgan_plan(warmup_steps=2, steps_per_window=3, windows=2, precision="amp"))
    assert record["status"] == "ok", record["error"]
    assert len(updates) == 2 + 3 * 2  # one per iteration, after both optimizers have stepped


def test_peak_memory_is_positive_and_below_the_device_total():
    record = execute(dcgan_plan(precision="bf16"))
    assert record["status"] == "ok", record["error"]
    total = torch.cuda.get_device_properties(0).total_memory
    assert 0 < record["memory"]["peak_memory_bytes"] < total


def test_nvml_power_energy_and_mfu_are_plausible():
    pytest.importorskip("pynvml", reason="nvidia-ml-py is not installed")
    workload = get_workload("dcgan64")  # full size: enough work per window for the energy counter to move
    record = execute(
        make_plan(
            CUDABackend, workload=workload, batch_size=256, precision="bf16", steps_per_window=20, windows=3
        )
    )
    assert record["status"] == "ok", record["error"]
    metrics, telemetry = record["metrics"], record["telemetry"]
    assert telemetry["summary"]["gpu_power_w"]["mean"] > 0, telemetry["summary"]
    energy = metrics.get("energy_per_image_j")
    assert energy is not None and 0 < energy < 100, metrics  # an H100 at 700 W and 1 img/s would be 700 J
    if metrics.get("mfu") is not None:  # blank where the card's peak is not known
        assert 0 < metrics["mfu"] < 1


CARD_CHECK = """
import pynvml, torch
from suite.backends import backend_class
from suite.spec import RunSpec
backend = backend_class("cuda")(RunSpec().replace(backend="cuda", workload="dcgan64", batch_size=2))
backend.setup()
sampler = backend.telemetry_samplers()[0]
sampler.open()
bus = pynvml.nvmlDeviceGetPciInfo(sampler.handle).busId
bus = bus.decode() if isinstance(bus, bytes) else bus
props = torch.cuda.get_device_properties(0)
print(bus, props.pci_domain_id, props.pci_bus_id, props.pci_device_id)
"""


def test_the_card_sampled_is_the_card_used_under_cuda_visible_devices(tmp_path):
    pytest.importorskip("pynvml", reason="nvidia-ml-py is not installed")
    last = str(torch.cuda.device_count() - 1)  # the last card: not NVML's index 0 where there are several
    out = subprocess.run(
        [sys.executable, "-c", CARD_CHECK],
        cwd=ROOT,
        env=suite_env(tmp_path, CUDA_VISIBLE_DEVICES=last),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    bus, domain, bus_number, device = out.stdout.split()
    # NVML's bus id, "%08X:%02X:%02X.0" (nvml.h), of the handle the sampler reads; torch's of the card used.
    assert bus.upper() == f"{int(domain):08X}:{int(bus_number):02X}:{int(device):02X}.0"
