"""The GPU matrix's `best` and `best-more` parts: each workload's best-known configurations as plain `suite
run` lines beside its default, planned for an H200, every line accepted by the suite's own parser and
planner before any GPU time is spent on it."""

from __future__ import annotations

import json
import os
import sys

import pytest
from conftest import ROOT
from test_gpu_matrix import run_matrix, step_result, total

sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import gpu_matrix  # noqa: E402
import gpu_matrix_plan  # noqa: E402
import gpu_matrix_report  # noqa: E402

H200 = "NVIDIA H200"
BEST = [
    "best-llama-1b-bf16",
    "best-resnet50-amp",
    "best-resnet50-amp-cl-compile-b256",
    "best-gpt2-small-bf16",
    "best-gpt2-small-bf16-compile-b64",
    "best-llama-1b-bf16-compile-b4",
    "best-bare-gpt2-small-bf16-compile-b64",
]
BEST_MORE = [
    "best-resnet50-amp-cl-compile-b512",
    "best-gpt2-small-bf16-compile-b32",
    "best-resnet50-bf16-cl-compile-b256",
    "best-resnet50-bf16-cl-compile-b512",
]
CL, COMPILED = ["--channels-last"], ["--compile", "--batch-size"]
# Each line's workload W and what it adds to `suite run --backend cuda --workload W --instance p5en.48xlarge`
LINES = {
    "best-llama-1b-bf16": ("llama-1b", ["--precision", "bf16"]),
    "best-resnet50-amp": ("resnet50", ["--precision", "amp"]),
    "best-resnet50-amp-cl-compile-b256": ("resnet50", ["--precision", "amp", *CL, *COMPILED, "256"]),
    "best-gpt2-small-bf16": ("gpt2-small", ["--precision", "bf16"]),
    "best-gpt2-small-bf16-compile-b64": ("gpt2-small", ["--precision", "bf16", *COMPILED, "64"]),
    "best-llama-1b-bf16-compile-b4": ("llama-1b", ["--precision", "bf16", *COMPILED, "4"]),
    "best-resnet50-amp-cl-compile-b512": ("resnet50", ["--precision", "amp", *CL, *COMPILED, "512"]),
    "best-gpt2-small-bf16-compile-b32": ("gpt2-small", ["--precision", "bf16", *COMPILED, "32"]),
    "best-resnet50-bf16-cl-compile-b256": ("resnet50", ["--precision", "bf16", *CL, *COMPILED, "256"]),
    "best-resnet50-bf16-cl-compile-b512": ("resnet50", ["--precision", "bf16", *CL, *COMPILED, "512"]),
}
DEFAULT_BATCH = {"resnet50": 256, "gpt2-small": 16, "llama-1b": 4}


def steps_of(part: str) -> list:
    return [s for s in gpu_matrix_plan.plan("/d", "/r", "/r.md", H200) if s.part == part]


def test_the_best_parts_run_each_workloads_best_known_lines_beside_its_default_within_their_commands():
    best, more = steps_of("best"), steps_of("best-more")
    assert [s.name for s in best] == BEST and [s.name for s in more] == BEST_MORE
    for step in (*best, *more):
        if step.name.startswith("best-bare"):
            continue
        workload, options = LINES[step.name]
        prefix = [
            "-m",
            "suite",
            "run",
            "--backend",
            "cuda",
            "--workload",
            workload,
            "--instance",
            "p5en.48xlarge",
        ]
        assert step.gpu == [*prefix, *options], step.name
        assert step.expect == "ok" and step.records
    bare = best[-1]
    assert bare.gpu == [
        *("benchmarks/bare_loop.py", "--workload", "gpt2-small", "--backend", "cuda", "--precision", "bf16"),
        *("--batch-size", "64", "--compile"),
    ]
    assert bare.bench and not bare.records
    # H200 seconds by the plan's own estimates, the report included: the first command <= 6 minutes, the
    # second what a 15-minute lease leaves after it (docs/gpu-matrix.md)
    assert total(best, "best") + 3 <= 360 and total(more, "best-more") + 3 <= 300
    # compiling and the host's FLOP count are in each estimate, and kept out of the measured start-up
    assert all(
        s.outside_windows_s == gpu_matrix_plan.COMPILE_S["resnet50"] for s in more if "resnet50" in s.name
    )
    assert best[0].outside_windows_s == gpu_matrix_plan.HOST_FLOP_COUNT_S["llama-1b"]
    assert best[1].outside_windows_s == 0 and best[3].outside_windows_s == 0
    assert not {"best", "best-more"} & set(gpu_matrix_plan.ALL)  # --part all stays the cuda row's parts


