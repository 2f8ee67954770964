"""The one way the suite writes a file: a temporary file beside the target, fsync, then rename over it.

A reader therefore sees the old file or the new one, never half of either: a full disk, a killed process
or a folder that turns read-only mid-write leaves the previous file as it was. A killed write can leave
its temporary file behind; those are named `.tmp-<target>-<random>`, hidden (readers of suite folders skip
names that start with a dot), and removed by the next write into the same folder once they are an hour
old (younger ones may belong to a write still in progress, by another process).

rename() is atomic within one file system (POSIX rename(2)); fsync of the file before it, and of the
folder after it, make the new name survive a power cut as well as a crash.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time

TMP_PREFIX = ".tmp-"
STALE_AFTER_S = 3600.0


def is_temporary(name: str) -> bool:
    """A leftover of an interrupted write: never a result, whatever it ends with."""
    return os.path.basename(name).startswith(TMP_PREFIX)


def remove_stale_temporaries(folder: str, older_than_s: float = STALE_AFTER_S) -> int:
    """Remove `.tmp-*` files older than `older_than_s` in `folder`; returns how many went."""
    removed, now = 0, time.time()
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    for name in names:
        if not is_temporary(name):
            continue
        path = os.path.join(folder, name)
        try:
            if os.path.isfile(path) and now - os.path.getmtime(path) > older_than_s:
                os.unlink(path)
                removed += 1
        except OSError:
            pass  # gone already, or not ours to remove: readers skip it either way
    return removed


def _fsync_folder(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot fsync a folder; the rename itself is still atomic
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(path: str):
    """Yield a temporary path to write `path` through (for writers that want a name, e.g. savefig,
    np.save); on success it is fsynced and renamed onto `path`, on any failure removed."""
    folder = os.path.dirname(os.path.abspath(path))
    remove_stale_temporaries(folder)
    base = os.path.basename(path)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f"{TMP_PREFIX}{base}-", suffix=os.path.splitext(base)[1])
    os.close(fd)
    try:
        yield tmp
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_folder(folder)


@contextlib.contextmanager
def atomic_open(path: str, mode: str = "w", **kwargs):
    """`with atomic_open(path) as handle:` — like open(path, mode), but the file appears whole or not at
    all. Modes: "w" (text) or "wb"."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open writes whole files: mode 'w' or 'wb', not {mode!r}")
    with atomic_path(path) as tmp:
        with open(tmp, mode, **kwargs) as handle:
            yield handle
            handle.flush()


def write_atomic(path: str, content: str | bytes) -> None:
    """Write `content` (text as UTF-8, or bytes) to `path` atomically."""
    if isinstance(content, bytes):
        with atomic_open(path, "wb") as handle:
            handle.write(content)
    else:
        with atomic_open(path, "w", encoding="utf-8") as handle:
            handle.write(content)
