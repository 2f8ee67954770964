"""What a throughput counts. The windows count samples (images_per_second: images, or a token workload's
sequences), and every reader of a record (statistics, comparisons, prices) works on that figure; a workload
whose unit is not the image (workloads/gpt.py: tokens) adds its own figures beside it, each the sample
figure × the unit per sample (a sequence of `context` tokens)."""

from __future__ import annotations

IMAGES = "images"


def unit_metrics(metrics: dict, unit: str, per_sample: int) -> dict:
    """The record's figures in the workload's unit: `unit`, `<unit>_per_sample`, `<unit>_per_second`
    (median over windows), its spread and `<unit>_per_hour`, `<unit>_per_step`; none for images."""
    if unit == IMAGES:
        return {}
    figures = {"unit": unit, f"{unit}_per_sample": per_sample}
    for name in ("per_second", "per_hour", "per_second_min", "per_second_max", "per_second_stdev"):
        if metrics.get(f"images_{name}") is not None:
            figures[f"{unit}_{name}"] = metrics[f"images_{name}"] * per_sample
    if metrics.get("images_per_step") is not None:
        figures[f"{unit}_per_step"] = metrics["images_per_step"] * per_sample
    return figures


def per_unit(metrics: dict, name: str) -> float | None:
    """A per-sample figure (FLOPs, joules) per unit of the workload: per token for a token workload."""
    per_sample = metrics.get(f"{metrics.get('unit')}_per_sample")
    value = metrics.get(name)
    return None if value is None or not per_sample else value / per_sample
