"""A report's rows of workloads measured in tokens (workloads/gpt.py; suite/measurement/units.py): their
figures in tokens, and a table of their own, never beside rows of images nor ranked with them.

A row's statistics and prices are computed as every row's are, on the samples its runs counted (a
sequence of `tokens_per_sample` tokens each); the token figures are those × the tokens per sequence:

    tokens per $       = tokens/hour ÷ $/hour           (the instance's whole price, as images per $)
    $ per M tokens     = $/hour ÷ tokens/hour × 1,000,000
"""

from __future__ import annotations

from suite.reporting.cells import dollars, whole_number
from suite.run_record import printable

TOKENS = "tokens"
IMAGES = "images"
HEADING = "Language models, in tokens"


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
    if unit != TOKENS:
        return

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
    )


def split(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """(rows of images, rows of tokens), each in the order given."""
    tokens = [r for r in rows if r.get("unit") == TOKENS]
    return [r for r in rows if r.get("unit") != TOKENS], tokens


def tokens_per_second(row: dict) -> str:
    value = row.get("tokens_per_hour")
    if value is None:
        return "profiled" if row["status"] == "profiled" else str(row["status"]).upper()
    per_second = value / 3600
    return f"{per_second:,.0f}" if per_second >= 100 else f"{per_second:.3g}"


def _leads(rows: list[dict]) -> list[str]:
    """Per workload, the fastest row and the cheapest on demand, by their tokens: rows of one workload only."""
    lines = []
    workloads = list(dict.fromkeys(str(r["model_run"]) for r in rows))
    for workload in workloads:
        own = [(n, r) for n, r in enumerate(rows, 1) if str(r["model_run"]) == workload]
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


def _short_device(name) -> str:
    from suite.reporting.narrow import short_device  # narrow imports rows, which imports this module

    return short_device(name)


def _marks(row: dict) -> list[str]:
    from suite.reporting.narrow import marks

    return marks(row)


COLUMNS = (
    ("Workload", lambda r: str(r["model_run"]), True),
    ("Instance", lambda r: r["instance"] or "—", True),
    ("Device", lambda r: f"{_short_device(r['device'])} ×{r['accelerators_used']}", True),
    ("Precision", lambda r: r["precision"] or "—", True),
    ("Batch", lambda r: f"{r['batch_size']} × {r['units_per_sample']:,}", False),
    ("tok/s", tokens_per_second, False),
    ("$/h", lambda r: dollars(r["usd_per_hour"]), False),
    ("Tokens per $", lambda r: whole_number(r.get("tokens_per_usd")), False),
    ("$ per M tokens", lambda r: dollars(r.get("usd_per_million_tokens")), False),
    ("Spot $ per M tokens", lambda r: dollars(r.get("spot_usd_per_million_tokens")), False),
    ("Marks", lambda r: " ".join(_marks(r)), True),
)


def markdown(rows: list[dict]) -> list[str]:
    """The token rows' section: the leads per workload, the table (rows T1, T2, …), their notes and runs."""
    lines = [
        f"## {HEADING}",
        "",
        "Workloads measured in tokens (one sample is one sequence; Batch is sequences × tokens each). "
        "They are never ranked with images. Tokens per $ = tokens/hour ÷ $/hour of the whole instance; "
        "$ per M tokens = $/hour ÷ tokens/hour × 1,000,000.",
        "",
        *_leads(rows),
        "",
        "| # | " + " | ".join(name for name, _, _ in COLUMNS) + " |",
        "|---:|" + "|".join("---" if left else "---:" for _, _, left in COLUMNS) + "|",
    ]
    lines += [
        f"| T{n} | "
        + " | ".join(printable(str(cell(r)).replace("|", "\\|")) for _, cell, _ in COLUMNS)
        + " |"
        for n, r in enumerate(rows, 1)
    ]
    noted = [(n, r) for n, r in enumerate(rows, 1) if r["notes"] or r["errors"]]
    if noted:
        lines += ["", "Notes:", ""]
        lines += [f"- T{n}: {printable('; '.join(r['notes'] + r['errors']))}" for n, r in noted]
    lines += ["", "Runs behind each row:", ""]
    lines += [f"- T{n}: {printable(', '.join(r['run_ids']))}" for n, r in enumerate(rows, 1)]
    return lines
