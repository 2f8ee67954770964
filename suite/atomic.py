"""The one way the suite writes a file: a temporary file beside the target, fsync, then rename over it.

A reader therefore sees the old file or the new one, never half of either: a full disk, a killed process
or a folder that turns read-only mid-write leaves the previous file as it was. A killed write can leave
its temporary file behind; those are named `.tmp-<target>.suite-atomic-<8 random>`, hidden (readers of
suite folders skip names that start with a dot), and removed by the next write of the same target once they
are an hour old (younger ones may belong to a write still in progress, by another process). Only names of
exactly that form are removed: a user's own `.tmp-notes` in the folder is not the writer's to delete.

The writer replaces a regular file or makes a new one, nothing else: a target that is a device
(`/dev/full`), a FIFO, a socket, a folder or a symlink is refused, since the rename would put a regular
file in its place (as root, it would replace the device node itself).

The file gets the permissions a plain open() would give it: a new one 0666 less the umask (not mkstemp's
0600, which would hide a results folder from the rest of a team), a replaced one the permission bits it had.

rename() is atomic within one file system (POSIX rename(2)); fsync of the file before it, and of the
folder after it, make the new name survive a power cut as well as a crash.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
import time

TMP_PREFIX = ".tmp-"
TMP_MARKER = ".suite-atomic-"  # what makes a temporary recognisably this writer's own
STALE_AFTER_S = 3600.0
# The random part of a temporary's name: tempfile's alphabet and length, so older temporaries still match.
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789_"
_RANDOM_LENGTH = 8
_RANDOM = f"[{re.escape(_ALPHABET)}]{{{_RANDOM_LENGTH}}}"
_NAME_TRIES = 100

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISLNK, "a symlink"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
)


def file_kind(mode: int) -> str | None:
    """What a non-regular file is, in words ("a FIFO (named pipe)"), from its st_mode; None if not known.
    The writer (here) and the bounded reader (inputs/files.py) both name what they refuse with it."""
    return next((kind for test, kind in _KINDS if test(mode)), None)


class NotRegularFile(OSError):
    """The target exists and is not a regular file: the writer will not put a file in its place."""


def what_is_there(path: str) -> str | None:
    """None if PATH is absent or a regular file (what the writer may replace), else what it is, in words.
    lstat, not stat: a symlink is judged as itself, never by what it points to."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISREG(mode):
        return None
    return file_kind(mode) or "not a regular file"


def check_replaceable(path: str) -> None:
    """Raise NotRegularFile unless PATH is a regular file or a new name."""
    kind = what_is_there(path)
    if kind is not None:
        raise NotRegularFile(errno.EEXIST, f"it is {kind}; give a new path or a regular file", path)


def _temporary_prefix(base: str) -> str:
    return f"{TMP_PREFIX}{base}{TMP_MARKER}"


def _own_temporary(base: str) -> re.Pattern:
    """The names this writer gives its temporaries for target BASE, and only those."""
    suffix = os.path.splitext(base)[1]
    return re.compile(re.escape(_temporary_prefix(base)) + _RANDOM + re.escape(suffix))


def is_temporary(name: str) -> bool:
    """A leftover of an interrupted write: never a result, whatever it ends with."""
    return os.path.basename(name).startswith(TMP_PREFIX)


def remove_stale_temporaries(folder: str, target: str, older_than_s: float = STALE_AFTER_S) -> int:
    """Remove this writer's temporaries for TARGET (a name in FOLDER) older than `older_than_s`: regular
    files named as `atomic_path` names them, nothing else. Returns how many went."""
    own, removed, now = _own_temporary(os.path.basename(target)), 0, time.time()
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    for name in names:
        if not own.fullmatch(name):
            continue
        path = os.path.join(folder, name)
        try:
            status = os.lstat(path)
            if stat.S_ISREG(status.st_mode) and now - status.st_mtime > older_than_s:
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


def _new_temporary(folder: str, base: str) -> str:
    """Make an empty temporary for target BASE in FOLDER and return its path. Created with mode 0666, so the
    kernel applies the umask as for any new file; where the target exists, its permission bits are copied."""
    suffix = os.path.splitext(base)[1]
    for _ in range(_NAME_TRIES):
        random = "".join(secrets.choice(_ALPHABET) for _ in range(_RANDOM_LENGTH))
        tmp = os.path.join(folder, _temporary_prefix(base) + random + suffix)
        try:
            fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
        except FileExistsError:
            continue
        try:
            with contextlib.suppress(FileNotFoundError):
                os.chmod(fd, stat.S_IMODE(os.stat(os.path.join(folder, base)).st_mode))
        finally:
            os.close(fd)
        return tmp
    raise FileExistsError(errno.EEXIST, f"no free temporary name after {_NAME_TRIES} tries", folder)


@contextlib.contextmanager
def atomic_path(path: str):
    """Yield a temporary path to write `path` through (for writers that want a name, e.g. savefig,
    np.save); on success it is fsynced and renamed onto `path`, on any failure removed."""
    check_replaceable(path)  # before anything is made: a refused target leaves no temporary behind
    folder = os.path.dirname(os.path.abspath(path))
    base = os.path.basename(path)
    remove_stale_temporaries(folder, base)
    tmp = _new_temporary(folder, base)
    try:
        yield tmp
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        check_replaceable(path)  # again: it may have become a link or FIFO while the content was written
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
