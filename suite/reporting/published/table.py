"""The report's section of the published figures on other bases (basis.py says which): rows
P1, P2, …, each per device and in model TFLOP/s per device, with its size, cards, precision, batch,
sequence and data in cells, its notes and its sources; never ranked with the measured rows nor with each
other."""

from __future__ import annotations

from suite import stats
from suite.reporting.narrow import marks, short_device, wrapped
from suite.reporting.published.rows import PUBLISHED_NOTE, sources
from suite.run_record import printable

HEADING = "Published figures on other bases"
INTRODUCTION = (
    "Figures whose recipe is not a suite workload's as the suite runs it (another model, another data set, "
    "a batch or precision the source does not state, or a source that does not say its recipe is the "
    "workload's): never ranked with the rows above, nor with each other. Read them per device and in "
    "model FLOP/s per device (TFLOP/s): training FLOPs of one sample × samples per second ÷ cards (per token of a language "
    "model 6 × parameters + 12 × layers × width × sequence; for a suite workload's model, the suite's "
    "own count)."
)


def _size(parameters) -> str:
    if parameters is None:
        return "—"
    if parameters >= 1e9:
        return f"{parameters / 1e9:.3g} B"
    return f"{parameters / 1e6:.3g} M"


def _per_device(row: dict) -> str:
    value = row.get("per_device_per_hour")
    if value is None:
        return "—"
    per_second = value / stats.SECONDS_PER_HOUR
    unit = "tok/s" if row["unit"] == "tokens" else "img/s"
    return f"{per_second:,.0f} {unit}" if per_second >= 100 else f"{per_second:.3g} {unit}"


def _tflops(row: dict) -> str:
    value = row.get("model_tflops_per_device")
    return "—" if value is None else f"{value:,.0f}" if value >= 10 else f"{value:.2g}"


COLUMNS = (
    ("Model", lambda r: str(r["model_run"]), True),
    ("Size", lambda r: _size(r.get("model_parameters")), False),
    ("Device", lambda r: short_device(r["device"]), True),
    ("Cards", lambda r: str(r["accelerators_used"]), False),
    ("Precision", lambda r: r["precision"] or "—", True),
    ("Batch", lambda r: "—" if r["batch_size"] is None else f"{r['batch_size']:,}", False),
    ("Sequence", lambda r: f"{r['units_per_sample']:,}" if r["unit"] == "tokens" else "—", False),
    ("Data", lambda r: str(r["data"]).split(":")[0], True),
    ("Per device", _per_device, False),
    ("TFLOP/s per device", _tflops, False),
    ("Marks", lambda r: " ".join(marks(r)), True),
)


def markdown(rows: list[dict], width: int = 110) -> list[str]:
    """The section of the published figures on other bases: rows P1, P2, …, their notes (wrapped to
    `width`) and sources."""
    if not rows:
        return []
    lines = [f"## {HEADING}", "", *wrapped(INTRODUCTION, width), ""]
    lines += [
        "| # | " + " | ".join(name for name, _, _ in COLUMNS) + " |",
        "|---:|" + "|".join("---" if left else "---:" for _, _, left in COLUMNS) + "|",
    ]
    lines += [
        f"| P{n} | "
        + " | ".join(printable(str(cell(r)).replace("|", "\\|")) for _, cell, _ in COLUMNS)
        + " |"
        for n, r in enumerate(rows, 1)
    ]
    lines += ["", "Notes:", ""]
    lines += [
        line
        for n, row in enumerate(rows, 1)
        for line in wrapped(printable("; ".join(notes(row))), width, f"- P{n}: ")
    ]
    lines += ["", "Their sources:", "", *sources(rows, "P")]
    return lines


def notes(row: dict) -> list[str]:
    """A row's notes, less the one saying it is published (the section says so, its source is listed)."""
    return [note for note in row["notes"] + row["errors"] if not note.startswith(PUBLISHED_NOTE)]
