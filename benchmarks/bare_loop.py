"""The bare loop: the suite's dcgan64, resnet50 or gpt2-small training step written by hand, with no harness.

Same model (the registry's architecture and initialisation), optimizer and hyper-parameters (AdamW for
each DCGAN network and for GPT-2, SGD for ResNet-50; fused on CUDA, as the suite's CUDA backend builds
them), batch
(the suite's synthetic batch: one batch made on the device and reused), precision (fp32 with TF32 off
unless --tf32; bf16 autocast; amp = fp16 autocast with one GradScaler updated once per iteration),
cuDNN autotuning and, with --compile, each module through torch.compile (cuda only, as `suite run
--compile`). No backend object, no telemetry thread, no record: warm-up steps, then timed windows, the
device synchronised only at window edges; the rate is the median over windows of images ÷ wall time.

Window length: as the suite's, so that suite ÷ bare compares windows of the same length. Without --steps,
a window grows as `suite run`'s do on CUDA (suite/measurement/window_length.py): the last warm-up steps
are timed, the device synchronised at both edges (warm-up, not a window), and a window holds the fewest
steps that last --min-window-s, never fewer than 10 nor more than 1000. Those defaults (1 s, 10 and 1000
steps, 3 warm-up steps) are the CUDA backend's schedule (backends/cuda.py), written out here so that this
loop imports nothing of the harness (tests/test_window_length.py checks that they agree); on the cpu, whose
backend declares no minimum, a window holds 10 steps.
`--steps N` is taken as given, with no growth: give it a run's `metrics.steps_per_window` to time exactly
the windows that run timed.

    python benchmarks/bare_loop.py --backend cpu --workload dcgan64 --batch-size 16
    python benchmarks/bare_loop.py --backend cuda --workload resnet50 --precision amp --json bare.json

`suite run` with the same --backend/--workload/--batch-size/--precision measures the same thing through
the harness; `benchmarks/gpu_matrix.py` prints suite ÷ bare for each pair it runs (goal: >= 0.98).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import statistics
import sys
import time

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from suite.workloads import get_workload  # noqa: E402
from suite.workloads.dcgan import ADAMW  # noqa: E402
from suite.workloads.gpt import ADAMW as GPT_ADAMW  # noqa: E402
from suite.workloads.resnet import SGD  # noqa: E402

WORKLOADS = ("dcgan64", "resnet50", "gpt2-small")
PRECISIONS = ("fp32", "bf16", "amp")
# The CUDA backend's schedule (backends/cuda.py): windows of at least 10 steps, grown to last 1 s, at most
# 1000 steps. The CPU backend declares no minimum window.
DEFAULT_STEPS = 10
MAX_STEPS = 1000
MIN_WINDOW_S = {"cuda": 1.0, "cpu": None}
# Grown to 1.5 times the minimum: warm-up steps run slower than timed ones (suite/measurement/window_length.py).
WARMUP_MARGIN = 1.5


def optimizer(kind, params, device: torch.device, precision: str, **hyper):
    # The suite's CUDA backend asks for fused=True (one kernel per update), except for SGD under a
    # GradScaler (amp), whose skipped steps fused SGD mishandles (backends/cuda.py, make_optimizer); the
    # CPU backend never does.
    fused = device.type == "cuda" and not (kind is torch.optim.SGD and precision == "amp")
    return kind(params, fused=True, **hyper) if fused else kind(params, **hyper)


def build(workload, device: torch.device, precision: str, batch_size: int, compiled: bool = False):
    """(step function, images per step) for the workload, written out in plain PyTorch; COMPILED: each
    module through torch.compile in its default mode, as the suite's --compile does (backends/cuda.py)."""
    torch.manual_seed(0)  # the suite's default seed: the same initial weights
    modules = {name: module.to(device) for name, module in workload.build_modules().items()}
    if compiled:
        modules = {name: torch.compile(module) for name, module in modules.items()}
    scaler = torch.amp.GradScaler(device.type) if precision == "amp" else None
    dtype = {"bf16": torch.bfloat16, "amp": torch.float16}.get(precision)

    def autocast():
        return torch.autocast(device.type, dtype=dtype) if dtype else contextlib.nullcontext()

    def backward_and_step(loss, opt):
        if scaler is None:
            loss.backward()
            opt.step()
        else:
            scaler.scale(loss).backward()
            scaler.step(opt)

    images, labels = workload.synthetic_batch(batch_size, device)
    if workload.unit == "tokens":  # a decoder: next-token cross-entropy over every position, AdamW
        model = modules["model"]
        opt = optimizer(torch.optim.AdamW, model.parameters(), device, precision, **GPT_ADAMW)
        inputs, targets = images, labels  # token ids, and the same shifted by one

        def step():
            opt.zero_grad(set_to_none=True)
            with autocast():
                logits = model(inputs)
                loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
            backward_and_step(loss, opt)
            if scaler is not None:
                scaler.update()

    elif workload.num_classes == 0:  # DCGAN: a discriminator step on real and fake, then a generator step
        netG, netD = modules["generator"], modules["discriminator"]
        optG = optimizer(torch.optim.AdamW, netG.parameters(), device, precision, **ADAMW)
        optD = optimizer(torch.optim.AdamW, netD.parameters(), device, precision, **ADAMW)
        criterion = nn.BCEWithLogitsLoss()
        n = images.shape[0]
        ones, zeros = torch.ones(n, device=device), torch.zeros(n, device=device)

        def step():
            z = torch.randn(n, workload.nz, 1, 1, device=device)
            optD.zero_grad(set_to_none=True)
            with autocast():
                fake = netG(z)
                loss_d = criterion(netD(images).view(-1), ones) + criterion(
                    netD(fake.detach()).view(-1), zeros
                )
            backward_and_step(loss_d, optD)
            optG.zero_grad(set_to_none=True)
            with autocast():
                loss_g = criterion(netD(fake).view(-1), ones)
            backward_and_step(loss_g, optG)
            if scaler is not None:
                scaler.update()  # once per iteration, after both optimizers

    else:  # a classifier: cross-entropy, SGD
        model = modules["model"]
        opt = optimizer(torch.optim.SGD, model.parameters(), device, precision, **SGD)
        criterion = nn.CrossEntropyLoss()

        def step():
            opt.zero_grad(set_to_none=True)
            with autocast():
                loss = criterion(model(images), labels)
            backward_and_step(loss, opt)
            if scaler is not None:
                scaler.update()

    return step, images.shape[0]


