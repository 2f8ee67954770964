"""`suite published import FILE.csv`: a person's own published figures, one CSV row per figure, checked by
the same `figures.parse_figure` as the shipped ones and written as a published-figures YAML file.

Columns (a header row; empty cell = not stated): id, model, batch, precision, device, count, throughput,
unit, citation, url, table, read, and optionally model_label, instance, data, caveat, sequence_length
(the tokens of one sequence: needed by a figure in tokens/s or tokens/hour, refused for one in images),
not_pinned (why the url names no version), and the model's facts of figures.py: recipe, parameters,
flops_per_sample, layers, width.
"""

from __future__ import annotations

import yaml

from suite.inputs import spreadsheet
from suite.inputs.errors import UserError
from suite.reporting.published.figures import parse_figure

REQUIRED_COLUMNS = (
    "id",
    "model",
    "batch",
    "precision",
    "device",
    "count",
    "throughput",
    "unit",
    "citation",
    "url",
    "table",
    "read",
)
OPTIONAL_COLUMNS = (
    "model_label",
    "instance",
    "data",
    "caveat",
    "sequence_length",
    "not_pinned",
    "recipe",
    "parameters",
    "flops_per_sample",
    "layers",
    "width",
)
_SOURCE = ("citation", "url", "table", "read", "not_pinned")


def _cell(value):
    text = (value or "").strip()
    return text or None


def import_csv(path: str, name: str | None = None) -> dict:
    """The CSV as a published-figures file (a dict ready for YAML); the first bad row is refused."""
    from suite.inputs.files import read_user_file  # regular files only, bounded

    header, rows = spreadsheet.read(read_user_file(path, "published figures"), path)  # one value a column
    missing = [column for column in REQUIRED_COLUMNS if column not in header]
    if missing:
        raise UserError(
            f"{path!r}: column(s) {', '.join(missing)} missing (needed: {', '.join(REQUIRED_COLUMNS)}; "
            f"optional: {', '.join(OPTIONAL_COLUMNS)})"
        )
    from suite.prices.importer import warn_unknown_columns

    warn_unknown_columns(path, header, (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS))
    figures: dict[str, dict] = {}
    for number, row in enumerate(rows, start=2):  # line 1 is the header
        figure_id = _cell(row.get("id"))
        where = f"{path!r} line {number}"
        if figure_id is None:
            raise UserError(f"{where}: field 'id' is empty (each figure needs an id)")
        if figure_id in figures:
            raise UserError(f"{where}, entry {figure_id!r}: the id is used twice")
        entry = {
            column: _cell(row.get(column))
            for column in (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS)
            if column != "id" and column not in _SOURCE
        }
        entry["source"] = {column: _cell(row.get(column)) for column in _SOURCE}
        figure = parse_figure(figure_id, entry, where)  # refuses a bad row in one line
        figures[figure_id] = figure.to_dict()
    if not figures:
        raise UserError(f"{path!r} has a header but no figures")
    return {"name": name or path.rsplit("/", 1)[-1].rsplit(".", 1)[0], "figures": figures}


def to_yaml(data: dict) -> str:
    return (
        "# Published figures imported by `suite published import`; use with "
        "`suite report --published-from FILE`.\n" + yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    )
