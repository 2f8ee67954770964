"""The page's links (reporting/page.py): every mark in a table links to what it means, so a reader clicks
from a row to its note rather than searching for it.

    ⚠ on a row's rate (or spread)  → the row's warnings about the rate      #warn-3, #warn-T2
    † beside a figure (--wide)     → the row's warnings about its figures   #other-3
    a note's number (Marks, Notes) → the note                               #note-5
    pub, synth, 1/8, …             → the mark's entry in the marks' legend   #mark-synth, #token-mark-synth

A mark is linked only where its target is on the page (`targets`), so no link points to nothing.
"""

from __future__ import annotations

import html
import re

from suite.reporting import narrow
from suite.rows import warning_kinds
from suite.rows.cells import FIGURE_MARK
from suite.run_record import printable

NUMBERS = re.compile(r"\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*")
PART = re.compile(r"\d+/\d+")
PART_MARK = "N/M"
_SLUGS = {"⚠": "warn", "spot?": "spot", PART_MARK: "part"}
WARN = "⚠"


def _text(value) -> str:
    return html.escape(printable(str(value)))


def mark_id(mark: str, prefix: str = "") -> str:
    return f"{prefix}mark-{_SLUGS.get(mark, mark)}"


def _link(target: str, text: str, targets: set[str]) -> str:
    return f'<a href="#{target}">{text}</a>' if target in targets else text


def _numbers(token: str, targets: set[str]) -> str:
    """`1-3,5` with each number a link to its note (a range by its ends)."""
    return re.sub(r"\d+", lambda m: _link(f"note-{m.group(0)}", m.group(0), targets), token)


def _token(token: str, ref: str, targets: set[str], prefix: str) -> str:
    if token == WARN:
        return _link(f"warn-{ref}", token, targets)
    if NUMBERS.fullmatch(token):
        return _numbers(token, targets)
    mark = PART_MARK if PART.fullmatch(token) else html.unescape(token)
    return _link(mark_id(mark, prefix), token, targets)


def cell(text: str, ref: str, targets: set[str], listed: bool = False, prefix: str = "") -> str:
    """A cell's text as HTML with its marks linked: ⚠ and † to row `ref`'s warnings; where the column lists
    marks and note numbers (`listed`: Marks, Notes), each of them to its legend entry or note."""
    escaped = _text(text)
    if listed:
        return " ".join(_token(token, ref, targets, prefix) for token in escaped.split(" "))
    escaped = escaped.replace(WARN, _link(f"warn-{ref}", WARN, targets))
    return escaped.replace(FIGURE_MARK, _link(f"other-{ref}", FIGURE_MARK, targets))


def warning_targets(rows: list[dict], prefix: str = "") -> set[str]:
    """The ids of the rows' warnings on the page: `warn-N` (about the rate), `other-N` (other figures)."""
    about_rate, about_others = warning_kinds.warnings_by_row(rows)
    return {f"warn-{prefix}{n}" for n, _ in about_rate} | {f"other-{prefix}{n}" for n, _ in about_others}


def legend_targets(said: list[str], prefix: str = "") -> set[str]:
    return {mark_id(entry.split(": ", 1)[0], prefix) for entry in said}


def legend(said: list[str], prefix: str = "", inline=_text) -> str:
    """The marks the rows use, in words, each an item its marks link to (`narrow.marks_said`)."""
    items = [
        f'<li id="{mark_id(mark, prefix)}"><strong>{_text(mark)}</strong>: {inline(meaning)}</li>'
        for mark, meaning in (entry.split(": ", 1) for entry in said)
    ]
    return '<p class="note">Marks:</p><ul class="note marks">' + "".join(items) + "</ul>"


def warnings(rows: list[dict], prefix: str = "") -> list[str]:
    """The rows' warnings, about the rate and then about other figures, as the markdown lists them
    (warning_kinds.warning_lines); the first of each row's carries the id its ⚠ or † links to."""
    parts = []
    headings = (warning_kinds.RATE_WARNINGS, warning_kinds.OTHER_WARNINGS)
    for heading, kind, found in zip(headings, ("warn", "other"), warning_kinds.warnings_by_row(rows)):
        if not found:
            continue
        items, seen = [], set()
        for n, text in found:
            ref = f"{prefix}{n}"
            anchor = "" if ref in seen else f' id="{kind}-{ref}"'
            seen.add(ref)
            items.append(f"<li{anchor}>{prefix or '#'}{n} {_text(text)}</li>")
        parts += [f'<p class="note">{_text(heading)}</p>', "<ul>" + "".join(items) + "</ul>"]
    return parts


def marks_said(rows: list[dict]) -> list[str]:
    """The marks a table's rows use, in words (all catalogs' spot prices taken as observed)."""
    return narrow.marks_said(rows, set(), True)
