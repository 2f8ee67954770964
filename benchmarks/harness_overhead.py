"""What does the harness cost? The suite's dcgan64 measurement against a plain hand-written loop.

Both train the same model (the registry's dcgan64 architecture) at the same batch size and thread count
on the CPU. They run alternately, round after round, in one process, so drift in the machine's speed hits
both alike; the headline is the median of each round's paired ratio (suite / plain), which cancels drift
that the two sides' separate medians would not. The suite side is the real thing: `suite.measurement.runner.execute`,
with its telemetry thread, loss bookkeeping and window synchronisation. Goal: ratio >= 0.98.

    python benchmarks/harness_overhead.py [--batch-size 64] [--steps 10] [--rounds 7] [--threads 2]

On a noisy machine the rounds can vary by more than the 2% the goal is about, so the script also
measures the harness's own cost per step directly: the runner driving a step that does nothing (the same
loop, telemetry thread, loss list and window edges) against a bare Python loop calling the same step.
That cost, divided by a real dcgan64 step's time, is the overhead with no model noise in it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from suite.backends.cpu import CPUBackend  # noqa: E402
from suite.workloads import get_workload  # noqa: E402
from suite.workloads.base import Training, Workload  # noqa: E402
from suite.workloads.dcgan import ADAMW  # noqa: E402

from suite import runner  # noqa: E402
from suite.config import RunConfig  # noqa: E402


class NoopTraining(Training):
    """A step that does nothing: what remains of a window's time is the harness."""

    def train_step(self, batch):
        return self.optimizers["loss"]


class Noop(Workload):
    def build_modules(self, device="cpu"):
        return {}

    def build(self, backend):
        return NoopTraining(backend, {}, {"loss": torch.zeros(2)})


def harness_seconds_per_step(steps: int) -> tuple[float, float]:
    """(seconds per step through the runner, seconds per step of a bare loop) for a no-op step."""
    config = RunConfig(
        backend="cpu", workload="noop", batch_size=1, warmup_steps=1, steps_per_window=steps, windows=3
    )
    workload = Noop("noop", "a step that does nothing", image_size=1, default_batch_size=1, num_classes=1)
    record = runner.execute(runner.Plan(config, CPUBackend(config), workload, "asked for"))
    training = workload.build(None)
    batch = (torch.zeros(1), torch.zeros(1))
    bare = []
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(steps):
            training.train_step(batch)
        bare.append((time.perf_counter() - start) / steps)
    return record["metrics"]["step_time_s"], statistics.median(bare)


def plain_loop(batch_size: int, steps: int, warmup: int) -> float:
    """The loop a person would write by hand: no backend verbs, no telemetry, no bookkeeping."""
    workload = get_workload("dcgan64")
    modules = workload.build_modules()
    netG, netD = modules["generator"], modules["discriminator"]
    optG = torch.optim.AdamW(netG.parameters(), **ADAMW)
    optD = torch.optim.AdamW(netD.parameters(), **ADAMW)
    criterion = nn.BCEWithLogitsLoss()
    real = torch.rand(batch_size, 3, 64, 64) * 2 - 1
    ones, zeros = torch.ones(batch_size), torch.zeros(batch_size)

    def step():
        z = torch.randn(batch_size, workload.nz, 1, 1)
        optD.zero_grad(set_to_none=True)
        fake = netG(z)
        loss_d = criterion(netD(real).view(-1), ones) + criterion(netD(fake.detach()).view(-1), zeros)
        loss_d.backward()
        optD.step()
        optG.zero_grad(set_to_none=True)
        loss_g = criterion(netD(fake).view(-1), ones)
        loss_g.backward()
        optG.step()

    for _ in range(warmup):
        step()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return batch_size * steps / (time.perf_counter() - start)


def suite_loop(batch_size: int, steps: int, warmup: int, threads: int) -> float:
    config = RunConfig(
        backend="cpu",
        workload="dcgan64",
        batch_size=batch_size,
        warmup_steps=warmup,
        steps_per_window=steps,
        windows=1,
        threads=threads,
    )
    record = runner.execute(runner.plan_run(config))
    assert record["status"] == "ok", record["error"]
    return record["metrics"]["images_per_second"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    suite_rates, plain_rates = [], []
    for round_index in range(args.rounds):
        # Alternate which goes first, so neither always follows the other.
        order = ("suite", "plain") if round_index % 2 == 0 else ("plain", "suite")
        for which in order:
            if which == "suite":
                suite_rates.append(suite_loop(args.batch_size, args.steps, args.warmup, args.threads))
            else:
                plain_rates.append(plain_loop(args.batch_size, args.steps, args.warmup))
        print(
            f"round {round_index + 1}/{args.rounds}: suite {suite_rates[-1]:.2f} img/s, "
            f"plain {plain_rates[-1]:.2f} img/s, ratio {suite_rates[-1] / plain_rates[-1]:.3f}",
            flush=True,
        )

    suite_median, plain_median = statistics.median(suite_rates), statistics.median(plain_rates)
    ratios = [s / p for s, p in zip(suite_rates, plain_rates)]
    print(
        f"\ndcgan64, cpu, batch {args.batch_size}, {args.threads} threads, {args.steps} steps per window, "
        f"{args.rounds} rounds"
    )
    print(f"suite  {suite_median:8.2f} img/s median ({min(suite_rates):.2f} … {max(suite_rates):.2f})")
    print(f"plain  {plain_median:8.2f} img/s median ({min(plain_rates):.2f} … {max(plain_rates):.2f})")
    harness_s, bare_s = harness_seconds_per_step(20_000)
    plain_step_s = args.batch_size / plain_median
    print(
        f"\nharness cost per step (no-op step): {harness_s * 1e6:.2f} µs through the runner, {bare_s * 1e6:.2f} µs "
        f"in a bare loop: {(harness_s - bare_s) * 1e6:.2f} µs per step, "
        f"{(harness_s - bare_s) / plain_step_s:.4%} of a {plain_step_s * 1000:.0f} ms dcgan64 step "
        f"(ratio {1 - (harness_s - bare_s) / plain_step_s:.5f})"
    )
    print(
        f"ratio  {statistics.median(ratios):.3f} median of paired rounds ({min(ratios):.3f} … {max(ratios):.3f}); "
        f"ratio of medians {suite_median / plain_median:.3f}  (suite / plain; goal >= 0.98)"
    )


if __name__ == "__main__":
    main()
