"""The prepared cache: images decoded, resized and cropped once (`suite data prepare`), then read fast.

On disk, a folder:

    manifest.json   what it holds and where it came from (format, count, size, source fingerprint, ...)
    images.u8       uint8, shape (count, 3, size, size), C-contiguous: one image is one contiguous row
    labels.npy      int64, shape (count,)

The loader memory-maps images.u8 and hands out whole uint8 batches: each epoch is a fresh random
permutation of the images; a batch is the next `batch_size` entries of it, gathered with one
`np.take` (no per-sample Python). The batch's indices are sorted before the gather: that changes only
the order *within* a batch (which training does not see: a batch is a set for the gradient), keeps
every epoch's sampling random, and turns the reads into one forward sweep through the file.
uint8 -> float and normalisation happen on the device, after the copy: 4x fewer bytes cross the bus.

Several processes (torchrun) each take their own share of every epoch's permutation: the same
permutation everywhere (same seed and epoch), the rank's every world_size-th entry.
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from suite.data import DataSource
from suite.data.loader_options import LoaderOptions
from suite.inputs.errors import UserError

FORMAT = "suite.cache"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
IMAGES_FILE = "images.u8"
LABELS_FILE = "labels.npy"
# labels.npy is count int64s after numpy's header (a few hundred bytes): a larger file is not the labels.
LABELS_HEADER_LIMIT = 64 * 1024


# The images' checksum (sha256, in the manifest) is checked in full on every open up to this size; above
# it only SAMPLE_ROWS images spread over the file are (`sample_sha256`). Measured with
# benchmarks/cache_checksum.py on a 2-core machine under load: 256 MiB in 0.92 s, 1 GiB in 6.1 s, and the
# sampled check of a 14.7 GB cache (1.2 M images of 64 px) in 31-90 ms (docs/failure-modes.md). A full
# check stays one `suite data prepare` away: it re-checks in full before calling a cache up to date.
FULL_CHECK_BYTES = 256 * 1024**2
SAMPLE_ROWS = 1024


def sample_rows(count: int) -> np.ndarray:
    """The images the sampled checksum covers: up to SAMPLE_ROWS, evenly spread, first and last included."""
    return np.unique(np.linspace(0, max(count - 1, 0), min(count, SAMPLE_ROWS)).astype(np.int64))


def images_digest(images_path: str, row_bytes: int | None = None, rows=None) -> str:
    """sha256 of the whole images file, or of the given rows (each `row_bytes` long) in order."""
    from suite.inputs.files import open_regular  # regular files only: a planted FIFO never blocks

    digest = hashlib.sha256()
    with open_regular(images_path) as handle:
        if rows is None:
            while chunk := handle.read(1 << 22):
                digest.update(chunk)
        else:
            for row in rows:
                handle.seek(int(row) * row_bytes)
                digest.update(handle.read(row_bytes))
    return digest.hexdigest()


def is_cache(path: str) -> bool:
    return os.path.isfile(os.path.join(path, MANIFEST))


def labels_digest(labels: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(labels, dtype=np.int64).tobytes()).hexdigest()


@dataclass
class Cache:
    path: str
    manifest: dict
    images: np.ndarray  # read-only memory-map, (count, 3, size, size) uint8
    labels: np.ndarray  # int64, in memory (small)

    @property
    def count(self) -> int:
        return int(self.manifest["count"])

    @property
    def image_size(self) -> int:
        return int(self.manifest["image_size"])


def _refuse(path: str, what: str) -> UserError:
    return UserError(
        f"cache {path!r} does not match its manifest: {what}; make it again with "
        "`suite data prepare SRC --size N --out CACHE --force`"
    )


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_class_list(value) -> bool:
    # A string is iterable too: list("cats") would be 4 classes named by letters.
    return (
        isinstance(value, list)
        and all(isinstance(name, str) and name for name in value)
        and len(set(value)) == len(value)
    )


def _is_sha256(value) -> bool:
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def _manifest_field(path: str, manifest: dict, name: str, valid, wanted: str):
    """A manifest field exactly as `data prepare` writes it, or a refusal naming it: nothing is coerced
    (int("12") or list("cats") would make a wrong cache look right)."""
    if name not in manifest:
        raise _refuse(path, f"field {name!r} is missing")
    value = manifest[name]
    if not valid(value):
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
        raise _refuse(path, f"field {name!r} is {shown}, not {wanted}")
    return value


def open_cache(path: str, full_check: bool | None = None) -> Cache:
    """Open and check a cache: the manifest must describe exactly the files beside it (the images'
    checksum in full up to FULL_CHECK_BYTES or when `full_check`, else sampled)."""
    from suite.inputs.files import NotAFile, open_regular, read_text

    try:
        manifest = json.loads(read_text(os.path.join(path, MANIFEST)))
    except (NotAFile, ValueError, RecursionError) as error:  # ValueError: bad JSON, UTF-8, or digits
        raise UserError(f"cache {path!r}: cannot read {MANIFEST} ({error})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise UserError(f"{path!r} has a {MANIFEST} but it is not a {FORMAT} manifest")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise UserError(
            f"cache {path!r} is format version {manifest.get('format_version')!r}; this suite "
            f"reads version {FORMAT_VERSION}: prepare it again"
        )
    count = _manifest_field(path, manifest, "count", _is_count, "a whole number >= 0")
    size = _manifest_field(
        path, manifest, "image_size", lambda v: _is_count(v) and v > 0, "a whole number > 0"
    )
    classes = _manifest_field(path, manifest, "classes", _is_class_list, "a list of distinct class names")
    digest = _manifest_field(path, manifest, "labels_sha256", _is_sha256, "64 hexadecimal digits")

    images_path = os.path.join(path, IMAGES_FILE)
    expected_bytes = count * 3 * size * size
    actual_bytes = os.path.getsize(images_path) if os.path.isfile(images_path) else None
    if actual_bytes != expected_bytes:
        raise _refuse(
            path,
            f"{IMAGES_FILE} is {actual_bytes} bytes, {count} images of 3x{size}x{size} need {expected_bytes}",
        )
    try:  # NotAFile is a ValueError: a FIFO, a device or a pseudo file is named, never waited on
        with open_regular(os.path.join(path, LABELS_FILE), count * 8 + LABELS_HEADER_LIMIT) as handle:
            labels = np.load(handle, allow_pickle=False)
    except (OSError, ValueError) as error:
        raise _refuse(path, f"cannot read {LABELS_FILE} ({error})") from None
    if labels.shape != (count,) or labels.dtype != np.int64:
        raise _refuse(path, f"{LABELS_FILE} holds {labels.dtype} {labels.shape}, expected int64 ({count},)")
    if labels_digest(labels) != digest:
        raise _refuse(path, f"{LABELS_FILE} has changed since it was written (checksum differs)")
    if count and (labels.min() < 0 or labels.max() >= len(classes)):
        raise _refuse(path, f"labels outside 0..{len(classes) - 1}")
    check_images(path, manifest, expected_bytes, 3 * size * size, count, full_check)
    images = None
    if count:
        try:
            with open_regular(images_path) as handle:  # the map keeps its own descriptor
                images = np.memmap(handle, dtype=np.uint8, mode="r", shape=(count, 3, size, size))
        except (OSError, ValueError) as error:
            raise _refuse(path, f"cannot read {IMAGES_FILE} ({error})") from None
    return Cache(path, manifest, images, labels)


def check_images(path: str, manifest: dict, total_bytes: int, row_bytes: int, count: int, full=None) -> None:
    """The pixels are what the manifest describes: the whole file's checksum up to FULL_CHECK_BYTES (or
    when `full`), else the sampled images' checksum."""
    images_path = os.path.join(path, IMAGES_FILE)
    if full is None:
        full = total_bytes <= FULL_CHECK_BYTES
    try:
        stat = os.stat(images_path)
    except OSError as error:
        raise _refuse(path, f"cannot read {IMAGES_FILE} ({error.strerror or error})") from None
    # Planning and the loader both open the cache: one check per unchanged file is enough.
    seen = (os.path.realpath(images_path), stat.st_size, stat.st_mtime_ns, stat.st_ino, full)
    if seen in _CHECKED:
        return
    key = "images_sha256" if full else "sample_sha256"
    if not isinstance(manifest.get(key), str):
        raise _refuse(path, f"the manifest has no {key} (made by an older suite, or edited)")
    try:
        actual = (
            images_digest(images_path) if full else images_digest(images_path, row_bytes, sample_rows(count))
        )
    except (OSError, ValueError) as error:  # ValueError: NotAFile, what is not a regular file
        raise _refuse(
            path, f"cannot read {IMAGES_FILE} ({getattr(error, 'strerror', None) or error})"
        ) from None
    if actual != manifest[key]:
        raise _refuse(path, f"{IMAGES_FILE} has changed since it was written (checksum differs)")
    _CHECKED.add(seen)


