"""Reading files the suite did not just write: run records (every one through `schema.check_record`)
and a person's own files (catalogs, price lists, sweep and campaign files), through one bounded reader.

A results folder is a place anyone can put anything: a FIFO named `x.json` (an open would wait forever
for a writer), a symlink to `/dev/zero` (a read would never end), a symlink loop, a 10 GB log renamed
`.json`. `read_bytes` opens without blocking, judges the descriptor it opened (fstat, so a file swapped
between a check and the open does no harm), reads only regular files and at most `limit` bytes.
"""

from __future__ import annotations

import json
import os
import stat

from suite import atomic
from suite.errors import UserError
from suite.run_record.schema import NotARecord, check_record

# A record is a few KiB; a file a thousand times larger is not one (and would be read into memory).
RECORD_LIMIT = 16 * 1024 * 1024
# A person's YAML (catalog, sweep, campaign): hand-written, KiBs.
USER_FILE_LIMIT = 16 * 1024 * 1024
# A price list to import (ec2instances.info's instances.json is tens of MiB).
PRICE_LIST_LIMIT = 512 * 1024 * 1024


class NotAFile(ValueError):
    """A path that is not a regular file of at most the size asked for; the message says why."""


def _mib(count: int) -> str:
    return f"{count / 1024 / 1024:g} MiB"


def read_bytes(path: str, limit: int) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them, else NotAFile naming why."""
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
        if mode.st_size > limit:
            raise NotAFile(f"{mode.st_size:,} bytes, more than the {_mib(limit)} a file may hold here")
        os.set_blocking(fd, True)
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
    except OSError as error:
        raise NotAFile(f"cannot be read: {error.strerror or error}") from None
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


def parse_json(text: str):
    """json.loads, with what Python's parser raises on hostile input named as "not a record"."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise NotARecord(f"not valid JSON ({error.msg} at line {error.lineno})") from None
    except RecursionError:  # the parser recurses once per level: thousands of [[[[ exhaust the stack
        raise NotARecord("nested too deeply to be a record") from None
    except ValueError as error:  # an integer of more digits than sys.get_int_max_str_digits()
        raise NotARecord(f"not a record ({str(error).split(';')[0]})") from None


def read_record(path: str) -> dict:
    try:
        text = read_text(path, RECORD_LIMIT)
    except NotAFile as error:
        raise NotARecord(str(error)) from None
    except UnicodeDecodeError as error:
        raise NotARecord(f"not UTF-8 text (byte {error.start}: {error.reason})") from None
    return check_record(parse_json(text))


def iter_record_paths(paths: list[str]):
    """JSON files named directly, or found (recursively) in named folders, in a stable order."""
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs.sort()
                for name in sorted(files):
                    # hidden names include atomic writes' leftovers (.tmp-*): never records
                    if name.endswith(".json") and not name.startswith("."):
                        yield os.path.join(root, name)
        elif os.path.lexists(path):  # a dangling link or a loop is named and skipped by the reader, with why
            yield path
        else:
            raise UserError(f"no such file or folder: {path!r}")
