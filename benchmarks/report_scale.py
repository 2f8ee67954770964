"""How do `suite report` (every format) and `suite compare` scale with the number of run records?

One real record is made by the smallest `suite run --backend cpu` (or read from --template), then copied
N times with what a results folder varies: run id and time, workload, instance (and the device that
prices it), precision, batch size, torch version, throughput and its windows. Runs come in groups of
--runs-per-group repeats of one configuration, so a report has many rows of many runs each. Every copy
passes the suite's own record check before it is written. Then each command runs as a user runs it (a
fresh `python -m suite` process, output to a file) and its wall and CPU time are printed, per N and format;
a command that passes --timeout is stopped and shown as `>T`, and larger N are not tried for that format.

    python benchmarks/report_scale.py [--records 1000,2000,5000,10000] [--compare-runs 1000]
        [--formats md,csv,json,html] [--runs-per-group 5] [--timeout 300] [--template RECORD]

`suite compare` is timed on two folders of K runs each (--compare-runs, comma-separated), the candidate's
configurations the baseline's with rates 2% higher: with repeats, with one run per configuration, and
with nothing matched (the candidate on another torch version). No network: the price catalog is the shipped one,
and the numerics ledger, cache and SkyPilot folders are the benchmark's own temporary ones.
"""

from __future__ import annotations

import argparse
import copy
import glob
import os
import random
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from suite import run_record  # noqa: E402
from suite.run_record.windows import window_metrics  # noqa: E402

FORMATS = ("md", "csv", "json", "html")
WORKLOADS = (
    "dcgan64",
    "dcgan64-safe",
    "dcgan128",
    "dcgan128-safe",
    "resnet50",
    "resnet50-inat",
    "resnet18-cifar",
)
# (instance, backend, device name, accelerators in the instance): priced rows, and CPU runs unpriced.
INSTANCES = (
    ("p5.48xlarge", "cuda", "NVIDIA H100 80GB HBM3", 8),
    ("p5en.48xlarge", "cuda", "NVIDIA H200", 8),
    ("p4d.24xlarge", "cuda", "NVIDIA A100-SXM4-40GB", 8),
    ("g6e.xlarge", "cuda", "NVIDIA L40S", 1),
    ("g6.xlarge", "cuda", "NVIDIA L4", 1),
    ("g4dn.xlarge", "cuda", "Tesla T4", 1),
    (None, "cpu", "AMD EPYC", 1),
)
PRECISIONS = {"cuda": ("amp", "bf16", "fp32"), "cpu": ("fp32", "bf16")}
BATCHES = (16, 32, 64, 128)
TORCH_VERSIONS = ("2.14.1+cu130", "2.13.0+cu128", "2.12.1+cu128", "2.11.0+cu126", "2.10.0+cu126")


def tiny_record(folder: str, env: dict) -> dict:
    """The record of the smallest real CPU run (a few seconds): the template every copy starts from."""
    out = os.path.join(folder, "template")
    command = [sys.executable, "-m", "suite", "run", "--backend", "cpu", "--workload", "dcgan64"]
    command += ["--batch-size", "2", "--warmup", "1", "--steps", "1", "--windows", "3", "--threads", "1"]
    command += ["--model-override", "ngf=8", "--model-override", "ndf=8", "--out", out, "--quiet"]
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, timeout=300)
    (path,) = glob.glob(os.path.join(out, "*.json"))
    return run_record.read_record(path)


