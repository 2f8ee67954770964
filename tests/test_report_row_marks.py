"""Rows a buyer can read right: runs that disagree beyond their noise are flagged, an ignored option's
warning does not split rows, `--instance` is given once, a partial `--per-device` is not "the whole
instance", a modified model is not the stock one, a mixed-catalog spot column marks only the assumed
prices, and each row carries its median's interval and run count (or says it has too few runs)."""

from __future__ import annotations

import csv
import io
import json

import pytest
from conftest import TINY_RUN
from test_compare import SEED, side

from suite import stats
from suite.cli import main
from suite.prices.catalog import load_catalog
from suite.reporting.render import render_markdown
from suite.rows import identity
from suite.rows.build import _measured_note, build_rows


def records(rates, prefix="a", **fields):
    return [rec for _, rec in side(rates, prefix, **fields)]


def test_the_median_interval_matches_the_binomial_order_statistics():
    # n = 6: min … max covers the median with 1 − 2·½⁶ = 0.96875; n = 5 cannot reach 95 %.
    assert stats.median_interval([5, 1, 4, 2, 6, 3]) == (1, 6, pytest.approx(0.96875))
    assert stats.median_interval([1, 2, 3, 4, 5]) is None
    # n = 10: k = 2 gives 1 − 2·(1 + 10)/1024 = 0.9785, k = 3 gives 0.891: x(2) … x(9).
    assert stats.median_interval(list(range(1, 11)))[:2] == (2, 9)


def test_each_row_carries_its_medians_interval_and_run_count_or_says_too_few():
    (row,) = build_rows(records([100, 101, 99, 102, 98, 100.5]), SEED)
    assert row["runs"] == 6
    assert (row["median_ci_low"], row["median_ci_high"]) == (98 * 3600, 102 * 3600)
    (few,) = build_rows(records([100, 101, 99]), SEED)
    assert few["median_ci_low"] is None
    assert "3 run(s): too few for a 95% interval of the median (6 needed" in " ".join(few["notes"])


def test_runs_that_disagree_beyond_their_noise_are_flagged_with_their_hosts():
    group = records([100, 101, 1000])
    for host, rec in zip(("a-host", "a-host", "b-host"), group):
        rec["context"]["host"] = host
    (row,) = build_rows(group, SEED)
    assert row["rates_disagree"]
    assert "RATES DISAGREE: runs range ×10 " in " ".join(row["notes"]) and "a-host, b-host" in " ".join(
        row["notes"]
    )
    (calm,) = build_rows(records([100, 110, 95]), SEED)
    assert not calm["rates_disagree"]


def test_an_ignored_options_warning_does_not_split_rows():
    a, b = records([100], "a")[0], records([100], "b")[0]
    b["data"]["ignored"] = "--workers 4 ignored: synthetic data has no loader"
    assert identity.row_key(a) == identity.row_key(b)


