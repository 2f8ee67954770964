"""How often does `suite compare` call a difference that is not there? A seeded null experiment.

Both sides are drawn from one distribution: CONFIGS configurations (batch sizes 1, 2, …), RUNS runs a
side, each run's rate 100 img/s × exp(N(0, SIGMA)) (log-normal run-to-run noise). Every "faster" or
"slower" is false. For each seed, the number of false verdicts; then the share of seeds with any, and
with more than one, under the chosen correction.

    python benchmarks/compare_null.py [--configs 20] [--runs 3] [--seeds 200] [--correction auto|holm|bh|none]

`--correction none` is the decision rule without family control (each test at α = 0.05 alone).
Synthetic records only: no run is made, the result does not depend on this machine.
"""

from __future__ import annotations

import argparse
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from suite import run_record  # noqa: E402
from suite.compare import comparison as compare  # noqa: E402


def null_side(rng: random.Random, prefix: str, configs: int, runs: int, sigma: float) -> list:
    loaded = []
    for batch in range(1, configs + 1):
        for index in range(runs):
            config = {"workload": "dcgan64", "backend": "cpu", "batch_size": batch, "precision": "fp32"}
            record = run_record.new_record(
                f"{prefix}-{batch}-{index}", {"utc_time": "2026-01-01T00:00:00Z"}, config
            )
            rate = 100.0 * rng.lognormvariate(0.0, sigma)
            record.update(
                status="ok",
                device={"name": "Test CPU", "count": 1},
                data={"source": "synthetic"},
                metrics={"images_per_second": rate, "images_per_hour": rate * 3600},
            )
            loaded.append((f"{prefix}/{batch}-{index}.json", record))
    return loaded


def false_verdicts(seed: int, configs: int, runs: int, sigma: float, correction: str) -> int:
    rng = random.Random(seed)
    base, cand = null_side(rng, "a", configs, runs, sigma), null_side(rng, "b", configs, runs, sigma)
    result = compare.compare(base, cand, correction=correction)
    return sum(
        m["verdict"] in ("faster", "slower") for c in result["comparisons"] for m in c["metrics"].values()
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--sigma", type=float, default=0.05)
    parser.add_argument("--correction", default="auto")
    args = parser.parse_args()
    counts = [
        false_verdicts(seed, args.configs, args.runs, args.sigma, args.correction)
        for seed in range(args.seeds)
    ]
    any_false = sum(c > 0 for c in counts) / len(counts)
    many_false = sum(c > 1 for c in counts) / len(counts)
    print(
        f"{args.configs} null configurations × {args.runs} runs a side, {args.seeds} seeds, correction "
        f"{args.correction}: false verdicts {sum(counts)} in all; seeds with any {any_false:.1%}, with more "
        f"than one {many_false:.1%}; per test {sum(counts) / (len(counts) * args.configs):.2%}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
