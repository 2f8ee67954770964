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


@pytest.mark.parametrize(
    "name, expected",
    [
        # Dense: half the datasheets' TF32 "with sparsity" (H100/H200 SXM: the whitepaper's 494.7 of 989.4)
        ("NVIDIA H200", 494.7),
        ("NVIDIA H100 80GB HBM3", 494.7),
        ("NVIDIA H100 PCIe", 378.0),
        ("NVIDIA H100 NVL", 417.5),
        ("NVIDIA H200 NVL", 417.5),
        ("NVIDIA A100-SXM4-40GB", 156.0),
        ("NVIDIA A100 80GB PCIe", 156.0),
        ("NVIDIA L4", 60.0),
    ],
)
def test_tf32_is_held_to_the_tf32_tensor_cores_dense_peak_never_the_fp32_one(name, expected):
    value, note = peak_tflops(name, "fp32", tf32=True)
    assert value == expected and "TF32" in note and "datasheet" in note
    assert peak_tflops(name, "fp32")[0] < value  # plain fp32 keeps its own, lower peak


@pytest.mark.parametrize(
    "name, fp32", [("Tesla V100-SXM2-16GB", 15.7), ("Tesla T4", 8.1), ("Tesla K80", 4.4)]
)
def test_tf32_on_a_gpu_without_tf32_tensor_cores_is_fp32_math(name, fp32):
    value, note = peak_tflops(name, "fp32", tf32=True)
    assert value == fp32 and "no TF32 tensor cores" in note


def test_tf32_on_the_a10g_stays_blank():
    assert peak_tflops("NVIDIA A10G", "fp32", tf32=True)[0] is None


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
