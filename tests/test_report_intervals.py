"""The median's 95% interval and the runs behind it, in every format a report is read in: the default
table's img/s cell, the wide table's column, CSV's fields and the page; too few runs say how many are
needed."""

from __future__ import annotations

import csv
import io

from test_report import make_record

from suite.prices.catalog import load_catalog
from suite.reporting import page
from suite.reporting.render import render
from suite.rows.build import build_rows

CATALOG = load_catalog()
# 12 runs at 2,900, 2,902, … 2,922 img/s: median 2,911, the interval their 3rd and 10th (96.1%).
TWELVE = [
    make_record(
        (2_900 + 2 * i) * 3600, run=f"a{i}", instance="p5.48xlarge", device="NVIDIA H100 80GB HBM3", used=8
    )
    for i in range(12)
]
TWO = [make_record(1_000 * 3600 * (1 + i / 100), run=f"b{i}", batch=32) for i in range(2)]


def rows():
    found = build_rows(TWELVE + TWO, CATALOG)
    by_runs = sorted(found, key=lambda row: row["runs"])
    assert [row["runs"] for row in by_runs] == [2, 12]
    return by_runs


def test_the_default_table_shows_the_interval_and_the_runs_beside_the_median():
    text = render(rows(), CATALOG, "md")
    assert "| 2,911 (2,904–2,918, 12 runs) |" in text
    # too few runs: the median alone, and a note says how many an interval needs
    assert "| 1,005 |" in text
    assert "2 run(s): too few for a 95% interval of the median (6 needed" in text


def test_the_wide_table_has_an_interval_column_with_its_coverage():
    lines = [line for line in render(rows(), CATALOG, "md", wide=True).splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    column = header.index("95% interval of the median (img/h)")
    cells = {line.split("|")[column + 1].strip() for line in lines[2:]}
    assert cells == {"10,454,400–10,504,800 (96.1%)", "— (2 run(s); 6 needed)"}
    assert "Runs" in header


def test_csv_carries_the_interval_its_coverage_and_the_runs():
    found = {row["runs"]: row for row in csv.DictReader(io.StringIO(render(rows(), CATALOG, "csv")))}
    assert float(found["12"]["median_ci_low"]) == 2_904 * 3600
    assert float(found["12"]["median_ci_high"]) == 2_918 * 3600
    assert round(float(found["12"]["median_ci_coverage"]), 3) == 0.961
    assert found["2"]["median_ci_low"] == "" and found["2"]["median_ci_coverage"] == ""


def test_the_page_shows_the_interval_in_its_default_and_wide_tables(monkeypatch):
    monkeypatch.setattr(page, "_plots", lambda records, rows, catalogs: ([], []))  # no drawing needed here
    narrow = page.render_page(rows(), CATALOG, TWELVE + TWO, 1_200_000)
    assert '<td class="num">2,911 (2,904–2,918, 12 runs)</td>' in narrow
    wide = page.render_page(rows(), CATALOG, TWELVE + TWO, 1_200_000, wide=True)
    assert "<th>95% interval of the median (img/h)</th>" in wide
    assert '<td class="num">10,454,400–10,504,800 (96.1%)</td>' in wide
    assert '<td class="num">— (2 run(s); 6 needed)</td>' in wide
