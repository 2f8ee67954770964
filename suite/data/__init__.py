"""Data paths for a run. Each yields ready batches `(images, labels)` on the backend's device:
images float, normalised to [-1, 1]; labels int64.

- `synthetic` makes one batch on the device and hands it out again and again: the compute-only
  ceiling, with no loader and no host-to-device copy in the measurement.
- a folder of class sub-folders of JPEG/PNG images (suite/data/imagefolder.py): decoded while training.
- a cache made by `suite data prepare` (suite/data/cache.py): decoded once, memory-mapped.

The runner pulls batches inside its timed windows, so a real-data run's throughput includes its loader.
"""

from __future__ import annotations

import os
import sys

from suite.errors import UserError, non_negative_int, positive_int


class DataSource:
    """An endless supply of device batches, and a description of itself for the record."""

    kind = "base"

    def __iter__(self):
        raise NotImplementedError

    def host_batches(self):
        """The loader alone: endless batches as they are before the copy to the device."""
        raise NotImplementedError

    def describe(self) -> dict:
        return {"source": self.kind}

    def close(self) -> None:
        pass


class SyntheticData(DataSource):
    kind = "synthetic"

    def __init__(self, workload, backend, batch_size: int, seed: int = 0):
        # Made on the host, copied once through the backend, so it has the layout real batches get
        # (channels-last on cuda, say): the ceiling measures the same kernels as a real-data run.
        images, labels = workload.synthetic_batch(batch_size, "cpu", seed=seed)
        self.batch = (backend.to_device(images), backend.to_device(labels))

    def __iter__(self):
        batch = self.batch
        while True:
            yield batch

    def host_batches(self):
        return iter(self)

    ignored: str | None = None  # loader options given anyway (see ignored_loader_options)

    def describe(self) -> dict:
        described = {
            "source": self.kind,
            "note": "one batch made on the device and reused (compute-only ceiling)",
        }
        if self.ignored:
            described["ignored"] = self.ignored
        return described


# Decoding workers for the JPEG path when --workers is not given; more rarely help (the seed found
# a plateau at about 4) and each costs memory.
DEFAULT_IMAGEFOLDER_WORKERS = 4
# The cache needs no decoding: one thread gathering the next batch while the device computes.
DEFAULT_CACHE_WORKERS = 1


def rank_and_world_size() -> tuple[int, int]:
    """This process's share of the data: from torch.distributed if started, else torchrun's variables."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))


def loader_settings(config, backend, default_workers: int) -> dict:
    """workers, pin_memory, prefetch as they will run (the record stores these, not the defaults)."""
    workers = (
        min(default_workers, os.cpu_count() or 1)
        if getattr(config, "workers", None) is None
        else non_negative_int("--workers", config.workers)
    )
    pin_memory = getattr(config, "pin_memory", None)
    if pin_memory is None:
        pin_memory = backend.pin_memory_default
    prefetch = getattr(config, "prefetch", None)
    if prefetch is not None:
        prefetch = positive_int("--prefetch", prefetch)
        if workers == 0:
            raise UserError(
                f"--prefetch {prefetch} needs --workers 1 or more (with 0 workers batches are "
                "made when asked for, nothing ahead)"
            )
    elif workers > 0:
        prefetch = 2  # torch.utils.data.DataLoader's default prefetch_factor
    check_worker_bounds(workers)
    return {"workers": workers, "pin_memory": bool(pin_memory), "prefetch": prefetch}


# A loader worker is a process with its own Python, PIL buffers and prefetched batches: about this much
# memory of its own once forked (an estimate, deliberately on the high side of a 64-128 px workload's).
WORKER_MEMORY_BYTES = 100 * 1024**2
WORKERS_PER_CORE = 4


def check_worker_bounds(workers: int) -> None:
    """Refuse more loader workers than the cores can run or the memory can hold, before any starts."""
    from suite import limits

    cores = limits.cores()
    limits.refuse_above(
        f"--workers {workers}",
        workers,
        max(8, WORKERS_PER_CORE * cores),
        f"{WORKERS_PER_CORE} per core on this {cores}-core machine; more only wait for a core",
        show=lambda n: f"{n:,.0f} loader processes",
    )
    limits.refuse_above(
        f"--workers {workers}",
        workers * WORKER_MEMORY_BYTES,
        limits.available_memory_bytes(),
        f"the memory available now, at about {limits.human(WORKER_MEMORY_BYTES)} per loader process",
    )


def check_batch_fits(batch_size: int, images: int, world_size: int, where: str) -> int:
    """Each process's share of the images; a batch must fit in it (drop_last: no partial batches)."""
    share = images // world_size
    if batch_size > share:
        raise UserError(
            f"--batch-size {batch_size} is larger than the {share} images each of {world_size} "
            f"process(es) gets from {where}: use --batch-size {share} or less, or more images"
        )
    return share


def ignored_loader_options(config) -> str | None:
    """Loader options given with synthetic data, which has no loader: said, never silently dropped (a
    diagnosis or a sweep may pass them to a compute-only run on purpose, so they are not refused)."""
    given = [
        option
        for option, name in (
            ("--workers", "workers"),
            ("--pin-memory", "pin_memory"),
            ("--prefetch", "prefetch"),
        )
        if getattr(config, name, None) is not None
    ]
    if not given:
        return None
    return (
        f"{', '.join(given)} ignored: synthetic data has no loader (one batch is made once on the device); "
        "give --data FOLDER or a cache to use them"
    )


def check_data(config, workload, backend, batch_size: int) -> None:
    """Refuse bad data input before anything is built (a person's mistake: exit 2, not a failed run)."""
    if config.data == "synthetic":
        ignored = ignored_loader_options(config)
        if ignored:
            print(f"suite: warning: {ignored}", file=sys.stderr)
        return
    from suite.data.cache import check_cache_fits, is_cache

    _, world_size = rank_and_world_size()
    if os.path.isdir(config.data) and is_cache(config.data):
        check_cache_fits(config.data, workload.image_size, batch_size, world_size)
        loader_settings(config, backend, DEFAULT_CACHE_WORKERS)
    else:
        from suite.data.imagefolder import scan_folder

        check_batch_fits(batch_size, len(scan_folder(config.data).samples), world_size, repr(config.data))
        loader_settings(config, backend, DEFAULT_IMAGEFOLDER_WORKERS)


def open_data(config, workload, backend, batch_size: int) -> DataSource:
    """`config.data`: "synthetic", a cache folder (it has a manifest.json), or an ImageFolder."""
    if config.data == "synthetic":
        data = SyntheticData(workload, backend, batch_size, seed=config.seed)
        data.ignored = ignored_loader_options(config)
        return data
    from suite.data.cache import CacheData, is_cache

    rank, world_size = rank_and_world_size()
    common = dict(
        image_size=workload.image_size,
        backend=backend,
        batch_size=batch_size,
        seed=config.seed,
        rank=rank,
        world_size=world_size,
    )
    if os.path.isdir(config.data) and is_cache(config.data):
        return CacheData(config.data, **common, **loader_settings(config, backend, DEFAULT_CACHE_WORKERS))
    from suite.data.imagefolder import ImageFolderData

    return ImageFolderData(
        config.data, **common, **loader_settings(config, backend, DEFAULT_IMAGEFOLDER_WORKERS)
    )
