"""`suite data synth`: an ImageFolder of JPEGs shaped like the seed's street photos (480x360).

The content is made to compress like a photograph, not like flat colour, so that decoding costs what
it costs on real data: a colour gradient (sky, lighting), blotchy low-frequency texture, a few dozen
overlapping shapes with softened edges, and per-pixel sensor noise. Each image depends only on
(seed, index), so a folder is the same for a seed whatever the number of processes that wrote it.
"""

from __future__ import annotations

import multiprocessing
import os
import signal

import numpy as np

from suite import limits
from suite.inputs import errors
from suite.inputs.errors import UserError
from suite.inputs.numbers import positive_int

JPEG_QUALITY = 90  # a camera/phone-like quality; photos of this size are then tens of KB


def parse_image_size(text: str) -> tuple[int, int]:
    """'480x360' -> (480, 360): width x height."""
    parts = str(text).lower().split("x")
    if len(parts) == 2 and all(p.isdigit() and int(p) > 0 for p in parts):
        return int(parts[0]), int(parts[1])
    raise UserError(f"--size must be WIDTHxHEIGHT in pixels, e.g. 480x360, got {text!r}")


# make_image holds about four float32 copies of the picture (gradient, texture, noise, result): 48 bytes a
# pixel, per process. A JPEG at quality 90 of such a picture takes about a tenth of its raw bytes.
SYNTH_BYTES_PER_PIXEL = 48
JPEG_FRACTION = 0.1


def check_synth_bounds(count: int, width: int, height: int, out_dir: str, workers: int) -> None:
    """Refuse images PIL would refuse to read back, or more than memory and disk hold, before drawing."""
    from PIL import Image

    pixels = width * height
    # Pillow refuses to open an image over twice MAX_IMAGE_PIXELS (a decompression bomb) and warns above it.
    limits.refuse_above(
        f"--size {width}x{height}",
        pixels,
        Image.MAX_IMAGE_PIXELS,
        "Pillow's decompression-bomb limit: larger images would be refused when read",
        show=lambda n: f"{n:,.0f} pixels",
    )
    limits.refuse_above(
        f"drawing {width}x{height} images in {workers} processes",
        workers * SYNTH_BYTES_PER_PIXEL * pixels,
        limits.available_memory_bytes(),
        "the memory available now",
    )
    free = limits.free_disk_bytes(out_dir)
    if free is not None:
        limits.refuse_above(
            f"{count:,} JPEGs of {width}x{height}",
            count * pixels * 3 * JPEG_FRACTION,
            free,
            f"the free space on the disk of {out_dir!r}",
        )


def class_name(index: int) -> str:
    return f"class_{index:03d}"


def image_path(out_dir: str, index: int, classes: int) -> str:
    # Round-robin over classes: every class gets images, and the layout does not depend on the count.
    return os.path.join(out_dir, class_name(index % classes), f"{index:07d}.jpg")


