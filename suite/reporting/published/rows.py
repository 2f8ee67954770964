"""`suite report --published`: published figures (figures.py) as rows of their own beside the
measured ones, priced with the report's catalog where the figure's device and count match an instance, and
marked published in every format. A published row is built here, from its figure alone: it never passes
through `identity.row_key`, so it is never pooled with a measured row, whatever `--pool` says.

A figure whose source ran the workload's own recipe (basis.py: *matched*) stands in the measured
rows' table; the suite's runs of that recipe (the workload and precision, the data, no other setting) share
its `recipe_group`, and recipe_ranking.py ranks them together, one accelerator each. Where a measured row
and a matched figure share a configuration (workload, device, precision, batch and the number of devices;
for tokens also the sequence length), the measured row says measured ÷ published ("0.93× published"). Every
other figure is on another basis: the report's table of its own (table.py), compared with
nothing. A figure in tokens is a token row (token_rows.py: never ranked with images); a figure of a model
that is no suite workload (an 8B model the suite cannot run) says so.
"""

from __future__ import annotations

import re

from suite.prices.catalog import Catalog
from suite.reporting.published.basis import basis_fields
from suite.reporting.published.figures import Figure
from suite.rows import row_figures, row_prices, token_rows
from suite.rows.identity import settings
from suite.run_record.facts import device_words

# A published row's first note; the default table leaves it out (its mark says published, and the list
# of sources under the table gives the figure as published).
PUBLISHED_NOTE = "PUBLISHED, not measured by the suite: "
_MEMORY = re.compile(r"(\d+)\s*gb", re.IGNORECASE)
# Gaudi's generations share the word "gaudi" (and "HL-" in their part numbers): "Gaudi 2", "Gaudi2" and
# "Gaudi 3" name theirs, a bare "Gaudi" (the dl1's HL-205) is the first.
_GAUDI = re.compile(r"gaudi[\s-]*(\d*)", re.IGNORECASE)
_PCIE = re.compile(r"pcie", re.IGNORECASE)


def _gaudi_generation(name: str) -> str | None:
    found = _GAUDI.search(name)
    return None if found is None else (found.group(1) or "1")


def same_device(a: str | None, b: str | None) -> bool:
    """One device model: the model words of one name are all in the other's (an "RTX 6000 Ada" is not an
    "RTX PRO 6000 Blackwell"), one memory size where both names state one (an A100 80GB is not a 40GB),
    one Gaudi generation (a Gaudi 2 is not a dl1's Gaudi), and a PCIe card only where the other name says
    PCIe too (a PCIe H100 is a slower part than the SXM one a catalog's instance holds)."""
    if not a or not b:
        return False
    words_a, words_b = device_words(a), device_words(b)
    if not words_a or not words_b or not (words_a <= words_b or words_b <= words_a):
        return False
    if bool(_PCIE.search(a)) != bool(_PCIE.search(b)):
        return False
    if _gaudi_generation(a) != _gaudi_generation(b):
        return False
    memory_a, memory_b = _MEMORY.findall(a), _MEMORY.findall(b)
    return not (memory_a and memory_b and memory_a[-1] != memory_b[-1])


def suite_workloads() -> set[str]:
    """The registry's workload names, and those installed packages add: what a measured row can be of."""
    from suite.workloads import installed_workload_names, workload_names  # no torch: names only

    return set(workload_names()) | set(installed_workload_names())


def _as_published(figure: Figure) -> str:
    """The figure as its source gives it: "37,440 tokens/s at 8,192 tokens a sequence (LLaMA V3.1 8B)"."""
    sequence = f" at {figure.sequence_length:,} tokens a sequence" if figure.in_tokens else ""
    label = f" ({figure.model_label})" if figure.model_label else ""
    return f"{figure.throughput:,.10g} {figure.unit}{sequence}{label}"


