"""A loader's worker processes can only start where their socket's path fits: refused before they start.

A DataLoader worker hands each batch's tensors to the main process as file descriptors, through a Unix
socket that Python's multiprocessing makes in its temporary folder (`multiprocessing.resource_sharer`:
`TMPDIR/pymp-XXXXXXXX/listener-XXXXXXXX`). Linux caps that path at 107 bytes (`sun_path` is 108 with its
NUL); past the cap the worker's listener fails in a background thread, no batch ever arrives and the run
waits forever. Newer Pythons fall back to /tmp themselves (`_get_base_temp_dir` in CPython's
multiprocessing/util.py); the check asks multiprocessing for the folder it will use, so it refuses only
where the wait would happen."""

from __future__ import annotations

import os

from suite.inputs.errors import UserError

# The longest path Linux's AF_UNIX address holds (struct sockaddr_un's 108-byte sun_path less its NUL).
UNIX_SOCKET_PATH_MAX = 107
# The name multiprocessing gives the listener in that folder: "listener-" and 8 random characters.
LISTENER_NAME = "listener-XXXXXXXX"


def check_worker_socket_fits(workers: int) -> None:
    """With worker processes, a UserError where their socket's path would be too long; else nothing."""
    if workers <= 0:
        return
    from multiprocessing import util

    folder = util.get_temp_dir()  # the folder the workers' listener is made in (made now if not yet)
    length = len(os.fsencode(os.path.join(folder, LISTENER_NAME)))
    if length > UNIX_SOCKET_PATH_MAX:
        raise UserError(
            f"TMPDIR {os.path.dirname(folder)!r} is too long for --workers {workers}: the loader's worker "
            f"processes pass batches over a Unix socket in it ({length} bytes, at most "
            f"{UNIX_SOCKET_PATH_MAX}) and would wait forever; set TMPDIR to a shorter folder (e.g. /tmp) "
            "or use --workers 0"
        )
