"""`suite data prepare`: decode, resize and crop an ImageFolder once, out of band, into a cache.

All cores decode in parallel (a process pool: PIL decoding holds the GIL); the parent writes the
images in source order, so a cache is the same whatever the number of processes. An image that
cannot be read is skipped, counted and listed in the manifest: never a crash, never silently lost.

Nothing that looks like a complete cache exists until the end: everything is written into a hidden
temporary folder beside the target, which is renamed onto the target last. An interrupted prepare
leaves at most that temporary folder, which the next prepare of the same target removes.
"""

from __future__ import annotations

import datetime
import glob
import hashlib
import json
import multiprocessing
import os
import shutil
import signal
import tempfile

import numpy as np

import suite
from suite import atomic, limits
from suite.data import cache as cache_format
from suite.data.imagefolder import resize_and_crop, scan_folder
from suite.inputs import errors
from suite.inputs.errors import UserError
from suite.inputs.files import open_regular
from suite.inputs.numbers import positive_int

_transform = None  # set in each worker (and in the parent for a single process)


def _init_worker(image_size: int, in_pool: bool = False, end_with_parent=None) -> None:
    global _transform
    if end_with_parent is not None:
        end_with_parent()  # a forked worker ends with the command, even one killed with SIGKILL
    _transform = resize_and_crop(image_size)
    if in_pool:
        # Ctrl-C is the parent's to handle (it removes the partial cache); workers just get terminated.
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _decode(path: str):
    """(CHW uint8 bytes, None) or (None, why it could not be read)."""
    from PIL import Image

    try:  # open_regular: a FIFO, device or kernel pseudo file named like an image is skipped, not waited on
        with open_regular(path) as handle, Image.open(handle) as image:
            # The same steps as torchvision's default loader and the JPEG path's transform.
            pixels = np.asarray(_transform(image.convert("RGB")), dtype=np.uint8)
        return np.ascontiguousarray(pixels.transpose(2, 0, 1)).tobytes(), None
    except Exception as error:  # noqa: BLE001 - any undecodable file is skipped and reported
        return None, f"{type(error).__name__}: {error}"


def source_fingerprint(samples: list[tuple[str, int]], root: str) -> str:
    """A digest of what the source held: every image's relative path, class, size and modification time."""
    digest = hashlib.sha256()
    for path, label in samples:
        stat = os.stat(path)
        digest.update(
            f"{os.path.relpath(path, root)}\0{label}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode()
        )
    return digest.hexdigest()


# Per decoding process: the resized image and PIL's working copies of it (an estimate: a few times the
# uint8 output image).
DECODE_COPIES = 4


def check_prepare_bounds(images: int, image_size: int, out: str, workers: int) -> None:
    """Refuse a cache the disk cannot hold, or images the memory cannot decode, before writing any."""
    row = 3 * image_size * image_size
    free = limits.free_disk_bytes(out)
    if free is not None:
        limits.refuse_above(
            f"a cache of {images:,} images of {image_size} px",
            images * row,
            free,
            f"the free space on the disk of {out!r}",
        )
    limits.refuse_above(
        f"decoding {image_size} px images in {workers} processes",
        workers * DECODE_COPIES * row,
        limits.available_memory_bytes(),
        "the memory available now",
    )


def _partial_prefix(out: str) -> str:
    parent, name = os.path.split(os.path.abspath(out))
    return os.path.join(parent, f".{name}.partial-")


def prepare(
    source: str, image_size, out: str, workers: int | None = None, force: bool = False, progress=None
) -> dict:
    """Build the cache at `out` from the ImageFolder at `source`; returns its manifest."""
    from suite.data.progress import Progress

    image_size = positive_int("--size", image_size)
    scan = scan_folder(source, option="SRC")
    if workers is not None:  # one per core by default; a count given is held to what the machine holds
        from suite.data import WORKER_MEMORY_BYTES

        limits.check_processes(f"--workers {workers}", workers, WORKER_MEMORY_BYTES, "decoding process")
    check_prepare_bounds(len(scan.samples), image_size, out, workers or os.cpu_count() or 1)
    fingerprint = source_fingerprint(scan.samples, source)
    if os.path.exists(out):
        if cache_format.is_cache(out) and not force:
            try:
                existing = cache_format.open_cache(out, full_check=True).manifest
            except UserError:
                existing = {}
            if existing.get("source_fingerprint") == fingerprint and existing.get("image_size") == image_size:
                return {**existing, "up_to_date": True}
            raise UserError(f"--out {out!r} already holds a different cache; pass --force to replace it")
        if not cache_format.is_cache(out) and (not os.path.isdir(out) or os.listdir(out)):
            raise UserError(f"--out {out!r} exists and is not a cache; choose another path")

    # Leftovers of an interrupted prepare of this target: never a cache, safe to remove.
    for leftover in glob.glob(glob.escape(_partial_prefix(out)) + "*"):
        shutil.rmtree(leftover, ignore_errors=True)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    tmp = tempfile.mkdtemp(
        prefix=os.path.basename(_partial_prefix(out)), dir=os.path.dirname(_partial_prefix(out))
    )
    try:
        manifest = _build(
            scan,
            fingerprint,
            image_size,
            tmp,
            workers or os.cpu_count() or 1,
            progress or Progress(f"prepare {image_size} px", len(scan.samples)),
        )
        if os.path.exists(out):  # an empty folder, or a cache being replaced (--force)
            old = tmp + "-old"
            os.rename(out, old)
            os.rename(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, out)  # the moment the cache becomes complete
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return manifest


