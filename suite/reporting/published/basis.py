"""On what basis a published figure stands beside the suite's rows (figures.py, rows.py).

A figure is *matched* when its source ran the suite workload's own recipe — it says so in `recipe`, and it
states the batch, precision and data a measured row is compared by — and its model is a suite workload:
it stands in the measured rows' table and is ranked with the suite's runs of that recipe
(recipe_ranking.py). Every other figure (another model, real data where the workload's runs are synthetic,
an unstated batch or precision, a source that says nothing of its recipe) is on *another basis*: it has a
table of its own, "Published figures on other bases" (table.py), never ranked with the measured rows nor with each
other, where it reads per device and in model FLOP/s:

    per device                 = the figure's rate ÷ its cards
    model TFLOP/s per device   = training FLOPs of one sample × samples per second ÷ cards ÷ 1e12

A sample's training FLOPs are the figure's `flops_per_sample` (the suite's own count where the model is a
suite workload's), or for a language model in tokens (6 × parameters + 12 × layers × width × sequence) per
token, × the sequence: the forward and backward of every weight, and the attention's matmuls as
workloads/gpt.py counts the suite's own language models (Chowdhery et al. 2022, PaLM, appendix B).
"""

from __future__ import annotations

from suite import stats
from suite.reporting.published.figures import Figure


def flops_per_sample(figure: Figure) -> float | None:
    """The training FLOPs of one sample (an image, or a sequence of a token figure); None where the
    figure does not give what they follow from."""
    if figure.flops_per_sample is not None:
        return figure.flops_per_sample
    if figure.in_tokens and None not in (figure.parameters, figure.layers, figure.width):
        tokens = figure.sequence_length
        return (6 * figure.parameters + 12 * figure.layers * figure.width * tokens) * tokens
    return None


def is_matched(figure: Figure, workloads: set[str]) -> bool:
    """The source ran the workload's own recipe, and states what a measured row is compared by."""
    return (
        figure.recipe is not None
        and figure.model in workloads
        and None not in (figure.batch, figure.precision, figure.data)
    )


def basis_fields(figure: Figure, workloads: set[str]) -> dict:
    """A published row's fields of its basis: matched or not, its recipe, the model's size and FLOPs,
    and its rate per device (in its own unit: images or tokens) and in model TFLOP/s per device."""
    per_device = figure.per_hour / figure.count
    flops = flops_per_sample(figure)
    samples_per_second = figure.images_per_hour / stats.SECONDS_PER_HOUR
    return {
        "published_matched": is_matched(figure, workloads),
        "published_recipe": figure.recipe,
        "model_parameters": figure.parameters,
        "model_flops_per_sample": flops,
        "per_device_per_hour": per_device,
        "model_tflops_per_device": None
        if flops is None
        else flops * samples_per_second / figure.count / 1e12,
    }


def on_other_basis(row: dict) -> bool:
    return bool(row.get("published")) and not row.get("published_matched")


def split(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """(the rows of the measured tables: measured and matched published ones, the published rows on
    other bases), each in the order given."""
    others = [row for row in rows if on_other_basis(row)]
    return [row for row in rows if not on_other_basis(row)], others
