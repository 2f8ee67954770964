"""The project's published GPU records (results/gpu) keep reading and rendering: they are real measurements
on an H200, and every later change to the record's reader must still read them."""

from __future__ import annotations

import glob
import json
import os

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
