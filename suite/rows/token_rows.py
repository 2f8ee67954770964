"""A report's rows of workloads measured in tokens (workloads/gpt.py; suite/measurement/units.py): their
figures in tokens (a published figure in tokens too: reporting/published/rows.py; token_table.py renders them in a table of their own, never beside rows of images nor ranked
with them).

A row's statistics and prices are computed as every row's are, on the samples its runs counted (a
sequence of `tokens_per_sample` tokens each); the token figures are those × the tokens per sequence:

    tokens per $       = tokens/hour ÷ $/hour           ($/hour of the accelerators used, as images per $)
    $ per M tokens     = $/hour ÷ tokens/hour × 1,000,000
    energy per token   = energy per sample ÷ the tokens per sequence
"""

from __future__ import annotations

TOKENS = "tokens"
IMAGES = "images"


def unit_of(record: dict) -> tuple[str, int]:
    """(unit, units per sample) a record's throughput counts; a record without a unit counts images."""
    metrics, workload = record.get("metrics") or {}, record.get("workload") or {}
    unit = metrics.get("unit") or workload.get("unit") or IMAGES  # the workload's: a failed run's row too
    if unit == IMAGES:
        return unit, 1
    per_sample = metrics.get(f"{unit}_per_sample") or workload.get(f"{unit}_per_sample")
    return unit, int(per_sample) if isinstance(per_sample, int) and per_sample >= 1 else 1


def add_unit(row: dict, record: dict) -> None:
    """The row's unit and, for tokens, its figures in tokens (None where the sample figure is None)."""
    unit, per_sample = unit_of(record)
    row["unit"], row["units_per_sample"] = unit, per_sample
    if unit == TOKENS:
        add_token_figures(row, per_sample)


def add_token_figures(row: dict, per_sample: int) -> None:
    """A priced row's figures in tokens, from its figures in samples of `per_sample` tokens each: a measured
    row's and a published figure's alike (reporting/published/rows.py)."""

    def times(name):
        return None if row.get(name) is None else row[name] * per_sample

    def per(name):
        return None if row.get(name) is None else row[name] / per_sample

    row.update(
        tokens_per_hour=times("images_per_hour"),
        tokens_per_usd=times("images_per_usd"),
        spot_tokens_per_usd=times("spot_images_per_usd"),
        usd_per_million_tokens=per("usd_per_million_images"),
        spot_usd_per_million_tokens=per("spot_usd_per_million_images"),
        instance_tokens_per_usd=times("instance_images_per_usd"),
        instance_spot_tokens_per_usd=times("instance_spot_images_per_usd"),
        energy_per_token_j=per("energy_per_image_j"),
    )


def split(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """(rows of images, rows of tokens), each in the order given."""
    tokens = [r for r in rows if r.get("unit") == TOKENS]
    return [r for r in rows if r.get("unit") != TOKENS], tokens
