"""The telemetry framework (suite/telemetry.py) and the NVML sampler against a fake pynvml."""

from __future__ import annotations

import sys
import time

import pytest
from fakes import pynvml as fake_nvml
from suite.backends import backend_class
from suite.backends.nvml import NVMLSampler
from tiny_workload import make_plan

from suite.measurement.runner import execute
from suite.measurement.telemetry import Sampler, Telemetry, energy_per_image

CPUBackend = backend_class("cpu")  # through the registry, which keeps its own order


class RecordingSampler(Sampler):
    name = "recording"

    def __init__(self):
        self.times: list[float] = []

    def sample(self):
        self.times.append(time.perf_counter())
        return {"thing_percent": 50.0}


def sampled(sampler: RecordingSampler, count: int, timeout_s: float = 30) -> bool:
    """Until SAMPLER has taken COUNT samples: a test waits for the samples it needs, not for a time in
    which a sampler thread on a busy machine may not have run."""
    deadline = time.monotonic() + timeout_s
    while len(sampler.times) < count:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)  # polls the count
    return True


# -- NVML sampler ------------------------------------------------------------------------------------
def test_nvml_units_converted_wiring(monkeypatch):
    fake_nvml.install(
        monkeypatch,
        power_mw=215_500,
        memory_used_bytes=12_884_901_888,
        gpu_util=97,
        memory_util=41,
        temperature_c=63,
        sm_clock_mhz=1410,
    )
    sampler = NVMLSampler(index=0, pci_bus_id="00000000:3B:00.0")
    sampler.open()
    assert sampler.sample() == {
        "gpu_util_percent": 97.0,
        "gpu_memory_util_percent": 41.0,
        "gpu_memory_used_bytes": 12_884_901_888.0,
        "gpu_power_w": 215.5,  # from 215500 mW
        "gpu_temperature_c": 63.0,
        "gpu_sm_clock_mhz": 1410.0,
    }
    first = sampler.counters()["gpu_energy_j"]
    # The fake counter (mJ) advances one second at 215.5 W per read; the sampler reports J.
    assert sampler.counters()["gpu_energy_j"] - first == pytest.approx(215.5)
    assert ("nvmlDeviceGetHandleByPciBusId", ("00000000:3B:00.0",)) in [(c[0], c[2]) for c in fake_nvml.calls]
    sampler.close()


def test_nvml_initialised_once_and_shut_down_once_wiring(monkeypatch):
    fake_nvml.install(monkeypatch)
    sampler = NVMLSampler(index=1)
    sampler.open()
    for _ in range(5):
        sampler.sample()
        sampler.counters()
    sampler.close()
    sampler.close()  # idempotent
    assert fake_nvml.count("nvmlInit") == 1 and fake_nvml.count("nvmlShutdown") == 1
    assert ("nvmlDeviceGetHandleByIndex", (1,)) in [(c[0], c[2]) for c in fake_nvml.calls]


def test_nvml_unsupported_gauges_are_left_out_wiring(monkeypatch):
    fake_nvml.install(
        monkeypatch, unsupported=("nvmlDeviceGetPowerUsage", "nvmlDeviceGetTotalEnergyConsumption")
    )
    sampler = NVMLSampler()
    sampler.open()
    assert "gpu_power_w" not in sampler.sample() and "gpu_util_percent" in sampler.sample()
    assert sampler.counters() == {}
    assert sampler.unsupported == ["power", "energy"]


