"""The default table of a report: the columns a buyer decides with — workload, instance, device,
precision, the settings (where any row has one), batch, img/s, $/hour on demand, images per $ on demand
and on spot — and a short Marks column. Everything else a row says (its notes, the bottleneck verdict, the numerics check, a measured
scaling or a ratio to a published figure) is a numbered note under the table; the row's Marks carry the
numbers. A row of a shipped workload at its defaults on an instance such as p5en.48xlarge fits 120
characters of markdown; a Settings cell or `fp32+TF32` makes it wider (docs/report.md gives the widths).
`--wide` shows every column instead (render.table_columns).
"""

from __future__ import annotations

import re
import textwrap

from suite.reporting.published.rows import PUBLISHED_NOTE
from suite.rows import warning_kinds
from suite.rows.build import SYNTHETIC_NOTE
from suite.rows.cells import (
    FLEET_COLUMNS,
    accelerators_priced,
    dollars,
    ratio_text,
    settings_cell,
    whole_number,
)
from suite.rows.row_prices import SHARE_NOTE
from suite.run_record import printable

# Words a device's name carries that tell none of the catalog's accelerators apart.
_NOISE = re.compile(
    r"\((?:R|TM)\)|\bCPU @ .*$|\bProcessor\b|\b(?:NVIDIA|Tesla|Habana)\b|\b(?:Platinum|Gold|Silver|Bronze)\b"
    r"|\bHBM\w*|\b(?:SXM\d*|PCIe|NVL)\b",
    re.IGNORECASE,
)
DEVICE_WIDTH = 18  # the longest short device name; the full one is in --wide, CSV and JSON


def short_device(name: str | None) -> str:
    """`NVIDIA H100 80GB HBM3` -> `H100 80GB`, `Tesla V100-SXM2-16GB` -> `V100 16GB`,
    `Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz` -> `Intel Xeon 8375C`."""
    if not name:
        return "?"
    text = re.sub(r"-(?:SXM\d*|PCIE)\b", "", str(name), flags=re.IGNORECASE)
    text = re.sub(r"-(\d+GB)\b", r" \1", text)
    text = " ".join(_NOISE.sub(" ", text).split()) or str(name)
    return text if len(text) <= DEVICE_WIDTH else text[: DEVICE_WIDTH - 1].rstrip() + "…"


def images_per_second(value) -> str:
    if value is None or value != value or abs(value) == float("inf"):
        return "—"
    per_second = value / 3600
    return f"{per_second:,.0f}" if per_second >= 100 else f"{per_second:.3g}"


_FAILED = {
    "diverged": "DIVERGED",
    "oom": "OOM",
    "interrupted": "INTERRUPTED",
    "numerics failed": "NUMERICS FAILED",
}


def _rate_cell(row: dict) -> str:
    """The median rate; beside it, where the runs are enough for one, the median's 95% interval and the
    runs (`2,919 (2,905–2,931, 12 runs)`). Fewer runs say so in a note, with how many an interval needs."""
    if row["images_per_hour"] is None:
        return "profiled" if row["status"] == "profiled" else _FAILED.get(row["status"], "FAILED")
    text = images_per_second(row["images_per_hour"])
    if row["median_ci_low"] is not None:
        low, high = images_per_second(row["median_ci_low"]), images_per_second(row["median_ci_high"])
        text += f" ({low}–{high}, {row['runs']} runs)"
    return text


MODIFIED = " (modified: "  # rows._model_label's mark of a model changed with --model-override


def _workload_cell(row: dict) -> str:
    """The workload's name; a modified model says so (its overrides are a note)."""
    label = str(row["model_run"])
    return label.split(MODIFIED)[0] + " (modified)" if MODIFIED in label else label


def _stated(value) -> str:
    return "—" if value is None else str(value)


