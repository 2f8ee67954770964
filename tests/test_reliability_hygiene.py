"""Terminal and size hygiene: what came from a person or a file is printed with its control characters
escaped (the one `printable`), a value quoted in a message is cut to a bounded length with its full length
said (the one `errors.shown`), an import says what it ignores, and an imported date is a real, plausible
calendar date in ASCII digits. Bad input exits 2 with one line, no traceback."""

from __future__ import annotations

import datetime
import json

import pytest
import yaml

from suite import run_record
from suite.cli import main
from suite.inputs import errors
from suite.inputs.errors import UserError
from suite.prices.dates import calendar_date, parse_price_date
from suite.prices.importer import ImportRequest, import_file

ESC = "\x1b[2J\x1b[31m"
LONG = "x" * 100_000


def one_clean_line(err: str) -> str:
    line = err.strip()
    assert "\n" not in line and "\x1b" not in line and "Traceback" not in line
    return line


# -- every printed message passes through printable and a length bound --------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--instance", LONG],
        ["run", "--instance", "a" + ESC + "b"],
        ["run", "--steps", ESC],
        ["run", "--backend", LONG],
    ],
)
def test_a_bad_argument_is_one_escaped_bounded_line(argv, capsys):
    assert main(argv) == 2
    line = one_clean_line(capsys.readouterr().err)
    assert line.startswith("suite: error: ") and len(line) < 600
    if LONG in argv:
        assert "(100,000 characters)" in line


def test_shown_cuts_a_long_value_and_says_its_length():
    assert errors.shown(LONG) == repr("x" * 80) + "… (100,000 characters)"
    assert errors.shown("a\x1bb") == "'a\\x1bb'"
    assert errors.shown(7) == "7"


def test_for_terminal_escapes_controls_and_cuts_long_runs_and_long_messages():
    assert "\x1b" not in errors.for_terminal("id " + ESC) and "\\x1b[2J" in errors.for_terminal(ESC)
    assert errors.for_terminal("a\nb\u202ec") == "a\\nb\\u202ec"  # no forged second line, no reversed text
    cut = errors.for_terminal("name " + "y" * 5_000)
    assert cut.endswith("… (5,000 characters)") and len(cut) < 200
    assert len(errors.for_terminal("word " * 10_000)) < errors.MESSAGE_LENGTH + 40


def test_a_record_field_name_with_an_escape_is_escaped_in_the_skip_warning(tmp_path, capsys):
    record = json.loads(json.dumps(run_record.new_record("r", {"utc_time": "2026-01-01T00:00:00Z"}, {})))
    record.update(status="ok", device={"name": "cpu", "count": 1})
    record["config"] = {"workload": "dcgan64", "backend": "cpu", "batch_size": 2, "model_overrides": {ESC: 1}}
    record["metrics"] = {"images_per_second": 1.0, "images_per_hour": 3600.0, "window_time_s": [1.0]}
    (tmp_path / "bad.json").write_text(json.dumps(record))
    main(["report", str(tmp_path)])
    err = capsys.readouterr().err
    assert "skipped" in err and "\x1b" not in err and "\\x1b[2J" in err


# -- published figures: ids and texts, and the read date ---------------------------------------------------

GOOD = {
    "model": "resnet50",
    "batch": 256,
    "precision": "amp",
    "device": "NVIDIA V100 16GB",
    "count": 1,
    "throughput": 1000,
    "unit": "images/s",
    "source": {"citation": "A test table", "url": None, "table": "Table 1", "read": "2025-11-20"},
}


def write_figures(path, entries) -> str:
    path.write_text(yaml.safe_dump({"name": "mine", "figures": entries}, allow_unicode=True))
    return str(path)