def _instance_for(figure: Figure, catalog: Catalog):
    """The catalog's instance with the figure's device, as many of them or more (then its share prices the
    figure, as a measured run on part of an instance: row_prices.py), at an on-demand price: the one the
    source names if the catalog has it, else the cheapest per accelerator-hour of those with just as many,
    else of those with more. Returns (instance or None, a note saying which and why)."""

    def holds(instance) -> bool:
        return (
            instance.accelerator_count >= figure.count
            and same_device(figure.device, instance.accelerator)
            and instance.on_demand_usd_per_hour is not None
        )

    named = catalog.instances.get(figure.instance) if figure.instance else None
    if named is not None and holds(named):
        return named, f"priced as {named.name}, the instance the source names ({catalog.name} prices)"
    candidates = [i for i in catalog.instances.values() if holds(i)]
    ran_on = f"the source ran on {figure.instance}, " if figure.instance else ""
    if not candidates:
        return None, (
            f"{ran_on}no {figure.count} × {figure.device} instance (nor one with more of them) in the "
            f"{catalog.name} catalog: no price"
        )
    exact = [i for i in candidates if i.accelerator_count == figure.count]
    # An instance that can still be rented before a retired one, however cheap its last price.
    cheapest = min(
        exact or candidates,
        key=lambda i: (i.retired is not None, i.on_demand_usd_per_hour / i.accelerator_count, i.name),
    )
    return cheapest, (
        f"{ran_on}priced as {cheapest.name}, the {catalog.name} catalog's cheapest per accelerator-hour with "
        + (
            f"{figure.count} × {cheapest.accelerator}"
            if exact
            else f"more than {figure.count} {cheapest.accelerator}"
        )
    )


def published_row(
    figure: Figure, catalog: Catalog, dataset_size: int, workloads: set[str] | None = None
) -> dict:
    """A figure as a report row: every field a measured row has, marked published, with its source.
    `workloads`: the suite's workload names (default: the registry's); a figure of another model is
    marked as no suite workload."""
    workloads = suite_workloads() if workloads is None else workloads
    instance, price_note = _instance_for(figure, catalog)
    as_published = _as_published(figure)
    basis = basis_fields(figure, workloads)
    row = {
        **_configuration(figure, instance),
        **_nothing_measured(dataset_size / figure.images_per_hour),
        "status": "published",
        "extrapolated_factor": None,
        "measured_scaling": None,
        "device_matches_instance": True if instance else None,
        "hypothetical": False,
        "upper_bound": False,
        "pooled": {},
        "differs_in": {},
        "verdict": None,
        "numerics": None,
        "errors": [],
        "notes": _notes(figure, price_note, as_published, figure.model in workloads),
        "prices_catalog": catalog.name,
        "prices_as_of": catalog.as_of,
        "prices_as_of_note": catalog.as_of_note,
        **_source_fields(figure, as_published),
        **basis,
        "recipe_group": recipe_group(figure.model, figure.precision, figure.data)
        if basis["published_matched"]
        else None,
    }
    if not basis["published_matched"] and figure.model in workloads and figure.batch and figure.precision:
        row["notes"].append(_other_basis_note(figure))
    if instance is not None:
        row_prices.mark_dated(row, instance, catalog)
        row_prices.price(row, instance, catalog=catalog)
    if figure.in_tokens:
        token_rows.add_token_figures(row, figure.sequence_length)
        row["tokens_per_hour"] = figure.per_hour  # as published, not through the sequences' rounding
    return row


def _configuration(figure: Figure, instance) -> dict:
    """The row's first fields: what the figure is of (workload, instance, device, precision, batch, data)
    and its rate; the prices stay empty until the instance prices them."""
    return {
        "model_run": figure.model,
        "instance": instance.name if instance else figure.instance,
        "retired": None,
        "region": instance.region if instance else None,
        "images_per_hour": figure.images_per_hour,  # samples: a token figure's sequences
        "unit": figure.kind,  # a figure in tokens goes to the token table (token_rows.split)
        "units_per_sample": figure.sequence_length or 1,
        "usd_per_hour": None,
        "images_per_usd": None,
        "spot_usd_per_hour": None,
        "spot_images_per_usd": None,
        "backend": None,
        "device": figure.device,
        "device_count": figure.count,
        "world_size": None,
        "accelerators_used": figure.count,
        "instance_accelerators": instance.accelerator_count if instance else None,
        **row_prices.unpriced(figure.count),
        "precision": figure.precision,
        "settings": [],  # what the source ran beyond its precision is in its caveat, not in settings
        "setting_flags": [],
        "batch_size": figure.batch,
        "data": figure.data or "not stated",
    }


