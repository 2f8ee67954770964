"""The numerics ledger: every check's verdict is kept in the suite's cache folder under its configuration's
key, and `suite report` and `suite compare` consult it beside the records they are given, so a precision
that failed its check stays marked when its benchmark runs were written to another folder, until a later
check of it passes; a reduced precision that was never checked says so."""

from __future__ import annotations

import functools
import os

import pytest
from conftest import TINY_RUN, tiny_config
from test_compare import SEED, side
from test_numerics import BrokenPrecisions

from suite import cli
from suite.compare import comparison as compare
from suite.compare import significance as compare_stats
from suite.measurement import runner
from suite.numerics import check as numerics
from suite.numerics import keep
from suite.rows.build import build_rows
from suite.rows.numerics_mark import standing, under_failed_numerics
from suite.run_record import numerics_ledger


def runs(rates, prefix, **fields) -> list[tuple[str, dict]]:
    loaded = side(rates, prefix, **fields)
    for _, rec in loaded:
        rec["context"].update(torch="2.14.1", torchvision="0.29.1", suite_version="0.1.0")
    return loaded


def check(record: dict, verdict: str, utc: str) -> None:
    """A check of RECORD's configuration, kept in the ledger at time UTC."""
    path = numerics_ledger.remember(record, {"verdict": verdict, "reason": f"{verdict} on purpose"})
    with open(path, encoding="utf-8") as kept:  # an entry's time is when it was kept: set it to UTC
        text = kept.read()
    stamp = text.split('"checked_utc": "')[1].split('"')[0]
    with open(path, "w", encoding="utf-8") as out:
        out.write(text.replace(stamp, utc))


def test_the_key_holds_what_changes_the_arithmetic_and_not_what_only_times_it():
    (_, base), *_ = runs([100], "a", precision="bf16")
    same = [
        {"config": {**base["config"], "batch_size": 64, "threads": 1, "seed": 7, "data": "/images"}},
        {"context": {**base["context"], "utc_time": "2027-01-01T00:00:00Z", "host": "other"}},
        {"run_id": "another", "metrics": {"images_per_second": 5.0}},
    ]
    other = [
        {"config": {**base["config"], "precision": "fp32"}},
        {"config": {**base["config"], "model_overrides": {"ngf": 8}}},
        {"device": {**base["device"], "name": "Other CPU"}},
        {"context": {**base["context"], "torch": "2.15.0"}},
    ]
    for change in same:
        assert numerics_ledger.key({**base, **change}) == numerics_ledger.key(base), change
    for change in other:
        assert numerics_ledger.key({**base, **change}) != numerics_ledger.key(base), change


def test_a_check_made_once_marks_the_runs_written_to_another_folder_until_one_passes():
    base = runs([100, 101, 99], "a")
    cand = runs([120, 121, 119], "c", precision="bf16")  # benchmark runs, none of them checked
    check(cand[0][1], "fail", "2026-01-01T01:00:00.000000Z")
    (comparison,) = compare.compare(base, cand, by="precision")["comparisons"]
    assert comparison["metrics"]["images_per_second"]["verdict"] == compare_stats.TOO_FEW  # it was faster
    assert comparison["candidate"]["numerics"]["source"] == "ledger"
    assert any(
        "candidate: its latest numerics check FAILED (2026-01-01T01:00:00.000000Z, in the numerics ledger): "
        "fail on purpose" in note
        for note in comparison["notes"]
    )
    (row,) = build_rows([rec for _, rec in cand], SEED)  # the report consults the ledger alike
    assert row["status"] == "numerics failed" and row["images_per_hour"] is None
    check(cand[0][1], "inconclusive", "2026-01-01T02:00:00.000000Z")  # neither lifts nor sets a mark
    assert under_failed_numerics([rec for _, rec in cand])
    check(cand[0][1], "pass", "2026-01-01T03:00:00.000000Z")
    (comparison,) = compare.compare(base, cand, by="precision")["comparisons"]
    assert comparison["metrics"]["images_per_second"]["verdict"] == "faster"


def test_the_latest_check_decides_between_the_ledger_and_the_records():
    cand = runs([120, 121, 119], "c", precision="bf16")
    records = [rec for _, rec in cand]
    records[0]["context"]["utc_time"] = "2026-01-01T05:00:00Z"
    records[0]["numerics"] = {"verdict": "pass"}
    check(records[1], "fail", "2026-01-01T04:00:00.000000Z")  # older than the record's pass
    assert standing(records)["verdict"] == "pass"
    check(records[1], "fail", "2026-01-01T06:00:00.000000Z")  # newer
    assert standing(records)["verdict"] == "fail" and standing(records)["latest"]["source"] == "ledger"