# What each mark means, in the order a row shows them.
MARKS = {
    "⚠": "the runs warned about the rate (listed at the end)",
    "pub": "a published figure, measured by its source, not by the suite",
    "hyp": "hypothetical, measured on another device than the instance's accelerator and priced as if on it",
    "synth": "synthetic data, a compute-only ceiling rather than real-data training",
    "ext": "extrapolated from the accelerators used to the whole instance",
    "retired": "the instance is no longer rented (its last listed price)",
    "spot?": "the spot price is assumed, not observed",
    "tuned": "the tuned best of a `suite tune` search (its note: the search, the gain over its default)",
    "trial": "a trial of a `suite tune` search that is not its best (`--include tune`)",
}


def marks(row: dict, assumed_spot: bool = False) -> list[str]:
    """The row's short marks (see MARKS); a part of an instance reads `1/8`."""
    found = []
    if warning_kinds.of_rate(row):  # a warning about another figure is listed, not marked on the rate
        found.append("⚠")
    if row.get("published"):
        found.append("pub")
    if row.get("hypothetical"):
        found.append("hyp")
    if row.get("upper_bound"):
        found.append("synth")
    if row.get("extrapolated_factor"):
        found.append("ext")
    elif (
        row.get("instance_accelerators")
        and 0 < (row.get("accelerators_used") or 0) < row["instance_accelerators"]
    ):
        found.append(f"{row['accelerators_used']}/{row['instance_accelerators']}")
    if row.get("retired"):
        found.append("retired")
    if assumed_spot and row.get("spot_images_per_usd") is not None:
        found.append("spot?")
    if row.get("tuned") in ("best", "trial"):  # reporting/tuned.py: "tuned" for a search's best
        found.append("tuned" if row["tuned"] == "best" else "trial")
    return found


def row_notes(row: dict, data_differs: bool = False, wide: bool = False) -> list[str]:
    """The row's notes in words; for the default table also what it has no column for (the wide table
    has a column for each of those)."""
    if wide:
        return [*row["notes"], *row["errors"]]
    notes = []
    if row["status"] == "profiled" and row.get("profiled_images_per_hour") is not None:
        notes.append(
            f"profiled: {whole_number(row['profiled_images_per_hour'])} img/h, perturbed by the profiler, not priced"
        )
    if MODIFIED in str(row["model_run"]):
        overrides = str(row["model_run"]).split(MODIFIED, 1)[1].removesuffix(")")
        notes.append(f"model modified: {overrides}")
    if data_differs and not row.get("upper_bound"):
        notes.append(f"data: {row['data']}")
    # what a mark says in full is no note of its own: a published figure, a synthetic ceiling, a part of
    # an instance priced per accelerator-hour (its N/M mark)
    said = [
        note
        for note in row["notes"]
        if note != SYNTHETIC_NOTE
        and not note.startswith(SHARE_NOTE)
        and not (row.get("published") and note.startswith(PUBLISHED_NOTE))
    ]
    notes += [*said, *row["errors"]]
    if row.get("verdict"):
        notes.append(f"bottleneck: {row['verdict']}")
    if row.get("numerics"):
        notes.append(f"numerics check: {row['numerics']}")
    if row.get("measured_scaling") is not None:
        notes.append(f"measured scaling: {row['measured_scaling']:.0%} of one device's rate × the copies")
    if row.get("published_ratios"):
        notes.append(f"measured ÷ published: {ratio_text(row)}")
    return notes


def numbered(rows: list[dict], wide: bool = False) -> tuple[list[str], list[list[int]]]:
    """The notes of all rows, each text once, numbered in order of first use; and each row's numbers."""
    data_differs = len({r["data"] for r in rows if not r.get("published")}) > 1
    texts: dict[str, int] = {}
    per_row = []
    for row in rows:
        numbers = [texts.setdefault(text, len(texts) + 1) for text in row_notes(row, data_differs, wide)]
        per_row.append(sorted(set(numbers)))
    return list(texts), per_row