def varied(
    template: dict,
    group: int,
    run: int,
    rng: random.Random,
    scale: float = 1.0,
    side: str = "a",
    torch: str | None = None,
) -> dict:
    """A copy of TEMPLATE as run RUN of configuration GROUP (deterministic), its rate times SCALE, its run
    id marked with SIDE (a compare's two sides are other runs), on TORCH where given."""
    record = copy.deepcopy(template)
    workload = WORKLOADS[group % len(WORKLOADS)]
    instance, backend, device, count = INSTANCES[(group // len(WORKLOADS)) % len(INSTANCES)]
    rest = group // (len(WORKLOADS) * len(INSTANCES))
    precision = PRECISIONS[backend][rest % 3 % len(PRECISIONS[backend])]
    batch = BATCHES[(rest // 3) % len(BATCHES)]
    torch = torch or TORCH_VERSIONS[(rest // (3 * len(BATCHES))) % len(TORCH_VERSIONS)]
    seconds = group * 600 + run * 60
    utc = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_780_000_000 + seconds))
    record["run_id"] = (
        f"{utc.replace('-', '').replace(':', '')}-{workload}-{backend}-{side}{group:05d}{run:03d}"
    )
    record["context"].update(utc_time=utc, torch=torch)
    record["config"].update(
        workload=workload,
        backend=backend,
        precision=precision,
        batch_size=batch,
        global_batch_size=batch,
        instance=instance,
        accelerators_used=count,
        model_overrides={},
    )
    record["device"].update(backend=backend, name=device, count=1 if backend == "cpu" else count)
    record["workload"].update(name=workload)
    base = 50.0 * (1 + group % 13) * (1 + (group // 13) % 5)  # each configuration its own rate
    rate = base * scale * rng.lognormvariate(0.0, 0.03)
    steps = record["metrics"].get("steps_per_window") or 1
    per_window = batch * steps
    windows = len(record["metrics"]["window_images_per_second"])
    times = [per_window / (rate * rng.lognormvariate(0.0, 0.02)) for _ in range(windows)]
    # every figure derived from the windows as a run derives it, so the record is one a run could write
    record["metrics"].update(window_metrics(per_window, steps, times).to_json(), images_per_step=batch)
    return run_record.check_record(record)


def write_side(
    template: dict, folder: str, count: int, per_group: int, seed: int, scale=1.0, side="a", torch=None
) -> None:
    """COUNT varied records in FOLDER, PER_GROUP runs of each configuration, each written as a run is."""
    rng = random.Random(seed)
    os.makedirs(folder, exist_ok=True)
    for index in range(count):
        run_record.write_record(
            varied(template, index // per_group, index % per_group, rng, scale, side, torch), folder
        )


def timed(command: list[str], env: dict, timeout: float) -> tuple[float, float] | None:
    """Wall and CPU seconds (user + system) of COMMAND (None: stopped at TIMEOUT). The CPU time tells a
    command's own work from a busy machine's. A failing command stops the benchmark."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        done = subprocess.run(command, env=env, timeout=timeout, capture_output=True, text=True)
    except subprocess.TimeoutExpired:
        return None
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1, 4):  # compare's verdict statuses are answers, not failures
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def cell(seconds: tuple[float, float] | None, timeout: float) -> str:
    """`wall (cpu)` seconds, or `>T` for a command stopped at the timeout."""
    return f">{timeout:.0f}" if seconds is None else f"{seconds[0]:.1f} ({seconds[1]:.1f})"


def numbers(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=numbers, default=[1000, 2000, 5000, 10000])
    parser.add_argument("--compare-runs", type=numbers, default=[1000])
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--runs-per-group", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per command (default 300)")
    parser.add_argument("--template", help="a record to copy (default: made by a tiny `suite run`)")
    args = parser.parse_args()
    formats = [name for name in args.formats.split(",") if name]

    with tempfile.TemporaryDirectory(prefix="report-scale-") as work:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SUITE_")}
        env.update(
            SUITE_CACHE_DIR=os.path.join(work, "cache"),  # the numerics ledger lives here: none
            SKY_RUNTIME_DIR=os.path.join(work, "sky"),  # no downloaded SkyPilot catalog
            SUITE_SYSFS_ROOT=os.path.join(work, "no-dmi"),  # no cloud instance detected
            TMPDIR=work,
        )
        os.makedirs(env["SUITE_SYSFS_ROOT"])
        template = run_record.read_record(args.template) if args.template else tiny_record(work, env)
        suite = [sys.executable, "-m", "suite"]

        print(f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f} at the start")
        print(f"suite report, seconds: wall (CPU) (runs per configuration: {args.runs_per_group})")
        print("| records | " + " | ".join(formats) + " |")
        print("|---:|" + "---:|" * len(formats))
        gave_up: set[str] = set()
        for count in args.records:
            folder = os.path.join(work, f"records-{count}")
            write_side(template, folder, count, args.runs_per_group, seed=count)
            cells = []
            for name in formats:
                if name in gave_up:
                    cells.append("—")
                    continue
                out = os.path.join(work, f"report.{name}")
                seconds = timed([*suite, "report", folder, "--format", name, "--out", out], env, args.timeout)
                if seconds is None:
                    gave_up.add(name)
                cells.append(cell(seconds, args.timeout))
            print(f"| {count:,} | " + " | ".join(cells) + " |", flush=True)

        # Matched with repeats; one run per configuration (each pair too few runs: a rerun command each);
        # nothing matched (the candidate on another torch: the closest pair is named).
        cases = (
            (f"matched, {args.runs_per_group} runs each", args.runs_per_group, None),
            ("matched, 1 run each", 1, None),
            ("none matched, 1 run each", 1, "0.0.0+other"),
        )
        print("\nsuite compare, seconds: wall (CPU)")
        print("| runs a side | " + " | ".join(name for name, _, _ in cases) + " |")
        print("|---:|" + "---:|" * len(cases))
        for count in args.compare_runs:
            cells = []
            for n, (_, per_group, torch) in enumerate(cases):
                base, cand = os.path.join(work, f"base-{count}-{n}"), os.path.join(work, f"cand-{count}-{n}")
                write_side(template, base, count, per_group, seed=1)
                write_side(template, cand, count, per_group, seed=2, scale=1.02, side="b", torch=torch)
                out = os.path.join(work, "compare.md")
                cells.append(
                    cell(
                        timed([*suite, "compare", base, cand, "--out", out], env, args.timeout), args.timeout
                    )
                )
            print(f"| {count:,} | " + " | ".join(cells) + " |", flush=True)
        print(f"\nload average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
