"""What does `--check-numerics` cost? The check's wall time against the wall time of the run it checks.

For each workload, one real `suite run --backend cpu --check-numerics` at the CPU's default batch and
schedule, in its own process. Both figures are the record's, the ones the run's summary prints: the check's
own time (`numerics.time_s`: its runs, reference, noise and candidate, builds included; the reference alone where
the candidate is the reference's own configuration, fp32 with TF32 off, the CPU's default) and the run's
time before it (`numerics.run_s`: from process start to the check, so start-up, build, warm-up and the timed
windows). The ratio check ÷ run is the price of asking; the goal is at most 0.25 at default settings
(docs/numerics.md says where the check does not reach it, and why).

    python benchmarks/numerics_cost.py [--workloads dcgan64 resnet50] [--precision bf16] [--repeats 3]

One process per run, one after the other: on a shared machine both sides of the ratio are slowed alike only
roughly, so read the ratios to one significant figure (each repeat is printed; look at their spread). Each
row gives the machine's load average (1 minute) as the run started and as it ended: a small-batch check
suffers more from contention than the run's larger steps.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def measure(workload: str, precision: str | None) -> dict:
    with tempfile.TemporaryDirectory() as out:
        argv = [sys.executable, "-m", "suite", "run", "--backend", "cpu", "--workload", workload]
        argv += ["--check-numerics", "--json", "--out", out]
        argv += ["--precision", precision] if precision else []
        env = dict(
            os.environ, PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p)
        )
        done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=out)
    if done.returncode != 0:
        raise SystemExit(f"{workload}: suite run failed:\n{done.stderr}")
    record = json.loads(done.stdout)
    numerics = record["numerics"]
    run_s = numerics["run_s"]
    return {
        "workload": workload,
        "precision": record["config"]["precision"],
        "batch_size": record["config"]["batch_size"],
        "timed_steps": record["metrics"]["steps_timed"],
        "check_steps": numerics["steps"],
        # One where the candidate is the reference's own configuration (nothing to compare).
        "check_runs": numerics.get("trained_runs", 3),
        "run_s": run_s,
        "check_s": numerics["time_s"],
        "ratio": numerics["time_s"] / run_s,
        "verdict": numerics["verdict"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", nargs="+", default=["dcgan64"])
    parser.add_argument("--repeats", type=int, default=1, help="runs per workload, one after the other")
    parser.add_argument("--precision", help="the candidate precision (default: the CPU's, fp32)")
    args = parser.parse_args()
    print(
        "| workload | precision | batch | timed steps | check runs × steps | run (s) | check (s) "
        "| check ÷ run | verdict | load average |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---|---|")
    for workload in args.workloads:
        for _ in range(args.repeats):
            load_before = os.getloadavg()[0]
            r = measure(workload, args.precision)
            load = f"{load_before:.1f} → {os.getloadavg()[0]:.1f}"
            print(
                f"| {r['workload']} | {r['precision']} | {r['batch_size']} | {r['timed_steps']} "
                f"| {r['check_runs']} × {r['check_steps']} | {r['run_s']:.1f} | {r['check_s']:.1f} | {r['ratio']:.2f} "
                f"| {r['verdict']} | {load} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