def test_the_best_lines_are_accepted_by_the_suites_own_parser_and_planner_for_an_h200(monkeypatch, tmp_path):
    from fakes.torch_cuda import patch_cuda

    from suite.cli import build_parser, join_dash_values
    from suite.measurement.plan import plan_run
    from suite.run_options import spec_from_args

    monkeypatch.setenv("SUITE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    patch_cuda(monkeypatch, name=H200, capability=(9, 0), total_memory_bytes=141 * 1024**3)
    for step in (*steps_of("best"), *steps_of("best-more")):
        if step.name.startswith("best-bare"):
            continue
        argv = join_dash_values(step.gpu[2:])  # after `-m suite`
        args = build_parser(argv).parse_args(argv)
        planned = plan_run(spec_from_args(args)).spec
        workload, options = LINES[step.name]
        assert (planned.backend, planned.workload.name, planned.precision) == ("cuda", workload, options[1])
        assert planned.cuda.compile is ("--compile" in options), step.name
        assert planned.cuda.channels_last is ("--channels-last" in options), step.name
        batch = int(options[-1]) if "--batch-size" in options else DEFAULT_BATCH[workload]
        assert planned.workload.batch_size == batch, step.name


def test_the_bare_loop_line_is_accepted_by_its_parser_and_refuses_compile_on_the_cpu(capsys):
    import bare_loop

    bare = steps_of("best")[-1]
    args = bare_loop.make_parser().parse_args(bare.gpu[1:])
    assert (args.backend, args.precision, args.batch_size, args.compile) == ("cuda", "bf16", 64, True)
    with pytest.raises(SystemExit) as refused:
        bare_loop.main(["--backend", "cpu", "--workload", "gpt2-small", "--compile"])
    assert refused.value.code == 2 and "--compile is CUDA's here" in capsys.readouterr().err


def test_a_run_that_compiles_is_left_out_of_the_measured_start_up(tmp_path):
    work = tmp_path / "work"
    (work / "steps").mkdir(parents=True)
    for name, start_s in (("best-resnet50-amp", 21.0), ("best-gpt2-small-bf16", 12.0)):
        (work / "steps" / f"{name}.json").write_text(json.dumps({"start_s": start_s}))
    for name in ("best-resnet50-amp-cl-compile-b256", "best-llama-1b-bf16"):  # compiling, the FLOP count
        (work / "steps" / f"{name}.json").write_text(json.dumps({"start_s": 95.0}))
    args = gpu_matrix.parse([str(tmp_path), "--part", "best"])
    matrix = gpu_matrix.Matrix(args, str(work), str(tmp_path), gpu_matrix.Log(), {}, H200, None, None)
    assert matrix.measured_start_s() == (16.5, "measured: median of 2 runs")


def write_json(path, value: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))


def test_the_compiled_bare_loop_pairs_with_the_compiled_suite_run_of_its_batch(tmp_path):
    config = {"workload": "gpt2-small", "precision": "bf16", "data": "synthetic", "tf32": False}
    for name, batch, compiled, rate in (("eager", 16, False, 233.0), ("compiled", 64, True, 300.0)):
        write_json(
            tmp_path / "records" / name / "r.json",
            {
                "status": "ok",
                "config": {**config, "batch_size": batch, "compile": compiled},
                "metrics": {"images_per_second": rate},
            },
        )
    write_json(
        tmp_path / "bench" / "bare.json",
        {"kind": "bare_loop", **config, "batch_size": 64, "compile": True, "images_per_second": 310.0},
    )
    path = tmp_path / "report.md"
    gpu_matrix_report.write(
        str(tmp_path), [], False, str(path), {"gpu": H200, "instance": None, "commit": None}
    )
    row = next(line for line in path.read_text().splitlines() if line.startswith("| gpt2-small |"))
    assert row == f"| gpt2-small | bf16 + compile | 64 | 300 | 310 | {300 / 310:.3f} |"


def test_the_best_parts_plan_is_printed_by_plan(tmp_path, capsys):
    assert gpu_matrix.main([str(tmp_path), "--plan", "--part", "best", "--as-gpu", H200]) == 0
    printed = capsys.readouterr().out
    assert (
        "best   best-resnet50-amp-cl-compile-b256: python -m suite run --backend cuda --workload resnet50 "
        "--instance p5en.48xlarge --precision amp --channels-last --compile --batch-size 256" in printed
    )
    estimate = float(printed.split("total estimate ")[1].split(" s")[0])
    assert estimate == total(steps_of("best"), "best") + 3 <= 360


@pytest.mark.slow
def test_the_best_parts_dry_run_trains_the_defaults_at_tiny_widths_and_skips_the_compiled_lines(tmp_path):
    done = run_matrix(tmp_path, "--dry-run", "--part", "best", "--as-gpu", H200, home=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for step in steps_of("best"):
        result = step_result(tmp_path, step.name)
        if step.cpu is None:
            assert result["status"] == "skipped" and "CUDA options" in result["reason"], result
            continue
        assert result["status"] == "ok" and result["instance"] == "p5en.48xlarge", (step.name, result)
        assert result["record_statuses"] == (["ok"] if step.records else []), step.name
    report = (tmp_path / "report.md").read_text()
    assert "| best | best-llama-1b-bf16 | ok |" in report and "| gpt2-small | bf16 | 2 |" in report