def steps_to_fill(min_window_s: float, step_time_s: float, max_steps: int = MAX_STEPS) -> int:
    """The fewest steps of `step_time_s` that last `min_window_s`, from DEFAULT_STEPS to `max_steps`."""
    # A ratio a hair over a whole number (0.07 / 0.01 = 7.000000000000001) is that number.
    needed = max_steps if step_time_s <= 0 else math.ceil(min_window_s / step_time_s * (1 - 1e-9))
    return max(DEFAULT_STEPS, min(max_steps, needed))


def measure(
    step,
    images_per_step: int,
    sync,
    warmup: int,
    steps: int | None,
    windows: int,
    min_window_s: float | None = None,
    max_steps: int = MAX_STEPS,
    clock=time.perf_counter,
) -> tuple[list[float], int, float | None]:
    """(images per second of each timed window, steps per window, one warm-up step's time or None); the
    device synchronised at window edges only. `steps` None: DEFAULT_STEPS, grown from the last warm-up
    steps' time so that a window lasts `min_window_s` (where given)."""
    timed = max(1, warmup - 1) if steps is None and min_window_s and warmup else 0
    start = None
    for index in range(warmup):
        if index == warmup - timed:
            sync()  # warm-up, no window open: the timed warm-up steps start on an idle device
            start = clock()
        step()
    step_time_s = None
    if start is not None:
        sync()  # warm-up's end: the timed warm-up steps are done
        step_time_s = (clock() - start) / timed
    if steps is None:
        steps = (
            DEFAULT_STEPS
            if step_time_s is None
            else steps_to_fill(min_window_s * WARMUP_MARGIN, step_time_s, max_steps)
        )
    rates = []
    for _ in range(windows):
        sync()
        start = clock()
        for _ in range(steps):
            step()
        sync()
        rates.append(images_per_step * steps / (clock() - start))
    return rates, steps, step_time_s