def make_image(seed: int, index: int, width: int, height: int):
    """One photograph-like PIL image, a pure function of (seed, index, size)."""
    from PIL import Image, ImageDraw, ImageFilter

    rng = np.random.default_rng([seed, index])
    y = np.linspace(0.0, 1.0, height, dtype=np.float32)[:, None, None]
    x = np.linspace(0.0, 1.0, width, dtype=np.float32)[None, :, None]
    top, bottom, side = rng.uniform(0, 255, size=(3, 3)).astype(np.float32)
    pixels = top + (bottom - top) * y + (side - top) * 0.5 * x
    # Low-frequency texture: a coarse random grid, smoothly upsampled.
    coarse = rng.normal(0, 40, size=(max(height // 40, 2), max(width // 40, 2), 3))
    coarse_image = Image.fromarray(np.clip(coarse + 128, 0, 255).astype(np.uint8))
    texture = np.asarray(coarse_image.resize((width, height), Image.BICUBIC), dtype=np.float32) - 128
    image = Image.fromarray(np.clip(pixels + texture, 0, 255).astype(np.uint8))

    draw = ImageDraw.Draw(image)
    for _ in range(int(rng.integers(8, 24))):
        # Objects of many sizes, up to about half the frame, anywhere in it.
        x0, y0 = int(rng.integers(0, width)), int(rng.integers(0, height))
        x1, y1 = x0 + int(rng.integers(2, width // 2 + 3)), y0 + int(rng.integers(2, height // 2 + 3))
        colour = tuple(int(c) for c in rng.integers(0, 256, size=3))
        kind = int(rng.integers(0, 3))
        if kind == 0:
            draw.rectangle([x0, y0, x1, y1], fill=colour)
        elif kind == 1:
            draw.ellipse([x0, y0, x1, y1], fill=colour)
        else:
            points = [(int(px), int(py)) for px, py in zip(rng.integers(x0, x1, 3), rng.integers(y0, y1, 3))]
            draw.polygon(points, fill=colour)
    image = image.filter(ImageFilter.GaussianBlur(radius=1.2))  # lens softness: no perfectly sharp edges
    noisy = np.asarray(image, dtype=np.float32) + rng.normal(0, 6, size=(height, width, 3))  # sensor noise
    return Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8))


def _init_worker(end_with_parent) -> None:
    """A drawing process: it ends with the command (even one killed with SIGKILL) and ignores Ctrl-C (the
    parent handles it and terminates the pool)."""
    end_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _write_one(job) -> int:
    out_dir, index, classes, seed, width, height = job
    path = image_path(out_dir, index, classes)
    make_image(seed, index, width, height).save(path, format="JPEG", quality=JPEG_QUALITY)
    return os.path.getsize(path)


def _pool_refused() -> bool:
    """Where worker processes cannot share memory (a read-only /dev/shm), the images are drawn in this
    process, said once: the same files, only slower to make."""
    problem = limits.shared_memory_problem()
    if problem:
        errors.warn(f"drawing in one process: worker processes need {problem}")
    return problem is not None


def synthesize(
    out_dir: str,
    count,
    size: str | tuple[int, int] = (480, 360),
    classes=1,
    seed: int = 0,
    workers: int | None = None,
    progress=None,
) -> dict:
    """Write `count` JPEGs into `out_dir/class_NNN/`. Returns a summary (count, bytes, size)."""
    from suite.data.progress import Progress

    count = positive_int("--count", count, most=10**8)  # the disk check below bounds it too
    classes = positive_int("--classes", classes)
    width, height = parse_image_size(size) if isinstance(size, str) else size
    workers = workers or os.cpu_count() or 1
    check_synth_bounds(count, width, height, out_dir, min(workers, count))
    if classes > count:
        raise UserError(f"--classes {classes} is more than --count {count}: every class needs an image")
    if os.path.exists(out_dir) and (not os.path.isdir(out_dir) or os.listdir(out_dir)):
        raise UserError(f"--out {out_dir!r} already exists and is not an empty folder; choose a new one")
    for c in range(classes):
        os.makedirs(os.path.join(out_dir, class_name(c)), exist_ok=True)

    jobs = [(out_dir, i, classes, int(seed), width, height) for i in range(count)]
    progress = progress or Progress(f"synth {width}x{height}", count)
    total_bytes = 0
    if workers == 1 or count < 64 or _pool_refused():
        results = map(_write_one, jobs)
        pool = None
    else:
        # Workers ignore Ctrl-C: the parent handles it and terminates them.
        pool = multiprocessing.get_context("fork").Pool(
            workers, initializer=_init_worker, initargs=(limits.end_with_parent(),)
        )
        results = pool.imap(_write_one, jobs, chunksize=16)
    try:
        for done, size_bytes in enumerate(results, 1):
            total_bytes += size_bytes
            progress.update(done)
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
    progress.close()
    return {
        "path": out_dir,
        "count": count,
        "classes": classes,
        "width": width,
        "height": height,
        "bytes": total_bytes,
        "seed": int(seed),
    }
