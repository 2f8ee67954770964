"""The GPU matrix (benchmarks/gpu_matrix.sh): its plan, and its whole dry run on the CPU, every step and the
report, so that the command meant for a GPU machine is known to work before one is available."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import tarfile
import time
import venv

import pytest
from conftest import ROOT, SAFETY_NET_S, suite_env
from held_runs import hold_env

sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import gpu_matrix_plan  # noqa: E402

from suite.prices.catalog import find_instance  # noqa: E402

SCRIPT = os.path.join(ROOT, "benchmarks", "gpu_matrix.sh")
HAS_TIMM = importlib.util.find_spec("timm") is not None


def total(steps, part: str) -> float:
    return sum(s.estimate_s() for s in steps if s.part in (part, "every"))


def test_the_quick_part_fits_a_lease_and_every_step_has_a_cpu_stand_in_or_a_reason():
    steps = gpu_matrix_plan.plan("/d", "/r", "/r.md")
    names = [s.name for s in steps]
    assert len(names) == len(set(names)) and names[-1] == "report"
    assert total(steps, "quick") <= 360 and total(steps, "more") <= 240  # H100 seconds, the report included
    for step in steps:
        assert step.part in (*gpu_matrix_plan.PARTS, "every")
        assert step.cpu is not None or step.cpu_note, step.name
        assert step.needs_step in ("", *names)
    quick = [s.name for s in steps if s.part == "quick"]
    # the README's cuda row: both workloads at the three precisions, their bare loops, the peer, the OOM
    for name in ("dcgan64-amp", "resnet50-amp", "dcgan64-bf16", "resnet50-fp32", "bare-dcgan64-amp"):
        assert name in quick
    assert quick.index("resnet50-amp") < quick.index("dcgan64-fp32") < quick.index("pytest-gpu")
    every = {
        f"{w}-{p}"
        for w in ("dcgan64", "dcgan64-safe", "dcgan128", "resnet50")
        for p in ("bf16", "fp32", "tf32")
    }
    assert every <= set(names)


@pytest.mark.parametrize(
    "gpu, instance",
    [
        ("NVIDIA H100 80GB HBM3", "p5.48xlarge"),
        ("NVIDIA H200", "p5en.48xlarge"),
        ("NVIDIA A100-SXM4-80GB", "p4de.24xlarge"),
        ("NVIDIA A100-SXM4-40GB", "p4d.24xlarge"),
        ("NVIDIA L40S", "g6e.xlarge"),
        ("NVIDIA L4", "g6.xlarge"),
        ("Tesla T4", "g4dn.xlarge"),
        ("NVIDIA H100 PCIe", None),
        ("NVIDIA H200 NVL", None),
        ("NVIDIA GeForce RTX 4090", None),
    ],
)
def test_the_gpu_found_chooses_the_instance_runs_are_priced_as(gpu, instance):
    assert gpu_matrix_plan.instance_for(gpu) == instance
    steps = gpu_matrix_plan.plan("/d", "/r", "/r.md", gpu)
    runs = [s.gpu for s in steps if s.gpu[:4] == ["-m", "suite", "run", "--backend"]]
    assert runs and all(
        (["--instance", instance] == r[7:9]) if instance else "--instance" not in r for r in runs
    )


def test_every_instance_the_matrix_prices_as_is_in_a_shipped_catalog_with_its_gpu():
    for pattern, instance in gpu_matrix_plan.INSTANCES:
        if instance:
            found, _ = find_instance(instance)
            assert re.search(pattern, found.accelerator, flags=re.IGNORECASE), (instance, found.accelerator)


def run_matrix(out, *args, home, timeout=SAFETY_NET_S, **env):
    return subprocess.run(
        [SCRIPT, str(out), *args],
        cwd=ROOT,
        env=suite_env(home, **{"PYTHON": sys.executable, **env}),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def step_result(out, name):
    with open(os.path.join(out, "work", "steps", f"{name}.json")) as handle:
        return json.load(handle)


# Steps the dry run below leaves out: each starts nine or ten fresh processes (two thirds of the dry run's
# time), and each command has its own end-to-end test (tests/test_diagnose_run.py, tests/test_batch_size.py);
# their stand-ins are parsed by the suite's own parser here instead.
HEAVY = ("diagnose-folder", "batch-size-resnet50")


def test_the_heavy_steps_left_out_of_the_dry_run_test_parse_as_suite_commands(tmp_path):
    from suite.cli import build_parser, join_dash_values

    steps = {s.name: s for s in gpu_matrix_plan.plan(str(tmp_path), str(tmp_path), "r.md", "NVIDIA H200")}
    for name in HEAVY:
        argv = join_dash_values(steps[name].cpu[2:])  # after `-m suite`
        args = build_parser(argv).parse_args(argv)
        assert args.command == argv[0] and args.backend == "cpu", name
    assert build_parser(["batch-size"]).parse_args(steps[HEAVY[1]].cpu[2:]).try_timeout >= 600


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    """Every part but HEAVY, planned for an H200; then `--only` one step into the same folders."""
    out = tmp_path_factory.mktemp("gpu-matrix")
    home = tmp_path_factory.mktemp("gpu-matrix-env")  # the cache and temporary folders, beside the output
    started = time.monotonic()
    skip = ("--skip", ",".join(HEAVY))
    whole = run_matrix(out, "--dry-run", "--part", "all", *skip, "--as-gpu", "NVIDIA H200", home=home)
    wall_s = time.monotonic() - started
    first = step_result(out, "dcgan64-fp32") if whole.returncode == 0 else None
    with open(os.path.join(out, "report.md")) as handle:
        report_before = handle.read()
    only = run_matrix(out, "--dry-run", "--only", "dcgan64-fp32", "--as-gpu", "NVIDIA H200", home=home)
    return out, whole, only, first, report_before, wall_s


@pytest.mark.slow
@pytest.mark.timm  # runs without timm too, skipping its steps; again with it, running them
def test_dry_run_leaves_a_record_for_every_planned_step_and_a_report_priced_for_the_gpu(dry_run):
    out, done, _, _, report, wall_s = dry_run
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for step in gpu_matrix_plan.plan("", "", "", "NVIDIA H200"):
        if step.part not in (*gpu_matrix_plan.ALL, "every"):
            continue  # a part of its own (tune), not in --part all: its dry run is its own test
        result = step_result(out, step.name)
        if step.name in HEAVY:
            assert result["status"] == "skipped" and result["reason"] == "left out by --skip", result
            continue
        if step.cpu is None or (step.needs_module == "timm" and not HAS_TIMM):
            assert result["status"] == "skipped" and result["reason"], step.name
            assert step.cpu is None or "needs the Python package 'timm'" in result["reason"]
            continue
        assert result["status"] == "ok", (step.name, result)
        assert result["instance"] == "p5en.48xlarge" and result["commit"], step.name
        if step.records:
            expected = (
                {"oom"} if step.expect == "oom" else {"ok", "oom"} if step.expect == "search" else {"ok"}
            )
            assert result["record_statuses"] and set(result["record_statuses"]) <= expected, (
                step.name,
                result,
            )
    assert sorted(os.listdir(out)) == ["matrix.tar.gz", "report.md", "summary.log", "work"]
    assert (
        "suite ÷ bare" in report
        and "| dcgan64 | fp32 | 2 |" in report
        and "no suite run to pair" not in report
    )
    assert ("timm (huggingface/pytorch-image-models" in report) is HAS_TIMM
    assert "## suite report (every record so far; 1 GPU of p5en.48xlarge)" in report
    suite_report = report.split("## suite report")[1]
    assert "p5en.48xlarge" in suite_report and "p5.48xlarge" not in suite_report
    with open(os.path.join(out, "summary.log")) as handle:
        log = handle.read()
    assert "priced as p5en.48xlarge" in log and "total estimate" in log
    # suite commands and scripts were forked from one warm interpreter; pytest started fresh
    for name, forked in (("dcgan64-fp32", True), ("bare-dcgan64-fp32", True), ("pytest-gpu", False)):
        with open(os.path.join(out, "work", "logs", f"{name}.log")) as log:
            assert ("forked from an interpreter that has imported torch" in log.read()) is forked, name
    print(f"dry run: {wall_s:.0f} s")


@pytest.mark.slow
@pytest.mark.timm
def test_only_reruns_the_named_step_and_the_report_keeps_the_earlier_commands_steps(dry_run):
    out, _, only, first, _, _ = dry_run
    assert only.returncode == 0, only.stdout[-3000:] + only.stderr[-3000:]
    again = step_result(out, "dcgan64-fp32")
    assert again["command"] == "only" and first["command"] == "all" and again["argv"] == first["argv"]
    assert step_result(out, "resnet50-bf16")["command"] == "all"  # the earlier command's, kept
    assert "[quick] resnet50-bf16" not in only.stdout and "[quick] dcgan64-fp32: ok" in only.stdout
    with open(os.path.join(out, "report.md")) as handle:
        report = handle.read()
    assert "| quick | resnet50-bf16 | ok |" in report and "| quick | dcgan64-fp32 | ok |" in report
    with tarfile.open(os.path.join(out, "matrix.tar.gz")) as tar:
        names = tar.getnames()
    assert "matrix/steps/resnet50-bf16.json" in names and "matrix/steps/dcgan64-fp32.json" in names


@pytest.mark.slow
def test_budget_stops_the_command_cleanly_and_still_packs_and_reports(tmp_path):
    # The second `suite run` step holds until the budget's deadline cuts it short (tests/faults: it waits
    # for a release that never comes), so the budget is reached on a fast host as on a busy one; the dry
    # run's forked steps take a fraction of a second each, and ran the whole quick part inside a 45 s budget.
    held_env, _ = hold_env(tmp_path, at=2)  # suite_env(tmp_path) with the hold: run_matrix's own base
    # a budget of 30 s: 10 s for the steps, 20 s kept back for the report and the archive
    done = run_matrix(tmp_path, "--dry-run", "--budget", "30", home=tmp_path, **held_env)
    assert done.returncode == 1, done.stdout
    # each step's last line in the log, in the plan's order: "[part] NAME: STATUS ..."
    ended = re.findall(
        r"^\[\w+\] (\S+): (ok|skipped|not-run|timeout|failed|interrupted)\b", done.stdout, re.M
    )
    order = [name for name, _ in ended]
    statuses = dict(ended)
    assert statuses == {
        n[:-5]: step_result(tmp_path, n[:-5])["status"] for n in os.listdir(tmp_path / "work" / "steps")
    }
    held = order.index("resnet50-bf16")  # the plan's second suite run, after dcgan64-bf16
    # the held step was cut short (or, on a host so busy that the budget ran out before it, never started),
    # and nothing after it started; the report ran on the first run's record, or said there was none
    assert statuses["resnet50-bf16"] in ("timeout", "not-run"), statuses
    assert {statuses[name] for name in order[held + 1 : -1]} <= {"not-run", "skipped"}, statuses
    assert "not-run" in {statuses[name] for name in order[held + 1 : -1]}
    assert order[-1] == "report"
    report = step_result(tmp_path, "report")
    # a first run cut short after its window was timed still leaves its record (and the report runs on it)
    assert report["status"] == "ok" or (
        statuses["dcgan64-bf16"] != "ok" and report["reason"] == "no run record in the work folder yet"
    ), (statuses, report)
    assert (tmp_path / "matrix.tar.gz").exists() and (tmp_path / "report.md").exists()


@pytest.mark.slow
def test_a_command_killed_from_outside_has_left_what_it_measured(tmp_path):
    child = subprocess.Popen(
        [SCRIPT, str(tmp_path), "--dry-run"],
        cwd=ROOT,
        env=suite_env(tmp_path, PYTHON=sys.executable),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        # the step after the first finished run has started: the outputs were rewritten in between
        for line in child.stdout:
            if line.startswith("[quick] resnet50-bf16: started"):
                break
        os.killpg(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=SAFETY_NET_S)
    with tarfile.open(tmp_path / "matrix.tar.gz") as tar:
        assert "matrix/steps/dcgan64-bf16.json" in tar.getnames()
    assert "| quick | dcgan64-bf16 | ok |" in (tmp_path / "report.md").read_text()


@pytest.mark.slow
def test_a_python_without_torch_is_refused_in_one_line_before_anything_runs(tmp_path):
    bare = tmp_path / "bare"
    venv.create(bare, with_pip=False)
    done = run_matrix(tmp_path / "out", "--dry-run", home=tmp_path, PYTHON=str(bare / "bin" / "python"))
    assert done.returncode == 2 and done.stdout == ""
    assert (
        done.stderr.count("\n") == 1 and f"PYTHON={bare}/bin/python" in done.stderr and "torch" in done.stderr
    )
    assert os.listdir(tmp_path / "out" / "work" / "steps") == []


@pytest.mark.parametrize(
    "args, says",
    [
        (["--only", "dcgan64-fp33"], "unknown step dcgan64-fp33; steps: nvidia-smi, env"),
        (["--only", ","], "unknown step (none given)"),
        (["--as-gpu", "NVIDIA H200"], "--as-gpu is for --dry-run or --plan"),
        (["--part", "2"], "invalid choice: '2'"),
        (["--budget", "10"], "--budget 10: must be at least 25 seconds"),
    ],
)
def test_bad_options_are_refused_in_one_line(tmp_path, args, says):
    done = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", "gpu_matrix.py"), str(tmp_path), *args],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr


def test_the_plan_alone_prints_the_estimates_for_the_gpu_named(tmp_path, capsys):
    import gpu_matrix

    assert gpu_matrix.main([str(tmp_path), "--plan", "--as-gpu", "NVIDIA H200"]) == 0
    printed = capsys.readouterr().out
    assert "NVIDIA H200: priced as p5en.48xlarge" in printed
    assert "--instance p5en.48xlarge" in printed and "report: python -m suite report" in printed
    estimate = float(printed.split("total estimate ")[1].split(" s")[0])
    assert estimate == total(gpu_matrix_plan.plan("", "", "", "NVIDIA H200"), "quick") <= 360


def test_the_tune_part_tunes_resnet50_and_gpt2_small_within_one_command():
    import gpu_matrix

    steps = [s for s in gpu_matrix_plan.plan("/d", "/r", "/r.md", "NVIDIA H200") if s.part == "tune"]
    assert [s.name for s in steps] == ["tune-resnet50", "tune-gpt2-small"]
    # both tunes and the report inside one command's budget, less what it keeps back
    assert total(steps, "tune") + 3 <= gpu_matrix.DEFAULT_BUDGET_S - gpu_matrix.REPORT_S - gpu_matrix.PACK_S
    for step in steps:
        assert step.gpu[:5] == ["-m", "suite", "tune", "--backend", "cuda"]
        assert ["--budget", f"{gpu_matrix_plan.TUNE_BUDGET_S}s"] == step.gpu[7:9]
        assert "instance=p5en.48xlarge" in step.gpu and step.expect == "search"
        assert "tune" not in gpu_matrix_plan.ALL  # --part all stays the cuda row's three parts


def test_the_tune_parts_plan_is_printed_by_plan(tmp_path, capsys):
    import gpu_matrix

    assert gpu_matrix.main([str(tmp_path), "--plan", "--part", "tune", "--as-gpu", "NVIDIA H200"]) == 0
    printed = capsys.readouterr().out
    assert (
        "tune   tune-resnet50: python -m suite tune --backend cuda --workload resnet50 --budget 250s"
        in printed
    )
    assert "tune-gpt2-small" in printed and "total estimate 503 s" in printed


@pytest.mark.slow
def test_the_tune_parts_dry_run_tunes_the_tiny_models_and_reports_their_best(tmp_path):
    done = run_matrix(tmp_path, "--dry-run", "--part", "tune", "--as-gpu", "NVIDIA H200", home=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for name in ("tune-resnet50", "tune-gpt2-small"):
        result = step_result(tmp_path, name)
        assert result["status"] == "ok" and result["record_statuses"], (name, result)
        searches = [f for f in os.listdir(tmp_path / "work" / "records" / name) if f.startswith("tune-")]
        assert any(f.endswith(".json") for f in searches) and any(f.endswith(".spec") for f in searches)
    report = (tmp_path / "report.md").read_text()
    assert "| tune | tune-resnet50 | ok |" in report and "tuned" in report.split("## suite report")[1]
