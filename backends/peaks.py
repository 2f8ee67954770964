"""Datasheet peak TFLOP/s for known accelerators: the denominator of MFU.

Every figure is a vendor datasheet claim (dense, per device, boost clocks), not a measurement: a GPU
rarely sustains it, and the record says so next to every MFU it computes. Where no citable figure is
known (the A10G, the H100 PCIe, any GPU not listed) the peak is None and MFU is left blank rather
than guessed. Source: the table at the end of the project's pricing reference (NVIDIA datasheets).
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


# Matched against torch.cuda.get_device_name(), in order: names as the driver reports them, e.g.
# "Tesla T4", "Tesla V100-SXM2-16GB", "NVIDIA A100-SXM4-40GB", "NVIDIA H100 80GB HBM3", "NVIDIA L4".
# Only the form factor the datasheet row names is matched (a V100 PCIe or H100 PCIe has lower peaks).
_TABLE: tuple[tuple[str, Peak], ...] = (
    (r"H100.*(SXM|HBM3)", Peak("NVIDIA H100 SXM", 67.0, 989.0, 989.0)),
    (r"A100[- ]SXM", Peak("NVIDIA A100 SXM", 19.5, 312.0, 312.0)),
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
    (r"\bL4\b", Peak("NVIDIA L4", 30.3, 121.0, 121.0)),
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

    fp32 with TF32 enabled runs convolutions and matmuls on tensor cores whose TF32 peak this table
    does not list, so it is left blank rather than compared against the (lower) fp32 peak.
    """
    peak = lookup(device_name)
    if peak is None:
        return None, f"no datasheet peak known for {device_name!r}"
    if precision == "fp32":
        if tf32:
            return None, "TF32 peak not in the table (fp32 math ran on TF32 tensor cores)"
        value = peak.fp32_tflops
    elif precision == "amp":
        value = peak.fp16_tflops
    elif precision == "bf16":
        value = peak.bf16_tflops
    else:
        value = None
    if value is None:
        return None, peak.note or f"{peak.label} has no datasheet {precision} peak"
    return value, f"{peak.label} {precision}: {CAVEAT}"
