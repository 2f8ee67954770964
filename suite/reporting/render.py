"""Stage 4 of a report, render: rows as markdown — the answer first (reporting/answer.py: per workload the
fastest and the cheapest configuration), then the plots when drawn, then the table (the default columns of
reporting/narrow.py with their numbered notes, or every column with `--wide`), the price catalogs'
captions, the definitions, and the runs and warnings behind each row — or as CSV, or as JSON.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from suite.inputs import spreadsheet
from suite.reporting import answer, narrow, recipe_ranking, token_table
from suite.reporting.published import basis as published_basis
from suite.reporting.published import table as published_table
from suite.reporting.published.rows import sources
from suite.rows import token_rows
from suite.rows.build import DEFAULT_DATASET_SIZE
from suite.rows.cells import (
    COLUMNS,
    FLEET_COLUMNS,
    LEFT_ALIGNED,
    NUMERICS_COLUMN,
    PUBLISHED_RATIO_COLUMN,
    SCALING_COLUMN,
    VERDICT_COLUMN,
)
from suite.rows.row_figures import figures_footer
from suite.rows.warning_kinds import warning_lines
from suite.run_record import printable

TABLE_FORMATS = ("md", "csv", "json")  # what render() writes
FORMATS = (*TABLE_FORMATS, "html")  # `suite report` also writes a page (reporting/page.py)
COLUMN_STYLES = ("exact", "seed")


@dataclass(frozen=True)
class Opening:
    """What a markdown report opens with, above its table: the answer, weighed on `records` (the runs
    behind the rows; None: no answer), then the `plots` (image paths, as the reader of the file finds them)."""

    records: list[dict] | None = None
    plots: tuple[str, ...] = ()


def _spot_assumed(catalog) -> bool:
    basis = str(getattr(catalog, "spot_basis", "") or "")
    return "assumed" in basis or "not an observed" in basis


def assumed_spot(catalogs) -> tuple[set[str], bool]:
    """The catalogs whose spot price is assumed, and whether that is every catalog of the report."""
    listed = _catalog_list(catalogs) if catalogs else []
    assumed = {c.name for c in listed if _spot_assumed(c)}
    return assumed, bool(assumed) and len(assumed) == len(listed)


def table_columns(rows: list[dict], style: str = "exact", wide: bool = False, catalogs=()) -> list:
    """(header, cell, left-aligned) per column. By default the columns a buyer decides with
    (reporting/narrow.py); `wide`: every column, named for what a cell is, with units; `seed`: every column
    under the seed's Table 2.1 names (and no region column)."""
    assumed, every = assumed_spot(catalogs)
    if style != "seed" and not wide:
        return narrow.columns(rows, assumed, every)
    chosen = []
    for key, seed_name, exact_name, cell in COLUMNS:
        name = seed_name if style == "seed" else exact_name
        if name is None:
            continue
        if assumed and "spot" in key and style != "seed":
            if every:
                name += " (assumed)"  # the catalog's spot is not an observed price: said in the header
            else:  # catalogs mixed: only the rows priced from one whose spot is assumed say so
                cell = _marked_assumed(cell, assumed)
        chosen.append((name, cell, key in LEFT_ALIGNED))
    if any(r.get("published_ratios") for r in rows):  # a measured row beside its published figure
        chosen.append((*PUBLISHED_RATIO_COLUMN, False))
    if any(r.get("measured_scaling") is not None for r in rows):  # once a per-device row has its twin
        chosen.append((*SCALING_COLUMN, False))
    if any(r["verdict"] for r in rows):  # only once some record carries a diagnosis
        chosen.append((*VERDICT_COLUMN, True))
    if any(r["numerics"] for r in rows):  # only once some record carries a numerics check
        chosen.append((*NUMERICS_COLUMN, True))
    if any("fleet_status" in r for r in rows):  # a fleet's report: how each instance ended, its cost
        chosen += FLEET_COLUMNS
    return chosen + [narrow.notes_column(rows)]


def notes_below(rows: list[dict], style: str, wide: bool, catalogs) -> list[str]:
    """Under the table: the default table's marks in words, and the numbered notes its rows point to."""
    return narrow.legend(rows, *assumed_spot(catalogs), wide=wide or style == "seed")


def _marked_assumed(cell, assumed: set[str]):
    def marked(row: dict) -> str:
        text = cell(row)
        return f"{text} (assumed)" if row.get("prices_catalog") in assumed and text != "—" else text

    return marked


def _escape(cell) -> str:
    return printable(str(cell).replace("|", "\\|"))


