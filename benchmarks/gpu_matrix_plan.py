"""The GPU matrix's plan: every `suite` command line (and the two non-suite loops) it runs, per part, with a
time estimate, and what its dry run on the CPU runs in its place.

Each step is written once, as its GPU command line beside its CPU stand-in: the same command at tiny sizes
(batch 2, tiny widths, one step), a nearest CPU equivalent with the reason, or a skip with the reason. The
plan is data; `gpu_matrix.py` runs it.

Time estimates (seconds on one H100 SXM; nothing here has yet run on one, so these are derived, not
measured): START_S for a fresh process (Python, torch and torchvision imports, CUDA context, model build,
cuDNN autotuning in the first steps: an assumption), plus steps × batch × FLOPs per image ÷ an assumed
effective rate per precision (a fraction of the datasheet peak of backends/peaks.py: 989 TFLOP/s dense
fp16/bf16, 494.5 TF32, 67 fp32). FLOPs per image were counted with suite/measurement/flops.py (one
training step, torch 2.x, on the CPU): dcgan64 2.48e9, dcgan64-safe 1.16e10, dcgan128 1.56e10, resnet50
2.43e10. A part stops at its budget anyway, keeping what it measured, so an estimate that is too low costs
steps, not results.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

START_S = 20.0
FLOPS_PER_IMAGE = {"dcgan64": 2.48e9, "dcgan64-safe": 1.16e10, "dcgan128": 1.56e10, "resnet50": 2.43e10}
# Assumed effective FLOP/s: 30% of the dense tensor-core peak for fp16/bf16/TF32, 50% of the fp32 peak.
RATE = {"amp": 0.3 * 989e12, "bf16": 0.3 * 989e12, "tf32": 0.3 * 494.5e12, "fp32": 0.5 * 67e12}
CUDA_STEPS = 3 + 10 * 5  # the CUDA backend's default schedule: 3 warm-up steps, 5 windows of 10
DEFAULT_BATCH = 256  # every workload of the matrix trains at its default batch of 256 on the GPU
INSTANCE = "p5.48xlarge"  # 8 × H100 80GB; a run uses 1 of 8, and the report says so

# The dry run's sizes: the tests' tiny widths of the same registry entries (same layers and code paths).
TINY = {
    "dcgan64": {"ngf": 8, "ndf": 8},
    "dcgan64-safe": {"ngf": 8, "ndf": 8, "nz": 16},
    "dcgan128": {"ngf": 4, "ndf": 4, "nz": 16},
    "resnet50": {"image_size": 32},
}
TINY_RUN = ["--batch-size", "2", "--warmup", "1", "--steps", "1", "--windows", "1", "--threads", "1"]


@dataclass(frozen=True)
class Step:
    name: str  # also its folder and file names: letters, digits, '-'
    part: int
    gpu: list[str]  # the command on the GPU machine (after `python`)
    cpu: list[str] | None  # the dry run's command, or None: skipped
    estimate_s: float  # on the GPU
    expect: str = (
        "ok"  # ok | oom (must leave an `oom` record) | search (exit 0; its tries may run out of memory)
    )
    records: bool = True  # leaves suite records in its folder
    cpu_note: str = ""  # why the dry run differs (mapped or skipped)
    bench: bool = False  # writes a bare-loop / peer JSON (--json FILE is appended)
    tags: dict = field(default_factory=dict)


def suite(*args: str) -> list[str]:
    return ["-m", "suite", *args]


def run_estimate(workload: str, precision: str, steps: int = CUDA_STEPS, extra_s: float = 0.0) -> float:
    compute = steps * DEFAULT_BATCH * FLOPS_PER_IMAGE[workload] / RATE[precision]
    return round(START_S + compute + extra_s)


def tiny(workload: str) -> list[str]:
    return [a for k, v in TINY.get(workload, {}).items() for a in ("--model-override", f"{k}={v}")]


def tiny_sets(workload: str) -> list[str]:
    """TINY_RUN and the tiny widths as the `--set name=value` pairs of commands that start runs."""
    pairs = list(zip(TINY_RUN[::2], TINY_RUN[1::2])) + list(zip(tiny(workload)[::2], tiny(workload)[1::2]))
    return [a for flag, value in pairs if flag != "--batch-size" for a in ("--set", f"{flag[2:]}={value}")]


def gpu_run(workload: str, *options: str) -> list[str]:
    return suite("run", "--backend", "cuda", "--workload", workload, "--instance", INSTANCE, *options)


def cpu_run(workload: str, *options: str) -> list[str]:
    return suite(
        "run",
        "--backend",
        "cpu",
        "--workload",
        workload,
        *TINY_RUN,
        *tiny(workload),
        "--instance",
        INSTANCE,
        *options,
    )


PRECISION_CASES = {  # name: (GPU options, CPU stand-in options or None, why the CPU differs, estimate key)
    "amp": (
        ["--precision", "amp"],
        None,
        "fp16 autocast + GradScaler is CUDA's; the CPU's nearest, bf16, is its own step",
        "amp",
    ),
    "bf16": (["--precision", "bf16"], ["--precision", "bf16"], "", "bf16"),
    "fp32": (["--precision", "fp32"], ["--precision", "fp32"], "", "fp32"),
    "tf32": (
        ["--precision", "fp32", "--tf32"],
        None,
        "TF32 is a CUDA tensor-core mode; on the CPU it is the fp32 step",
        "tf32",
    ),
}


def precision_steps(part: int, workload: str) -> list[Step]:
    return [
        Step(
            f"{workload}-{case}",
            part,
            gpu_run(workload, *gpu),
            cpu_run(workload, *cpu) if cpu else None,
            run_estimate(workload, key),
            cpu_note=note,
        )
        for case, (gpu, cpu, note, key) in PRECISION_CASES.items()
    ]


def bare_steps(part: int, workload: str) -> list[Step]:
    bare = ["benchmarks/bare_loop.py", "--workload", workload]
    return [
        Step(
            f"bare-{workload}-amp",
            part,
            [*bare, "--backend", "cuda", "--precision", "amp"],
            [*bare, "--backend", "cpu", "--precision", "bf16", *TINY_RUN, *tiny(workload)],
            run_estimate(workload, "amp"),
            records=False,
            bench=True,
            cpu_note="amp is CUDA's: the CPU pairs bf16 with the suite's bf16 step",
        ),
        Step(
            f"bare-{workload}-fp32",
            part,
            [*bare, "--backend", "cuda", "--precision", "fp32"],
            [*bare, "--backend", "cpu", "--precision", "fp32", *TINY_RUN, *tiny(workload)],
            run_estimate(workload, "fp32"),
            records=False,
            bench=True,
        ),
    ]


def report_step(part: int, records: str, out: str) -> Step:
    command = suite("report", records, "--format", "md", "--out", out)
    return Step(
        f"report-part{part}",
        part,
        command,
        [*command, "--price-as-if"],
        10,
        records=False,
        cpu_note="--price-as-if: a CPU run named p5.48xlarge is priced only as hypothetical",
    )


def setup_steps() -> list[Step]:
    return [
        Step("env", 1, suite("env"), suite("env"), 10, records=False),
        Step(
            "nvidia-smi",
            1,
            ["-c", "import subprocess,sys; sys.exit(subprocess.call(['nvidia-smi','-q']))"],
            None,
            3,
            records=False,
            cpu_note="no NVIDIA driver here; the GPU run keeps `nvidia-smi -q`",
        ),
        Step("list", 1, suite("list"), suite("list"), 8, records=False),
    ]


def data_steps(part: int, data: str) -> list[Step]:
    photos, cache = f"{data}/photos", f"{data}/cache64"
    steps = [
        Step(
            "data-synth",
            part,
            suite("data", "synth", "--out", photos, "--count", "4096", "--size", "96x96", "--classes", "4"),
            suite("data", "synth", "--out", photos, "--count", "24", "--size", "72x72", "--classes", "2"),
            25,
            records=False,
        ),
        Step(
            "data-prepare",
            part,
            suite("data", "prepare", photos, "--size", "64", "--out", cache),
            suite("data", "prepare", photos, "--size", "64", "--out", cache, "--workers", "1"),
            15,
            records=False,
        ),
        Step(
            "dcgan64-cache",
            part,
            gpu_run("dcgan64", "--precision", "amp", "--data", cache),
            cpu_run("dcgan64", "--precision", "bf16", "--data", cache),
            run_estimate("dcgan64", "amp"),
            cpu_note="bf16 for amp (CUDA's)",
        ),
    ]
    for gpu_workers, cpu_workers in ((4, 1), (8, 2), (16, 4)):
        steps.append(
            Step(
                f"dcgan64-folder-w{gpu_workers}",
                part,
                gpu_run("dcgan64", "--precision", "amp", "--data", photos, "--workers", str(gpu_workers)),
                cpu_run("dcgan64", "--precision", "bf16", "--data", photos, "--workers", str(cpu_workers)),
                run_estimate("dcgan64", "amp", extra_s=10),
                cpu_note=f"{cpu_workers} workers on 2 cores for {gpu_workers}; bf16 for amp",
            )
        )
    steps.append(
        Step(
            "diagnose-folder",
            part,
            suite(
                "diagnose",
                "--data",
                photos,
                "--backend",
                "cuda",
                "--workload",
                "dcgan64",
                "--precision",
                "amp",
                "--workers",
                "8",
                "--set",
                f"instance={INSTANCE}",
            ),
            suite(
                "diagnose",
                "--data",
                photos,
                "--backend",
                "cpu",
                "--workload",
                "dcgan64",
                "--precision",
                "bf16",
                "--batch-size",
                "2",
                "--workers",
                "1",
                *tiny_sets("dcgan64"),
            ),
            3 * run_estimate("dcgan64", "amp"),
            cpu_note="bf16 for amp; 1 worker",
        )
    )
    return steps


def plan(data: str, records: str, report: str) -> list[Step]:
    """Every step of the three parts. DATA: the folder for the images the data steps make; RECORDS: the
    folder of every step's records; REPORT: the markdown file `suite report` writes."""
    part1 = [*setup_steps()]
    for workload in ("dcgan64", "dcgan64-safe", "dcgan128"):
        part1 += precision_steps(1, workload)
    part1 += bare_steps(1, "dcgan64")
    part1 += [
        Step(
            "numerics-dcgan64-bf16",
            1,
            gpu_run("dcgan64", "--precision", "bf16", "--windows", "2", "--check-numerics"),
            cpu_run("dcgan64", "--precision", "bf16", "--check-numerics"),
            run_estimate("dcgan64", "bf16", extra_s=10),
        ),
        Step(
            "numerics-dcgan64-bf16-vs-cpu",
            1,
            gpu_run(
                "dcgan64",
                "--precision",
                "bf16",
                "--windows",
                "2",
                "--check-numerics",
                "--reference-backend",
                "cpu",
            ),
            cpu_run("dcgan64", "--precision", "bf16", "--check-numerics", "--reference-backend", "cpu"),
            run_estimate("dcgan64", "bf16", extra_s=30),
            cpu_note="the reference backend is the run's own here",
        ),
        report_step(1, records, report),
    ]
    part2 = precision_steps(2, "resnet50") + [
        Step(
            "resnet50-channels-last",
            2,
            gpu_run("resnet50", "--precision", "amp", "--channels-last"),
            None,
            run_estimate("resnet50", "amp"),
            cpu_note="--channels-last is a CUDA option (the CPU backend refuses it)",
        ),
        Step(
            "resnet50-compile",
            2,
            gpu_run("resnet50", "--precision", "amp", "--compile"),
            None,
            run_estimate("resnet50", "amp", extra_s=90),
            cpu_note="--compile is a CUDA option (the CPU backend refuses it)",
        ),
        Step(
            "timm-convnext-tiny",
            2,
            gpu_run("timm:convnext_tiny", "--precision", "bf16", "--batch-size", "128"),
            suite(
                "run",
                "--backend",
                "cpu",
                "--workload",
                "timm:convnext_tiny",
                *TINY_RUN,
                "--image-size",
                "32",
                "--precision",
                "bf16",
                "--instance",
                INSTANCE,
            ),
            45,
        ),
        *bare_steps(2, "resnet50"),
        Step(
            "peer-timm-resnet50-amp",
            2,
            ["benchmarks/timm_peer.py", "--device", "cuda", "--precision", "amp", "--batch-size", "256"],
            [
                "benchmarks/timm_peer.py",
                "--device",
                "cpu",
                "--precision",
                "bfloat16",
                "--batch-size",
                "2",
                "--img-size",
                "32",
                "--num-warm-iter",
                "1",
                "--num-bench-iter",
                "1",
                "--threads",
                "1",
            ],
            run_estimate("resnet50", "amp"),
            records=False,
            bench=True,
            cpu_note="bfloat16 (timm's whole-model bf16) for amp, which is fp16 on the GPU",
        ),
        Step(
            "oom-resnet50-b4096",
            2,
            gpu_run("resnet50", "--precision", "fp32", "--batch-size", "4096", "--windows", "1"),
            cpu_run("dcgan64", "--batch-size", "64", "--max-memory", "1MiB"),
            30,
            expect="oom",
            cpu_note="--max-memory 1MiB stands in for device memory",
        ),
        Step(
            "after-oom-resnet50",
            2,
            gpu_run("resnet50", "--precision", "bf16", "--windows", "2"),
            cpu_run("resnet50", "--precision", "bf16"),
            run_estimate("resnet50", "bf16"),
        ),
        report_step(2, records, report),
    ]
    part3 = data_steps(3, data) + [
        Step(
            "batch-size-resnet50",
            3,
            suite(
                "batch-size",
                "--backend",
                "cuda",
                "--workload",
                "resnet50",
                "--precision",
                "bf16",
                "--start",
                "128",
                "--max-batch",
                "4096",
                "--granularity",
                "128",
                "--set",
                "warmup=2",
                "--set",
                "steps=3",
                "--set",
                "windows=1",
                "--try-timeout",
                "90",
            ),
            suite(
                "batch-size",
                "--backend",
                "cpu",
                "--workload",
                "resnet50",
                "--precision",
                "bf16",
                "--start",
                "2",
                "--max-batch",
                "8",
                "--max-memory",
                "1GiB",
                "--try-timeout",
                "60",
                *tiny_sets("resnet50"),
            ),
            9 * (START_S + 5),
            expect="search",
            cpu_note="--max-memory 1GiB stands in for device memory",
        ),
        # `-o addopts=`: the project's addopts spread tests over cores with pytest-xdist, which a bare GPU
        # machine may not have; the GPU tests share one device and run in one process anyway.
        Step(
            "pytest-gpu",
            3,
            ["-m", "pytest", "-o", "addopts=", "-m", "gpu", "tests/gpu", "-q", "-p", "no:cacheprovider"],
            ["-m", "pytest", "-o", "addopts=", "-m", "gpu", "tests/gpu", "-q", "-p", "no:cacheprovider"],
            60,
            records=False,
            cpu_note="every test skips: no CUDA device",
        ),
        report_step(3, records, report),
    ]
    return part1 + part2 + part3


def command(step: Step, dry: bool) -> list[str] | None:
    argv = step.cpu if dry else step.gpu
    return None if argv is None else [sys.executable, *argv]
