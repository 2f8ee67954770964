"""The GPU matrix's plan: every `suite` command line (and the two non-suite loops) it runs, in which part,
with a time estimate, and what its dry run on the CPU runs in its place.

Each step is written once, as its GPU command line beside its CPU stand-in: the same command at tiny sizes
(batch 2, tiny widths, one step), a nearest CPU equivalent with the reason, or a skip with the reason. The
plan is data; `gpu_matrix.py` runs it.

Parts, for a lease of 15 minutes (one start, at most 10 minutes a command):
    quick   what fills the README's cuda row, most valuable first: planned for <= 6 minutes on an H100
    more    the rest of the row's detail (TF32, bare fp32, channels-last, the larger DCGANs, numerics):
            <= 4 minutes, for a second command sent at once
    extra   everything else, for a longer lease: the larger DCGANs at every precision, torch.compile, a timm
            model, the prepared cache and loader workers, the batch-size search
    tune    `suite tune` of resnet50 and of gpt2-small, each within its own budget, in one command: each
            device at its best (docs/tune.md); not in `--part all`, which is the cuda row's three parts
    best    the best-known configurations of resnet50, gpt2-small and llama-1b as plain `suite run` lines,
            each beside its default, most valuable first: planned for <= 6 minutes on an H200
    best-more  the rest of them, for a second command sent at once (neither is in `--part all`)
Every part ends with `suite report` of every record in the work folder.

Time estimates (seconds on the GPU found; nothing here has yet run on one, so they are derived, not
measured, and the matrix replaces the start-up figure by what it measures as it goes): START_S for a
fresh process (Python, torch and torchvision imports, CUDA context, model build, cuDNN autotuning in
warm-up), plus the timed windows: the CUDA schedule grows a window to at least MIN_WINDOW_S (decided in
warm-up), so a run's windows take at least WINDOWS × MIN_WINDOW_S, or steps × batch × FLOPs per image ÷ an
effective rate where that is longer. The rate is a fraction of the GPU's datasheet peak (backends/peaks.py;
the H100 SXM's where the GPU is not in the table): 30 % for fp16/bf16, 30 % of half that for TF32, 50 % for
fp32. FLOPs per image were counted with suite/measurement/flops.py (one training step, torch 2.x, on the
CPU): dcgan64 2.48e9, dcgan64-safe 1.16e10, dcgan128 1.56e10, resnet50 2.43e10.

A run that compiles pays COMPILE_S more before its first step, and llama-1b's first run the host's FLOP
count after its windows (HOST_FLOP_COUNT_S): both assumptions, no GPU having measured either (their
sources are beside them, and in docs/gpu-matrix.md).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from suite.backends import peaks  # noqa: E402 - the checkout's, as the steps import it

PARTS = ("quick", "more", "extra", "tune", "best", "best-more")
# `--part all`: the cuda row's parts; `tune`, `best` and `best-more` are commands of their own
ALL = ("quick", "more", "extra")
# Each tune's wall time, its planning included (`suite tune --budget`): two of them and the report in one
# command's 540 s budget (benchmarks/gpu_matrix.py), less its preflight and the time kept for the report.
TUNE_BUDGET_S = 250
TUNED = ("resnet50", "gpt2-small")
# A fresh process on the GPU before its first timed step: an assumption until the matrix measures it
# (its preflight, then each run's wall time less its timed windows).
START_S = 10.0
MIN_WINDOW_S = 1.0  # the CUDA schedule's shortest timed window (backends/cuda.py)
# Windows are grown to this multiple of the minimum (suite/measurement/window_length.py, WARMUP_MARGIN; a test
# holds the two equal): warm-up steps run slower than timed ones.
WARMUP_MARGIN = 1.5
WINDOWS = 5  # the CUDA schedule's timed windows
CUDA_STEPS = 3 + 10 * WINDOWS  # the CUDA schedule's fewest steps: 3 warm-up, 5 windows of at least 10
DEFAULT_BATCH = 256  # the image workloads of the matrix train at their default batch of 256 on the GPU
BATCH = {"gpt2-small": 16, "llama-1b": 4}  # sequences of 1,024 and of 2,048 tokens: their default batches
# FLOPs per sample (an image; for gpt2-small a sequence of 1,024 tokens: 6 × 123.5 M matmul weights, the tied
# head included, plus the attention term 12·L·H·Q·T, per token: docs/transformers.md; for llama-1b a sequence
# of 2,048 tokens by the same formula: 6 × 1,235,746,816 matmul weights + 12 × 16 × 2,048 × 2,048).
FLOPS_PER_IMAGE = {
    "dcgan64": 2.48e9,
    "dcgan64-safe": 1.16e10,
    "dcgan128": 1.56e10,
    "resnet50": 2.43e10,
    "gpt2-small": 8.75e11,
    "llama-1b": 1.68e13,
}
# torch.compile's first step in a fresh process (default mode, inductor's caches cold: every compiled step
# is a configuration of its own, another precision or batch), seconds: assumptions until a GPU measures one.
# resnet50: pytorch/benchmark pull 1547 measured 27.9 s for its training graph and the maintainers' dashboard
# about twice that from a cold cache. gpt2-small: nanoGPT pull 392's 4-layer GPT took 7 s more for its first
# step compiled; the graph grows with the 12 (llama-1b: 16) blocks inlined into it.
COMPILE_S = {"resnet50": 60, "gpt2-small": 30, "llama-1b": 40}
# The FLOP count behind MFU: one fp32 training step of 2 samples on the host's CPU after the windows, once a
# torch version (cached in the work folder; suite/measurement/flops.py). About a second for the others; for
# llama-1b's 1.2 B parameters 3.4e13 FLOPs and the model's build: assumed 40 s on the GPU machine's 16 cores.
HOST_FLOP_COUNT_S = {"llama-1b": 40}
IMAGE_MODELS = ("dcgan64", "dcgan64-safe", "dcgan128", "resnet50")  # what --channels-last applies to
ESTIMATE_GPU = "NVIDIA H100 80GB HBM3"  # whose peaks estimate a GPU the table does not know
DEFAULT_GPU = "NVIDIA H100 80GB HBM3"  # what the dry run plans for without --as-gpu

# The GPU as torch names it -> the cloud instance it is priced as: one of the instance's GPUs ran, and the
# report says so on every row ("used 1 of 8 accelerators (priced as the whole instance)"). The first match
# wins; form factors no cloud instance has (H100 PCIe and NVL, H200 NVL) are unpriced.
INSTANCES = (
    (r"H200\s+NVL", None),
    (r"\bH200\b", "p5en.48xlarge"),  # 8 x H200 141GB
    (r"H100\s+(PCIe|NVL)", None),
    (r"\bH100\b", "p5.48xlarge"),  # 8 x H100 80GB (SXM)
    (r"A100.*80GB", "p4de.24xlarge"),  # 8 x A100 80GB
    (r"\bA100\b", "p4d.24xlarge"),  # 8 x A100 40GB
    (r"\bL40S\b", "g6e.xlarge"),
    (r"\bL4\b", "g6.xlarge"),
    (r"\bA10G\b", "g5.xlarge"),
    (r"\bT4\b", "g4dn.xlarge"),
    (r"\bV100\b", "p3.2xlarge"),
)


def instance_for(gpu_name: str) -> str | None:
    """The instance a run on GPU_NAME is priced as, or None: no instance has that GPU."""
    for pattern, instance in INSTANCES:
        if re.search(pattern, gpu_name, flags=re.IGNORECASE):
            return instance
    return None


def rates(gpu_name: str) -> dict:
    """Assumed effective FLOP/s per precision on GPU_NAME (see the module's docstring)."""
    peak = peaks.lookup(gpu_name) or peaks.lookup(ESTIMATE_GPU)
    half = peak.bf16_tflops or peak.fp16_tflops
    return {
        "amp": 0.3 * peak.fp16_tflops * 1e12,
        "bf16": 0.3 * half * 1e12,
        "tf32": 0.3 * half / 2 * 1e12,
        "fp32": 0.5 * peak.fp32_tflops * 1e12,
    }


# The dry run's sizes: the tests' tiny widths of the same registry entries (same layers and code paths).
TINY = {
    "dcgan64": {"ngf": 8, "ndf": 8},
    "dcgan64-safe": {"ngf": 8, "ndf": 8, "nz": 16},
    "dcgan128": {"ngf": 4, "ndf": 4, "nz": 16},
    "resnet50": {"image_size": 32},
    "gpt2-small": {"layers": 2, "width": 32, "heads": 2, "context": 16, "vocabulary": 64},
    "llama-1b": {"layers": 2, "width": 32, "heads": 4, "kv_heads": 2, "context": 16, "vocabulary": 64},
}
TINY_RUN = ["--batch-size", "2", "--warmup", "1", "--steps", "1", "--windows", "1", "--threads", "1"]


@dataclass(frozen=True)
class Step:
    name: str  # also its folder and file names: letters, digits, '-'
    part: str
    gpu: list[str]  # the command on the GPU machine (after `python`)
    cpu: list[str] | None  # the dry run's command, or None: skipped
    compute_s: float  # its GPU seconds beyond a fresh process's start (START_S, or what was measured)
    # Of compute_s, the seconds outside its timed windows (compiling, the host's FLOP count): its measured
    # start-up (wall time less windows) includes them, so it is no fresh process's start (gpu_matrix.py).
    outside_windows_s: float = 0
    fresh_processes: int = 1  # fresh interpreters it starts, each paying the start
    expect: str = "ok"  # ok | oom (must leave an `oom` record) | search (exit 0; tries may run out of memory)
    records: bool = True  # leaves suite records in its folder
    cpu_note: str = ""  # why the dry run differs (mapped or skipped)
    bench: bool = False  # writes a bare-loop / peer JSON (--json FILE is appended)
    needs_module: str = ""  # an optional package it imports: skipped, with the reason, where it is missing
    needs_step: str = ""  # a step whose output it uses (the image folder): skipped where that is not ok
    tags: dict = field(default_factory=dict)

    def estimate_s(self, start_s: float = START_S) -> float:
        return round(self.fresh_processes * start_s + self.compute_s)


def suite(*args: str) -> list[str]:
    return ["-m", "suite", *args]


class Planner:
    """The steps for one GPU (its name chooses the instance and the rates) and one work folder."""

    def __init__(self, gpu_name: str, data: str, records: str, report: str, instance: str | None = None):
        self.gpu_name = gpu_name
        self.instance = instance
        self.rates = rates(gpu_name)
        self.data, self.records, self.report = data, records, report

    def priced(self) -> list[str]:
        return ["--instance", self.instance] if self.instance else []

    def timed_s(
        self, workload: str, precision: str, steps: int = CUDA_STEPS, batch: int | None = None
    ) -> float:
        """The timed windows and warm-up: the FLOP estimate, never under the windows' floor."""
        batch = batch or BATCH.get(workload, DEFAULT_BATCH)
        compute = steps * batch * FLOPS_PER_IMAGE[workload] / self.rates[precision]
        return max(compute, WINDOWS * MIN_WINDOW_S * WARMUP_MARGIN)

    def gpu_run(self, workload: str, *options: str) -> list[str]:
        return suite("run", "--backend", "cuda", "--workload", workload, *self.priced(), *options)

    def cpu_run(self, workload: str, *options: str) -> list[str]:
        model = [a for k, v in TINY.get(workload, {}).items() for a in ("--model-override", f"{k}={v}")]
        return suite(
            "run", "--backend", "cpu", "--workload", workload, *TINY_RUN, *model, *self.priced(), *options
        )

    def precision(self, part: str, workload: str, case: str, again: int = 0) -> Step:
        """AGAIN: the Nth repeat of a step already planned (a name of its own, the same command)."""
        gpu, cpu, note, key = PRECISION_CASES[case]
        return Step(
            f"{workload}-{case}" + (f"-{again}" if again else ""),
            part,
            self.gpu_run(workload, *gpu),
            self.cpu_run(workload, *cpu) if cpu else None,
            self.timed_s(workload, key),
            cpu_note=note,
        )

    def bare(self, part: str, workload: str, precision: str, again: int = 0, batch: int = 0) -> Step:
        """AGAIN as for precision(); BATCH (with --compile): the bare loop at a best-known configuration."""
        bare = ["benchmarks/bare_loop.py", "--workload", workload]
        model = [a for k, v in TINY.get(workload, {}).items() for a in ("--model-override", f"{k}={v}")]
        cpu_precision = "bf16" if precision == "amp" else precision
        best = ["--batch-size", str(batch), "--compile"] if batch else []
        notes = ["amp is CUDA's: the CPU pairs bf16 with the suite's bf16 step"] if precision == "amp" else []
        if batch:
            notes.append(
                "--compile is the GPU's here (the suite's CPU backend refuses it): uncompiled, batch 2"
            )
        return Step(
            f"{'best-' if batch else ''}bare-{workload}-{precision}"
            + (f"-compile-b{batch}" if batch else "")
            + (f"-{again}" if again else ""),
            part,
            [*bare, "--backend", "cuda", "--precision", precision, *best],
            [*bare, "--backend", "cpu", "--precision", cpu_precision, *TINY_RUN, *model],
            self.timed_s(workload, precision, batch=batch or None) + (COMPILE_S[workload] if batch else 0),
            outside_windows_s=COMPILE_S[workload] if batch else 0,
            records=False,
            bench=True,
            cpu_note="; ".join(notes),
        )

    def report_step(self) -> Step:
        command = suite("report", self.records, "--format", "md", "--out", self.report)
        return Step(
            "report",
            "every",
            command,
            [*command, "--price-as-if"],
            3,
            fresh_processes=0,  # `suite report` imports no torch: about a second
            records=False,
            cpu_note=f"--price-as-if: a CPU run named {self.instance} is priced only as hypothetical",
        )

    def quick(self) -> list[Step]:
        """The README's cuda row, most valuable first: whatever the budget cuts comes last."""
        return [
            Step(
                "nvidia-smi",
                "quick",
                ["-c", "import subprocess,sys; sys.exit(subprocess.call(['nvidia-smi','-q']))"],
                None,
                2,
                fresh_processes=0,
                records=False,
                cpu_note="no NVIDIA driver here; the GPU run keeps `nvidia-smi -q`",
            ),
            Step("env", "quick", suite("env"), suite("env"), 0, records=False),
            self.precision("quick", "dcgan64", "amp"),
            self.precision("quick", "resnet50", "amp"),
            self.bare("quick", "dcgan64", "amp"),
            self.bare("quick", "resnet50", "amp"),
            self.precision("quick", "dcgan64", "bf16"),
            self.precision("quick", "resnet50", "bf16"),
            self.precision("quick", "dcgan64", "fp32"),
            self.precision("quick", "resnet50", "fp32"),
            self.precision("quick", "gpt2-small", "bf16"),
            self.bare("quick", "gpt2-small", "bf16"),
            Step(
                "peer-timm-resnet50-amp",
                "quick",
                ["benchmarks/timm_peer.py", "--device", "cuda", "--precision", "amp", "--batch-size", "256"],
                [
                    "benchmarks/timm_peer.py",
                    *("--device", "cpu", "--precision", "bfloat16", "--batch-size", "2", "--img-size", "32"),
                    *("--num-warm-iter", "1", "--num-bench-iter", "1", "--threads", "1"),
                ],
                # timm's method: 10 warm-up and 40 timed steps
                50 * DEFAULT_BATCH * FLOPS_PER_IMAGE["resnet50"] / self.rates["amp"],
                records=False,
                bench=True,
                needs_module="timm",
                cpu_note="bfloat16 (timm's whole-model bf16) for amp, which is fp16 on the GPU",
            ),
            Step(
                "oom-resnet50-b4096",
                "quick",
                self.gpu_run("resnet50", "--precision", "fp32", "--batch-size", "4096", "--windows", "1"),
                self.cpu_run("dcgan64", "--batch-size", "64", "--max-memory", "1MiB"),
                5,
                expect="oom",
                cpu_note="--max-memory 1MiB stands in for device memory",
            ),
            Step(
                "after-oom-resnet50",
                "quick",
                self.gpu_run("resnet50", "--precision", "bf16", "--windows", "2"),
                self.cpu_run("resnet50", "--precision", "bf16"),
                self.timed_s("resnet50", "bf16") * 2 / WINDOWS,
            ),
            # `-o addopts=`: the project's addopts spread tests over cores with pytest-xdist, which a bare
            # GPU machine may not have; the GPU tests share one device and run in one process anyway.
            Step(
                "pytest-gpu",
                "quick",
                ["-m", "pytest", "-o", "addopts=", "-m", "gpu", "tests/gpu", "-q", "-p", "no:cacheprovider"],
                ["-m", "pytest", "-o", "addopts=", "-m", "gpu", "tests/gpu", "-q", "-p", "no:cacheprovider"],
                30,
                records=False,
                cpu_note="every test skips: no CUDA device",
            ),
        ]

    def more(self) -> list[Step]:
        return [
            self.precision("more", "dcgan64", "tf32"),
            self.precision("more", "resnet50", "tf32"),
            self.bare("more", "dcgan64", "fp32"),
            self.bare("more", "resnet50", "fp32"),
            Step(
                "resnet50-channels-last",
                "more",
                self.gpu_run("resnet50", "--precision", "amp", "--channels-last"),
                None,
                self.timed_s("resnet50", "amp"),
                cpu_note="--channels-last is a CUDA option (the CPU backend refuses it)",
            ),
            self.precision("more", "dcgan64-safe", "amp"),
            self.precision("more", "dcgan128", "amp"),
            Step(
                "numerics-dcgan64-bf16",
                "more",
                self.gpu_run("dcgan64", "--precision", "bf16", "--windows", "2", "--check-numerics"),
                self.cpu_run("dcgan64", "--precision", "bf16", "--check-numerics"),
                self.timed_s("dcgan64", "bf16") + 10,
            ),
            # dcgan64 at amp is bound by kernel launches on a large GPU, and its processes spread by ±10 %
            # (an H200 gave suite ÷ bare 1.21 in one command and 0.89 in another): two more suite runs and
            # bare loops, interleaved, so the report's ratio of medians rests on three processes a side.
            *(
                step
                for again in (2, 3)
                for step in (
                    self.precision("more", "dcgan64", "amp", again),
                    self.bare("more", "dcgan64", "amp", again),
                )
            ),
        ]

    def extra(self) -> list[Step]:
        photos, cache = f"{self.data}/photos", f"{self.data}/cache64"
        steps = [
            Step("list", "extra", suite("list"), suite("list"), 0, records=False),
            # `suite diagnose` runs each arm in three fresh processes, interleaved: nine processes, too
            # many for the quick part (one round took 88 s on an H200).
            Step(
                "data-synth",
                "extra",
                suite(
                    "data", "synth", "--out", photos, "--count", "1024", "--size", "96x96", "--classes", "4"
                ),
                suite("data", "synth", "--out", photos, "--count", "24", "--size", "72x72", "--classes", "2"),
                3,
                records=False,
            ),
            Step(
                "diagnose-folder",
                "extra",
                suite(
                    *("diagnose", "--data", photos, "--backend", "cuda", "--workload", "dcgan64"),
                    *("--precision", "amp", "--workers", "8"),
                    *(("--set", f"instance={self.instance}") if self.instance else ()),
                ),
                suite(
                    *("diagnose", "--data", photos, "--backend", "cpu", "--workload", "dcgan64"),
                    *("--precision", "bf16", "--batch-size", "2", "--workers", "1", *tiny_sets("dcgan64")),
                ),
                # a parent and 3 rounds of three fresh processes (loader only, synthetic, the folder),
                # interleaved: six runs and three loader-only measurements of about 5 s
                6 * self.timed_s("dcgan64", "amp") + 3 * 5 + 10,
                fresh_processes=9,
                needs_step="data-synth",
                cpu_note="bf16 for amp; 1 worker",
            ),
        ]
        for workload in ("dcgan64-safe", "dcgan128"):
            steps += [self.precision("extra", workload, case) for case in ("bf16", "fp32", "tf32")]
        steps += [
            Step(
                "numerics-dcgan64-bf16-vs-cpu",
                "extra",
                self.gpu_run(
                    *("dcgan64", "--precision", "bf16", "--windows", "2", "--check-numerics"),
                    *("--reference-backend", "cpu"),
                ),
                self.cpu_run(
                    "dcgan64", "--precision", "bf16", "--check-numerics", "--reference-backend", "cpu"
                ),
                self.timed_s("dcgan64", "bf16") + 30,
                cpu_note="the reference backend is the run's own here",
            ),
            Step(
                "resnet50-compile",
                "extra",
                self.gpu_run("resnet50", "--precision", "amp", "--compile"),
                None,
                self.timed_s("resnet50", "amp") + COMPILE_S["resnet50"],
                outside_windows_s=COMPILE_S["resnet50"],
                cpu_note="--compile is a CUDA option (the CPU backend refuses it)",
            ),
            Step(
                "timm-convnext-tiny",
                "extra",
                self.gpu_run("timm:convnext_tiny", "--precision", "bf16", "--batch-size", "128"),
                suite(
                    *("run", "--backend", "cpu", "--workload", "timm:convnext_tiny", *TINY_RUN),
                    *("--image-size", "32", "--precision", "bf16", *self.priced()),
                ),
                25,
                needs_module="timm",
            ),
            Step(
                "data-prepare",
                "extra",
                suite("data", "prepare", photos, "--size", "64", "--out", cache),
                suite("data", "prepare", photos, "--size", "64", "--out", cache, "--workers", "1"),
                5,
                records=False,
                needs_step="data-synth",
            ),
            Step(
                "dcgan64-cache",
                "extra",
                self.gpu_run("dcgan64", "--precision", "amp", "--data", cache),
                self.cpu_run("dcgan64", "--precision", "bf16", "--data", cache),
                self.timed_s("dcgan64", "amp"),
                needs_step="data-prepare",
                cpu_note="bf16 for amp (CUDA's)",
            ),
        ]
        for gpu_workers, cpu_workers in ((4, 1), (8, 2), (16, 4)):
            steps.append(
                Step(
                    f"dcgan64-folder-w{gpu_workers}",
                    "extra",
                    self.gpu_run(
                        "dcgan64", "--precision", "amp", "--data", photos, "--workers", str(gpu_workers)
                    ),
                    self.cpu_run(
                        "dcgan64", "--precision", "bf16", "--data", photos, "--workers", str(cpu_workers)
                    ),
                    self.timed_s("dcgan64", "amp") + 10,
                    needs_step="data-synth",
                    cpu_note=f"{cpu_workers} workers on 2 cores for {gpu_workers}; bf16 for amp",
                )
            )
        steps.append(
            Step(
                "batch-size-resnet50",
                "extra",
                suite(
                    *("batch-size", "--backend", "cuda", "--workload", "resnet50", "--precision", "bf16"),
                    *("--start", "128", "--max-batch", "4096", "--granularity", "128"),
                    *("--set", "warmup=2", "--set", "steps=3", "--set", "windows=1", "--try-timeout", "90"),
                ),
                suite(
                    *("batch-size", "--backend", "cpu", "--workload", "resnet50", "--precision", "bf16"),
                    # the try timeout a safety net far above a tiny try's seconds: a busy host is slow
                    *("--start", "2", "--max-batch", "8", "--max-memory", "1GiB", "--try-timeout", "900"),
                    *tiny_sets("resnet50"),
                ),
                9 * 5,
                fresh_processes=10,  # the search and its tries
                expect="search",
                cpu_note="--max-memory 1GiB stands in for device memory",
            )
        )
        return steps

    def tune(self) -> list[Step]:
        """`suite tune` of each TUNED workload within TUNE_BUDGET_S (a cap: it ends sooner where every knob
        is searched). The dry run tunes the same workload at its tiny widths with the precision and the
        threads given (so the search runs the default only, and its plan, table and records are proven
        in seconds); the trials themselves are tests/test_tune.py's."""
        steps = []
        for workload in TUNED:
            priced = ("--set", f"instance={self.instance}") if self.instance else ()
            steps.append(
                Step(
                    f"tune-{workload}",
                    "tune",
                    suite(
                        "tune",
                        "--backend",
                        "cuda",
                        "--workload",
                        workload,
                        "--budget",
                        f"{TUNE_BUDGET_S}s",
                        *priced,
                    ),
                    suite(
                        *("tune", "--backend", "cpu", "--workload", workload, "--budget", "120s"),
                        *("--set", "batch-size=2", "--set", "precision=fp32", *tiny_sets(workload), *priced),
                    ),
                    TUNE_BUDGET_S,
                    fresh_processes=0,  # its runs' start-ups are inside its budget
                    expect="search",  # a trial may run out of memory or fail: the search goes on
                    cpu_note="tiny widths, --set precision=fp32 and threads=1: the default alone (its trials are "
                    "tests/test_tune.py's)",
                )
            )
        return steps

    def best_run(self, part: str, workload: str, precision: str, batch: int = 0) -> Step:
        """A best-known configuration, as a plain `suite run` line: PRECISION at BATCH, compiled, and
        channels-last for an image model; without BATCH the workload's default batch beside it, eager.
        The dry run trains a default at its tiny widths (bf16 for amp, CUDA's); a compiled line it skips,
        since the CPU backend refuses --compile and --channels-last (tests/test_gpu_matrix_best.py plans
        each GPU line with the suite's own planner instead)."""
        layout = ["--channels-last"] if workload in IMAGE_MODELS else []
        best = [*layout, "--compile", "--batch-size", str(batch)] if batch else []
        tag = f"-{'cl-' if layout else ''}compile-b{batch}" if batch else ""
        compile_s = COMPILE_S[workload] if batch else 0
        # llama-1b's FLOP count runs once, in its first run: the default, planned before its compiled line
        count_s = 0 if batch else HOST_FLOP_COUNT_S.get(workload, 0)
        return Step(
            f"best-{workload}-{precision}{tag}",
            part,
            self.gpu_run(workload, "--precision", precision, *best),
            None if batch else self.cpu_run(workload, "--precision", "bf16"),
            self.timed_s(workload, precision, batch=batch or None) + compile_s + count_s,
            outside_windows_s=compile_s + count_s,
            cpu_note=(
                "--channels-last and --compile are CUDA options (the CPU backend refuses them)"
                if batch
                else ("bf16 for amp (CUDA's)" if precision == "amp" else "")
            ),
        )

    def best(self) -> list[Step]:
        """The first command of a lease: what a buyer compares, most valuable first. llama-1b's default
        fills a cuda cell never run; each workload's best candidate stands beside its default (the suite's
        best so far: resnet50 amp + channels-last 5,729 img/s, gpt2-small bf16 batch 16 238,654 tok/s);
        batch 64 × 1,024 tokens is llm.c's micro-batch; the bare loop at it gives suite ÷ bare compiled."""
        return [
            self.best_run("best", "llama-1b", "bf16"),
            self.best_run("best", "resnet50", "amp"),
            self.best_run("best", "resnet50", "amp", batch=256),
            self.best_run("best", "gpt2-small", "bf16"),
            self.best_run("best", "gpt2-small", "bf16", batch=64),
            self.best_run("best", "llama-1b", "bf16", batch=4),
            self.bare("best", "gpt2-small", "bf16", batch=64),
        ]

    def best_more(self) -> list[Step]:
        """The rest of the best-known configurations, for the lease's second command."""
        return [
            self.best_run("best-more", "resnet50", "amp", batch=512),
            self.best_run("best-more", "gpt2-small", "bf16", batch=32),
            self.best_run("best-more", "resnet50", "bf16", batch=256),
            self.best_run("best-more", "resnet50", "bf16", batch=512),
        ]

    def steps(self) -> list[Step]:
        """Every step, parts in order, and the report last."""
        return [
            *self.quick(),
            *self.more(),
            *self.extra(),
            *self.tune(),
            *self.best(),
            *self.best_more(),
            self.report_step(),
        ]


PRECISION_CASES = {  # name: (GPU options, CPU stand-in options or None, why the CPU differs, rate key)
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


def tiny_sets(workload: str) -> list[str]:
    """TINY_RUN and the tiny widths as the `--set name=value` pairs of commands that start runs."""
    model = [a for k, v in TINY.get(workload, {}).items() for a in ("--model-override", f"{k}={v}")]
    pairs = list(zip(TINY_RUN[::2], TINY_RUN[1::2])) + list(zip(model[::2], model[1::2]))
    return [a for flag, value in pairs if flag != "--batch-size" for a in ("--set", f"{flag[2:]}={value}")]


def plan(data: str, records: str, report: str, gpu_name: str = DEFAULT_GPU) -> list[Step]:
    """Every step for GPU_NAME, priced as its instance. DATA: the folder for the images the data steps
    make; RECORDS: the folder of every step's records; REPORT: the markdown file `suite report` writes."""
    return Planner(gpu_name, data, records, report, instance_for(gpu_name)).steps()


def command(step: Step, dry: bool) -> list[str] | None:
    argv = step.cpu if dry else step.gpu
    return None if argv is None else [sys.executable, *argv]
