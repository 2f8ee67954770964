"""Does `suite diagnose` give one verdict for one setup? The same diagnosis, RUNS times, and the verdicts counted.

One small folder of synthetic JPEGs (`suite data synth`), one small CPU configuration (dcgan64 at widths 8,
or `--width`; batch 8, one loader worker, one compute thread), and `suite diagnose` run RUNS times in a row
on it, each into a folder of its own. Printed: each diagnosis's verdict, its ratios with their intervals and its time,
then the verdicts counted. On an unchanged setup the verdicts should agree, or be inconclusive; two
different definite verdicts (input-bound, then host-contention) would be the failure this measures.

    python benchmarks/diagnose_stability.py [--runs 5] [--processes 3] [--images 64] [--width 8] [--out DIR]

It trains for real: on a 2-core host each diagnosis takes minutes (9 fresh processes at the default
--processes 3; most of each is Python and torch starting). The host's own load is printed beside the
counts: the result is about this host as it was.
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def setup(width: int) -> list[str]:
    """The diagnosed configuration: dcgan64 at WIDTH (ngf = ndf; 8 is tiny, 64 the model's own)."""
    return [
        "--backend", "cpu", "--workload", "dcgan64", "--batch-size", "8", "--workers", "1",
        "--set", f"model-override=ngf={width}", "--set", f"model-override=ndf={width}",
        "--set", "steps=4", "--set", "windows=2", "--set", "warmup=2", "--set", "threads=1",
    ]  # fmt: skip


def suite(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "suite", *argv], cwd=ROOT, capture_output=True, text=True)


def diagnosis_of(out: str) -> dict | None:
    """The diagnosis `suite diagnose` wrote (it names its processes); each end-to-end process's record
    also keeps its own in-run probe's verdict, from that one process's windows, which is not counted."""
    for path in glob.glob(os.path.join(out, "*.json")):
        with open(path, encoding="utf-8") as handle:
            record = json.load(handle)
        if (record.get("diagnosis") or {}).get("processes"):
            return record["diagnosis"]
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--images", type=int, default=64)
    parser.add_argument(
        "--width", type=int, default=8, help="the model's ngf and ndf: 8 tiny (default), 64 dcgan64's own"
    )
    parser.add_argument("--out", help="keep the records here (default: a temporary folder)")
    args = parser.parse_args()
    base = args.out or tempfile.mkdtemp(prefix="diagnose-stability-")
    photos = os.path.join(base, "photos")
    if not os.path.isdir(photos):
        made = suite("data", "synth", "--out", photos, "--count", str(args.images))
        if made.returncode:
            sys.exit(made.stderr)
    print(
        f"host: {os.cpu_count()} logical CPUs, load average {os.getloadavg()[0]:.1f} at start; "
        f"dcgan64 at width {args.width}, {args.processes} processes an arm"
    )
    verdicts = collections.Counter()
    for run in range(1, args.runs + 1):
        out = os.path.join(base, f"run{run}")
        started = time.monotonic()
        done = suite(
            "diagnose", "--data", photos, *setup(args.width), "--processes", str(args.processes), "--out", out
        )
        took = time.monotonic() - started
        found = diagnosis_of(out) if done.returncode == 0 else None
        verdict = found["verdict"] if found else f"failed (exit {done.returncode})"
        verdicts[verdict] += 1
        ratios = (found or {}).get("ratios") or {}
        shown = "; ".join(
            f"{name} ×{r['ratio']:.2f}"
            + (f" [{r['low']:.2f} … {r['high']:.2f}]" if r.get("low") is not None else " [no spread]")
            for name, r in ratios.items()
        )
        print(f"{run}/{args.runs} {verdict} in {took:.0f} s, load average {os.getloadavg()[0]:.1f}: {shown}")
        if not found:
            print(done.stderr.strip().splitlines()[-1:] or "", file=sys.stderr)
    print("verdicts: " + ", ".join(f"{name} ×{count}" for name, count in verdicts.most_common()))
    print(f"records: {base}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
