"""Hostile inputs, round 2: writers that must touch only what is theirs, price lists of the wrong shape,
user code that ends the process or cannot train, numbers out of bounds, a hostile environment, and two
sweeps racing for one folder. Every case runs in this process (no child) unless its name says otherwise."""

from __future__ import annotations

import os
import socket
import time

import pytest

from suite import atomic, results
from suite.cli import main

# -- writers touch only what is theirs -----------------------------------------------------------------


def _age(path, seconds=2 * atomic.STALE_AFTER_S):
    old = time.time() - seconds
    os.utime(path, (old, old))


def test_the_atomic_writer_removes_only_its_own_stale_temporaries_for_that_target(tmp_path):
    mine = []
    for target in ("r1.json", "report.md"):  # a temporary of each target, left by a killed write
        with pytest.raises(RuntimeError), atomic.atomic_path(str(tmp_path / target)) as tmp:
            mine.append(tmp)
            os.link(tmp, tmp + ".kept")  # survives the writer's own clean-up of a failed write
            raise RuntimeError
        os.rename(tmp + ".kept", tmp)
        _age(tmp)
    users = [".tmp-notes", ".tmp-r1.json-abc.json", ".tmp-r1.json.suite-atomic-toolong99.json", ".tmp-x"]
    for name in users:  # a user's own files that merely look temporary: old, but not the writer's
        (tmp_path / name).write_text("mine")
        _age(tmp_path / name)
    atomic.write_atomic(str(tmp_path / "r1.json"), "{}")
    left = sorted(os.listdir(tmp_path))
    assert os.path.basename(mine[0]) not in left  # its own, for this target: gone
    assert os.path.basename(mine[1]) in left  # its own, but for another target: another write's business
    assert set(users) <= set(left)


def test_a_stale_temporary_that_is_a_symlink_or_folder_is_never_removed(tmp_path):
    target = tmp_path / "r1.json"
    link = tmp_path / ".tmp-r1.json.suite-atomic-abcdefgh.json"
    os.symlink(tmp_path / "elsewhere", link)
    old = time.time() - 2 * atomic.STALE_AFTER_S
    os.utime(link, (old, old), follow_symlinks=False)
    folder = tmp_path / ".tmp-r1.json.suite-atomic-ijklmnop.json"
    folder.mkdir()
    _age(folder)
    atomic.write_atomic(str(target), "{}")
    assert os.path.islink(link) and folder.is_dir()


def _hostile_targets(tmp_path):
    fifo = tmp_path / "fifo.md"
    os.mkfifo(fifo)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    link = tmp_path / "link.md"
    os.symlink(victim, link)
    folder = tmp_path / "folder.md"
    folder.mkdir()
    sock_path = tmp_path / "s.md"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    return {
        "a FIFO": fifo,
        "a symlink": link,
        "a folder": folder,
        "a socket": sock_path,
        "device": "/dev/null",
    }


@pytest.mark.parametrize("kind", ["a FIFO", "a symlink", "a folder", "a socket", "device"])
def test_the_atomic_writer_refuses_anything_but_a_regular_file_or_a_new_path(tmp_path, kind):
    target = _hostile_targets(tmp_path)[kind]
    before = os.lstat(target)
    with pytest.raises(atomic.NotRegularFile, match="give a new path or a regular file"):
        atomic.write_atomic(str(target), "x")
    after = os.lstat(target)
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)
    assert (tmp_path / "victim.txt").read_text() == "precious"
    assert not [n for n in os.listdir(tmp_path) if atomic.is_temporary(n)]


def test_a_record_is_not_written_through_a_planted_symlink(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    os.symlink(victim, tmp_path / "r1.json")
    made = results.new_record("r1", {"utc_time": "2026-01-01T00:00:00Z"}, {"workload": "dcgan64"})
    with pytest.raises(OSError):  # an OSError: the caller's fallback (exit 3) keeps the measurement
        results.write_record(made, str(tmp_path))
    assert os.path.islink(tmp_path / "r1.json") and victim.read_text() == "precious"


@pytest.mark.parametrize(
    "command", [["report", "{results}"], ["compare", "{results}"], ["prices", "import", "{results}/x.json"]]
)
@pytest.mark.parametrize("kind", ["a FIFO", "a symlink", "device"])
def test_every_file_out_refuses_a_device_fifo_or_symlink_before_any_work(tmp_path, capsys, command, kind):
    target = _hostile_targets(tmp_path)[kind]
    argv = [part.format(results=tmp_path / "results") for part in command] + ["--out", str(target)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"--out {str(target)!r} is" in err and "give a regular file or a new path" in err
    assert "Traceback" not in err
    assert (tmp_path / "victim.txt").read_text() == "precious"


@pytest.mark.parametrize(
    "command",
    [
        ["run", "--workload", "dcgan64"],
        ["sweep", "--set", "batch-size=2"],
        ["diagnose", "--workload", "dcgan64"],
        ["loader"],
        ["batch-size", "--workload", "dcgan64"],
        ["scale", "--nproc", "1"],
        ["data", "synth", "--count", "1"],
        ["data", "prepare", "src", "--size", "8"],
    ],
)
@pytest.mark.parametrize("kind", ["a FIFO", "a socket", "device", "a file"])
def test_every_folder_out_refuses_what_is_not_a_folder(tmp_path, capsys, command, kind):
    if kind == "a file":
        target = tmp_path / "victim.txt"
        target.write_text("precious")
    else:
        target = _hostile_targets(tmp_path)[kind]
    assert main([*command, "--out", str(target)]) == 2
    err = capsys.readouterr().err
    assert f"--out {str(target)!r} is" in err and "give a folder or a new path" in err
