"""Records are read through one typed schema (`run_record.check_record`): a record whose fields the
reporters cannot use is skipped with one line naming the file and the field, and the good rows still
print; text from a record reaches a terminal, markdown or CSV only with its control characters escaped."""

from __future__ import annotations

import json

import pytest
from test_reliability_inputs import good_record

from suite import run_record
from suite.cli import main


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


# (name, the bad record as JSON text, the words its one warning holds)
def _text(**change) -> str:
    record = good_record("bad")
    for path, value in change.items():
        section, _, field = path.partition("__")
        if field:
            record.setdefault(section, {})[field] = value
        else:
            record[section] = value
    return json.dumps(record)


HOSTILE = [
    ("numerics-text", _text(numerics="fail"), "field numerics:"),
    ("workload-list", _text(workload=["dcgan64"]), "field workload:"),
    ("per-device-negative", _text(config__per_device=-3), "field config.per_device:"),
    ("per-device-text", _text(config__per_device="x"), "field config.per_device:"),
    ("per-device-huge", _text(config__per_device=10**30), "field config.per_device:"),
    ("num-classes-list", _text(config__num_classes=[10]), "field config.num_classes:"),
    ("setting-nested", _text(config__hpu_mode={"a": [1]}), "field config.hpu_mode:"),
    ("run-id-escape", _text(run_id="r1\n\x1b[2J\x1b[31mred"), "field run_id:"),
    ("device-escape", _text(device__name="cpu\x1b]0;title\x07"), "field device.name:"),
    ("run-id-bidi", _text(run_id="abc\u202edcba"), "field run_id:"),
    ("run-id-long", _text(run_id="r" * 10_000), "field run_id:"),
    ("warning-number", _text(warnings=["ok", 3]), "field warnings[1]:"),
    ("group-text", _text(group="g1"), "field group:"),
    ("sweep-point-list", _text(sweep_point={"batch_size": [1, 2]}), "field sweep_point.batch_size:"),
    ("zero-rate", _text(metrics={"images_per_second": 0.0, "images_per_hour": 0.0}), "images_per_"),
    (
        "load-text",
        _text(context={"load": {"load_average_1m": "high"}}),
        "field context.load.load_average_1m:",
    ),
    ("peak-memory-text", _text(memory__peak_memory_bytes="1 GB"), "field memory.peak_memory_bytes:"),
    ("diagnosis-suggestions", _text(diagnosis__suggestions="more workers"), "field diagnosis.suggestions:"),
    ("long-integer", '{"schema": "suite.run", "schema_version": 1, "x": ' + "9" * 5000 + "}", "not a record"),
    ("deep-json", '{"schema": "suite.run", "schema_version": 1, "x": ' + nested(5000) + "}", "too deeply"),
    ("deep-record", _text(telemetry={"x": json.loads(nested(100))}), "nested at most"),
]


@pytest.mark.parametrize("fmt", ["md", "csv", "json"])
@pytest.mark.parametrize("name,text,words", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_a_record_that_breaks_the_schema_is_skipped_by_name_and_the_rest_reported(
    tmp_path, capsys, name, text, words, fmt
):
    for i in range(3):
        run_record.write_record(good_record(f"good{i}"), str(tmp_path))
    (tmp_path / "bad.json").write_text(text)
    assert main(["report", str(tmp_path), "--format", fmt]) == 0
    captured = capsys.readouterr()
    assert "good0" in captured.out and "MEASURED on -3" not in captured.out
    warnings = [line for line in captured.err.splitlines() if "bad.json" in line]
    assert len(warnings) == 1 and words in warnings[0], captured.err
    assert "\x1b" not in captured.out + captured.err


@pytest.mark.parametrize("name,text,words", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_compare_skips_the_same_records_by_name(tmp_path, capsys, name, text, words):
    for side in ("a", "b"):
        for i in range(3):
            run_record.write_record(good_record(f"{side}{i}"), str(tmp_path / side))
    (tmp_path / "b" / "bad.json").write_text(text)
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    captured = capsys.readouterr()
    assert "undecided" in captured.out or "no change" in captured.out
    warnings = [line for line in captured.err.splitlines() if "bad.json" in line]
    assert len(warnings) == 1 and words in warnings[0], captured.err


def test_the_schema_covers_what_the_reporters_read():
    # every top-level section a reporter reads as a mapping is checked as one
    for section in ("config", "device", "data", "metrics", "error", "diagnosis", "numerics", "workload"):
        for section_value in ("text", ["list"], 3):
            record = good_record()
            record[section] = section_value
            with pytest.raises(run_record.BadRecord, match=f"field {section}:"):
                run_record.check_record(record)


# -- text from a record is escaped on its way out --------------------------------------------------------

HOSTILE_TEXT = "fine\x1b[2J\x1b[31m red\rover\x07 | pipe\nnext\u202eevil"


@pytest.mark.parametrize("fmt", ["md", "csv"])
def test_free_text_from_a_record_is_escaped_in_report_output(tmp_path, capsys, fmt):
    record = good_record("good")
    record["warnings"] = [HOSTILE_TEXT]
    run_record.write_record(record, str(tmp_path))
    assert main(["report", str(tmp_path), "--format", fmt]) == 0
    out = capsys.readouterr().out
    for raw in ("\x1b", "\r", "\x07", "\u202e", "\nnext"):
        assert raw not in out, repr(raw)
    assert "\\x1b[2J" in out and "fine" in out


@pytest.mark.parametrize("fmt", ["md", "csv"])
def test_compare_escapes_text_from_records(tmp_path, capsys, monkeypatch, fmt):
    from suite.compare import comparison as compare

    for side in ("a", "b"):
        for i in range(3):
            run_record.write_record(good_record(f"{side}{i}"), str(tmp_path / side))
    real = compare.describe
    monkeypatch.setattr(compare, "describe", lambda *a: real(*a) + HOSTILE_TEXT)  # as if a record said so
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--format", fmt]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out and "\\x1b[2J" in out


def test_a_file_name_with_escapes_is_named_escaped(tmp_path, capsys):
    run_record.write_record(good_record("good"), str(tmp_path))
    (tmp_path / "evil\x1b[31m.json").write_text("{}")
    assert main(["report", str(tmp_path), "--format", "csv"]) == 0
    err = capsys.readouterr().err
    assert "\x1b" not in err and "evil\\x1b[31m.json" in err


def test_printable_escapes_every_control_character_and_keeps_what_is_asked():
    assert run_record.printable("a\x00b\x9bc\u2028d") == "a\\x00b\\x9bc\\u2028d"
    assert run_record.printable("line\nnext\t", keep="\n") == "line\nnext\\t"
    assert run_record.printable("ünïcödé ✓") == "ünïcödé ✓"


@pytest.mark.parametrize(
    "partial",
    [{"numerics": {"reason": "no verdict"}}, {"diagnosis": {"message": "m"}}, {"group": {"id": "g"}}],
    ids=["numerics", "diagnosis", "group"],
)
def test_a_section_without_its_optional_fields_is_reported(tmp_path, capsys, partial):
    record = good_record("partial")
    record.update(partial)
    run_record.write_record(record, str(tmp_path))
    assert main(["report", str(tmp_path), "--format", "md", "--wide"]) == 0
    assert "partial" in capsys.readouterr().out
