"""Run the real CUDA backend on the CPU: torch.cuda's queries replaced by recording fakes, and the
backend's device made the CPU. Everything else (autocast, GradScaler, fused optimizers, the runner) is
real torch on the CPU. This checks wiring, not a GPU.
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import torch
from suite.backends import backend_class, presence

# Through the registry, so that backends register in its own order (cpu, cuda, hpu).
CUDABackend = backend_class("cuda")


class FakeCuda:
    def __init__(self, count: int, name: str, capability: tuple[int, int], total_memory_bytes: int):
        self.count = count
        self.name = name
        self.capability = capability
        self.total_memory_bytes = total_memory_bytes
        self.events: list[str] = []  # shared log: "sync", and whatever a test appends
        self.sync_times: list[float] = []
        self.set_device_calls: list[int] = []
        self.peak_resets = 0

    def synchronize(self, device=None) -> None:
        self.events.append("sync")
        self.sync_times.append(time.perf_counter())

    def properties(self, index=0):
        return SimpleNamespace(
            name=self.name,
            major=self.capability[0],
            minor=self.capability[1],
            total_memory=self.total_memory_bytes,
            multi_processor_count=108,
            pci_domain_id=0,
            pci_bus_id=0x3B,
            pci_device_id=0,
        )


def patch_cuda(
    monkeypatch,
    count: int = 1,
    name: str = "NVIDIA A100-SXM4-40GB",
    capability: tuple[int, int] = (8, 0),
    total_memory_bytes: int = 40 * 1024**3,
) -> FakeCuda:
    fake = FakeCuda(count, name, capability, total_memory_bytes)
    cuda = torch.cuda
    monkeypatch.setattr(torch.version, "cuda", torch.version.cuda or "12.4")
    # torch.cuda.is_available itself stays real: torch's optimizers consult it (graph-capture checks)
    # and would then query a device that is not there. The backend's own check is replaced instead.
    monkeypatch.setattr(CUDABackend, "is_available", classmethod(lambda cls: (True, "fake GPU")))
    monkeypatch.setattr(presence, "cuda_absent", lambda: None)  # as on a machine with the driver
    monkeypatch.setattr(cuda, "device_count", lambda: fake.count)
    monkeypatch.setattr(cuda, "set_device", lambda index: fake.set_device_calls.append(index))
    monkeypatch.setattr(cuda, "synchronize", fake.synchronize)
    monkeypatch.setattr(cuda, "get_device_capability", lambda index=0: fake.capability)
    monkeypatch.setattr(cuda, "get_device_name", lambda index=0: fake.name)
    monkeypatch.setattr(cuda, "get_device_properties", fake.properties)
    monkeypatch.setattr(cuda, "max_memory_allocated", lambda device=None: 3_000_000)
    monkeypatch.setattr(cuda, "max_memory_reserved", lambda device=None: 4_194_304)
    monkeypatch.setattr(cuda, "memory_allocated", lambda device=None: 1_000_000)

    def reset_peak(device=None):
        fake.peak_resets += 1

    monkeypatch.setattr(cuda, "reset_peak_memory_stats", reset_peak)
    # Global switches the backend sets: re-set to their current values so monkeypatch restores them.
    monkeypatch.setattr(torch.backends.cudnn, "benchmark", torch.backends.cudnn.benchmark)
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", torch.backends.cudnn.allow_tf32)
    # (cuBLAS's switch is read through a module __getattr__ monkeypatch cannot restore: stand in for it.)
    monkeypatch.setattr(torch.backends.cuda, "matmul", SimpleNamespace(allow_tf32=False))
    monkeypatch.setattr(CUDABackend, "_torch_device", lambda self, index: torch.device("cpu"))
    return fake