def notes_column(rows: list[dict]) -> tuple:
    """The wide table's Notes column: each row's note numbers (the notes are listed under the table)."""
    _, per_row = numbered(rows, wide=True)
    by_row = {id(row): numbers for row, numbers in zip(rows, per_row)}
    return ("Notes", lambda row: number_ranges(by_row.get(id(row), [])), True)


def number_ranges(numbers: list[int]) -> str:
    """[1, 2, 3, 5] -> `1-3,5`."""
    parts, start = [], None
    for n, following in zip(numbers, [*numbers[1:], None]):
        start = n if start is None else start
        if following != n + 1:
            parts.append(str(n) if n == start else f"{start}-{n}")
            start = None
    return ",".join(parts)


def columns(rows: list[dict], assumed: set[str], every: bool) -> list:
    """(header, cell, left-aligned) per column. `assumed`: the catalogs whose spot price is assumed;
    `every`: all of the report's catalogs are (said once, in the header) rather than some (marked on
    their rows)."""
    _, per_row = numbered(rows)
    by_row = {id(row): numbers for row, numbers in zip(rows, per_row)}

    def marks_cell(row: dict) -> str:
        spot_assumed = not every and row.get("prices_catalog") in assumed
        return " ".join([*marks(row, spot_assumed), number_ranges(by_row.get(id(row), []))]).strip()

    spot = "Spot img/$" + (" (assumed)" if assumed and every else "")
    chosen = [
        ("Workload", _workload_cell, True),
        ("Instance", lambda r: r["instance"] or "—", True),
        ("Device", lambda r: f"{short_device(r['device'])} ×{accelerators_priced(r)}", True),
        ("Precision", lambda r: _stated(r["precision"]), True),
        # Only where some row has a non-default setting: a column of dashes would say nothing.
        *([("Settings", settings_cell, True)] if any(r.get("settings") for r in rows) else []),
        ("Batch", lambda r: _stated(r["batch_size"]), False),
        ("img/s", _rate_cell, False),
        ("$/h", lambda r: dollars(r["usd_per_hour"]), False),
        ("img/$", lambda r: whole_number(r["images_per_usd"]), False),
        (spot, lambda r: whole_number(r["spot_images_per_usd"]), False),
    ]
    if any("fleet_status" in r for r in rows):  # a fleet's report: how each instance ended, its cost
        chosen += FLEET_COLUMNS
    return chosen + [("Marks", marks_cell, True)]


def legend(rows: list[dict], assumed: set[str], every: bool, wide: bool = False) -> list[str]:
    """The marks used, in words (the default table), then the numbered notes."""
    texts, _ = numbered(rows, wide)
    said = [] if wide else marks_said(rows, assumed, every)
    lines = []
    if said:
        lines += wrapped("Marks: " + "; ".join(said + (["numbers: the notes below"] if texts else [])) + ".")
    if texts:
        lines += [*([""] if lines else []), "Notes:", ""]
        lines += [
            line for n, text in enumerate(texts, 1) for line in wrapped(printable(text), first=f"{n}. ")
        ]
    return lines


def marks_said(rows: list[dict], assumed: set[str], every: bool) -> list[str]:
    """Each mark the rows use, with what it means."""
    used = [m for row in rows for m in marks(row, not every and row.get("prices_catalog") in assumed)]
    said = [f"{mark}: {meaning}" for mark, meaning in MARKS.items() if mark in used]
    if any("/" in mark for mark in used):
        said.append(
            "N/M: used N of the instance's M accelerators, priced for those N ($/h: the instance's ÷ M × N); "
            "if the other M − N sit idle, the whole instance gives M/N× fewer images per $ (--wide shows it)"
        )
    return said


def wrapped(text: str, width: int = 110, first: str = "") -> list[str]:
    """TEXT as lines of at most WIDTH characters after FIRST (a list item's marker, whose width the next
    lines are indented by); words, commands and addresses are never split."""
    return textwrap.wrap(
        text,
        width,
        initial_indent=first,
        subsequent_indent=" " * len(first),
        break_long_words=False,
        break_on_hyphens=False,
    ) or [first.rstrip()]
