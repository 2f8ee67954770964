"""The one bounded reader of files the suite did not just write: a person's files (catalogs, price lists,
sweep and campaign files, images, token files), run records (through suite.run_record.read), and the
kernel's own small files.

A results folder is a place anyone can put anything: a FIFO named `x.json` (an open would wait forever
for a writer), a symlink to `/dev/zero` (a read would never end), a symlink loop, a 10 GB log renamed
`.json`, a symlink to `/proc/kmsg` (a "regular" file of size 0 whose read waits for the kernel's next
message, and as root takes it from the kernel log). `read_bytes` opens without blocking, judges the
descriptor it opened (fstat, so a file swapped between a check and the open does no harm), refuses a file
of the kernel's own file systems (procfs, sysfs, debugfs, ... by fstatfs, before any byte is read), reads
only regular files and at most `limit` bytes, and never turns blocking on: a read that would wait is
refused. `open_regular` is the same check for a file read as a stream (a cache's pixels, an image).
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
import sys

from suite import atomic
from suite.inputs.errors import UserError

# A person's YAML (catalog, sweep, campaign): hand-written, KiBs.
USER_FILE_LIMIT = 16 * 1024 * 1024


# A price list to import (ec2instances.info's instances.json is tens of MiB).
PRICE_LIST_LIMIT = 512 * 1024 * 1024


class NotAFile(ValueError):
    """A path that is not a regular file of at most the size asked for; the message says why."""


def _mib(count: int) -> str:
    return f"{count / 1024 / 1024:g} MiB"


# The kernel's own file systems (include/uapi/linux/magic.h; docs/failure-modes.md): their "regular" files
# report a size of 0 and are made as they are read. Some wait for data (/proc/kmsg until the kernel logs,
# and as root each read takes the message from the kernel log), some change the system when read, none is
# a person's file. Refused by the file system the descriptor is on, before a byte is read.
PSEUDO_FILE_SYSTEMS = {
    0x9FA0: "procfs",
    0x62656572: "sysfs",
    0x64626720: "debugfs",
    0x74726163: "tracefs",
    0x73636673: "securityfs",
    0xF97CFF8C: "selinuxfs",
    0x43415D53: "smackfs",
    0x5A3C69F0: "apparmorfs",
    0x6165676C: "pstore",
    0xDE5E81E4: "efivarfs",
    0x27E0EB: "cgroup",
    0x63677270: "cgroup2",
    0x7655821: "resctrl",
    0xCAFE4A11: "bpffs",
    0x42494E4D: "binfmt_misc",
    0x6E736673: "nsfs",
    0x9FA1: "openprom",
    0x9FA2: "usbdevfs",
    0xABBA1974: "xenfs",
}


_FILE_SYSTEMS: dict[int, int | None] = {}  # st_dev -> its file system's magic (one fstatfs per device)


def _file_system_magic(fd: int, device: int) -> int | None:
    """f_type of fstatfs(2) for the file system holding `fd` (Linux only; None where it cannot be asked)."""
    if device in _FILE_SYSTEMS:
        return _FILE_SYSTEMS[device]
    magic = None
    if sys.platform.startswith("linux"):
        import ctypes
        import platform

        try:
            fstatfs = ctypes.CDLL(None, use_errno=True).fstatfs
            buffer = ctypes.create_string_buffer(512)  # struct statfs: 120 bytes on 64-bit Linux
            if fstatfs(fd, buffer) == 0:
                # f_type leads the struct: a long (__fsword_t), but an unsigned int on s390 and 32-bit
                narrow = platform.machine().startswith("s390") or ctypes.sizeof(ctypes.c_long) == 4
                kind = ctypes.c_uint32 if narrow else ctypes.c_ulong
                magic = kind.from_buffer(buffer).value & 0xFFFFFFFF
        except (OSError, AttributeError):
            magic = None
    _FILE_SYSTEMS[device] = magic
    return magic


def _open_checked(path: str, limit: int | None) -> tuple[int, os.stat_result]:
    """An open, non-blocking descriptor of the regular file at `path` (at most `limit` bytes, when given)
    on a file system that holds files, and its fstat; else NotAFile naming why. The caller closes it."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)  # O_NONBLOCK: a FIFO without a writer opens at once instead of waiting
    except OSError as error:
        raise NotAFile(f"cannot be opened: {error.strerror or error}") from None
    try:
        mode = os.fstat(fd)
        if not stat.S_ISREG(mode.st_mode):
            kind = atomic.file_kind(mode.st_mode)
            raise NotAFile(f"{kind}, not a regular file" if kind else "not a regular file")
        pseudo = PSEUDO_FILE_SYSTEMS.get(_file_system_magic(fd, mode.st_dev))
        if pseudo:
            raise NotAFile(f"a file of the kernel's {pseudo}, not a regular file (never read: it may block)")
        if limit is not None and mode.st_size > limit:
            raise NotAFile(f"{mode.st_size:,} bytes, more than the {_mib(limit)} a file may hold here")
    except OSError as error:
        os.close(fd)
        raise NotAFile(f"cannot be read: {error.strerror or error}") from None
    except BaseException:
        os.close(fd)
        raise
    return fd, mode


