"""NVML telemetry for one NVIDIA GPU (pynvml, from the nvidia-ml-py package), for suite.measurement.telemetry.

Units, as the NVML API reference gives them (https://docs.nvidia.com/deploy/nvml-api/, nvmlDevice
queries): utilisation in percent over the driver's last sample period; memory in bytes; power in
milliwatts (on Ampere and newer, except GA100, averaged over one second); temperature in °C; clocks in
MHz; total energy in millijoules since the driver loaded (Volta and newer). The sampler converts mW to W
and mJ to J, so every gauge it reports carries its unit in its name.

pynvml is imported inside `open()`: the CPU path and `suite --help` never import it, and a machine
without it loses telemetry, with one warning, not the run.
"""

from __future__ import annotations

from suite.backends.sampler import Sampler

MILLI = 1e-3


def _import_pynvml():
    try:
        import pynvml
    except ImportError:
        raise RuntimeError(
            "pynvml is not installed (pip install 'suite[cuda]', which brings nvidia-ml-py)"
        ) from None
    return pynvml


class NVMLSampler(Sampler):
    """GPU utilisation, memory, memory-controller utilisation, power, temperature, SM clock; energy."""

    name = "nvml"

    def __init__(self, index: int = 0, pci_bus_id: str | None = None):
        # CUDA and NVML may number GPUs differently (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER), so the
        # PCI bus id of torch's device is the reliable key; the index is the fallback.
        self.index = index
        self.pci_bus_id = pci_bus_id
        self.nvml = None
        self.handle = None
        self.readers: list = []
        self.unsupported: list[str] = []
        self.has_energy = False

    def open(self) -> None:
        nvml = _import_pynvml()
        nvml.nvmlInit()  # once per sampler; nvmlShutdown in close()
        self.nvml = nvml
        try:
            if self.pci_bus_id:
                self.handle = nvml.nvmlDeviceGetHandleByPciBusId(self.pci_bus_id)
            else:
                self.handle = nvml.nvmlDeviceGetHandleByIndex(self.index)
        except Exception:
            nvml.nvmlShutdown()
            raise
        handle = self.handle

        def utilisation():  # one NVML call answers both
            rates = nvml.nvmlDeviceGetUtilizationRates(handle)
            return {"gpu_util_percent": float(rates.gpu), "gpu_memory_util_percent": float(rates.memory)}

        readers = {
            "utilisation": utilisation,
            "memory": lambda: {"gpu_memory_used_bytes": float(nvml.nvmlDeviceGetMemoryInfo(handle).used)},
            "power": lambda: {"gpu_power_w": nvml.nvmlDeviceGetPowerUsage(handle) * MILLI},  # mW -> W
            "temperature": lambda: {
                "gpu_temperature_c": float(nvml.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU))
            },
            "sm_clock": lambda: {
                "gpu_sm_clock_mhz": float(nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_SM))
            },
        }
        # Probe each reading once: a GPU without power management (or a vGPU) answers NOT_SUPPORTED
        # for some; those are left out rather than failing every sample.
        for what, read in readers.items():
            try:
                read()
                self.readers.append(read)
            except Exception:
                self.unsupported.append(what)
        try:
            nvml.nvmlDeviceGetTotalEnergyConsumption(handle)
            self.has_energy = True
        except Exception:
            self.unsupported.append("energy")
        if not self.readers and not self.has_energy:
            self.close()
            raise RuntimeError("NVML answered none of its queries for this GPU")

    def sample(self) -> dict[str, float]:
        values: dict[str, float] = {}
        for read in self.readers:
            values.update(read())
        return values

    def counters(self) -> dict[str, float]:
        if not self.has_energy:
            return {}
        # mJ since the driver loaded -> J; telemetry takes differences across each window.
        return {"gpu_energy_j": self.nvml.nvmlDeviceGetTotalEnergyConsumption(self.handle) * MILLI}

    def close(self) -> None:
        if self.nvml is not None:
            nvml, self.nvml = self.nvml, None
            nvml.nvmlShutdown()


def driver_version() -> str | None:
    """The NVIDIA driver version, or None where NVML is missing or fails (device_info only)."""
    try:
        nvml = _import_pynvml()
        nvml.nvmlInit()
    except Exception:
        return None
    try:
        version = nvml.nvmlSystemGetDriverVersion()
        return version.decode() if isinstance(version, bytes) else str(version)
    except Exception:
        return None
    finally:
        nvml.nvmlShutdown()