def _nothing_measured(epoch_hours: float) -> dict:
    """The fields of runs the suite made, empty (no runs, no spread, no interval), and the epoch's hours."""
    return {
        "usd_per_million_images": None,
        "spot_usd_per_million_images": None,
        "epoch_hours": epoch_hours,
        "epoch_usd": None,
        "spot_epoch_usd": None,
        "runs": 0,
        "run_ids": [],
        "runs_not_ok": {},
        "spread": None,
        "window_cv_max": None,
        "warnings": [],
        "images_per_hour_min": None,
        "images_per_hour_max": None,
        "median_ci_low": None,
        "median_ci_high": None,
        "median_ci_coverage": None,
        "rates_disagree": False,
        "measured_images_per_hour": None,
        "profiled_images_per_hour": None,
        **row_figures.none_measured(),
    }


def recipe_group(workload, precision, data) -> str:
    """The name the rows of one recipe share (recipe_ranking.py ranks them): `resnet50 amp, synthetic data`."""
    return f"{workload} {precision}, {data} data"


def _other_basis_note(figure: Figure) -> str:
    """Why a figure of a suite workload, its batch and precision stated, is on another basis: the notes
    say already where the model is no suite workload or the batch or precision is unstated."""
    why = (
        "its data is not stated" if figure.recipe else "its source does not say it ran the workload's recipe"
    )
    return f"on another basis than the suite's runs: {why}"


def _notes(figure: Figure, price_note: str, as_published: str, suite_workload: bool) -> list[str]:
    """Published, as what; how it is priced; what the source left unstated; a model the suite lacks."""
    # The source and its caveat are under the table (and in their own CSV/JSON fields): the note stays short.
    notes = [f"{PUBLISHED_NOTE}{as_published}; source under the table", price_note]
    if not suite_workload:
        notes.append(f"{figure.model} is not a suite workload: no measured row is compared with it")
    if figure.batch is None or figure.precision is None:
        unstated = " and ".join(
            n for n, v in (("batch", figure.batch), ("precision", figure.precision)) if v is None
        )
        notes.append(f"{unstated} not stated by the source: no measured row is compared with it")
    return notes


def _source_fields(figure: Figure, as_published: str) -> dict:
    """Where the figure comes from: its id, the source document and where in it, as published, its caveat."""
    return {
        "published": True,
        "published_id": figure.id,
        "published_source": figure.source.text(),
        # the source document, and where in it the figure is: the list under the table names each once
        "published_document": figure.source.citation
        + (f" <{figure.source.url}>" if figure.source.url else "")
        + (f" (not pinned to a version: {figure.source.not_pinned})" if figure.source.not_pinned else ""),
        "published_by": figure.source.citation.split(",")[0],
        "published_where": f"{figure.source.table} (read {figure.source.read})",
        "published_as": as_published,
        "published_caveat": figure.caveat,
        "published_ratios": {},
    }


def shares_configuration(measured: dict, published: dict) -> bool:
    """One workload, device (and memory), precision, batch and device count, and one unit (for tokens, one
    sequence length), of a matched figure. A figure whose source left the batch or the precision unstated,
    or did not run the workload's recipe, matches nothing: a guess is no comparison. (A model that is no
    suite workload never equals a measured row's.)"""
    return (
        bool(published.get("published_matched"))
        and published["batch_size"] is not None
        and published["precision"] is not None
        and measured.get("unit", token_rows.IMAGES) == published["unit"]
        and measured.get("units_per_sample", 1) == published["units_per_sample"]
        and measured["model_run"] == published["model_run"]
        and measured["precision"] == published["precision"]
        and measured["batch_size"] == published["batch_size"]
        and measured["accelerators_used"] == published["accelerators_used"]
        and same_device(measured["device"], published["device"])
    )


