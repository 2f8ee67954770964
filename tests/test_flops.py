"""FLOPs per training image (FlopCounterMode over one real step on the CPU) and MFU."""

from __future__ import annotations

import json

import pytest
import torch
from tiny_workload import FLOPS_PER_IMAGE, tiny

from suite.measurement import flops
from suite.measurement.counts_cache import torch_version


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("SUITE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(flops, "_MEMO", {})


def test_flop_count_matches_the_hand_count():
    assert flops.count_flops_per_image(tiny()) == FLOPS_PER_IMAGE


def test_flops_per_image_does_not_depend_on_the_counting_batch(monkeypatch):
    monkeypatch.setattr(flops, "COUNT_BATCH", 6)
    assert flops.count_flops_per_image(tiny()) == FLOPS_PER_IMAGE


def test_dcgan_counts_every_pass_of_its_step():
    # A DCGAN step runs G forward once and D forward three times (real, detached fake, fake for G):
    # its count must exceed the same models' single forward pass several times over.
    from suite.workloads import get_workload
    from torch.utils.flop_counter import FlopCounterMode

    workload = get_workload("dcgan64").with_overrides(ngf=4, ndf=4, nz=8)
    per_image = flops.count_flops_per_image(workload)
    modules = workload.build_modules()
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        modules["discriminator"](modules["generator"](torch.randn(2, 8, 1, 1)))
    forward_once = counter.get_total_flops() / 2
    assert 3 * forward_once < per_image < 12 * forward_once


def test_counted_once_then_cached_in_process_and_on_disk(monkeypatch, tmp_path):
    counts = []
    real = flops.count_flops_per_image
    monkeypatch.setattr(flops, "count_flops_per_image", lambda w: counts.append(w) or real(w))
    assert flops.flops_per_image(tiny()) == FLOPS_PER_IMAGE
    assert flops.flops_per_image(tiny()) == FLOPS_PER_IMAGE
    monkeypatch.setattr(flops, "_MEMO", {})  # a new process: the disk cache answers
    assert flops.flops_per_image(tiny()) == FLOPS_PER_IMAGE
    assert len(counts) == 1
    cached = json.loads((tmp_path / "flops.json").read_text())
    assert list(cached.values()) == [FLOPS_PER_IMAGE] and f"torch={torch_version()}" in next(iter(cached))
    assert torch.__version__.startswith(torch_version())  # the metadata's version, read without torch


def test_counting_leaves_the_random_stream_alone():
    torch.manual_seed(7)
    expected = torch.rand(3)
    torch.manual_seed(7)
    flops.count_flops_per_image(tiny())
    assert torch.equal(torch.rand(3), expected)


def test_mfu_formula_and_blank_without_a_peak(monkeypatch):
    assert flops.mfu(2.5e9, 1000.0, 312.0) == pytest.approx(2.5e12 / 312e12)
    assert flops.mfu(2.5e9, 1000.0, None) is None
    monkeypatch.setattr(flops, "count_flops_per_image", lambda w: pytest.fail("counted without a peak"))
    assert flops.mfu_metrics(tiny(), 1000.0, None) == {
        "flops_per_image": None,
        "model_tflops_per_second": None,
        "mfu": None,
        "mfu_peak_tflops": None,
    }


def test_mfu_metrics_with_a_peak():
    metrics = flops.mfu_metrics(tiny(), images_per_second=2e9, peak_tflops=8.1)
    assert metrics["flops_per_image"] == FLOPS_PER_IMAGE
    assert metrics["model_tflops_per_second"] == pytest.approx(FLOPS_PER_IMAGE * 2e9 / 1e12)
    assert metrics["mfu"] == pytest.approx(FLOPS_PER_IMAGE * 2e9 / 8.1e12)


def test_mfu_is_left_blank_on_a_torch_whose_flop_counter_miscounts(monkeypatch):
    import torch

    from suite.measurement import flops

    monkeypatch.setattr(torch, "__version__", "2.1.2")
    with pytest.raises(RuntimeError, match="miscounts"):
        flops.mfu_metrics(object(), 100.0, peak_tflops=312.0)
    # Without a peak nothing is counted, so nothing can be miscounted.
    assert flops.mfu_metrics(object(), 100.0, peak_tflops=None)["mfu"] is None
