"""FLOPs per training image, and model FLOPs utilisation (MFU), in one place.

FLOPs are counted once per workload with torch.utils.flop_counter.FlopCounterMode over one real
training step (forward, backward and optimizer step, exactly as the workload trains) on the CPU with a
tiny batch, then divided by the images that step consumed. FlopCounterMode counts the matrix work
(matmul, convolution and their backward passes, 2 FLOPs per multiply-add); element-wise ops and the
optimizer's update are not counted, as is usual for MFU. The count does not depend on the device or the
precision, so it is cached: in this process, and on disk keyed by the workload and the torch version.

MFU = flops_per_image × images_per_second ÷ the device's datasheet peak. Blank where no peak is known.
"""

from __future__ import annotations

import torch

from . import counts_cache

COUNT_BATCH = 2  # BatchNorm needs more than one value per channel in training mode
CACHE_KIND = "flops"  # flops.json in the cache folder (counts_cache.py)
_MEMO: dict[str, float] = {}


def count_flops_per_image(workload) -> float:
    """Count one real training step on the CPU and divide by its images (uncached)."""
    from torch.utils.flop_counter import FlopCounterMode

    from suite.backends import backend_class
    from suite.spec import RunSpec

    backend = backend_class("cpu")(
        RunSpec().replace(backend="cpu", precision="fp32", workload=workload.name, batch_size=COUNT_BATCH)
    )
    with torch.random.fork_rng(devices=[]):  # leave the run's random stream untouched
        torch.manual_seed(0)
        training = workload.build(backend)
        batch = workload.synthetic_batch(COUNT_BATCH, backend.device)
        counter = FlopCounterMode(display=False)
        with counter:
            training.train_step(batch)
    return (counter.get_total_flops() + _uncounted_attention(workload, counter)) / workload.images_per_step(
        COUNT_BATCH
    )


def _uncounted_attention(workload, counter) -> float:
    """The attention term where FlopCounterMode counted no scaled_dot_product_attention: on the CPU, torch
    2.14 runs it as a fused kernel the counter has no formula for, and counts 0. The workload's own term
    (workloads/gpt.py: 12·L·H·Q·T per token, PaLM's appendix B) stands in; where the counter did count
    the op, it counts the same matmuls and nothing is added."""
    per_sample = getattr(workload, "attention_flops_per_sample", None)
    if per_sample is None:
        return 0.0
    counted = counter.get_flop_counts().get("Global", {})
    if any("scaled_dot_product" in str(op) for op in counted):
        return 0.0
    return per_sample() * workload.images_per_step(COUNT_BATCH)


def flops_per_image(workload) -> float:
    """FLOPs one training image costs, counted once and cached."""
    key = counts_cache.key(workload)
    if key not in _MEMO:
        cached = counts_cache.read(CACHE_KIND).get(key)
        if isinstance(cached, (int, float)) and cached > 0:
            _MEMO[key] = float(cached)
        else:
            _MEMO[key] = count_flops_per_image(workload)
            counts_cache.write(CACHE_KIND, key, _MEMO[key])
    return _MEMO[key]


def mfu(flops_per_image_: float, images_per_second: float, peak_tflops: float | None) -> float | None:
    """Model FLOPs utilisation as a fraction (0.42 = 42 %); None where the peak is unknown."""
    if not peak_tflops or not images_per_second:
        return None
    return flops_per_image_ * images_per_second / (peak_tflops * 1e12)


# torch releases whose FlopCounterMode is known to miscount a training step (on torch 2.1.2 one DCGAN step
# counted about 57 times its forward pass; see docs/compat.md): MFU is left blank there, with the reason.
MISCOUNTING_TORCH = ("2.1.",)


def mfu_metrics(workload, images_per_second: float, peak_tflops: float | None) -> dict:
    """The record's MFU fields. FLOPs are only counted where a peak makes MFU computable."""
    if peak_tflops and torch.__version__.startswith(MISCOUNTING_TORCH):
        raise RuntimeError(
            f"torch {torch.__version__}'s FLOP counter miscounts a training step (docs/compat.md)"
        )
    if not peak_tflops:
        return {
            "flops_per_image": None,
            "model_tflops_per_second": None,
            "mfu": None,
            "mfu_peak_tflops": None,
        }
    per_image = flops_per_image(workload)
    return {
        "flops_per_image": per_image,
        "model_tflops_per_second": per_image * images_per_second / 1e12,
        "mfu": mfu(per_image, images_per_second, peak_tflops),
        "mfu_peak_tflops": peak_tflops,
    }