def test_instance_given_twice_is_refused(tmp_path, capsys):
    argv = [*TINY_RUN, "--instance", "p3.2xlarge", "--instance", "p3.8xlarge", "--out", str(tmp_path)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("suite: error: ") and "--instance" in err and "given twice" in err


def test_a_partial_per_device_run_is_not_the_whole_instance():
    assert (
        _measured_note(2, 4)
        == "not extrapolated: a --per-device row measured 2 of the instance's 4 devices at once"
    )
    assert "whole instance" in _measured_note(4, 4)


def test_a_model_override_row_is_labelled_as_modified():
    (row,) = build_rows(records([100, 101, 99], model_overrides={"ngf": 8}), SEED)
    assert row["model_run"] == "dcgan64 (modified: ngf=8)"


def v100(recs, instance):
    for rec in recs:
        rec["device"] = {"name": "Tesla V100-SXM2-16GB", "count": 1}
        rec["config"].update(backend="cuda", instance=instance)
    return recs


def test_a_mixed_catalog_report_marks_only_the_assumed_spot_prices():
    skypilot = load_catalog("skypilot-2025")
    seed_rows = v100(records([100, 101, 99], "a"), "p3.2xlarge")
    sky_rows = v100(records([100, 101, 99], "b"), "p3.2xlarge")
    for rec in sky_rows:
        rec["context"]["torch"] = "other"  # another row
    catalogs = {id(r): SEED for r in seed_rows} | {id(r): skypilot for r in sky_rows}
    rows = build_rows(seed_rows + sky_rows, SEED, catalog_for=lambda r: catalogs[id(r)])
    table = render_markdown(rows, [SEED, skypilot], 1_200_000, wide=True)
    header = table.splitlines()[0]
    assert "(assumed)" not in header
    body = [line for line in table.splitlines() if line.startswith(("| 1 ", "| 2 "))]
    assert len(body) == 2
    for row, line in zip(rows, body):
        assert ("(assumed)" in line) == (row["prices_catalog"] == "seed-2022"), line
    narrow = render_markdown(rows, [SEED, skypilot], 1_200_000)  # the default table: a mark on those rows
    body = [line for line in narrow.splitlines() if line.startswith(("| 1 ", "| 2 "))]
    for row, line in zip(rows, body):
        assert ("spot?" in line.rsplit("|", 2)[1]) == (row["prices_catalog"] == "seed-2022"), line
    assert "spot?: the spot price is assumed, not observed" in narrow


def test_a_report_priced_as_a_retired_instance_says_so_on_the_row_and_in_its_notes(tmp_path, capsys):
    from test_report import make_record, write_json

    # A V100 run recorded on p3.2xlarge (as old runs and seed reproductions were): priced, marked retired.
    write_json(tmp_path / "v100.json", make_record(3_600_000, instance="p3.2xlarge", run="v"))
    assert main(["report", str(tmp_path), "--wide"]) == 0
    table = capsys.readouterr().out
    (line,) = [text for text in table.splitlines() if text.startswith("| 1 ")]
    assert "| p3.2xlarge (retired) |" in line and "| 3.06 |" in line
    assert "RETIRED: p3.2xlarge is no longer rented (2025-12-20; AWS notice to migrate off P3" in table
    assert "price of p3.2xlarge as of 2025 (carried from the skypilot-2025 snapshot" in table
    assert main(["report", str(tmp_path)]) == 0  # the default table: a mark, and the notes below
    table = capsys.readouterr().out
    (line,) = [text for text in table.splitlines() if text.startswith("| 1 ")]
    assert "| p3.2xlarge |" in line and "| 3.06 |" in line and "| retired 1-4 |" in line
    assert "retired: the instance is no longer rented (its last listed price)" in table
    assert "3. RETIRED: p3.2xlarge is no longer rented (2025-12-20; AWS notice to migrate off P3" in table
    assert main(["report", str(tmp_path), "--format", "csv"]) == 0
    (row,) = csv.DictReader(io.StringIO(capsys.readouterr().out))
    assert (
        row["instance"] == "p3.2xlarge" and row["retired"] == "2025-12-20" and row["prices_as_of"] == "2025"
    )
    assert main(["report", str(tmp_path), "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["rows"]
    assert row["retired"] == "2025-12-20" and row["usd_per_hour"] == 3.06
    # A current instance is not marked, and its price is the catalog's own (date, source).
    write_json(tmp_path / "v100.json", make_record(3_600_000, instance="n1-standard-8+1xV100", run="v"))
    write_json(
        tmp_path / "h100.json",
        make_record(36_000_000, instance="p5.48xlarge", device="NVIDIA H100 80GB HBM3", run="h"),
    )
    assert main(["report", str(tmp_path), "--format", "json"]) == 0
    rows = {r["instance"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert rows["p5.48xlarge"]["retired"] is None and rows["p5.48xlarge"]["prices_as_of"] == "2026-07"
    assert not any("RETIRED" in note or "price of" in note for note in rows["p5.48xlarge"]["notes"])
    assert (
        rows["n1-standard-8+1xV100"]["retired"] is None
        and rows["n1-standard-8+1xV100"]["prices_as_of"] == "2025"
    )


@pytest.mark.parametrize(
    "device, instance, whole, usd_per_hour, priced_as",
    [
        # as torch names an H200: no 1-H200 instance, so an eighth of p5en.48xlarge (63.296 ÷ 8)
        ("NVIDIA H200", "p5en.48xlarge", 63.296, 7.912, "p5en.48xlarge"),
        # as torch names an H100 SXM: the catalog's 1-H100 instance, p5.4xlarge
        ("NVIDIA H100 80GB HBM3", "p5.48xlarge", 55.04, 6.88, "p5.4xlarge"),
    ],
)
def test_an_h100_or_h200_run_is_priced_per_accelerator_of_its_instance_not_hypothetically(
    device, instance, whole, usd_per_hour, priced_as
):
    from test_report import make_record

    from suite.prices.catalog import device_mismatch_warning

    record = make_record(7_200_000, instance=instance, device=device, used=1)
    (row,) = build_rows([record], load_catalog())
    assert row["device_matches_instance"] is True and row["hypothetical"] is False
    assert row["usd_per_hour"] == pytest.approx(usd_per_hour) and row["priced_as"] == priced_as
    assert row["usd_per_accelerator_hour"] == pytest.approx(whole / 8)
    assert row["images_per_usd"] == pytest.approx(7_200_000 / usd_per_hour)
    # the whole instance's figure beside it: what the run gives per $ if the other 7 sit idle
    assert row["instance_usd_per_hour"] == whole
    assert row["instance_images_per_usd"] == pytest.approx(7_200_000 / whole)
    assert any("if the other 7 sit idle" in note for note in row["notes"])
    assert not any("HYPOTHETICAL" in note or "not priced" in note for note in row["notes"])
    assert device_mismatch_warning(record) is None  # `suite run` does not warn either
    # An H200 run is not an H100 instance's: not priced unless asked.
    other = make_record(
        7_200_000, instance="p5.48xlarge" if "H200" in device else "p5en.48xlarge", device=device
    )
    (unpriced,) = build_rows([other], load_catalog())
    assert unpriced["usd_per_hour"] is None and unpriced["device_matches_instance"] is False
