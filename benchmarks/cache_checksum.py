"""What does checking a cache's pixels cost when it is opened? The full sha256 of images.u8 (caches up to
suite.data.cache.FULL_CHECK_BYTES) and the sampled check above that size.

    python benchmarks/cache_checksum.py [--full-mib 1024] [--images 1200000] [--size 64] [--repeats 3]

The full check reads a file of --full-mib MiB of random bytes (once to warm the page cache, so the time
is sha256's, not the disk's: a cold disk adds its own read time). The sampled check reads
suite.data.cache.SAMPLE_ROWS rows of a sparse file shaped like a cache of --images images of --size px
(1.2 M images of 64 px: the seed's data set, 14.7 GB).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from suite.data import cache  # noqa: E402


def timed(function, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full-mib", type=int, default=1024)
    parser.add_argument("--images", type=int, default=1_200_000)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        full = os.path.join(folder, "full.u8")
        with open(full, "wb") as handle:
            for _ in range(args.full_mib):
                handle.write(os.urandom(1 << 20))
        cache.images_digest(full)  # warm the page cache
        seconds = timed(lambda: cache.images_digest(full), args.repeats)
        print(
            f"full check: {args.full_mib} MiB in {seconds:.3f} s "
            f"({args.full_mib * (1 << 20) / seconds / 1e9:.2f} GB/s), median of {args.repeats}"
        )
        row = 3 * args.size * args.size
        sparse = os.path.join(folder, "sparse.u8")
        with open(sparse, "wb") as handle:
            handle.truncate(args.images * row)
        rows = cache.sample_rows(args.images)
        seconds = timed(lambda: cache.images_digest(sparse, row, rows), args.repeats)
        print(
            f"sampled check: {len(rows)} of {args.images:,} images of {args.size} px "
            f"({args.images * row / 1e9:.1f} GB cache) in {seconds * 1000:.1f} ms, median of {args.repeats}"
        )


if __name__ == "__main__":
    main()
