"""Readers that do not trust the file system: a FIFO, a device, a symlink loop, an oversized file or a
folder named like a record is skipped with one line naming it and why, never waited on or read without
end. Every reader of records or of a person's files goes through `run_record.read_bytes`."""

from __future__ import annotations

import contextlib
import json
import os
import signal

import pytest
from test_reliability_inputs import good_record

from suite import run_record
from suite.cli import main
from suite.inputs import files
from suite.inputs.errors import UserError
from suite.run_record import read as record_read


@contextlib.contextmanager
def deadline(seconds=20):
    """Fail, not hang, when a reader blocks (a FIFO's open waits for a writer that never comes)."""

    def expired(*_):
        raise AssertionError(f"a reader blocked for {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def plant(folder, kind: str) -> str:
    """A hostile `bad.json` in `folder`; returns the words the warning must hold."""
    path = os.path.join(folder, "bad.json")
    if kind == "fifo":
        os.mkfifo(path)
        return "FIFO"
    if kind == "dev-zero":
        os.symlink("/dev/zero", path)
        return "character device"
    if kind == "loop":
        os.symlink(path, path)
        return "symbolic links"
    if kind == "dangling":
        os.symlink(os.path.join(folder, "gone"), path)
        return "No such file"
    if kind == "huge":
        with open(path, "wb") as handle:
            handle.truncate(record_read.RECORD_LIMIT + 1)  # sparse: costs no disk
        return "16 MiB"
    raise ValueError(kind)


KINDS = ["fifo", "dev-zero", "loop", "dangling", "huge"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("command", ["report", "compare"])
def test_report_and_compare_skip_what_is_not_a_regular_file_by_name(tmp_path, capsys, kind, command):
    for i in range(3):
        run_record.write_record(good_record(f"good{i}"), str(tmp_path))
    words = plant(str(tmp_path), kind)
    argv = ["report", str(tmp_path), "--format", "json"]
    if command == "compare":
        argv = ["compare", str(tmp_path), str(tmp_path), "--format", "json"]
    with deadline():
        assert main(argv) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)  # the good records are still reported
    warnings = [line for line in captured.err.splitlines() if "bad.json" in line]
    assert warnings and all(line.startswith("suite: warning: skipped") for line in warnings), captured.err
    assert words in warnings[0] and len(set(warnings)) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_a_hostile_path_named_directly_is_named_not_waited_on(tmp_path, capsys, kind):
    run_record.write_record(good_record("good"), str(tmp_path / "ok"))
    words = plant(str(tmp_path), kind)
    with deadline():
        assert main(["report", str(tmp_path / "ok"), str(tmp_path / "bad.json"), "--format", "csv"]) == 0
    err = capsys.readouterr().err
    assert f"skipped {tmp_path / 'bad.json'}" in err and words in err
    assert "no such file or folder" not in err  # a loop is a loop, not a missing file


@pytest.mark.parametrize("kind", KINDS)
def test_sweep_resume_and_fleet_folders_skip_and_name_them(tmp_path, capsys, kind):
    from suite.exploring.grid import existing_records
    from suite.fleet.sky_driver import recorded_instances

    record = good_record("good")
    record["config"]["instance"] = "p3.2xlarge"
    run_record.write_record(record, str(tmp_path))
    words = plant(str(tmp_path), kind)
    said = []
    with deadline():
        assert [r["run_id"] for r in existing_records(str(tmp_path), warn=said.append)] == ["good"]
        assert recorded_instances(str(tmp_path)) == {"p3.2xlarge"}
    assert len(said) == 1 and "bad.json" in said[0] and words in said[0]
    assert "bad.json" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "loop", "huge"])
@pytest.mark.parametrize(
    "reader",
    [
        lambda path: main(["prices", "list", path]),
        lambda path: main(["prices", "import", path, "--format", "ec2instances"]),
        lambda path: main(["sweep", path, "--out", os.path.dirname(path) + "/out"]),
        lambda path: main(["fleet", "plan", path]),
    ],
    ids=["catalog", "price-list", "sweep-file", "campaign-file"],
)
def test_a_persons_files_are_read_only_when_regular_and_bounded(tmp_path, capsys, kind, reader):
    words = plant(str(tmp_path), kind)
    if kind == "huge":
        os.truncate(tmp_path / "bad.json", files.PRICE_LIST_LIMIT + 1)
        words = "MiB"
    with deadline():
        assert reader(str(tmp_path / "bad.json")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.json" in err and words in err and "Traceback" not in err, err


def test_a_cache_manifest_that_is_a_fifo_is_one_line(tmp_path):
    from suite.data.cache import open_cache

    os.mkfifo(tmp_path / "manifest.json")
    with deadline(), pytest.raises(UserError, match="FIFO"):
        open_cache(str(tmp_path))


def test_the_reader_judges_the_descriptor_it_opened_not_the_name(tmp_path, monkeypatch):
    # a regular file when looked at, a FIFO when opened: the swap between a check and an open
    path = tmp_path / "x.json"
    path.write_text("{}")
    real_open = os.open

    def swapped(name, flags, *args):
        if name == str(path):
            os.unlink(path)
            os.mkfifo(path)
        return real_open(name, flags, *args)

    monkeypatch.setattr(files.os, "open", swapped)
    with deadline(), pytest.raises(files.NotAFile, match="FIFO"):
        files.read_bytes(str(path), 1024)


def test_a_file_that_grows_past_the_cap_while_read_is_refused(tmp_path):
    path = tmp_path / "x.json"
    path.write_bytes(b" " * 2048)
    with pytest.raises(files.NotAFile, match="more than"):
        files.read_bytes(str(path), 1024)
    assert files.read_bytes(str(path), 4096) == b" " * 2048


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "loop"])
def test_the_suites_own_caches_are_read_as_regular_files_only(tmp_path, monkeypatch, kind):
    from suite.measurement import counts_cache, flops

    monkeypatch.setattr(counts_cache, "cache_path", lambda kind: str(tmp_path / "bad.json"))
    plant(str(tmp_path), kind)
    with deadline():
        assert counts_cache.read(flops.CACHE_KIND) == {}  # a recount, never a hang