def _build(scan, fingerprint: str, image_size: int, folder: str, workers: int, progress) -> dict:
    paths = [path for path, _ in scan.samples]
    images_path = os.path.join(folder, cache_format.IMAGES_FILE)
    pool, decoded = _decoder(paths, image_size, workers)
    try:
        labels, skipped, digest = _write_images(scan, decoded, images_path, progress)
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
    progress.close()
    if not labels:
        raise UserError(
            f"SRC {scan.path!r}: none of its {len(paths)} images could be read "
            f"(first error: {skipped[0]['error']})"
        )

    label_array = np.asarray(labels, dtype=np.int64)
    with atomic.atomic_open(os.path.join(folder, cache_format.LABELS_FILE), "wb") as handle:
        np.save(handle, label_array)
    manifest = {
        "format": cache_format.FORMAT,
        "format_version": cache_format.FORMAT_VERSION,
        "count": len(labels),
        "image_size": image_size,
        "layout": "uint8 (count, 3, image_size, image_size), C order; labels int64",
        "classes": scan.classes,
        "labels_sha256": cache_format.labels_digest(label_array),
        "images_sha256": digest.hexdigest(),
        "sample_sha256": cache_format.images_digest(
            images_path, 3 * image_size * image_size, cache_format.sample_rows(len(labels))
        ),
        **_source_fields(scan, fingerprint, skipped),
        "transform": "PIL decode, convert RGB, Resize (shorter side, bilinear), CenterCrop",
        "created_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "suite_version": suite.__version__,
    }
    atomic.write_atomic(os.path.join(folder, cache_format.MANIFEST), json.dumps(manifest, indent=2) + "\n")
    return manifest


def _decoder(paths: list[str], image_size: int, workers: int):
    """The images decoded in order: by a pool of forked workers (returned, to be ended by the caller), or
    in this process (no pool)."""
    if workers > 1 and len(paths) > 1 and not _pool_refused():
        # fork: the workers start at once, without importing torch again.
        pool = multiprocessing.get_context("fork").Pool(
            workers, initializer=_init_worker, initargs=(image_size, True, limits.end_with_parent())
        )
        return pool, pool.imap(_decode, paths, chunksize=max(1, min(64, len(paths) // (workers * 8))))
    _init_worker(image_size)
    return None, map(_decode, paths)


def _pool_refused() -> bool:
    """Where worker processes cannot share memory (a read-only /dev/shm), the images are decoded in this
    process, said once: the cache is the same byte for byte, only slower to make."""
    problem = limits.shared_memory_problem()
    if problem:
        errors.warn(f"decoding in one process: worker processes need {problem}")
    return problem is not None


def _write_images(scan, decoded, images_path: str, progress) -> tuple[list, list[dict], object]:
    """Each decoded image appended to the images file (synced), the unreadable ones listed: the labels
    written, the skipped images, and the digest of every byte written."""
    labels, skipped = [], []
    digest = hashlib.sha256()  # of everything written, as it is written: the full check costs no extra read
    with open(images_path, "wb") as images_file:
        for done, ((path, label), (pixels, error)) in enumerate(zip(scan.samples, decoded), 1):
            if pixels is None:
                skipped.append({"path": os.path.relpath(path, scan.path), "error": error})
            else:
                images_file.write(pixels)
                digest.update(pixels)
                labels.append(label)
            progress.update(done, skipped=len(skipped))
        images_file.flush()
        os.fsync(images_file.fileno())
    return labels, skipped, digest


def _source_fields(scan, fingerprint: str, skipped: list[dict]) -> dict:
    """The manifest's account of the folder the cache was made from."""
    return {
        "source": os.path.abspath(scan.path),
        "source_images": len(scan.samples),
        "source_bytes": scan.image_bytes,
        "source_image_size": scan.first_image_size(),
        "source_fingerprint": fingerprint,
        "skipped_count": len(skipped),
        "skipped": skipped,
    }
