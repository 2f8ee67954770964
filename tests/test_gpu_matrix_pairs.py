"""The GPU matrix's suite ÷ bare table: a ratio of medians over every process of each side, so that a
launch-bound pair (an H200's dcgan64 at amp spread ±10 % between processes) rests on more than one run."""

from __future__ import annotations

import json
import os
import sys

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import gpu_matrix_plan  # noqa: E402
import gpu_matrix_report  # noqa: E402

CONFIG = {"workload": "dcgan64", "precision": "amp", "batch_size": 256, "data": "synthetic", "tf32": False}


def write_json(path: str, value: dict) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        json.dump(value, handle)


def test_the_ratio_is_of_the_medians_of_every_process_a_side(tmp_path):
    work = str(tmp_path)
    for index, rate in enumerate((26155.0, 21853.0, 24000.0)):
        write_json(
            f"{work}/records/dcgan64-amp-{index}/r{index}.json",
            {"status": "ok", "config": CONFIG, "metrics": {"images_per_second": rate}},
        )
    write_json(  # a diagnose sub-run of the same settings is not one of the suite's runs
        f"{work}/records/diagnose/d.json",
        {"status": "ok", "origin": "diagnose", "config": CONFIG, "metrics": {"images_per_second": 1.0}},
    )
    for index, rate in enumerate((21575.0, 24422.0, 24359.0)):
        write_json(
            f"{work}/bench/bare-dcgan64-amp-{index}.json",
            {"kind": "bare_loop", **CONFIG, "images_per_second": rate},
        )
    path = str(tmp_path / "report.md")
    gpu_matrix_report.write(work, [], False, path, {"gpu": "NVIDIA H200", "instance": None, "commit": None})
    report = open(path).read()
    row = next(line for line in report.splitlines() if line.startswith("| dcgan64 | amp |"))
    assert "24000 (3 runs, 21853 … 26155)" in row and "24359 (3 runs, 21575 … 24422)" in row
    assert row.endswith(f"| {24000 / 24359:.3f} |")


def test_the_more_part_interleaves_two_more_suite_and_bare_dcgan64_amp_processes():
    names = [s.name for s in gpu_matrix_plan.plan("/d", "/r", "/r.md") if s.part == "more"]
    assert names[-4:] == ["dcgan64-amp-2", "bare-dcgan64-amp-2", "dcgan64-amp-3", "bare-dcgan64-amp-3"]


def test_the_plan_grows_windows_as_the_suite_does():
    from suite.measurement import window_length

    assert gpu_matrix_plan.WARMUP_MARGIN == window_length.WARMUP_MARGIN
