"""How long does `suite prices import` take for a SkyPilot vms.csv of N rows?

A synthetic vms.csv is written in SkyPilot's layout (the columns of catalogs/v8/aws/vms.csv, a GpuInfo
dict like theirs, one row per availability zone): N rows, each instance in --regions regions (the import
takes us-east-1, the first) and --zones zones of each, with a few accelerators and sizes repeated as a real
list repeats them. `--zones 1 --regions 1` makes every row an instance of the catalog, the worst case; a
real AWS list has about a thousand instance types a region, in some 30 regions of a few zones each. Then
`python -m suite prices import FILE --out CATALOG` runs as a user runs it, and its wall and CPU seconds
(user + system) are printed per N, with the catalog's size; a catalog over the 4 MiB a catalog file may be
is refused by the import after all its work (shown as such); a command that passes --timeout is stopped and
shown as `>T`, and larger N are not tried. No network.

    python benchmarks/price_import.py [--rows 20000,200000] [--zones 1] [--regions 1] [--timeout 600]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone"
# (accelerator, count, GiB per device): what a row's GpuInfo says, repeated over the instances.
ACCELERATORS = (("L4", 1, 24), ("A10G", 4, 24), ("H100", 8, 80), ("T4", 1, 16), ("L40S", 2, 48))
REGIONS = ["us-east-1", *(f"region-{n}" for n in range(1, 100))]


def gpu_info(name: str, count: int, gib: int) -> str:
    """SkyPilot's GpuInfo column: a Python-literal dict, quoted for CSV (its quotes doubled)."""
    info = (
        f"{{'Gpus': [{{'Name': '{name}', 'Manufacturer': 'NVIDIA', 'Count': {count}, "
        f"'MemoryInfo': {{'SizeInMiB': {gib * 1024}}}}}], 'TotalGpuMemoryInMiB': {count * gib * 1024}}}"
    )
    return '"' + info.replace('"', '""') + '"'


def write_list(path: str, rows: int, zones: int, regions: int) -> None:
    with open(path, "w", encoding="utf-8") as out:
        out.write(HEADER + "\n")
        for number in range(rows):
            instance, place = divmod(number, zones * regions)
            region, zone = divmod(place, zones)
            name, count, gib = ACCELERATORS[instance % len(ACCELERATORS)]
            price = 0.5 + (instance % 9973) * 0.001 + region * 0.01  # a plain decimal in range
            out.write(
                f"x{instance}.{count}xlarge,{name},{count}.0,{4 * count}.0,{16 * count}.0,"
                f"{gpu_info(name, count, gib)},{price:.4f},{price * 0.4:.4f},{REGIONS[region]},"
                f"{REGIONS[region]}-az{zone + 1}\n"
            )


def timed(command: list[str], timeout: float, cwd: str) -> tuple[float, float, str] | None:
    """Wall and CPU seconds of COMMAND and how it ended (None: stopped at TIMEOUT); a failure other than
    the import's refusal of a catalog too large to load stops the benchmark."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=cwd, timeout=timeout, capture_output=True, text=True)
    except subprocess.TimeoutExpired:
        return None
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    refused = re.search(r"would be ([0-9.]+ MiB), larger than", done.stderr)
    if done.returncode != 0 and not (done.returncode == 2 and refused):
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    ended = (
        f"refused: {refused.group(1)}"
        if done.returncode
        else f"{os.path.getsize(command[-1]) / 1024**2:.1f} MiB"
    )
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), ended


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=lambda t: [int(p) for p in t.split(",")], default=[20000, 200000])
    parser.add_argument("--zones", type=int, default=1, help="zones of each instance in a region (default 1)")
    parser.add_argument(
        "--regions", type=int, default=1, help="regions of each instance (default 1, at most 100)"
    )
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    print(
        "| rows | instances imported | wall s (CPU s) | CPU ms per row | catalog |\n|---:|---:|---:|---:|---|"
    )
    with tempfile.TemporaryDirectory() as folder:
        for rows in args.rows:
            source, catalog = os.path.join(folder, "vms.csv"), os.path.join(folder, "catalog.yaml")
            write_list(source, rows, args.zones, args.regions)
            command = [sys.executable, "-m", "suite", "prices", "import", source, "--out", catalog]
            result = timed(command, args.timeout, root)
            instances = -(-rows // (args.zones * args.regions))
            if result is None:
                print(f"| {rows:,} | {instances:,} | >{args.timeout:.0f} | — | — |")
                break
            wall, cpu, ended = result
            print(
                f"| {rows:,} | {instances:,} | {wall:.1f} ({cpu:.1f}) | {cpu / rows * 1000:.3f} | {ended} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
