"""Data paths for a run. Each yields ready batches `(images, labels)` on the backend's device:
images float, normalised to [-1, 1]; labels int64.

- `synthetic` makes one batch on the device and hands it out again and again: the compute-only
  ceiling, with no loader and no host-to-device copy in the measurement.
- a folder of class sub-folders of JPEG/PNG images (suite/data/imagefolder.py): decoded while training.
- a cache made by `suite data prepare` (suite/data/cache.py): decoded once, memory-mapped.
- for a language model, a file of token ids (suite/data/token_file.py, token_loader.py): batches of
  (inputs, targets) token ids, int64, drawn at random offsets from the file.

The runner pulls batches inside its timed windows, so a real-data run's throughput includes its loader.
"""

from __future__ import annotations

import os

from suite.inputs import errors
from suite.inputs.errors import UserError
from suite.inputs.numbers import non_negative_int, positive_int


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


class LoaderData(DataSource):
    """A data source fed by a torch DataLoader (an image folder, a token file): its host batches are copied
    to the device part by part, and the generators it handed out end, with the loader's workers, on close.
    A subclass makes `self.loader` and lists each generator of `host_batches` in `self._iterators`."""

    def __iter__(self):
        to_device = self.backend.to_device
        # Always non-blocking: from pinned memory the copy overlaps compute; from pageable memory it waits
        # only for the host-side staging, never for the device, so no step waits for the one before.
        for first, second in self.host_batches():
            yield to_device(first, non_blocking=True), to_device(second, non_blocking=True)

    def close(self) -> None:
        for iterator in self._iterators:
            iterator.close()
        self._iterators.clear()
        # Persistent workers live as long as the loader's iterator; dropping it ends them now.
        shutdown = getattr(getattr(self.loader, "_iterator", None), "_shutdown_workers", None)
        if shutdown is not None:
            shutdown()


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
# A token batch is a few slices read from a file: one worker reads ahead while the device computes.
DEFAULT_TOKEN_WORKERS = 1


def rank_and_world_size() -> tuple[int, int]:
    """This process's share of the data: from torch.distributed if started, else torchrun's variables."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))


def split_host_cores(
    cores: int, default_workers: int, workers: int | None = None, threads: int | None = None
) -> tuple[int, int, str]:
    """Loader workers and compute threads for a backend that computes on the host's own cores (the CPU):
    (workers, threads, why). What is given is kept; what is not is chosen so that the two together do not
    oversubscribe the cores (torch's default, a thread per core, plus decoding workers made a 2-core host
    run 2 threads and up to 4 workers on 2 cores, each slowing the other)."""
    cores = max(1, cores)
    if workers is not None and threads is not None:
        why = "as asked" + (
            f" (together {workers + threads} on {cores} cores)" if workers + threads > cores else ""
        )
        return workers, threads, why
    if workers is None and threads is None:
        # Decoding and compute share the cores; at least one of each.
        workers = min(default_workers, max(1, cores // 2))
        threads = max(1, cores - workers)
        return workers, threads, f"{workers} worker(s) + {threads} compute thread(s) on {cores} cores"
    if threads is None:
        threads = max(1, cores - workers)
        return workers, threads, f"compute gets the {threads} core(s) the {workers} worker(s) leave"
    workers = min(default_workers, max(1, cores - threads))
    return workers, threads, f"{workers} worker(s) beside {threads} compute thread(s) on {cores} cores"


def default_workers(spec) -> int:
    """The loader's default worker count for this data (a cache needs one gather thread, JPEGs more)."""
    from suite.data.cache import is_cache

    data = spec.data.source
    if os.path.isfile(data):  # images come in folders; a file is a language model's tokens
        return DEFAULT_TOKEN_WORKERS
    return DEFAULT_CACHE_WORKERS if os.path.isdir(data) and is_cache(data) else DEFAULT_IMAGEFOLDER_WORKERS


def loader_settings(spec, backend, default_workers: int) -> dict:
    """workers, pin_memory, prefetch as they will run (the record stores these, not the defaults)."""
    if spec.data.workers is not None:
        workers = non_negative_int("--workers", spec.data.workers)
    elif not getattr(backend, "copies_to_device", True):
        # Compute runs on the host's cores too: workers chosen beside compute's threads, not over them.
        threads = spec.threads
        workers = split_host_cores(os.cpu_count() or 1, default_workers, None, threads)[0]
    else:
        workers = min(default_workers, os.cpu_count() or 1)
    # Pinned host memory only helps a copy into separate device memory; when the device is the host
    # itself there is no copy to speed up, so --pin-memory is a no-op there and is dropped (recorded as
    # False): a run does not become another configuration by a setting that did nothing.
    pin_memory = spec.data.pin_memory
    if not backend.copies_to_device:
        pin_memory = False
    elif pin_memory is None:
        pin_memory = backend.pin_memory_default
    prefetch = spec.data.prefetch
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


def check_loader_workers_share_memory(workers: int) -> None:
    """A DataLoader's worker processes hand their batches over in shared memory: refused at plan time where
    there is none to write (the cache's gather threads need none)."""
    from suite import limits

    if workers > 0:
        limits.check_shared_memory(
            f"--workers {workers}", "--workers 0 (batches made in the run's own process)"
        )


def check_worker_bounds(workers: int) -> None:
    """Refuse more loader workers than the cores can run or the memory can hold, before any starts (the
    bound every count of processes is held to: limits.check_processes)."""
    from suite import limits

    limits.check_processes(f"--workers {workers}", workers, WORKER_MEMORY_BYTES, "loader process")


