"""How a real-data source hands out batches: one frozen value that the image folder and the cache take."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LoaderOptions:
    """The batch size; the workers making batches (processes for a folder, threads for a cache), whether
    batches land in page-locked memory and how many each worker makes ahead (as they will run:
    suite.data.loader_settings); the shuffle's seed; and this process's share of the images (its rank
    among world_size)."""

    batch_size: int
    workers: int = 0
    pin_memory: bool = False
    prefetch: int | None = None
    seed: int = 0
    rank: int = 0
    world_size: int = 1