def render_markdown(
    rows: list[dict],
    catalogs,
    dataset_size: int,
    style: str = "exact",
    wide: bool = False,
    records: list[dict] | None = None,
    plots: tuple[str, ...] = (),
    tokens: list[dict] = (),
) -> str:
    """The report in markdown. With `records` (the runs behind the rows) it opens with the answer (the
    rows in `tokens` answered too, after those in images: their table follows this one), then the `plots`
    (image paths, as the reader of the file finds them), then the table."""
    columns = table_columns(rows, style, wide, catalogs)
    lines = []
    if records is not None:
        lines += answer.lines(answer.answer(rows, records, assumed_spot(catalogs)[0], tokens))
        lines += recipe_ranking.lines(rows)
    if plots:
        lines += ["## Plots", ""]
        lines += [line for path in plots for line in (f"![{_plot_name(path)}]({path})", "")]
    if lines:
        lines += ["## The table", ""]
    lines += [
        "| # | " + " | ".join(name for name, _, _ in columns) + " |",
        "|---:|" + "|".join("---" if left else "---:" for _, _, left in columns) + "|",
    ]
    lines += [
        f"| {n} | " + " | ".join(_escape(cell(row)) for _, cell, _ in columns) + " |"
        for n, row in enumerate(rows, 1)
    ]
    below = notes_below(rows, style, wide, catalogs)
    lines += ["", *below, *([""] if below else []), footer(catalogs, dataset_size), ""]
    lines += figures_footer(rows) if wide or style == "seed" else []  # the figures are columns of --wide
    lines += [*published_footer(rows), *traces(rows)]
    return "\n".join(lines).rstrip("\n")


def _plot_name(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0].replace("_", " ")


def traces(rows: list[dict]) -> list[str]:
    """The runs behind each row (by run id), and every warning those runs recorded."""
    return runs_behind(rows) + warning_lines(rows)


def runs_behind(rows: list[dict]) -> list[str]:
    """The runs behind each row, by run id (a published row: its figure's id)."""
    lines = ["Runs behind each row:", ""]
    lines += [
        f"- #{n}: "
        + (
            f"published figure {printable(row['published_id'])}"
            if row.get("published")
            else printable(", ".join(row["run_ids"]))
        )
        for n, row in enumerate(rows, 1)
    ]
    return lines


def published_footer(rows: list[dict]) -> list[str]:
    """Where each published row's figure comes from, each source once; nothing when the report has none."""
    listed = sources(rows)
    if not listed:
        return []
    return [
        "Published figures (marked [PUBLISHED] in the wide table, pub in the default one: measured by their "
        "sources, not by the suite; one row per source and configuration; never pooled with "
        "a measured row; priced with the catalog above where its device and count match an instance; "
        "Measured ÷ published compares a measured row's median with a figure of the same workload, device, "
        "precision, batch and device count):",
        "",
        *listed,
        "",
    ]


def _catalog_list(catalogs) -> list:
    return list(catalogs) if isinstance(catalogs, (list, tuple)) else [catalogs]


def footer(catalogs, dataset_size: int) -> str:
    captions = "\n\n".join(catalog.caption() for catalog in _catalog_list(catalogs))
    return (
        f"{captions}\n\n"
        "Spot: interruptible capacity, reclaimable at short notice; its price varies by hour and zone.\n\n"
        f"Throughput: median over runs of each run's median timed window; Spread: (max − min) ÷ median "
        f"across runs, and a run's window cv (stdev ÷ mean) when over 5%. The median's 95% interval: the sign "
        "test's, from the runs' order statistics (6 runs at least), with the runs behind it. $/h: the accelerators a "
        "row used, at the instance's $/hour ÷ its accelerators (or the price of the catalog's instance with just "
        "as many, which the row names); a whole instance, measured or extrapolated, at its own. Images per $ = "
        "images/hour ÷ that $/h; the whole instance's, if its other accelerators sit idle, is beside it in --wide, "
        f"CSV and JSON. Epoch: {dataset_size:,} images. A run on another device than the "
        "instance's accelerator is priced only with --price-as-if, marked hypothetical; synthetic data "
        "rows are compute-only ceilings."
    )