def check_batches_in_memory(
    batch_size: int, sample_bytes: int, sample: str, settings: dict, epoch: int | None = None
) -> None:
    """Refuse, before anything is built, batches the host cannot hold: BATCH_SIZE samples of SAMPLE_BYTES
    each (SAMPLE says what one is), as many batches at once as the loader SETTINGS make (one in use, and
    workers x prefetch made ahead, at most the EPOCH's batches where a loader stops at an epoch's end),
    against the memory available now. A token batch of a million sequences grew to 23 GB one numpy array
    at a time, none refused on its own, until the kernel's OOM killer ended the run without a word."""
    from suite import limits

    ahead = settings["workers"] * (settings["prefetch"] or 0)
    at_once = 1 + (ahead if epoch is None else min(ahead, epoch))
    limits.refuse_above(
        f"--batch-size {batch_size:,}",
        batch_size * sample_bytes * at_once,
        limits.available_memory_bytes(),
        f"the host memory available now, of this host's {limits.human(limits.total_memory_bytes())}: "
        f"{limits.human(sample_bytes)} a {sample}, {at_once:,} batch(es) at once",
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


def ignored_loader_options(spec) -> str | None:
    """Loader options given with synthetic data, which has no loader: said, never silently dropped (a
    diagnosis or a sweep may pass them to a compute-only run on purpose, so they are not refused)."""
    given = [
        option
        for option, name in (
            ("--workers", "workers"),
            ("--pin-memory", "pin_memory"),
            ("--prefetch", "prefetch"),
        )
        if getattr(spec.data, name) is not None
    ]
    if not given:
        return None
    return (
        f"{', '.join(given)} ignored: synthetic data has no loader (one batch is made once on the device); "
        "give --data FOLDER or a cache to use them"
    )


def check_data(spec, workload, backend, batch_size: int) -> None:
    """Refuse bad data input before anything is built (a person's mistake: exit 2, not a failed run)."""
    if spec.data.source == "synthetic":
        ignored = ignored_loader_options(spec)
        if ignored:
            errors.warn(ignored)
        return
    if workload.unit != "images":  # the folders and caches hold images; a language model reads a token file
        from suite.data.token_file import sequence_host_bytes

        token_file, _ = check_token_data(spec.data.source, workload)
        context = workload.units_per_sample()
        settings = loader_settings(spec, backend, DEFAULT_TOKEN_WORKERS)
        check_batches_in_memory(
            batch_size,
            sequence_host_bytes(context, token_file.dtype),
            f"sequence of {context + 1:,} {token_file.dtype} tokens read, widened to int64 and split into "
            "inputs and targets",
            settings,
        )
        check_loader_workers_share_memory(settings["workers"])
        return
    from suite.data.cache import check_cache_fits, is_cache

    _, world_size = rank_and_world_size()
    pixels = 3 * workload.image_size**2
    if os.path.isdir(spec.data.source) and is_cache(spec.data.source):
        cache, _ = check_cache_fits(spec.data.source, workload.image_size, batch_size, world_size)
        classes = len(cache.manifest["classes"])
        settings = loader_settings(spec, backend, DEFAULT_CACHE_WORKERS)
        check_batches_in_memory(batch_size, pixels, "uint8 image gathered from the cache", settings)
    else:
        from suite.data.imagefolder import scan_folder

        scan = scan_folder(spec.data.source)
        classes = len(scan.classes)
        check_batch_fits(batch_size, len(scan.samples), world_size, repr(spec.data.source))
        settings = loader_settings(spec, backend, DEFAULT_IMAGEFOLDER_WORKERS)
        epoch = len(scan.samples) // world_size // batch_size  # a DataLoader prefetches within an epoch
        check_batches_in_memory(batch_size, pixels * 4, "float32 image decoded", settings, epoch)
        check_loader_workers_share_memory(settings["workers"])
    workload.check_data_classes(
        classes, f"--data {spec.data.source!r}", head_asked=spec.workload.num_classes is not None
    )


def check_token_data(path: str, workload):
    """The token file at PATH read and checked for WORKLOAD (its layout, its length, its ids): the file and
    how far its ids were checked, or a one-line UserError."""
    from suite.data.token_file import check_token_file, read_token_file

    token_file = read_token_file(path)
    context = workload.units_per_sample()
    return token_file, check_token_file(token_file, context, workload.vocabulary, workload.name)


def open_data(spec, workload, backend, batch_size: int) -> DataSource:
    """`spec.data.source`: "synthetic", a cache folder (it has a manifest.json), an ImageFolder, or for a
    language model a file of token ids."""
    if spec.data.source == "synthetic":
        data = SyntheticData(workload, backend, batch_size, seed=spec.workload.seed)
        data.ignored = ignored_loader_options(spec)
        return data
    from suite.data.cache import CacheData, is_cache
    from suite.data.loader_options import LoaderOptions

    rank, world_size = rank_and_world_size()

    def options(default_workers: int) -> LoaderOptions:
        return LoaderOptions(
            batch_size=batch_size,
            seed=spec.workload.seed,
            rank=rank,
            world_size=world_size,
            **loader_settings(spec, backend, default_workers),
        )

    if workload.unit != "images":
        from suite.data.token_loader import TokenFileData

        token_file, checked = check_token_data(spec.data.source, workload)
        return TokenFileData(token_file, workload, backend, options(DEFAULT_TOKEN_WORKERS), checked)
    if os.path.isdir(spec.data.source) and is_cache(spec.data.source):
        return CacheData(spec.data.source, workload.image_size, backend, options(DEFAULT_CACHE_WORKERS))
    from suite.data.imagefolder import ImageFolderData, normalisation_for

    return ImageFolderData(
        spec.data.source,
        workload.image_size,
        backend,
        options(DEFAULT_IMAGEFOLDER_WORKERS),
        normalisation=normalisation_for(workload),
    )