def parse_override(text: str) -> tuple[str, int]:
    key, _, value = text.partition("=")
    if not key or not value.isdigit():
        raise argparse.ArgumentTypeError(f"--model-override {text!r}: expected KEY=INTEGER, e.g. ngf=8")
    return key, int(value)


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--backend", choices=("cpu", "cuda"), default="cuda" if torch.cuda.is_available() else "cpu"
    )
    parser.add_argument("--workload", choices=WORKLOADS, default="dcgan64")
    parser.add_argument("--precision", choices=PRECISIONS, default="fp32")
    parser.add_argument("--tf32", action="store_true", help="allow TF32 for fp32 math (cuda; default off)")
    parser.add_argument("--batch-size", type=int, default=None, help="default: the workload's")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument(
        "--steps",
        type=int,
        default=None,
        help="steps per timed window, as given (default: 10, grown to last --min-window-s)",
    )
    parser.add_argument(
        "--min-window-s",
        type=float,
        default=None,
        help="without --steps, grow a window to last this long (default: cuda 1.0, cpu none)",
    )
    parser.add_argument("--windows", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (cpu)")
    parser.add_argument("--model-override", type=parse_override, action="append", default=[], metavar="KEY=N")
    parser.add_argument("--json", metavar="FILE", help="also write the result as JSON here")
    parser.add_argument(
        "--compile",
        action="store_true",
        help="torch.compile the model(s), default mode (cuda; compile time in warm-up)",
    )
    return parser


def main(argv=None) -> int:
    parser = make_parser()
    args = parser.parse_args(argv)

    if args.steps is not None and args.steps < 1:
        parser.error(f"--steps must be a whole number >= 1, got {args.steps}")
    if args.min_window_s is not None and not args.min_window_s > 0:  # NaN is refused too
        parser.error(f"--min-window-s must be a number of seconds > 0, got {args.min_window_s}")
    if args.backend == "cpu" and args.precision == "amp":
        parser.error("--precision amp (fp16 autocast + GradScaler) is CUDA's; on the cpu use fp32 or bf16")
    if args.backend == "cpu" and args.compile:  # as the suite's CPU backend refuses --compile
        parser.error("--compile is CUDA's here, as in the suite; on the cpu leave it out")
    if args.backend == "cuda" and not torch.cuda.is_available():
        parser.error("--backend cuda: no CUDA device is visible")
    if args.threads:
        torch.set_num_threads(args.threads)
    workload = get_workload(args.workload)
    if args.model_override:
        workload = workload.with_overrides(**dict(args.model_override))
    batch_size = args.batch_size or workload.default_batch_size
    device = torch.device(args.backend)
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True  # as the suite's CUDA backend sets it
        torch.backends.cuda.matmul.allow_tf32 = args.tf32
        torch.backends.cudnn.allow_tf32 = args.tf32
        sync = torch.cuda.synchronize
    else:
        sync = lambda: None  # noqa: E731 - the CPU runs each op to completion

    step, images_per_step = build(workload, device, args.precision, batch_size, args.compile)
    min_window_s = MIN_WINDOW_S[args.backend] if args.min_window_s is None else args.min_window_s
    rates, steps, step_time_s = measure(
        step, images_per_step, sync, args.warmup, args.steps, args.windows, min_window_s
    )
    if args.steps is not None:
        chosen_by, how = "--steps", "as given by --steps"
    elif step_time_s is None:
        chosen_by, how = "default", "the default: no minimum window, or no warm-up step to time"
    else:
        chosen_by = "warm-up timing"
        how = (
            f"from warm-up timing, {step_time_s * 1000:.3g} ms a step: a window of >= {min_window_s:g} s, "
            f"{DEFAULT_STEPS} to {MAX_STEPS} steps"
        )
    result = {
        "kind": "bare_loop",
        "backend": args.backend,
        "workload": args.workload,
        "precision": args.precision,
        "tf32": args.tf32,
        "compile": args.compile,
        "batch_size": batch_size,
        "warmup_steps": args.warmup,
        "steps_per_window": steps,
        "steps_per_window_chosen_by": chosen_by,
        "min_window_s": min_window_s,
        "warmup_step_time_s": step_time_s,
        "windows": args.windows,
        "model_overrides": dict(args.model_override),
        "window_images_per_second": rates,
        "images_per_second": statistics.median(rates),
        "torch": torch.__version__,
    }
    rate = f"{result['images_per_second']:.2f} img/s"
    if workload.unit == "tokens":  # a sample is a sequence: the rate in tokens, as `suite run` gives it
        per_sample = workload.units_per_sample()
        result["tokens_per_sample"] = per_sample
        result["tokens_per_second"] = result["images_per_second"] * per_sample
        rate = (
            f"{result['tokens_per_second']:,.0f} tok/s ({result['images_per_second']:.2f} sequences/s "
            f"of {per_sample:,} tokens)"
        )
    print(
        f"bare loop: {args.workload} on {args.backend}, {args.precision}{', compiled' if args.compile else ''}, "
        f"batch {batch_size}: "
        f"{rate} median of {args.windows} windows × {steps} steps ({how})"
    )
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(result, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
