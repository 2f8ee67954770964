"""A price catalog's date is a date: ISO 8601 to the precision its source allows, refused in one line when
it is not, and shown with the prices' age, so a reader sees how stale a price is."""

from __future__ import annotations

import datetime

import pytest
import yaml
from conftest import T4_INSTANCE

from suite.cli import main
from suite.inputs.errors import UserError
from suite.prices import catalog as pricing
from suite.prices import dates as price_date

TODAY = datetime.date(2026, 11, 23)


def catalog(**fields) -> pricing.Catalog:
    data = {
        "name": "mine",
        "source": "my notes",
        "as_of": "2025-01-01",
        "instances": {"g4dn.xlarge": T4_INSTANCE},
    }
    return pricing.parse_catalog({**data, **fields}, "catalog mine")


@pytest.mark.parametrize(
    "written, iso",
    [
        ("2025-06-01", "2025-06-01"),
        (datetime.date(2025, 6, 1), "2025-06-01"),  # YAML's reading of an unquoted 2025-06-01
        ("2025-06", "2025-06"),
        ("2022", "2022"),
        (2022, "2022"),  # YAML's reading of an unquoted 2022
    ],
)
def test_a_catalog_date_is_kept_to_the_precision_it_was_written(written, iso):
    assert catalog(as_of=written).as_of == iso


@pytest.mark.parametrize(
    "written", ["2025, exact date unknown", "last week", "2025-13", "2025-02-30", "25-06-01", True, 20251]
)
def test_anything_but_a_date_is_refused_in_one_line_naming_it(written):
    with pytest.raises(UserError, match=r"catalog mine: as_of .*must be a date: YYYY-MM-DD") as refused:
        catalog(as_of=written)
    assert repr(written) in str(refused.value) and "\n" not in str(refused.value)


def test_a_date_in_the_future_is_refused():
    with pytest.raises(UserError, match="2999-01 is in the future"):
        catalog(as_of="2999-01")


def test_the_note_says_what_the_date_cannot():
    with pytest.raises(UserError, match="as_of_note must be a non-empty text"):
        catalog(as_of_note=7)
    dated = catalog(as_of="2025", as_of_note="exact date unknown")
    assert dated.dated(TODAY) == "as of 2025 (exact date unknown; over 10 months old)"
    assert dated.describe()["as_of_note"] == "exact date unknown"


@pytest.mark.parametrize(
    "as_of, said",
    [
        ("2022-02", "over 4 years old"),
        ("2025", "over 10 months old"),  # a year-only date is aged from its last day: a lower bound
        ("2025-11-01", "over a year old"),
        ("2026-10-01", "over a month old"),
        ("2026-11-01", None),
    ],
)
def test_the_prices_age_is_counted_from_the_last_day_the_date_can_mean(as_of, said):
    assert price_date.age(as_of, TODAY) == said


def test_every_shipped_catalog_is_dated_and_says_how_old_it_is():
    for name in pricing.shipped_catalog_names():
        shipped = pricing.load_catalog(name)
        assert price_date.period_end(shipped.as_of) <= TODAY
        assert f"as of {shipped.as_of} (" in shipped.caption(TODAY) and "old" in shipped.caption(TODAY)


def test_import_dates_the_catalog_with_as_of_or_says_it_is_the_import_date(tmp_path, capsys):
    csv_file = tmp_path / "vms.csv"
    csv_file.write_text(
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,"
        "AvailabilityZone\n"
        "g4dn.xlarge,T4,1,4,16,\"{'Gpus': [{'MemoryInfo': {'SizeInMiB': 16384}}]}\",0.526,0.19,us-east-1,"
        "us-east-1a\n"
    )
    out = tmp_path / "mine.yaml"
    assert main(["prices", "import", str(csv_file), "--as-of", "2025-03-04", "--out", str(out)]) == 0
    written = yaml.safe_load(out.read_text())
    assert written["as_of"] == "2025-03-04" and "as_of_note" not in written
    assert main(["prices", "import", str(csv_file), "--out", str(out)]) == 0
    written = yaml.safe_load(out.read_text())
    assert written["as_of"] == datetime.date.today().isoformat() and "import date" in written["as_of_note"]
    capsys.readouterr()
    assert main(["prices", "import", str(csv_file), "--as-of", "March 2025"]) == 2
    assert "--as-of must be a date: YYYY-MM-DD, or YYYY-MM or YYYY" in capsys.readouterr().err


@pytest.mark.parametrize(
    "written, as_of, note",
    [
        (
            "imported 2025-06-01 (the source's own date may be older)",
            "2025-06-01",
            "the import date; the source's",
        ),
        ("2025 (exact date unknown; before June)", "2025", "exact date unknown; before June"),
    ],
)
def test_a_catalog_written_before_dates_were_dates_loads_with_a_warning(written, as_of, note):
    """What earlier `suite prices import` wrote, and the shipped catalog's old form, still load."""
    old = catalog(as_of=written)
    assert old.as_of == as_of and old.as_of_note.startswith(note)
    assert any("write them so in the file" in warning for warning in old.warnings)


def test_words_beside_a_note_are_refused_with_what_to_write():
    with pytest.raises(UserError, match="write the date alone and any words in as_of_note"):
        catalog(as_of="2025 (exact date unknown)", as_of_note="exact date unknown")
