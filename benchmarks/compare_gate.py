"""How often is the `suite compare --fail-on slower` gate wrong? Seeded simulations of one comparison.

Each trial draws RUNS runs a side, each run's rate 100 img/s × exp(N(0, SIGMA)) (log-normal run-to-run
noise), the candidate's TRUE_RATIO × the baseline's, and asks the gate with --min-change MARGIN. It prints
how many trials passed, failed and were undecided, and, beside them, what the earlier rule (pass unless
the verdict is `slower`, too few runs or withheld) would have said of the same draws.

    python benchmarks/compare_gate.py --ratio 0.95 --margin 5% --runs 6 --sigma 0.03    # at the margin
    python benchmarks/compare_gate.py --ratio 0.90 --margin 5% --runs 8 --sigma 0.5     # underpowered

Synthetic figures only: no run is made, the result does not depend on this machine.
"""

from __future__ import annotations

import argparse
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from suite.compare import comparison as compare  # noqa: E402
from suite.compare import gate as compare_gate
from suite.compare import significance as compare_stats

NO_LOAD = {"others_cpu_percent": None, "load_per_cpu": None, "cpu_mhz": None}


def trial(rng: random.Random, runs: int, sigma: float, ratio: float, margin: float) -> tuple[str, str]:
    base = [100 * rng.lognormvariate(0, sigma) for _ in range(runs)]
    cand = [100 * ratio * rng.lognormvariate(0, sigma) for _ in range(runs)]
    metric = compare_stats.decide(base, cand, margin)
    comparison = {
        "metrics": {"images_per_second": metric},
        "baseline": {"load": NO_LOAD},
        "candidate": {"load": NO_LOAD},
    }
    status, _ = compare_gate.judge(comparison, "slower")
    earlier = "fail" if metric["verdict"] == "slower" else "pass"  # its only undecided cases: too few, load
    return status, earlier


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ratio", type=float, default=1.0, help="the candidate's true rate ÷ the baseline's")
    parser.add_argument("--margin", default="5%", help="--min-change")
    parser.add_argument("--runs", type=int, default=6, help="runs a side")
    parser.add_argument("--sigma", type=float, default=0.03, help="log-normal run-to-run noise")
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    margin = compare.parse_min_change(args.margin)
    rng = random.Random(args.seed)
    now = {"pass": 0, "fail": 0, "undecided": 0}
    before = {"pass": 0, "fail": 0}
    for _ in range(args.trials):
        status, earlier = trial(rng, args.runs, args.sigma, args.ratio, margin)
        now[status] += 1
        before[earlier] += 1
    share = {k: f"{v / args.trials:.1%}" for k, v in now.items()}
    print(
        f"true ratio {args.ratio}, --min-change {margin:.0%}, {args.runs} runs a side, σ {args.sigma}, "
        f"{args.trials} trials: pass {share['pass']}, fail {share['fail']}, undecided {share['undecided']}; "
        f"the earlier rule: pass {before['pass'] / args.trials:.1%}, fail {before['fail'] / args.trials:.1%}"
    )


if __name__ == "__main__":
    main()
