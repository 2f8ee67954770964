"""The standard streams as the shell gave them. One closed (`2>&-`, `>&-`) or one that refuses writes
(`> /dev/full`, a disk that fills) never ends a command with a traceback, and never takes a measurement
with it:

- a closed descriptor 0, 1 or 2 gets /dev/null in its place first thing, so that no file the suite opens
  later takes its number (a record's temporary file opened as descriptor 2 would take stray progress);
- stderr closed or failing: what the suite says there goes nowhere, and the command runs as asked (its
  exit status and its record say how it went);
- stdout closed or failing: `OutputFailed`, a UserError the command line prints as one line on stderr
  (exit 2); a command that wrote a record before its output (`suite run`) names the record there. The
  stream is then pointed at /dev/null, so that the interpreter's last flush at exit fails no more.

A reader that leaves early (`suite report | head`) is a BrokenPipeError, left as it is: the command line
ends quietly on it.
"""

from __future__ import annotations

import errno
import os
import sys

from suite.inputs.errors import UserError


class OutputFailed(UserError):
    """What a command printed on its standard output could not be written there."""


def _reopen_on_null(fd: int) -> None:
    """/dev/null as descriptor FD (the output written there since is dropped, and so never fails)."""
    null = os.open(os.devnull, os.O_RDWR)
    if null != fd:
        os.dup2(null, fd)
        os.close(null)


class _Checked:
    """A standard stream whose failed writes are OutputFailed (stdout) or dropped (stderr, which has no
    one left to tell), and whose other attributes are the stream's own."""

    def __init__(self, stream, fd: int, name: str, closed: bool):
        self._stream, self._fd, self._name, self._closed = stream, fd, name, closed

    def _failed(self, error: OSError | None) -> None:
        if error is not None and isinstance(error, BrokenPipeError):
            raise error
        try:
            _reopen_on_null(self._fd)  # what is still buffered now goes nowhere, at exit too
        except OSError:
            pass
        if self._name == "stderr":
            return
        why = "it is closed" if error is None else (error.strerror or str(error))
        raise OutputFailed(f"standard output could not be written ({why})") from None

    def write(self, text: str) -> int:
        if self._closed:
            self._failed(None)
            return len(text)
        try:
            return self._stream.write(text)
        except OSError as error:
            self._failed(error)
            return len(text)

    def flush(self) -> None:
        if self._closed:
            return
        try:
            self._stream.flush()
        except OSError as error:
            self._failed(error)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _descriptor_open(fd: int) -> bool:
    try:
        os.fstat(fd)
        return True
    except OSError as error:
        return error.errno != errno.EBADF


def checked_streams() -> tuple:
    """Put the checks in place (a closed descriptor on /dev/null, stdout and stderr wrapped); returns what
    `restore` puts back."""
    previous = (sys.stdin, sys.stdout, sys.stderr)
    closed = {fd: sys_stream is None or not _descriptor_open(fd) for fd, sys_stream in enumerate(previous)}
    for fd, is_closed in closed.items():
        if is_closed and not _descriptor_open(fd):
            _reopen_on_null(fd)
    if previous[0] is None:
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - the process's own stdin
    streams = []
    for fd, name in ((1, "stdout"), (2, "stderr")):
        stream = previous[fd]
        if stream is None:
            stream = open(fd, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
        streams.append(_Checked(stream, fd, name, closed=closed[fd] and name == "stdout"))
    sys.stdout, sys.stderr = streams
    return previous


def restore(previous: tuple) -> None:
    sys.stdin, sys.stdout, sys.stderr = (
        now if before is None else before
        for before, now in zip(previous, (sys.stdin, sys.stdout, sys.stderr))
    )


def flush_stdout() -> None:
    """What is buffered for stdout, written now (OutputFailed where it cannot be), not at the interpreter's
    exit, where a failure is only an "Exception ignored" line."""
    sys.stdout.flush()
