"""The table of a report's rows measured in tokens (token_rows.py makes their figures): the leads per workload,
rows T1, T2, …, their notes and runs, after the image table and never ranked with it. Published figures in
tokens (published/rows.py) are rows of it too, marked `pub`, never in the leads, their sources listed below."""

from __future__ import annotations

from suite.reporting.narrow import marks, marks_said, short_device, wrapped
from suite.reporting.published.rows import sources
from suite.rows.cells import dollars, figure_cells, settings_cell, whole_number
from suite.rows.row_figures import figures_footer
from suite.rows.warning_kinds import warning_lines
from suite.run_record import printable

HEADING = "Language models, in tokens"


def tokens_per_second(row: dict) -> str:
    value = row.get("tokens_per_hour")
    if value is None:
        return "profiled" if row["status"] == "profiled" else str(row["status"]).upper()
    per_second = value / 3600
    return f"{per_second:,.0f}" if per_second >= 100 else f"{per_second:.3g}"


def leads(rows: list[dict]) -> list[str]:
    """Per workload, the fastest row and the cheapest on demand, by their tokens: measured rows of one
    workload only (a published figure is never ranked)."""
    lines = []
    measured = [(n, r) for n, r in enumerate(rows, 1) if not r.get("published")]
    workloads = list(dict.fromkeys(str(r["model_run"]) for _, r in measured))
    for workload in workloads:
        own = [(n, r) for n, r in measured if str(r["model_run"]) == workload]
        parts = []
        for what, field, shown in (
            ("fastest", "tokens_per_hour", lambda r: f"{tokens_per_second(r)} tok/s"),
            (
                "cheapest on demand",
                "tokens_per_usd",
                lambda r: f"{whole_number(r['tokens_per_usd'])} tokens per $",
            ),
        ):
            ranked = sorted((p for p in own if p[1].get(field)), key=lambda p: -p[1][field])
            if ranked:
                n, top = ranked[0]
                parts.append(f"{what} T{n} ({shown(top)})")
        lines.append(f"- {printable(workload)}: " + ("; ".join(parts) or "no run measured"))
    return lines


COLUMNS = (
    ("Workload", lambda r: str(r["model_run"]), True),
    ("Instance", lambda r: r["instance"] or "—", True),
    ("Device", lambda r: f"{short_device(r['device'])} ×{r['accelerators_used']}", True),
    ("Precision", lambda r: r["precision"] or "—", True),
    ("Settings", settings_cell, True),
    ("Batch", lambda r: f"{r['batch_size'] or '—'} × {r['units_per_sample']:,}", False),
    ("tok/s", tokens_per_second, False),
    ("$/h", lambda r: dollars(r["usd_per_hour"]), False),
    ("Tokens per $", lambda r: whole_number(r.get("tokens_per_usd")), False),
    ("$ per M tokens", lambda r: dollars(r.get("usd_per_million_tokens")), False),
    ("Spot $ per M tokens", lambda r: dollars(r.get("spot_usd_per_million_tokens")), False),
    ("Marks", lambda r: " ".join(marks(r)), True),
)


def columns(wide: bool = False) -> tuple:
    """The token table's columns; with `wide`, the figures beside the rate too (energy per token)."""
    if not wide:
        return COLUMNS
    beside = tuple((name, cell, False) for _, name, cell in figure_cells("energy_per_token_j"))
    return (*COLUMNS[:-1], *beside, COLUMNS[-1])


INTRODUCTION = (
    "Workloads measured in tokens (one sample is one sequence; Batch is sequences × tokens each). "
    "They are never ranked with images. Tokens per $ = tokens/hour ÷ $/hour of the accelerators used (as images per $); "
    "$ per M tokens = $/hour ÷ tokens/hour × 1,000,000."
)


def markdown(rows: list[dict], wide: bool = False) -> list[str]:
    """The token rows' section: the leads per workload, the table (rows T1, T2, …; with `wide` the figures
    beside the rate too), their notes, runs and warnings."""
    ranked = leads(rows)
    shown = columns(wide)
    lines = [
        f"## {HEADING}",
        "",
        INTRODUCTION,
        "",
        *ranked,
        *([""] if ranked else []),
        "| # | " + " | ".join(name for name, _, _ in shown) + " |",
        "|---:|" + "|".join("---" if left else "---:" for _, _, left in shown) + "|",
    ]
    lines += [
        f"| T{n} | " + " | ".join(printable(str(cell(r)).replace("|", "\\|")) for _, cell, _ in shown) + " |"
        for n, r in enumerate(rows, 1)
    ]
    said = marks_said(rows, set(), True)  # as the Marks column shows them: no spot price marked assumed
    if said:
        lines += ["", *wrapped("Marks: " + "; ".join(said) + ".")]
    noted = [(n, r) for n, r in enumerate(rows, 1) if r["notes"] or r["errors"]]
    if noted:
        lines += ["", "Notes:", ""]
        lines += [f"- T{n}: {printable('; '.join(r['notes'] + r['errors']))}" for n, r in noted]
    published = sources(rows, "T")
    if published:
        lines += ["", PUBLISHED_HEADING, "", *published]
    lines += ["", *(figures_footer(rows) if wide else []), "Runs behind each row:", ""]
    lines += [f"- T{n}: {printable(runs_behind(r))}" for n, r in enumerate(rows, 1)]
    return lines + warning_lines(rows, "T")


PUBLISHED_HEADING = (
    "Published figures (marked pub: measured by their sources, not by the suite; never ranked; priced with "
    "the report's price catalog where its device and count match an instance):"
)


def runs_behind(row: dict) -> str:
    return f"published figure {row['published_id']}" if row.get("published") else ", ".join(row["run_ids"])