@pytest.mark.parametrize(
    "entries, says",
    [
        ({"mine" + ESC: GOOD}, "without control characters"),
        ({"i" * 5_000: GOOD}, "(5,000 characters)"),
        ({"ok": {**GOOD, "device": "V100" + ESC}}, "without control characters"),
        ({"ok": {**GOOD, "source": {**GOOD["source"], "read": "2025-02-30"}}}, "calendar date"),
        ({"ok": {**GOOD, "source": {**GOOD["source"], "read": "2999-01-01"}}}, "year 2999"),
        ({"ok": {**GOOD, "source": {**GOOD["source"], "read": "\uff12\uff10\uff12\uff15-01-01"}}}, "ASCII"),
        ({"ok": {**GOOD, "source": {**GOOD["source"], "read": "1970-01-01"}}}, "year 1970"),
    ],
)
def test_a_bad_published_file_exits_2_with_one_escaped_line(tmp_path, capsys, entries, says):
    path = write_figures(tmp_path / "mine.yaml", entries)
    assert main(["report", str(tmp_path), "--published-from", path]) == 2
    line = one_clean_line(capsys.readouterr().err)
    assert line.startswith("suite: error: ") and says in line and len(line) < 800


def test_a_good_read_date_is_kept_and_yaml_dates_are_taken_as_written():
    assert calendar_date("2024-02-29", "read") == "2024-02-29"
    assert calendar_date(datetime.date(2025, 1, 2), "read") == "2025-01-02"
    next_year = datetime.date.today().year + 1
    assert calendar_date(f"{next_year}-01-01", "read") == f"{next_year}-01-01"


def test_a_published_csv_import_names_the_columns_it_ignores(tmp_path, capsys):
    from suite.reporting.published.csv_import import import_csv

    path = tmp_path / "mine.csv"
    header = "id,model,batch,precision,device,count,throughput,unit,citation,url,table,read,notes,extra" + ESC
    path.write_text(header + "\nf1,resnet50,256,amp,V100,1,1000,images/s,A table,,Table 1,2025-01-01,n,e\n")
    assert "f1" in import_csv(str(path))["figures"]
    err = one_clean_line(capsys.readouterr().err)
    assert "2 column(s) ignored" in err and "'notes'" in err and "\\x1b" in err


# -- price imports: unknown columns said, dates real -------------------------------------------------------

SKY_CSV = (
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,"
    "AvailabilityZone,{extra}\n"
    "g6.xlarge,L4,1.0,4.0,16.0,,0.8048,0.36,us-east-1,use1-az1,{cells}\n"
)


def test_a_price_import_names_the_columns_it_ignores_capped(tmp_path, capsys):
    path = tmp_path / "vms.csv"
    extra = [f"Col{i}" for i in range(25)]
    path.write_text(SKY_CSV.format(extra=",".join(extra), cells=",".join("1" for _ in extra)))
    catalog, _ = import_file(str(path), ImportRequest(region="us-east-1"))
    assert "g6.xlarge" in catalog["instances"]
    err = one_clean_line(capsys.readouterr().err)
    assert "25 column(s) ignored" in err and "'Col0'" in err and "'Col9'" in err and "'Col10'" not in err
    assert "and 15 more" in err


def test_a_price_import_with_only_known_columns_says_nothing(tmp_path, capsys):
    path = tmp_path / "vms.csv"
    path.write_text(SKY_CSV.format(extra="", cells="").replace(",\n", "\n"))
    import_file(str(path), ImportRequest(region="us-east-1"))
    assert "ignored" not in capsys.readouterr().err


@pytest.mark.parametrize(
    "as_of", ["2025-02-30", "2999-01-01", "\uff12\uff10\uff12\uff15-01-01", "2025-13", "1999", "x" * 100_000]
)
def test_a_price_date_is_a_real_plausible_ascii_date(as_of):
    with pytest.raises(UserError) as caught:
        parse_price_date(as_of, "--as-of")
    message = str(caught.value)
    assert "\n" not in message and len(message) < 400


def test_prices_import_with_a_long_bad_as_of_exits_2_with_one_bounded_line(tmp_path, capsys):
    path = tmp_path / "vms.csv"
    path.write_text(SKY_CSV.format(extra="", cells="").replace(",\n", "\n"))
    assert main(["prices", "import", str(path), "--as-of", "9" * 100_000 + ESC]) == 2
    line = one_clean_line(capsys.readouterr().err)
    assert "(100,00" in line and len(line) < 600