def with_published(
    rows: list[dict],
    figures: list[Figure],
    catalog: Catalog,
    dataset_size: int,
    records: list[dict] | None = None,
) -> list[dict]:
    """The measured rows, each with its ratio to every matched figure of its configuration, and the
    published rows beside them (sorted in among them by model, like the measured rows). A measured row
    of a matched figure's recipe (its workload, precision and data, and no other setting: read from
    `records`, the runs behind the rows) shares the figure's `recipe_group`."""
    workloads = suite_workloads()
    published = _collapsed([published_row(figure, catalog, dataset_size, workloads) for figure in figures])
    recipes = {r["recipe_group"] for r in published if r["recipe_group"]}
    first_run = {str(r.get("run_id")): r for r in records or []}
    for row in rows:
        row.update(published=False, published_id=None, published_source=None, published_caveat=None)
        row.update(published_document=None, published_where=None, published_as=None, published_by=None)
        row.update(published_matched=None, published_recipe=None, model_parameters=None)
        row.update(model_flops_per_sample=None, per_device_per_hour=None, model_tflops_per_device=None)
        row["recipe_group"] = _recipe_of(row, first_run, recipes)
        row["published_ratios"] = {}
        measured = row["measured_images_per_hour"]  # before any extrapolation to a whole instance
        for figure_row in published:
            same_recipe = row["recipe_group"] and row["recipe_group"] == figure_row["recipe_group"]
            if measured and same_recipe and shares_configuration(row, figure_row):
                ratio = measured / figure_row["images_per_hour"]
                row["published_ratios"][figure_row["published_id"]] = ratio
    order = {id(row): n for n, row in enumerate(rows)}
    merged = rows + published
    # by model, measured rows first in their own order, then that model's published rows, by rate
    first_of = {}
    for row in rows:
        first_of.setdefault(str(row["model_run"]), order[id(row)])
    return sorted(
        merged,
        key=lambda r: (
            first_of.get(str(r["model_run"]), len(rows)),
            str(r["model_run"]),
            r["published"],
            order.get(id(r), 0),
            -(r["images_per_hour"] or 0),
        ),
    )


def _recipe_of(row: dict, first_run: dict, recipes: set[str]) -> str | None:
    """The matched recipe a measured row is a run of, or None: its workload (unmodified), precision and
    data are the recipe's, it set no other knob (channels-last, TF32, compile, loader settings…: a
    recipe's figure names none), and its price is its own (not hypothetical)."""
    group = recipe_group(row["model_run"], row["precision"], row["data"])
    if group not in recipes or row.get("hypothetical"):
        return None
    record = next((first_run[r] for r in row["run_ids"] if r in first_run), None)
    if record is None or settings(record):
        return None
    return group


def _collapsed(published: list[dict]) -> list[dict]:
    """One row per source document and configuration (workload, device, count, precision, batch, data):
    a figure given twice (the shipped catalog and a person's import of the same table) is one row naming
    both ids; where one source gives two figures for one configuration, the row shows the highest and
    its note lists them all."""
    groups: dict[tuple, list[dict]] = {}
    for row in published:
        key = (
            row["published_document"],
            row["model_run"],
            row["device"],
            row["accelerators_used"],
            row["precision"],
            row["batch_size"],
            row["data"],
            row["unit"],
            row["units_per_sample"],
        )
        groups.setdefault(key, []).append(row)
    collapsed = []
    for group in groups.values():
        kept = max(group, key=lambda r: r["images_per_hour"])
        if len(group) > 1:
            ids = [r["published_id"] for r in group]
            rates = {r["images_per_hour"] for r in group}
            kept["notes"].append(
                f"the same figure under {len(ids)} ids: {', '.join(ids)}"
                if len(rates) == 1
                else f"{len(ids)} figures of one source and configuration, the highest shown: "
                + ", ".join(f"{r['published_id']} {_per_hour(r)}" for r in group)
            )
            kept["published_id"] = ", ".join(ids)
            kept["published_where"] = "; ".join(dict.fromkeys(r["published_where"] for r in group))
            kept["published_as"] = "; ".join(dict.fromkeys(r["published_as"] for r in group))
        collapsed.append(kept)
    return collapsed


def _per_hour(row: dict) -> str:
    if row["unit"] == token_rows.TOKENS:
        return f"{row['tokens_per_hour']:,.0f} tok/h"
    return f"{row['images_per_hour']:,.0f} img/h"


def sources(rows: list[dict], prefix: str = "#") -> list[str]:
    """The list under the table: each source document once, then each of its rows' number (after
    `prefix`: the token table's rows are T1, T2, …), id and where in the source it is (with its caveat,
    said once where all its figures share one)."""
    by_document: dict[str, list[tuple[int, dict]]] = {}
    for n, row in enumerate(rows, 1):
        if row.get("published"):
            by_document.setdefault(row["published_document"], []).append((n, row))
    lines = []
    for document, listed in by_document.items():
        caveats = {row["published_caveat"] for _, row in listed}
        shared = caveats.pop() if len(caveats) == 1 else None
        lines.append(f"- {document}" + (f"; caveat: {shared}" if shared else "") + ":")
        lines += [
            f"  - {prefix}{n} ({row['published_id']}): {row['published_as']}; {row['published_where']}"
            + (f"; caveat: {row['published_caveat']}" if row["published_caveat"] and not shared else "")
            for n, row in listed
        ]
    return lines
