"""The GPU matrix's report.md: every step's outcome, suite ÷ bare loop for each pair, the timm peer beside
the suite, NVIDIA's published figure, and `suite report`'s markdown of every record."""

from __future__ import annotations

import glob
import json
import os
import statistics


def read_json(path: str):
    """The JSON in PATH, or None where it is missing or unreadable (a step not asked for, a file half written)."""
    try:
        with open(path) as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def _json_files(folder: str):
    for path in sorted(glob.glob(os.path.join(folder, "**", "*.json"), recursive=True)):
        try:
            with open(path) as handle:
                yield path, json.load(handle)
        except (OSError, ValueError):
            continue


def run_records(folder: str) -> list[dict]:
    """The suite run records under FOLDER (a sweep's or search's own summary files are not runs)."""
    return [r for _, r in _json_files(folder) if isinstance(r, dict) and "status" in r and "config" in r]


def record_statuses(folder: str) -> list[str]:
    return [r["status"] for r in run_records(folder)]


# The suite's pair of a bare loop / peer: same workload, precision and batch, synthetic data, no options but
# TF32 and --compile, each where the bare loop had it.
def _suite_rates(
    records: list[dict], workload: str, precision: str, batch: int, tf32=False, compiled=False
) -> list[float]:
    """Images per second of every such suite run (a run, not a diagnose or sweep sub-run)."""
    return [
        record["metrics"]["images_per_second"]
        for record in records
        if record["status"] == "ok"
        and record.get("origin", "run") == "run"
        and record["config"]["workload"] == workload
        and record["config"]["precision"] == precision
        and record["config"]["batch_size"] == batch
        and record["config"]["data"] == "synthetic"
        and not record["config"].get("check_numerics")
        and bool(record["config"].get("tf32")) == tf32
        and not record["config"].get("channels_last")
        and bool(record["config"].get("compile")) == compiled
        and not record["config"].get("compile_mode")
    ]


def _suite_rate(records: list[dict], workload: str, precision: str, batch: int, tf32=False) -> float | None:
    rates = _suite_rates(records, workload, precision, batch, tf32)
    return statistics.median(rates) if rates else None


def _runs(rates: list[float]) -> str:
    """The median of a side's processes, with their count and range where there are several."""
    median = statistics.median(rates)
    if len(rates) == 1:
        return f"{median:.6g}"
    return f"{median:.6g} ({len(rates)} runs, {min(rates):.6g} … {max(rates):.6g})"


# NVIDIA DeepLearningExamples, PyTorch/Classification/ConvNets/resnet50v1.5/README.md at commit
# 291f0d02e815b148fa5c2b81bf07aa3552142895, "Training performance: NVIDIA DGX A100 (8x A100 80GB)", 1 GPU,
# pytorch-21.03 NGC container. The README publishes no H100 figure (docs/gpu-matrix.md).
NVIDIA_DLE = "NVIDIA DeepLearningExamples ResNet-50 v1.5 (PyTorch): no published H100 figure; A100 80GB, 1 GPU: 2470 img/s mixed precision, 938 img/s TF32"


def write(work: str, steps, dry: bool, path: str, context: dict) -> None:
    """CONTEXT: the GPU planned for, the instance runs are priced as (or None), the checkout's commit."""
    preflight = read_json(os.path.join(work, "preflight.json")) or {}
    lines = [
        f"# GPU matrix report ({'dry run on the CPU: tiny sizes, not a measurement' if dry else 'CUDA'})",
        "",
        f"- GPU: {context['gpu']}{' (planned for; the dry run ran on the CPU)' if dry else ''}; priced as "
        f"{context['instance'] or 'nothing (no instance has this GPU, or no shipped catalog has it)'}",
        f"- commit: {context['commit'] or 'unknown'}; torch {preflight.get('torch', 'unknown')}",
        f"- start-up: a fresh interpreter's torch import{'' if dry else ' and CUDA start'} took "
        f"{preflight.get('wall_s', '?')} s; each run's start-up (wall time less its timed windows) is in the "
        "table",
        "",
    ]
    lines += [
        "| part | step | status | wall s | estimate s | start-up s | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for step in steps:
        # "not asked": no command in this work folder has asked for the step yet
        done = read_json(os.path.join(work, "steps", f"{step.name}.json")) or {"status": "not asked"}
        note = done.get("reason") or done.get("cpu_note") or ""
        estimate = done.get("estimate_s", step.estimate_s())
        lines.append(
            f"| {step.part} | {step.name} | {done['status']} | {done.get('wall_s', '')} | {estimate:.0f} | "
            f"{done.get('start_s', '')} | {note} |"
        )

    records = run_records(os.path.join(work, "records"))
    lines += [
        "",
        "## suite ÷ bare loop (same model, optimizer, batch, precision, synthetic data; goal >= 0.98)",
        "",
    ]
    lines += [
        "| workload | precision | batch | suite img/s | bare img/s | suite ÷ bare (medians) |",
        "|---|---|---|---|---|---|",
    ]
    peer = None
    # (workload, precision, batch, tf32, compiled): each bare process's rate
    bare_rates: dict[tuple, list[float]] = {}
    for _, bench in _json_files(os.path.join(work, "bench")):
        if bench.get("kind") == "timm_benchmark_train":
            peer = bench
        elif bench.get("kind") == "bare_loop":
            key = (
                *(bench["workload"], bench["precision"], bench["batch_size"]),
                *(bench.get("tf32", False), bench.get("compile", False)),
            )
            bare_rates.setdefault(key, []).append(bench["images_per_second"])
    for (workload, precision, batch, tf32, compiled), bare in bare_rates.items():
        suite = _suite_rates(records, workload, precision, batch, tf32, compiled)
        ratio = (
            f"{statistics.median(suite) / statistics.median(bare):.3f}" if suite else "no suite run to pair"
        )
        lines.append(
            f"| {workload} | {precision}{' + TF32' if tf32 else ''}{' + compile' if compiled else ''} | {batch} | "
            f"{_runs(suite) if suite else ''} | {_runs(bare)} | {ratio} |"
        )

    lines += ["", "## Peer: timm benchmark.py's train method, and NVIDIA's published figure", ""]
    if peer:
        precision = {"amp": "amp", "bfloat16": "bf16", "float32": "fp32"}.get(
            peer["precision"], peer["precision"]
        )
        suite = _suite_rate(records, "resnet50", precision, peer["batch_size"])
        lines.append(
            f"- timm ({peer['source']}): resnet50 {peer['precision']}, batch {peer['batch_size']}, "
            f"{peer['img_size']} px: {peer['samples_per_sec']:.6} img/s; the suite's resnet50 {precision} "
            f"at the same batch: {f'{suite:.6} img/s' if suite else 'not run'}"
        )
    else:
        lines.append("- timm peer: not run")
    lines += [f"- {NVIDIA_DLE} (see docs/gpu-matrix.md)", ""]

    suite_report = os.path.join(work, "suite-report.md")
    if os.path.exists(suite_report):
        with open(suite_report) as handle:
            priced = f"1 GPU of {context['instance']}" if context["instance"] else "not priced"
            # its headings one level down, under this one
            embedded = "\n".join(
                "#" + line if line.startswith("#") else line for line in handle.read().splitlines()
            )
            lines += [f"## suite report (every record so far; {priced})", "", embedded]
    with open(path + ".tmp", "w") as handle:
        handle.write("\n".join(lines) + "\n")
    os.replace(path + ".tmp", path)
