"""Datasheet peak TFLOP/s for known accelerators: the denominator of MFU.

Every figure is a vendor datasheet claim (dense, per device, boost clocks), not a measurement: a device
rarely sustains it, and the record says so next to every MFU it computes. Where no citable figure is
known (the A10G, first-generation Gaudi's fp32, any GPU not listed) the peak is None and MFU is left blank
rather than guessed. NVIDIA datasheets print tensor-core figures "with sparsity": the dense figure used
here is half of that.

fp32 with TF32 (`--tf32`) is held to the TF32 tensor cores' dense peak, where the part has them (Ampere
and newer: A100 156, H100 and H200 SXM 494.7); on a part without them (V100, T4, K80) TF32 changes
nothing and the math is fp32, held to the fp32 peak.

Sources:
  H100 SXM / PCIe / NVL   NVIDIA H100 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/h100/
                          (FP32 67 / 51 / 60; BF16 and FP16 tensor 1,979 / 1,513 / 1,671 and TF32 tensor
                          989 / 756 / 835 with sparsity); the SXM part's dense TF32 494.7 as the NVIDIA H100
                          Tensor Core GPU Architecture whitepaper (2022) prints it (989.4 sparse)
  H200 SXM / NVL          NVIDIA H200 datasheet, https://www.nvidia.com/en-us/data-center/h200/
                          (FP32 67 / 60; BF16 and FP16 tensor 1,979 / 1,671 and TF32 tensor 989 / 835 with
                          sparsity: the SXM part is the H100 SXM's GH100 at its clocks, dense TF32 494.7)
  A100 SXM and PCIe       NVIDIA A100 datasheet, https://www.nvidia.com/en-us/data-center/a100/ (both form
                          factors: FP32 19.5; TF32 tensor 156 dense, 312 with sparsity; BF16 and FP16 tensor
                          312 dense, 624 with sparsity)
  V100, T4, L4, K80       their NVIDIA datasheets (V100 SXM2 15.7 / 125; T4 8.1 / 65; L4 30.3 / 121 dense,
                          TF32 tensor 120 with sparsity; K80 8.73 for the board's two GK210 dies); V100 (Volta),
                          T4 (Turing) and K80 (Kepler) have no TF32 tensor cores
  Gaudi, Gaudi 2, Gaudi 3 Intel, "Intel Gaudi 3 AI Accelerator: Architected for Gen AI Training and Inference",
                          Hot Chips 2024 (R. Kaplan): peak BF16 compute 60 / 432 / 1835 TFLOPs. Intel gives
                          no fp32 peak for them: blank.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CAVEAT = "vendor datasheet peak (dense, boost clock), not a measured ceiling"


@dataclass(frozen=True)
class Peak:
    label: str  # the datasheet's name for the part
    fp32_tflops: float | None
    fp16_tflops: float | None  # fp16 tensor cores (what `amp` runs on)
    bf16_tflops: float | None  # bf16 tensor cores; None where the part has none
    note: str = ""
    tf32_tflops: float | None = (
        None  # TF32 tensor cores (fp32 math with --tf32); None where the part has none
    )


# Matched against torch.cuda.get_device_name(), in order: names as the driver reports them, e.g.
# "Tesla T4", "Tesla V100-SXM2-16GB", "NVIDIA A100-SXM4-40GB", "NVIDIA H100 80GB HBM3", "NVIDIA L4".
# Only the form factor the datasheet row names is matched (a V100 PCIe or H100 PCIe has lower peaks).
# Each form factor has its own peaks: "NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA H200 NVL" are matched
# before the SXM parts, whose names ("NVIDIA H100 80GB HBM3", "NVIDIA H200") carry no form factor.
_TABLE: tuple[tuple[str, Peak], ...] = (
    (r"H200\s+NVL", Peak("NVIDIA H200 NVL", 60.0, 835.5, 835.5, tf32_tflops=417.5)),
    (r"\bH200\b", Peak("NVIDIA H200 SXM", 67.0, 989.5, 989.5, tf32_tflops=494.7)),
    (r"H100\s+NVL", Peak("NVIDIA H100 NVL", 60.0, 835.5, 835.5, tf32_tflops=417.5)),
    (r"H100\s+PCIe", Peak("NVIDIA H100 PCIe", 51.0, 756.5, 756.5, tf32_tflops=378.0)),
    (r"H100.*(SXM|HBM3)", Peak("NVIDIA H100 SXM", 67.0, 989.0, 989.0, tf32_tflops=494.7)),
    (r"A100[- ]SXM", Peak("NVIDIA A100 SXM", 19.5, 312.0, 312.0, tf32_tflops=156.0)),
    (r"A100.*PCIE", Peak("NVIDIA A100 PCIe", 19.5, 312.0, 312.0, tf32_tflops=156.0)),
    (r"V100[- ]SXM2", Peak("NVIDIA V100 SXM2", 15.7, 125.0, None)),
    (
        r"\bA10G\b",
        Peak(
            "NVIDIA A10G",
            None,
            None,
            None,
            "no published datasheet peak (the A10's 31.2 / 125 is a different part)",
        ),
    ),
    (r"\bL4\b", Peak("NVIDIA L4", 30.3, 121.0, 121.0, tf32_tflops=60.0)),
    (r"\bT4\b", Peak("NVIDIA T4", 8.1, 65.0, None)),
    (
        r"\bK80\b",
        Peak(
            "NVIDIA K80 (one GK210 die)",
            4.4,
            None,
            None,
            "torch sees each of the board's two dies as one device",
        ),
    ),
)


def lookup(device_name: str) -> Peak | None:
    """The datasheet row for a device name, or None for a GPU this table does not know."""
    for pattern, peak in _TABLE:
        if re.search(pattern, device_name, flags=re.IGNORECASE):
            return peak
    return None


def peak_tflops(device_name: str, precision: str, tf32: bool = False) -> tuple[float | None, str]:
    """(peak TFLOP/s for the math a run actually does, why) — None where unknown.

    fp32 with TF32 enabled runs convolutions and matmuls on TF32 tensor cores: held to their dense peak,
    never to the (lower) fp32 one; a part without them does fp32 math whatever TF32 says.
    """
    peak = lookup(device_name)
    if peak is None:
        return None, f"no datasheet peak known for {device_name!r}"
    if precision == "fp32" and tf32 and peak.tf32_tflops is not None:
        return peak.tf32_tflops, f"{peak.label} TF32 tensor cores (fp32 with --tf32): {CAVEAT}"
    if precision == "fp32":
        value = peak.fp32_tflops
    elif precision == "amp":
        value = peak.fp16_tflops
    elif precision == "bf16":
        value = peak.bf16_tflops
    else:
        value = None
    if value is None:
        return None, peak.note or f"{peak.label} has no datasheet {precision} peak"
    if precision == "fp32" and tf32:  # and no TF32 tensor cores (Volta, Turing, Kepler)
        return value, f"{peak.label} fp32 (no TF32 tensor cores: --tf32 changes no math here): {CAVEAT}"
    return value, f"{peak.label} {precision}: {CAVEAT}"


# Gaudi generations (as the hpu backend names them) -> peaks; Intel, Hot Chips 2024 (see the top).
_GAUDI = {
    "gaudi": Peak("Intel Gaudi (HL-205)", None, None, 60.0, "Intel publishes no fp32 peak for Gaudi"),
    "gaudi2": Peak("Intel Gaudi 2", None, None, 432.0, "Intel publishes no fp32 peak for Gaudi 2"),
    "gaudi3": Peak("Intel Gaudi 3", None, None, 1835.0, "Intel publishes no fp32 peak for Gaudi 3"),
}


def hpu_peak_tflops(generation: str | None, precision: str) -> tuple[float | None, str]:
    """(peak TFLOP/s, why) of a Gaudi generation at a run's precision (bf16 and HMP run bf16 matmuls)."""
    peak = _GAUDI.get(generation or "")
    if peak is None:
        return None, f"no published peak known for Gaudi generation {generation!r}"
    value = peak.bf16_tflops if precision in ("bf16", "hmp") else peak.fp32_tflops
    if value is None:
        return None, peak.note
    return value, f"{peak.label} bf16: vendor peak (Intel, Hot Chips 2024), not a measured ceiling"
