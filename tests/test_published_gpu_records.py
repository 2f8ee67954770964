"""The project's published GPU records (results/gpu) keep reading and rendering: they are real measurements
on an H200, and every later change to the record's reader must still read them."""

from __future__ import annotations

import csv
import glob
import io
import json
import os

import pytest
from conftest import ROOT

from suite import cli
from suite.run_record import check_record

GPU_RECORDS = os.path.join(ROOT, "results", "gpu")


def test_every_published_gpu_record_passes_the_schema():
    paths = sorted(glob.glob(os.path.join(GPU_RECORDS, "*.json")))
    assert len(paths) == 20
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            check_record(json.load(handle))


def test_the_report_of_the_published_gpu_records_holds_the_readmes_figures(capsys):
    assert cli.main(["report", GPU_RECORDS, "--format", "md"]) == 0
    out = capsys.readouterr().out
    for figure in (
        "2,919",
        "5,729",
        "1,064",
        "30,525",
        "11,209",
        "OOM",
        "1 diverged run(s) not in the median",
        "p5en.48xlarge",
    ):
        assert figure in out, figure


SECOND_LEASE = os.path.join(ROOT, "results", "gpu-2026-11-27")


def test_the_second_leases_records_pass_the_schema_and_its_report_holds_the_readmes_figures(capsys):
    paths = sorted(glob.glob(os.path.join(SECOND_LEASE, "*.json")))
    assert len(paths) == 17
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            check_record(json.load(handle))
    assert cli.main(["report", SECOND_LEASE, "--format", "md"]) == 0
    out = capsys.readouterr().out
    # gpt2-small's row in tokens, priced per million tokens for the one H200 of eight it used ($63.296 ÷ 8 an
    # hour: the whole instance's $0.0737 and $0.0202, ÷ 8); image figures of the README's second table
    for figure in ("238,654", "0.00921", "0.00252", "16 × 1,024", "2,995", "5,684", "29,383", "OOM"):
        assert figure in out, figure
    assert cli.main(["report", SECOND_LEASE, "--format", "csv"]) == 0
    (tokens,) = [r for r in csv.DictReader(io.StringIO(capsys.readouterr().out)) if r["unit"] == "tokens"]
    assert float(tokens["instance_tokens_per_usd"]) * 8 == pytest.approx(float(tokens["tokens_per_usd"]))
