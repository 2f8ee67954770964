"""The GPU matrix (benchmarks/gpu_matrix.sh): its plan, and its whole dry run on the CPU, every step and the
report, so that the command meant for a GPU machine is known to work before one is available."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import time

import pytest
from conftest import ROOT, suite_env

sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import gpu_matrix_plan  # noqa: E402


def test_plan_is_three_parts_within_their_budget_and_every_step_has_a_cpu_stand_in_or_a_reason():
    steps = gpu_matrix_plan.plan("/d", "/r", "/r.md")
    names = [s.name for s in steps]
    assert len(names) == len(set(names))
    for part in (1, 2, 3):
        assert sum(s.estimate_s for s in steps if s.part == part) < 530
    for step in steps:
        assert step.cpu is not None or step.cpu_note, step.name
        assert (
            "cuda" in " ".join(step.gpu)
            or step.gpu[:2] in (["-m", "suite"], ["-m", "pytest"])
            or step.name == "nvidia-smi"
        )
    wanted = {
        f"{w}-{p}"
        for w in ("dcgan64", "dcgan64-safe", "dcgan128", "resnet50")
        for p in ("amp", "bf16", "fp32", "tf32")
    }
    assert wanted <= set(names)


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu-matrix")
    home = tmp_path_factory.mktemp("gpu-matrix-env")  # the cache and temporary folders, beside the output
    started = time.monotonic()
    done = subprocess.run(
        [os.path.join(ROOT, "benchmarks", "gpu_matrix.sh"), str(out), "--dry-run"],
        cwd=ROOT,
        env=suite_env(home, PYTHON=sys.executable),
        capture_output=True,
        text=True,
        timeout=600,
    )
    return out, done, time.monotonic() - started


@pytest.mark.slow
def test_dry_run_leaves_a_record_for_every_planned_step_and_a_report(dry_run):
    out, done, wall_s = dry_run
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    steps = gpu_matrix_plan.plan("", "", "")
    for step in steps:
        with open(os.path.join(out, "work", "steps", f"{step.name}.json")) as handle:
            result = json.load(handle)
        if step.cpu is None:
            assert result["status"] == "skipped" and result["reason"], step.name
            continue
        assert result["status"] == "ok", (step.name, result)
        if step.records:
            expected = (
                {"oom"} if step.expect == "oom" else {"ok", "oom"} if step.expect == "search" else {"ok"}
            )
            assert result["record_statuses"] and set(result["record_statuses"]) <= expected, (
                step.name,
                result,
            )
    assert sorted(os.listdir(out)) == [
        "part1.tar.gz",
        "part2.tar.gz",
        "part3.tar.gz",
        "report.md",
        "summary.log",
        "work",
    ]
    with tarfile.open(os.path.join(out, "part2.tar.gz")) as tar:
        assert "part2/steps/oom-resnet50-b4096.json" in tar.getnames()
    report = open(os.path.join(out, "report.md")).read()
    assert (
        "suite ÷ bare" in report
        and "| dcgan64 | fp32 | 2 |" in report
        and "no suite run to pair" not in report
    )
    assert "timm (huggingface/pytorch-image-models" in report
    assert "## suite report" in report and "p5.48xlarge" in report
    # suite commands and scripts were forked from one warm interpreter; pytest started fresh
    logs = os.path.join(out, "work", "logs")
    for name, forked in (("dcgan64-fp32", True), ("bare-dcgan64-fp32", True), ("pytest-gpu", False)):
        with open(os.path.join(logs, f"{name}.log")) as log:
            assert ("forked from an interpreter that has imported torch" in log.read()) is forked, name
    print(f"dry run: {wall_s:.0f} s")


@pytest.mark.slow
def test_budget_stops_a_part_cleanly_and_still_packs_it(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "benchmarks", "gpu_matrix.py"),
            str(tmp_path),
            "--dry-run",
            "--part",
            "1",
            "--budget",
            "21",  # 6 s for steps after the 15 s kept for packing: the first steps, not the part
        ],
        cwd=ROOT,
        env=suite_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stdout
    statuses = [
        json.load(open(os.path.join(tmp_path, "work", "steps", f))).get("status")
        for f in os.listdir(os.path.join(tmp_path, "work", "steps"))
    ]
    assert "not-run" in statuses and "ok" in statuses
    assert os.path.exists(os.path.join(tmp_path, "part1.tar.gz")) and os.path.exists(
        os.path.join(tmp_path, "report.md")
    )