_CHECKED: set = set()


def check_cache_fits(path: str, image_size: int, batch_size: int, world_size: int) -> tuple[Cache, int]:
    """The opened cache and each process's share of it, or a UserError (wrong size, batch too big)."""
    from suite.data import check_batch_fits

    cache = open_cache(path)
    if cache.image_size != image_size:
        raise UserError(
            f"cache {path!r} holds {cache.image_size} px images but the workload trains on "
            f"{image_size} px: prepare one with `suite data prepare SRC --size {image_size}`"
        )
    return cache, check_batch_fits(batch_size, cache.count, world_size, f"cache {path!r}")


def _pinnable() -> bool:
    """Whether this process can allocate page-locked host memory (it needs an accelerator runtime)."""
    import torch

    try:
        torch.empty(1, pin_memory=True)
        return True
    except RuntimeError:
        return False


class CacheData(DataSource):
    kind = "cache"

    def __init__(self, path: str, image_size: int, backend, options: LoaderOptions):
        batch_size = options.batch_size
        self.cache, share = check_cache_fits(path, image_size, batch_size, options.world_size)
        self.backend, self.batch_size, self.image_size = backend, batch_size, image_size
        self.workers, self.prefetch = options.workers, options.prefetch
        self.pin_memory = options.pin_memory
        # Without an accelerator runtime there is nothing to pin for (the DataLoader likewise skips it).
        self.pinned = options.pin_memory and _pinnable()
        self.seed, self.rank, self.world_size = options.seed, options.rank, options.world_size
        self.share = share
        self.batches_per_epoch = share // batch_size
        self._pools: list[ThreadPoolExecutor] = []

    # -- sampling ----------------------------------------------------------------------------------
    def batch_indices(self):
        """Endless sorted index arrays, one per batch: a new random permutation every epoch."""
        epoch = 0
        while True:
            permutation = np.random.default_rng([self.seed, epoch]).permutation(self.cache.count)
            mine = permutation[self.rank :: self.world_size][: self.share]
            for start in range(0, self.batches_per_epoch * self.batch_size, self.batch_size):
                yield np.sort(mine[start : start + self.batch_size])
            epoch += 1

    def gather(self, indices: np.ndarray):
        """One batch as host tensors: uint8 images (B, 3, S, S) and int64 labels, one gather each."""
        import torch

        shape = (len(indices), 3, self.image_size, self.image_size)
        if self.pinned:
            # A fresh pinned tensor per batch: torch's host caching allocator reuses the block only once
            # the asynchronous copy out of it has finished, so a batch in flight is never overwritten.
            images = torch.empty(shape, dtype=torch.uint8, pin_memory=True)
            out = images.numpy()
        else:
            out = np.empty(shape, dtype=np.uint8)
            images = torch.from_numpy(out)
        # mode="clip": indices are in range by construction; the default "raise" buffers the output.
        np.take(self.cache.images, indices, axis=0, out=out, mode="clip")
        return images, torch.from_numpy(self.cache.labels[indices])

    def host_batches(self):
        """Endless uint8 batches on the host. With workers, that many threads gather ahead (np.take
        releases the GIL), up to workers x prefetch batches in flight, handed out in order."""
        indices = self.batch_indices()
        if self.workers == 0:
            return (self.gather(batch) for batch in indices)
        pool = ThreadPoolExecutor(self.workers, thread_name_prefix="suite-cache")
        self._pools.append(pool)
        depth = self.workers * (self.prefetch or 2)

        def ahead():
            pending = collections.deque(pool.submit(self.gather, next(indices)) for _ in range(depth))
            while True:
                yield pending.popleft().result()
                pending.append(pool.submit(self.gather, next(indices)))

        return ahead()

    def __iter__(self):
        to_device = self.backend.to_device
        for images, labels in self.host_batches():
            images = to_device(images, non_blocking=True)  # see ImageFolderData: never a device sync
            # On the device: the same arithmetic as ToTensor + Normalize(0.5, 0.5), so both real-data
            # paths give the same numbers for the same image.
            images = images.float().div_(255).sub_(0.5).div_(0.5)
            yield images, to_device(labels, non_blocking=self.pinned)

    def describe(self) -> dict:
        manifest = self.cache.manifest
        return {
            "source": self.kind,
            "path": os.path.abspath(self.cache.path),
            "images": self.cache.count,
            "classes": len(manifest["classes"]),
            "dataset_bytes": os.path.getsize(os.path.join(self.cache.path, IMAGES_FILE)),
            "source_image_size": manifest.get("source_image_size"),
            "image_size": self.image_size,
            "batches_per_epoch": self.batches_per_epoch,
            "workers": self.workers,
            "pin_memory": self.pin_memory,
            "pinned": self.pinned,
            "prefetch": self.prefetch,
            "rank": self.rank,
            "world_size": self.world_size,
            "transform": "prepared: Resize, CenterCrop to uint8; on the device: float, Normalize(0.5, 0.5)",
            "loader": "suite cache (memory-mapped uint8, one np.take per batch"
            + (f", {self.workers} gather thread(s))" if self.workers else ")"),
            "cache": {
                key: manifest.get(key)
                for key in (
                    "source",
                    "source_images",
                    "source_bytes",
                    "source_fingerprint",
                    "skipped_count",
                    "created_utc",
                )
            },
        }

    def close(self) -> None:
        for pool in self._pools:
            pool.shutdown(wait=True, cancel_futures=True)
        self._pools.clear()
