"""What the telemetry sampler costs: dcgan64 on the cpu backend, with and without telemetry.

Runs the real runner in pairs, alternating which goes first (so drift in machine load hits both
sides alike), and reports each side's median throughput and their ratio. "Without" replaces the
runner's Telemetry with one that starts no thread and samples nothing.

    python benchmarks/telemetry_overhead.py                      # defaults: batch 16, 3 pairs
    python benchmarks/telemetry_overhead.py --ngf 16 --ndf 16 --pairs 2 --batch-size 8   # quick
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from suite import runner  # noqa: E402
from suite.measurement.telemetry import Telemetry  # noqa: E402
from suite.spec import RunSpec  # noqa: E402


class NoTelemetry:
    """The Telemetry interface, doing nothing: no thread, no samples."""

    def __init__(self, samplers, interval_s: float = 0.15):
        pass

    def window_open(self) -> None:
        pass

    def window_closed(self) -> None:
        pass

    def close(self) -> dict:
        return {"samples": 0, "summary": {}, "series": [], "windows_s": [], "counters": {}, "failed": {}}


def measure(args, telemetry_on: bool) -> tuple[float, int]:
    runner.Telemetry = Telemetry if telemetry_on else NoTelemetry
    overrides = {k: v for k, v in (("ngf", args.ngf), ("ndf", args.ndf)) if v}
    config = RunSpec().replace(
        backend="cpu",
        workload="dcgan64",
        batch_size=args.batch_size,
        precision="fp32",
        warmup_steps=args.warmup,
        steps_per_window=args.steps,
        windows=args.windows,
        threads=args.threads,
        model_overrides=overrides,
    )
    record = runner.execute(runner.plan_run(config))
    if record["status"] != "ok":
        raise SystemExit(f"run failed: {record['error']}")
    return record["metrics"]["images_per_second"], record["telemetry"]["samples"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3, help="with/without pairs (default 3)")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--steps", type=int, default=5, help="steps per window")
    parser.add_argument("--windows", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--ngf", type=int, default=None, help="generator width (default: dcgan64's 64)")
    parser.add_argument("--ndf", type=int, default=None, help="discriminator width (default: dcgan64's 64)")
    args = parser.parse_args()

    rates: dict[bool, list[float]] = {True: [], False: []}
    samples: list[int] = []
    print("pair  first    with (img/s)  without (img/s)  samples")
    for pair in range(args.pairs):
        order = (True, False) if pair % 2 == 0 else (False, True)
        result = {}
        for telemetry_on in order:
            result[telemetry_on] = measure(args, telemetry_on)
        rates[True].append(result[True][0])
        rates[False].append(result[False][0])
        samples.append(result[True][1])
        print(
            f"{pair + 1:>4}  {'with' if order[0] else 'without':<7}  {result[True][0]:>12.2f}  "
            f"{result[False][0]:>15.2f}  {result[True][1]:>7}"
        )
    with_median, without_median = statistics.median(rates[True]), statistics.median(rates[False])
    ratio = with_median / without_median
    print(
        f"median: with {with_median:.2f} img/s, without {without_median:.2f} img/s, "
        f"ratio with/without {ratio:.3f} ({(ratio - 1) * 100:+.1f} %), "
        f"{statistics.median(samples):.0f} samples per run"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
