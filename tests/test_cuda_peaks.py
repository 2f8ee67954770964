"""The datasheet peak table: which GPU names match, and which precision's peak a run is held to."""

from __future__ import annotations

import pytest
from suite.backends.peaks import lookup, peak_tflops


@pytest.mark.parametrize(
    "name, precision, expected",
    [
        ("NVIDIA A100-SXM4-40GB", "amp", 312.0),
        ("NVIDIA A100-SXM4-80GB", "fp32", 19.5),
        ("NVIDIA H100 80GB HBM3", "bf16", 989.0),
        ("Tesla V100-SXM2-16GB", "amp", 125.0),
        ("Tesla V100-SXM2-32GB", "fp32", 15.7),
        ("Tesla T4", "amp", 65.0),
        ("Tesla T4", "fp32", 8.1),
        ("NVIDIA L4", "amp", 121.0),
        ("Tesla K80", "fp32", 4.4),
        # Dense: half the datasheets' "with sparsity" tensor figures (H100 PCIe 1,513; NVL 1,671).
        ("NVIDIA H100 PCIe", "bf16", 756.5),
        ("NVIDIA H100 PCIe", "fp32", 51.0),
        ("NVIDIA H100 NVL", "amp", 835.5),
        ("NVIDIA H200", "bf16", 989.5),
        ("NVIDIA H200 NVL", "fp32", 60.0),
        ("NVIDIA A100-PCIE-40GB", "amp", 312.0),
        ("NVIDIA A100 80GB PCIe", "fp32", 19.5),
    ],
)
def test_known_gpus(name, precision, expected):
    value, note = peak_tflops(name, precision)
    assert value == expected and "datasheet" in note


@pytest.mark.parametrize(
    "name",
    [
        "Tesla V100-PCIE-16GB",
        "NVIDIA L40S",
        "NVIDIA GeForce RTX 4090",
    ],
)
def test_other_form_factors_and_unknown_gpus_have_no_peak(name):
    assert lookup(name) is None
    assert peak_tflops(name, "amp") == (None, f"no datasheet peak known for {name!r}")


def test_blank_where_the_datasheet_has_no_figure():
    assert peak_tflops("NVIDIA A10G", "amp")[0] is None
    assert "A10" in peak_tflops("NVIDIA A10G", "fp32")[1]
    assert peak_tflops("Tesla T4", "bf16")[0] is None  # no bf16 tensor cores
    assert peak_tflops("Tesla K80", "amp")[0] is None


def test_tf32_is_not_compared_with_the_fp32_peak():
    value, note = peak_tflops("NVIDIA A100-SXM4-40GB", "fp32", tf32=True)
    assert value is None and "TF32" in note


@pytest.mark.parametrize(
    "generation, precision, expected",
    [("gaudi", "bf16", 60.0), ("gaudi2", "bf16", 432.0), ("gaudi3", "hmp", 1835.0), ("gaudi2", "fp32", None)],
)
def test_gaudi_peaks_bf16_only(generation, precision, expected):
    from suite.backends.peaks import hpu_peak_tflops

    value, note = hpu_peak_tflops(generation, precision)
    assert value == expected
    assert ("Hot Chips 2024" in note) if expected else ("no fp32 peak" in note)
    assert hpu_peak_tflops(None, "bf16")[0] is None
