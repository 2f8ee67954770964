"""A loader's worker processes pass batches over a Unix socket under the temporary folder: where that
socket's path would pass Linux's 107 bytes the workers would wait forever, so the loader is refused first."""

from __future__ import annotations

import io
from multiprocessing import util

import pytest
from suite.backends.cpu import CPUBackend

from suite.data.imagefolder import ImageFolderData
from suite.data.loader_options import LoaderOptions
from suite.data.progress import Progress
from suite.data.synth import synthesize
from suite.data.worker_socket import UNIX_SOCKET_PATH_MAX, check_worker_socket_fits
from suite.inputs.errors import UserError
from suite.spec import RunSpec

LONG_TMPDIR = "/tmp/" + "t" * 80  # as a test runner's nested folders make it: 85 characters


def long_folder(monkeypatch):
    """multiprocessing's folder for sockets as it is under LONG_TMPDIR: TMPDIR/pymp-XXXXXXXX."""
    monkeypatch.setattr(util, "get_temp_dir", lambda: LONG_TMPDIR + "/pymp-abcdefgh")


def test_a_socket_path_past_the_cap_is_refused_naming_tmpdir_its_length_and_the_fixes(monkeypatch):
    long_folder(monkeypatch)
    with pytest.raises(UserError) as refused:
        check_worker_socket_fits(2)
    message = str(refused.value)
    length = len(LONG_TMPDIR + "/pymp-abcdefgh/listener-XXXXXXXX")
    assert length > UNIX_SOCKET_PATH_MAX
    assert f"TMPDIR {LONG_TMPDIR!r}" in message and "--workers 2" in message
    assert f"({length} bytes, at most {UNIX_SOCKET_PATH_MAX})" in message
    assert "set TMPDIR to a shorter folder" in message and "--workers 0" in message and "\n" not in message


def test_no_workers_or_a_short_folder_pass(monkeypatch):
    long_folder(monkeypatch)
    check_worker_socket_fits(0)  # batches made in this process: no socket
    monkeypatch.setattr(util, "get_temp_dir", lambda: "/tmp/pymp-abcdefgh")
    check_worker_socket_fits(4)
    # the longest path that still fits passes; one byte more does not
    folder = "/" + "f" * (UNIX_SOCKET_PATH_MAX - len("/listener-XXXXXXXX") - 1)
    monkeypatch.setattr(util, "get_temp_dir", lambda: folder)
    check_worker_socket_fits(1)
    monkeypatch.setattr(util, "get_temp_dir", lambda: folder + "f")
    with pytest.raises(UserError):
        check_worker_socket_fits(1)


def test_an_image_folder_with_workers_is_refused_before_any_worker_starts(tmp_path, monkeypatch):
    folder = str(tmp_path / "d")
    synthesize(folder, 4, size=(20, 20), classes=1, workers=1, progress=Progress("t", 0, io.StringIO()))
    long_folder(monkeypatch)
    options = LoaderOptions(2, workers=1, pin_memory=False, prefetch=2)
    with pytest.raises(UserError, match="too long for --workers 1"):
        ImageFolderData(folder, 16, CPUBackend(RunSpec()), options)
    # without workers the same folder loads
    ImageFolderData(folder, 16, CPUBackend(RunSpec()), LoaderOptions(2)).close()