def _would_block() -> NotAFile:
    return NotAFile("a file whose read waits for data (a pseudo file), not a regular file")


def read_bytes(path: str, limit: int) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them, else NotAFile naming why. The
    descriptor stays non-blocking: a "regular" file that would make a read wait is refused, not waited on."""
    fd, _ = _open_checked(path, limit)
    try:
        chunks, total = [], 0
        while total <= limit:  # the size fstat gave may have grown since: never read past the cap
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise NotAFile(f"more than the {_mib(limit)} a file may hold here")
        return b"".join(chunks)
    except BlockingIOError:
        raise _would_block() from None
    except OSError as error:
        raise NotAFile(f"cannot be read: {error.strerror or error}") from None
    finally:
        os.close(fd)


class _NeverWaits(io.FileIO):
    """A non-blocking descriptor's file object whose read that would wait raises NotAFile, rather than
    returning None, which a reader (numpy, PIL) would take for the end of the file."""

    def readinto(self, buffer):
        count = super().readinto(buffer)
        if count is None:
            raise _would_block()
        return count

    def read(self, size=-1):
        data = super().read(size)
        if data is None:
            raise _would_block()
        return data

    def readall(self):
        data = super().readall()
        if data is None:
            raise _would_block()
        return data


@contextlib.contextmanager
def open_regular(path: str, limit: int | None = None):
    """`with open_regular(path) as handle:` a binary file object for a regular file read as a stream (a
    cache's pixels, an image), checked as `read_bytes` checks (NotAFile), without a size cap unless given.
    Its descriptor stays non-blocking: a read that would wait raises NotAFile instead of waiting."""
    fd, _ = _open_checked(path, limit)
    try:
        handle = io.BufferedReader(_NeverWaits(fd, "rb", closefd=True))
    except BaseException:
        os.close(fd)
        raise
    with handle:
        yield handle


def read_fixed_file(path: str, limit: int = 64 * 1024) -> str | None:
    """The start (at most `limit` bytes, as text) of a file the suite reads by a fixed name of its own, never
    a person's: a kernel file (/proc/cpuinfo, a PCI device's ids in sysfs, the DMI product name) or the
    checkout's commit stamp. Opened without blocking, a regular file only, and a read that would wait is
    not waited on; None where it cannot be read. A path a person names goes through `read_bytes`, which
    refuses the kernel's file systems."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks, total = [], 0
        while total < limit:
            chunk = os.read(fd, limit - total)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        return b"".join(chunks).decode("utf-8", errors="replace")
    except OSError:  # BlockingIOError included: nothing to read now is nothing read
        return None
    finally:
        os.close(fd)


def read_text(path: str, limit: int = USER_FILE_LIMIT) -> str:
    """`read_bytes` as UTF-8 text (UnicodeDecodeError as from open())."""
    return read_bytes(path, limit).decode("utf-8")


def read_user_file(path: str, where: str, limit: int = USER_FILE_LIMIT) -> str:
    """A person's file as text, or a UserError naming `where` and why it cannot be read."""
    try:
        return read_text(path, limit)
    except NotAFile as error:
        raise UserError(f"{where} {path!r}: {error}") from None
    except UnicodeDecodeError as error:
        raise UserError(f"{where} {path!r} is not UTF-8 text (byte {error.start}: {error.reason})") from None
