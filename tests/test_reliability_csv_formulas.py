"""A CSV the suite writes never holds a cell a spreadsheet would run as a formula (OWASP's CSV Injection):
text from a record, a price list or a published-figures file that begins with =, +, - or @ is written
after a single quote, numbers are written as numbers, and the imports refuse such a name in one line."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from conftest import ROOT

from suite import run_record
from suite.cli import main

# What Excel, LibreOffice Calc and Google Sheets read as the start of a formula (OWASP's CSV Injection page).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")
FORMULAS = ['=HYPERLINK("http://x","y")', "+1+2", "-1+A1", "@SUM(A1)"]


def _record(run: str, device: str, instance: str | None, rate: float = 100.0) -> dict:
    record = run_record.new_record(
        run,
        {"utc_time": "2026-01-01T00:00:00Z"},
        {"workload": "dcgan64", "backend": "cpu", "precision": "fp32", "batch_size": 2, "instance": instance},
    )
    record.update(status="ok", device={"name": device, "count": 1})
    record["metrics"] = {"images_per_second": rate, "images_per_hour": rate * 3600, "window_time_s": [1.0]}
    return record


def _formula_cells(text: str) -> list[str]:
    """The cells of a CSV that a spreadsheet would run: text beginning like a formula that is no number."""

    def number(cell: str) -> bool:
        try:
            float(cell)
        except ValueError:
            return False
        return True

    cells = [cell for row in csv.reader(io.StringIO(text)) for cell in row]
    return [cell for cell in cells if cell.startswith(FORMULA_STARTS) and not number(cell)]


@pytest.mark.parametrize("formula", FORMULAS)
def test_a_report_csv_quotes_a_device_and_an_instance_that_begin_like_a_formula(tmp_path, capsys, formula):
    run_record.write_record(_record("run-1", formula, formula), str(tmp_path))
    assert main(["report", str(tmp_path), "--format", "csv"]) == 0
    text = capsys.readouterr().out
    assert _formula_cells(text) == []
    (row,) = csv.DictReader(io.StringIO(text))
    assert row["device"] == row["instance"] == "'" + formula  # the value, marked as text


@pytest.mark.parametrize("formula", FORMULAS)
def test_a_compare_csv_quotes_what_begins_like_a_formula(tmp_path, capsys, formula):
    for side, instance in (("base", formula), ("cand", "g6.xlarge")):
        for n, rate in enumerate((100.0, 101.0, 99.0)):
            run_record.write_record(_record(f"{side}-{n}", formula, instance, rate), str(tmp_path / side))
    args = ["compare", str(tmp_path / "base"), str(tmp_path / "cand"), "--by", "instance", "--format", "csv"]
    assert main(args) in (0, 1)
    text = capsys.readouterr().out
    assert _formula_cells(text) == []
    compared = {row["compared"] for row in csv.DictReader(io.StringIO(text))}
    assert compared == {f"'{formula} → g6.xlarge (HYPOTHETICAL)"}  # the instances compared, marked as text


def test_numbers_stay_numbers_and_text_is_quoted_even_when_it_reads_as_one():
    from suite.inputs import spreadsheet

    text = spreadsheet.write(
        ["rate", "as_text", "flags", "none", "flag", "tab"],
        [{"rate": -0.5, "as_text": "-0.5", "flags": "--tf32", "none": None, "flag": True, "tab": "\tx"}],
    )
    assert text.splitlines()[1] == "-0.5,'-0.5,'--tf32,,True,\\tx"  # a tab is escaped, so no formula


def test_every_csv_the_suite_writes_goes_through_the_one_writer():
    writers = [
        str(path.relative_to(ROOT))
        for path in sorted(Path(ROOT, "suite").rglob("*.py"))
        if re.search(r"csv\.(DictWriter|writer)\(", path.read_text(encoding="utf-8"))
    ]
    assert writers == ["suite/inputs/spreadsheet.py"]


SKY_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone"


def _sky_row(name: str) -> str:
    return f"{name},L4,1.0,4.0,16.0,,0.8048,0.36,us-east-1,use1-az1"


@pytest.mark.parametrize("formula", FORMULAS)
def test_a_price_import_refuses_an_instance_named_like_a_formula_in_one_line(tmp_path, capsys, formula):
    quoted = '"' + formula.replace('"', '""') + '"'
    sky = tmp_path / "vms.csv"
    sky.write_text("\n".join([SKY_HEADER, _sky_row("g6.xlarge"), _sky_row(quoted)]) + "\n")
    item = {
        "vCPU": 4,
        "memory": 16,
        "GPU": 1,
        "GPU_model": "L4",
        "pricing": {"us-east-1": {"linux": {"ondemand": "1"}}},
    }
    ec2 = tmp_path / "instances.json"
    ec2.write_text(json.dumps([{**item, "instance_type": "g6.xlarge"}, {**item, "instance_type": formula}]))
    for source in (sky, ec2):
        assert main(["prices", "import", str(source), "--out", str(tmp_path / "out.yaml")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"the name begins with {formula[0]!r}" in err
        assert not (tmp_path / "out.yaml").exists()


@pytest.mark.parametrize("field", ["id", "instance"])
def test_a_published_import_refuses_an_id_or_instance_named_like_a_formula(tmp_path, capsys, field):
    values = {
        "id": "mine",
        "model": "ResNet-50",
        "batch": "256",
        "precision": "fp16",
        "device": "H100",
        "count": "1",
        "throughput": "3000",
        "unit": "images/s",
        "citation": "a paper",
        "url": "https://example.org/v1",
        "table": "Table 1",
        "read": "2026-01-01",
        "instance": "p5.48xlarge",
    }
    values[field] = "=1+2"
    path = tmp_path / "figures.csv"
    path.write_text(",".join(values) + "\n" + ",".join(values.values()) + "\n")
    assert main(["published", "import", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the name begins with '='" in err