CSV_FIELDS = [
    "model_run",
    "instance",
    "retired",
    "region",
    "images_per_hour",
    "usd_per_hour",
    "images_per_usd",
    "spot_usd_per_hour",
    "spot_images_per_usd",
    # The price's basis: per accelerator-hour, and the whole instance's figures beside (row_prices.py)
    "price_basis",
    "priced_as",
    "usd_per_accelerator_hour",
    "spot_usd_per_accelerator_hour",
    "instance_usd_per_hour",
    "instance_images_per_usd",
    "instance_spot_usd_per_hour",
    "instance_spot_images_per_usd",
    "backend",
    "device",
    "device_count",
    "world_size",
    "accelerators_used",
    "instance_accelerators",
    "accelerators_priced",
    "device_matches_instance",
    "hypothetical",
    "upper_bound",
    "extrapolated_factor",
    "measured_scaling",
    "measured_images_per_hour",
    "profiled_images_per_hour",
    "precision",  # as it ran: fp32+TF32 where TF32 did the fp32 math
    "settings",  # every non-default setting, in words; the flags that set them beside
    "setting_flags",
    "batch_size",
    "data",
    "usd_per_million_images",
    "spot_usd_per_million_images",
    "epoch_hours",
    "epoch_usd",
    "spot_epoch_usd",
    "runs",
    "run_ids",
    "spread",
    "window_cv_max",
    "images_per_hour_min",
    "images_per_hour_max",
    "median_ci_low",  # the median's distribution-free 95% interval, empty where the runs are too few
    "median_ci_high",
    "median_ci_coverage",
    "status",
    "verdict",
    "warnings",
    "numerics",
    "notes",
    "prices_catalog",
    "prices_as_of",
    "prices_as_of_note",
    # What a row's throughput counts (images, or tokens: then its figures in tokens beside)
    "unit",
    "units_per_sample",
    "tokens_per_hour",
    "tokens_per_usd",
    "usd_per_million_tokens",
    "spot_tokens_per_usd",
    "spot_usd_per_million_tokens",
    "instance_tokens_per_usd",
    "instance_spot_tokens_per_usd",
    # Beside the rate: each the median over the runs (row_figures.py), per device
    "mfu",
    "model_tflops_per_second",
    "energy_per_image_j",
    "energy_per_token_j",
    "mean_power_w",
    "peak_memory_bytes",
    "time_to_first_step_s",
    # The days, commits and hosts the row's runs come from, and its warnings by what they concern
    "run_days",
    "run_commits",
    "run_hosts",
    "rate_warnings",
    "other_warnings",
]
# Only in a report with --published.
PUBLISHED_FIELDS = [
    "published",
    "published_id",
    "published_source",
    "published_caveat",
    "published_ratio",
    "published_matched",  # the workload's own recipe (published_basis.py), or another basis
    "published_recipe",
    "recipe_group",
    "model_parameters",
    "model_flops_per_sample",
    "per_device_per_hour",
    "model_tflops_per_device",
]
FLEET_FIELDS = ["fleet_status", "fleet_hours", "fleet_cost_usd"]  # only in a fleet's report


def render_csv(rows: list[dict]) -> str:
    fields = CSV_FIELDS + (FLEET_FIELDS if any("fleet_status" in r for r in rows) else [])
    fields += PUBLISHED_FIELDS if any("published" in r for r in rows) else []
    return spreadsheet.write(fields, (_csv_row(row) for row in rows))


def _csv_row(row: dict) -> dict:
    """A row's lists and mappings as the text of one CSV cell each."""
    return {
        **row,
        "notes": "; ".join(row["notes"] + row["errors"]),
        "run_ids": " ".join(row["run_ids"]),
        "settings": "; ".join(row.get("settings") or []),
        "setting_flags": " ".join(row.get("setting_flags") or []),
        "warnings": " | ".join(row["warnings"]),
        "rate_warnings": " | ".join(row.get("rate_warnings") or []),
        "other_warnings": " | ".join(
            f"{figure}: {w}" for figure, said in (row.get("other_warnings") or {}).items() for w in said
        ),
        **{name: " ".join(row.get(name) or []) for name in ("run_days", "run_commits", "run_hosts")},
        "published_ratio": " ".join(
            f"{fid}={ratio:.4g}" for fid, ratio in (row.get("published_ratios") or {}).items()
        ),
    }


def render_json(rows: list[dict], catalogs, dataset_size: int, extrapolate: bool) -> str:
    catalogs = _catalog_list(catalogs)
    return (
        json.dumps(
            {
                "catalog": catalogs[0].describe(),
                "catalogs": [catalog.describe() for catalog in catalogs],
                "dataset_size": dataset_size,
                "extrapolate": extrapolate,
                "rows": rows,
            },
            indent=2,
            allow_nan=False,  # rows hold no inf or NaN (rows.build_rows): strict JSON or an error here
        )
        + "\n"
    )


def render(
    rows: list[dict],
    catalog,
    fmt: str,
    dataset_size: int = DEFAULT_DATASET_SIZE,
    extrapolate: bool = False,
    columns: str = "exact",
    wide: bool = False,
    opening: Opening = Opening(),
) -> str:
    if fmt == "md":
        # Published figures on other bases than the suite's runs have a table of their own, and rows
        # measured in tokens one too: never a row or a ranking beside images.
        rows, others = published_basis.split(rows)
        images, tokens = token_rows.split(rows)
        if images or not (tokens or others):
            parts = [
                render_markdown(
                    images, catalog, dataset_size, columns, wide, opening.records, opening.plots, tokens
                )
            ]
        else:  # rows in tokens (or figures on other bases) only: their answer, then their tables
            found = answer.answer([], opening.records, assumed_spot(catalog)[0], tokens)
            parts = ["\n".join(answer.lines(found)).rstrip("\n")] if opening.records is not None else []
        if tokens:
            parts.append("\n".join(token_table.markdown(tokens, wide or columns == "seed")))
        if others:
            parts.append("\n".join(published_table.markdown(others)))
        return "\n\n".join(parts) + "\n"
    if fmt == "csv":
        return render_csv(rows)
    return render_json(rows, catalog, dataset_size, extrapolate)
