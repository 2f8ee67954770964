"""Every CSV the suite writes (`suite report`, `suite fleet report`, `suite compare`): one writer, and one rule
for a cell that a spreadsheet would run as a formula; and one reader of the CSVs a person gives (a price
list, published figures), which takes a row only when it has one value for each column of the header.

Excel, LibreOffice Calc and Google Sheets take a cell that begins with `=`, `+`, `-` or `@` (also a tab, a
carriage return or a line feed) as a formula: an instance name `=HYPERLINK(...)` from an imported price
list, a device name from a record or an `--instance` given by hand would run when the CSV is opened. OWASP's
rule (CSV Injection, owasp.org/www-community/attacks/CSV_Injection) is to begin such a cell with a single
quote, which the spreadsheet reads as "this is text". It is applied to text only: a number in a row (an
int or a float) is written by the csv module as a plain literal (`-0.5`, `1e-05`), which every spreadsheet
reads as that number, not a formula, and a quote would turn the figure into text. Text that merely begins
with `-` (`--channels-last` in `setting_flags`) gets the quote too: the writer cannot tell it from `-1+A1`.
"""

from __future__ import annotations

import collections
import csv
import io

from suite.inputs import errors
from suite.inputs.errors import UserError, printable

# What a spreadsheet takes as the start of a formula (OWASP's list).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")


def formula_like(text: str) -> bool:
    """Whether a spreadsheet would read TEXT, alone in a cell, as a formula."""
    return text.startswith(FORMULA_STARTS)


def refuse_formula(text: str, where: str) -> None:
    """A UserError if TEXT, a name a file gives (an instance, a published figure's id), begins like a
    formula: no such name is real, and it would be a formula in every CSV it reaches."""
    if formula_like(text):
        raise UserError(
            f"{where}: the name begins with {text[0]!r}, which a spreadsheet runs as a formula when it opens "
            "a CSV (a name begins with any character but =, +, -, @, a tab or a line break)"
        )


def cell(value):
    """VALUE as a CSV cell: text with its control characters escaped (`printable`) and a single quote
    before it if it begins like a formula; a number, a boolean or None (an empty cell) as it is."""
    if not isinstance(value, str):
        return value
    text = printable(value)
    return "'" + text if formula_like(text) else text


def write(fields: list[str], rows) -> str:
    """ROWS (mappings) as CSV text with a header of FIELDS; keys outside FIELDS are left out."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=fields, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows({key: cell(value) for key, value in row.items()} for row in rows)
    return buffer.getvalue()


def read(text: str, path: str) -> tuple[list[str], list[dict]]:
    """(header, rows) of a person's CSV file at PATH. A row with more values than the header has columns
    (csv.DictReader keeps the extra under the key None, never in a column) or fewer (it fills None) is out
    of line with its header: whatever it says lands in the wrong columns or nowhere, so the file is
    refused in one line naming the row. So is a header that names a column twice, and a file the csv
    module cannot read."""
    reader = csv.DictReader(io.StringIO(text, newline=""))
    rows = []
    try:
        header = reader.fieldnames or []
        twice = next((column for column, n in collections.Counter(header).items() if n > 1), None)
        if twice is not None:  # DictReader keeps the last of its values: the other would be lost
            raise UserError(f"{path!r}: the header names column {errors.shown(twice, 40)} twice")
        for row in reader:
            given = len(header) + len(row.get(None) or ()) - sum(value is None for value in row.values())
            if given != len(header):
                raise UserError(
                    f"{path!r} line {reader.line_num}: {given:,} value(s) for the header's "
                    f"{len(header):,} columns (a row gives one value per column, an empty one where it says "
                    "nothing)"
                )
            rows.append(row)
    except csv.Error as error:  # e.g. a field over csv.field_size_limit() (131,072 characters)
        # the line it failed on is not yet counted in line_num
        raise UserError(f"{path!r} is not a readable CSV (line {reader.line_num + 1}: {error})") from None
    return header, rows
