"""The report row's type (suite/rows/row.py) holds every row the report makes: each row has every
field the type says it always has, no field the type does not name, and values of the named types; the
columns the renderers read are fields of it."""

from __future__ import annotations

import json
import typing

import pytest
from conftest import ROOT

from suite import cli
from suite.reporting import render
from suite.rows.row import FIELDS, REQUIRED, Row

KEPT = [f"{ROOT}/tests/data/records", f"{ROOT}/results/gpu", f"{ROOT}/results/gpu-2026-11-27"]
VIEWS = {
    "plain": [*KEPT],
    "published": [*KEPT, "--published"],
    "price-as-if": [f"{ROOT}/results/gpu", "--instance", "p5.48xlarge", "--price-as-if"],
    "extrapolate": [f"{ROOT}/tests/data/records", "--extrapolate"],
    "pooled": [f"{ROOT}/results/gpu", "--pool", "precision"],
}
HINTS = typing.get_type_hints(Row)


def _rows(args, tmp_path) -> list[dict]:
    out = tmp_path / "report.json"
    assert cli.main(["report", *args, "--format", "json", "--out", str(out)]) == 0
    return json.loads(out.read_text())["rows"]


def _fits(value, hint) -> bool:
    """Whether a JSON value is of the row's annotated type (containers by their kind)."""
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    origin = typing.get_origin(hint)
    if origin is typing.Union:
        return any(_fits(value, arm) for arm in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if origin is not None:
        return isinstance(value, origin)
    return hint is object or isinstance(value, hint)


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_every_row_of_the_report_is_a_row_of_the_type(view, tmp_path):
    rows = _rows(VIEWS[view], tmp_path)
    assert rows
    for row in rows:
        assert REQUIRED <= set(row), sorted(REQUIRED - set(row))
        assert set(row) <= FIELDS, sorted(set(row) - FIELDS)
        wrong = {name: value for name, value in row.items() if not _fits(value, HINTS[name])}
        assert not wrong, wrong


def test_the_type_knows_a_token_row_and_a_published_row(tmp_path):
    rows = _rows(VIEWS["published"], tmp_path)
    assert any(row["unit"] == "tokens" and "tokens_per_hour" in row for row in rows)
    assert any(row.get("published") for row in rows)


def test_the_fleet_columns_are_fields_of_the_row():
    assert set(render.FLEET_FIELDS) <= FIELDS


def test_a_row_with_a_field_the_type_does_not_name_is_caught(tmp_path):
    [row, *_] = _rows(VIEWS["plain"], tmp_path)
    row["images_per_minute"] = 1.0
    assert not set(row) <= FIELDS
    assert not _fits("fast", HINTS["images_per_hour"])