def test_a_reduced_precision_never_checked_says_so_and_fp32_does_not():
    base = runs([100, 101, 99], "a")
    cand = runs([120, 121, 119], "c", precision="bf16")
    (comparison,) = compare.compare(base, cand, by="precision")["comparisons"]
    notes = " ".join(comparison["notes"])
    assert (
        "candidate: bf16: never checked for numerics (no check in these records or in the numerics ledger)"
        in notes
    )
    assert "baseline:" not in notes and comparison["candidate"]["numerics"]["verdict"] is None
    # The report's rows say it too, for the reduced precision only.
    bf16_row, fp32_row = sorted(
        build_rows([rec for _, rec in base + cand], SEED), key=lambda r: r["precision"]
    )
    assert not any("numerics" in note for note in fp32_row["notes"])
    assert any(note.startswith("bf16: never checked for numerics") for note in bf16_row["notes"])
    check(cand[0][1], "inconclusive", "2026-01-01T01:00:00.000000Z")
    (comparison,) = compare.compare(base, cand, by="precision")["comparisons"]
    assert any(
        "bf16: never passed a numerics check (1 check(s) inconclusive" in n for n in comparison["notes"]
    )
    (bf16_row,) = build_rows([rec for _, rec in cand], SEED)
    assert any(note.startswith("bf16: never passed a numerics check") for note in bf16_row["notes"])
    check(cand[0][1], "pass", "2026-01-01T02:00:00.000000Z")
    (bf16_row,) = build_rows([rec for _, rec in cand], SEED)
    assert not any("numerics" in note for note in bf16_row["notes"])
    tf32 = runs([100, 101, 99], "t", tf32=True)
    assert standing([rec for _, rec in tf32])["reduced_precision"] == "fp32 with TF32"


def test_an_entry_that_is_not_one_is_passed_over_and_the_cache_folder_is_the_suites(tmp_path, monkeypatch):
    (_, rec), *_ = runs([100], "a", precision="bf16")
    check(rec, "fail", "2026-01-01T01:00:00.000000Z")
    where = os.path.join(numerics_ledger.folder(), numerics_ledger.key(rec))
    for name, text in (
        ("z-junk.json", "{not json"),
        ("z-list.json", "[1, 2]"),
        ("z-other.json", '{"verdict": "pass"}'),
    ):
        with open(os.path.join(where, name), "w", encoding="utf-8") as out:
            out.write(text)
    os.mkfifo(os.path.join(where, "z-fifo.json"))  # never waited on
    assert [e["verdict"] for e in numerics_ledger.checks(rec)] == ["fail"]
    monkeypatch.setenv("SUITE_CACHE_DIR", str(tmp_path / "cache"))
    assert numerics_ledger.cache_folder() == str(tmp_path / "cache")


def test_a_run_that_checks_keeps_its_verdict_under_the_key_its_record_is_read_by():
    plan = runner.plan_run(tiny_config("dcgan64", precision="bf16", check_numerics=True))
    record = runner.execute(plan)
    assert record["numerics"]["verdict"] == "pass"
    (entry,) = numerics_ledger.checks(record)  # the written record's own fields find the check's entry
    assert entry["verdict"] == "pass" and os.path.isfile(record["numerics"]["ledger"])
    assert numerics_ledger.key(keep.as_recorded(plan)) == numerics_ledger.key(record)
    assert standing([record])["checks"] == 1  # the record's check and its ledger copy are one check


def test_a_ledger_that_cannot_be_written_loses_nothing_but_the_entry(monkeypatch, tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setattr(numerics_ledger, "folder", lambda: str(blocked / "numerics"))
    plan = runner.plan_run(tiny_config("dcgan64", precision="bf16", check_numerics=True))
    result = {"verdict": "pass"}
    keep.keep(plan, result)
    assert result["verdict"] == "pass" and result["ledger"] is None
    assert result["ledger_error"].startswith("not kept in the numerics ledger: ")


@pytest.mark.slow  # five tiny runs and two checks in this process: seconds
def test_check_once_then_benchmark_into_another_folder_and_compare(tmp_path, capsys, monkeypatch):
    # The usual flow: one run checks bf16, later runs benchmark it into other folders, compare reads those.
    broken = functools.partial(numerics.check, backend_factory=lambda name, config: FrozenBf16(config))
    with monkeypatch.context() as patched:
        patched.setattr(numerics, "check", broken)
        argv = [*TINY_RUN, "--precision", "bf16", "--check-numerics", "--out", str(tmp_path / "check")]
        assert cli.main(argv) == 0
    for _ in range(3):
        assert cli.main([*TINY_RUN, "--precision", "bf16", "--out", str(tmp_path / "bf16")]) == 0
        assert cli.main([*TINY_RUN, "--precision", "fp32", "--out", str(tmp_path / "fp32")]) == 0
    capsys.readouterr()
    folders = [str(tmp_path / "fp32"), str(tmp_path / "bf16"), "--by", "precision"]
    assert cli.main(["compare", *folders, "--fail-on", "slower", "--min-change", "5%"]) == 4
    out = capsys.readouterr().out
    assert "**too few runs**" in out and "candidate: its latest numerics check FAILED (" in out
    assert "in the numerics ledger): " in out
    assert cli.main(["report", str(tmp_path / "bf16")]) == 0
    assert "NUMERICS FAILED" in capsys.readouterr().out


class FrozenBf16(BrokenPrecisions):
    """The CPU's bf16 whose convolutions never train (the `frozen` precision under bf16's name)."""

    def __init__(self, config):
        super().__init__(config)
        if self.precision == "bf16":
            self.precision = "frozen"
