"""`suite published import` takes a row only when it gives one value for each column of the header: a row
with more values (the extra were dropped) or fewer (the last columns read as "not stated"), or a header
naming a column twice (the first value lost), is refused in one line naming the file and the row."""

from __future__ import annotations

import pytest

from suite.cli import main

COLUMNS = "id,model,batch,precision,device,count,throughput,unit,citation,url,table,read,caveat"
ROW = "mine,ResNet-50,256,fp16,H100,1,3000,images/s,a paper,https://example.org/v1,Table 1,2026-01-01,none"


def _import(tmp_path, capsys, lines: list[str]) -> tuple[int, str, str]:
    path = tmp_path / "figures.csv"
    path.write_text("\n".join(lines) + "\n")
    code = main(["published", "import", str(path), "--out", str(tmp_path / "figures.yaml")])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_row_in_line_with_its_header_is_imported(tmp_path, capsys):
    code, _, err = _import(tmp_path, capsys, [COLUMNS, ROW])
    assert code == 0 and "1 published figure(s) imported" in err


@pytest.mark.parametrize(
    "row, given",
    [
        (ROW + ",3500", 14),  # a value past the last column: dropped
        (ROW + ",3500,x", 15),
        (ROW.rsplit(",", 1)[0], 12),  # the caveat missing: read as "not stated"
    ],
)
def test_a_row_with_more_or_fewer_values_than_the_header_is_one_line(tmp_path, capsys, row, given):
    code, _, err = _import(tmp_path, capsys, [COLUMNS, ROW.replace("mine", "first"), row])
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert f"line 3: {given} value(s) for the header's 13 columns" in err
    assert not (tmp_path / "figures.yaml").exists()


def test_a_header_naming_a_column_twice_is_one_line(tmp_path, capsys):
    code, _, err = _import(tmp_path, capsys, [COLUMNS + ",caveat", ROW + ",also"])
    assert code == 2 and err.count("\n") == 1 and "the header names column 'caveat' twice" in err