def test_nvml_missing_is_a_clear_error_for_telemetry(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    telemetry = Telemetry([NVMLSampler()], interval_s=0.01)
    section = telemetry.close()
    assert list(section["failed"]) == ["nvml"]
    assert "pip install 'suite[cuda]'" in section["failed"]["nvml"]


def test_nvml_failing_mid_run_drops_the_sampler_once(monkeypatch):
    fake_nvml.install(monkeypatch, fail_after_samples=3)
    recording = RecordingSampler()
    telemetry = Telemetry([NVMLSampler(), recording], interval_s=0.01)
    telemetry.window_open()
    assert sampled(recording, 6)  # past the GPU's loss, however slowly the sampler thread is scheduled
    telemetry.window_closed()
    section = telemetry.close()
    assert section["failed"] == {"nvml": "NVMLError: GPU is lost"}
    assert fake_nvml.count("nvmlShutdown") == 1
    rows_with_gpu = [row for row in section["series"] if "gpu_util_percent" in row]
    assert 1 <= len(rows_with_gpu) < section["samples"]  # the other sampler went on


# -- the sampling thread -----------------------------------------------------------------------------
def test_samples_fall_only_inside_open_windows():
    sampler = RecordingSampler()
    telemetry = Telemetry([sampler], interval_s=0.01)
    windows = []
    for _ in range(3):
        time.sleep(0.06)  # closed: the sampler's chance to sample wrongly (nothing is waited for)
        opened = time.perf_counter()
        telemetry.window_open()
        assert sampled(sampler, len(sampler.times) + 2)  # this window is sampled before it closes
        telemetry.window_closed()
        windows.append((opened, time.perf_counter()))
    time.sleep(0.05)  # closed again: another chance to sample wrongly
    section = telemetry.close()
    assert len(sampler.times) >= 3
    assert all(any(a <= t <= b for a, b in windows) for t in sampler.times)
    # Every window was sampled, and the record's own window bookkeeping agrees with its series.
    assert all(any(a <= t <= b for t in sampler.times) for a, b in windows)
    assert all(any(o <= row["t_s"] <= c for o, c in section["windows_s"]) for row in section["series"])
    assert section["summary"]["thing_percent"] == {"mean": 50.0, "min": 50.0, "max": 50.0}


class SlowCPU(CPUBackend):
    """A CPU backend whose steps take long enough for the 0.15 s sampler, recording its sync times."""

    name = "slowcpu"

    def __init__(self, config):
        super().__init__(config)
        self.sync_times: list[float] = []
        self.sampler = RecordingSampler()

    def synchronize(self):
        self.sync_times.append(time.perf_counter())

    def end_step(self):
        time.sleep(0.07)
        # Inside a window (an odd count of syncs from the third: warm-up has two), a step does not end
        # before the sampler has sampled this window: every window is sampled, on a busy machine too.
        if len(self.sync_times) >= 3 and len(self.sync_times) % 2 == 1:
            assert sampled_after(self.sampler, self.sync_times[-1]), "the sampler never sampled this window"

    def telemetry_samplers(self):
        return [self.sampler]


def sampled_after(sampler: RecordingSampler, since: float, timeout_s: float = 30) -> bool:
    deadline = time.monotonic() + timeout_s
    while not (sampler.times and sampler.times[-1] > since):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)  # polls for the sample
    return True


def test_runner_telemetry_confined_to_timed_windows():
    plan = make_plan(SlowCPU, warmup_steps=3, steps_per_window=4, windows=2)
    record = execute(plan)
    assert record["status"] == "ok", record["error"]
    syncs = plan.backend.sync_times
    # Warm-up: sync after step 1 and at its end; then each window is bounded by a pair of syncs.
    window_edges = [(syncs[i], syncs[i + 1]) for i in range(2, len(syncs), 2)]
    assert len(window_edges) == 2
    samples = plan.backend.sampler.times
    assert samples, "no sample taken in 2 windows of ~0.28 s"
    assert all(any(a <= t <= b for a, b in window_edges) for t in samples)
    assert record["telemetry"]["samples"] == len(samples)
    assert "host_cpu_util_percent" in record["telemetry"]["summary"]


# -- energy per image --------------------------------------------------------------------------------
def test_energy_per_image_prefers_the_counter_then_integrates_power():
    counter = {"counters": {"gpu_energy_j": 100.0}, "summary": {"gpu_power_w": {"mean": 999.0}}}
    assert energy_per_image(counter, images_timed=50, time_timed_s=2.0) == (
        2.0,
        "device energy counter at window edges",
    )
    power = {"counters": {}, "summary": {"gpu_power_w": {"mean": 200.0, "min": 190.0, "max": 210.0}}}
    assert energy_per_image(power, images_timed=100, time_timed_s=2.0) == (
        4.0,
        "mean sampled power x timed time",
    )
    host_only = {"counters": {}, "summary": {"host_cpu_util_percent": {"mean": 80.0}}}
    assert energy_per_image(host_only, images_timed=100, time_timed_s=2.0) == (None, None)
