"""Loader-only speed: the JPEG path against the prepared cache, from 480x360 JPEGs to 64 px.

    python benchmarks/loader_speed.py [--count 4096] [--workers 0,1,2] [--dir DIR]

Synthesizes a JPEG ImageFolder (kept in --dir for re-runs), prepares a 64 px cache from it, then
measures loader-only images/s (no model, host batches, as `suite loader` does) for each worker count:
the JPEG path at --jpeg-batch, the cache at --cache-batch (uint8 batches), and a bare numpy
memory-map gather of random batches as the ceiling. Goals: the cache >= 50x the JPEG path at equal
workers, and >= 200,000 images/s as uint8 batches of 1024 at 64 px.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from suite.data import open_data  # noqa: E402
from suite.data.cache import open_cache  # noqa: E402
from suite.data.loader_bench import measure_loader  # noqa: E402
from suite.data.prepare import prepare  # noqa: E402
from suite.data.synth import synthesize  # noqa: E402
from suite.measurement.runner import plan_run  # noqa: E402
from suite.spec import RunSpec  # noqa: E402

CACHE_GOAL_RATIO = 50
CACHE_GOAL_IMAGES_PER_S = 200_000


def loader_rate(data: str, workers: int, batch_size: int, batches: int, windows: int) -> dict:
    plan = plan_run(
        RunSpec().replace(
            backend="cpu",
            workload="dcgan64",
            data=data,
            workers=workers,
            pin_memory=False,
            batch_size=batch_size,
        )
    )
    source = open_data(plan.spec, plan.workload, plan.backend, batch_size)
    try:
        return measure_loader(source.host_batches(), batches=batches, windows=windows, warmup_batches=2)
    finally:
        source.close()


def bare_gather_rate(cache_dir: str, batch_size: int, seconds: float = 2.0) -> float:
    """The ceiling: np.take of sorted random indices from the memory-map, nothing else."""
    images = open_cache(cache_dir).images
    rng = np.random.default_rng(0)
    count, start, done = len(images), time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        np.take(images, np.sort(rng.choice(count, batch_size, replace=False)), axis=0)
        done += batch_size
    return done / (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--count", type=int, default=4096, help="JPEGs to synthesize (default 4096)")
    parser.add_argument("--size", default="480x360", help="source JPEG size (default 480x360)")
    parser.add_argument("--image-size", type=int, default=64, help="training image size (default 64)")
    parser.add_argument("--workers", default="0,1,2", help="worker counts (default 0,1,2)")
    parser.add_argument("--jpeg-batch", type=int, default=64, help="JPEG path batch size (default 64)")
    parser.add_argument("--jpeg-batches", type=int, default=5, help="JPEG batches per window (default 5)")
    parser.add_argument("--cache-batch", type=int, default=1024, help="cache batch size (default 1024)")
    parser.add_argument("--cache-batches", type=int, default=50, help="cache batches per window (default 50)")
    parser.add_argument("--windows", type=int, default=3, help="timed windows, median reported (default 3)")
    parser.add_argument(
        "--dir",
        default=os.path.join(tempfile.gettempdir(), "suite-loader-bench"),
        help="where the JPEGs and the cache are kept between runs",
    )
    args = parser.parse_args()
    workers = [int(w) for w in args.workers.split(",")]

    jpeg_dir = os.path.join(args.dir, f"jpeg-{args.size}-{args.count}")
    cache_dir = os.path.join(args.dir, f"cache-{args.size}-{args.count}-{args.image_size}px")
    if not os.path.isdir(jpeg_dir):
        synthesize(jpeg_dir + ".writing", args.count, size=args.size, seed=0)
        os.rename(jpeg_dir + ".writing", jpeg_dir)
    start = time.perf_counter()
    manifest = prepare(jpeg_dir, args.image_size, cache_dir)
    prepare_s = time.perf_counter() - start

    rows = []
    for w in workers:
        jpeg = loader_rate(jpeg_dir, w, args.jpeg_batch, args.jpeg_batches, args.windows)["images_per_second"]
        cache = loader_rate(cache_dir, w, args.cache_batch, args.cache_batches, args.windows)[
            "images_per_second"
        ]
        rows.append((w, jpeg, cache))
    bare = bare_gather_rate(cache_dir, args.cache_batch)

    print(
        f"\nsource: {args.count} JPEGs of {args.size} ({manifest['source_bytes'] / 1e6:,.1f} MB); cache: "
        f"{args.image_size} px uint8 ({manifest['count'] * 3 * args.image_size**2 / 1e6:,.1f} MB)"
        + ("" if manifest.get("up_to_date") else f", prepared in {prepare_s:.1f} s on {os.cpu_count()} cores")
    )
    print(
        f"{'workers':>7}  {'JPEG img/s (batch ' + str(args.jpeg_batch) + ')':>24}  "
        f"{'cache img/s (batch ' + str(args.cache_batch) + ', uint8)':>33}  {'cache / JPEG':>12}"
    )
    for w, jpeg, cache in rows:
        print(f"{w:>7}  {jpeg:>24,.0f}  {cache:>33,.0f}  {cache / jpeg:>11,.0f}×")
    print(
        f"bare np.take gather of random {args.cache_batch}-image batches: {bare:,.0f} img/s "
        f"(the cache loader keeps {max(c for _, _, c in rows) / bare:.0%} of it)"
    )
    ratio_ok = all(cache >= CACHE_GOAL_RATIO * jpeg for _, jpeg, cache in rows)
    rate_ok = max(c for _, _, c in rows) >= CACHE_GOAL_IMAGES_PER_S
    print(
        f"goal cache >= {CACHE_GOAL_RATIO}x JPEG at equal workers: {'met' if ratio_ok else 'NOT met'}; "
        f"goal >= {CACHE_GOAL_IMAGES_PER_S:,} img/s: {'met' if rate_ok else 'NOT met'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
