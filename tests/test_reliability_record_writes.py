"""Every command that writes a record writes it as a single run does (`run_record.save_record` or
`write_record_or_stop`): a full or read-only disk sends the record to the fallback folder (or stdout)
and the command exits 3, with no traceback. The disk is real: a small tmpfs, filled, or remounted
read-only (skipped where mounting is not allowed); the runs are stood in for, so no child starts."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from test_per_device import copy_record
from test_reliability_writes import fill, tmpfs

from suite import run_record
from suite.cli import main
from suite.launching import child

CPU_RUN = ["--backend", "cpu", "--workload", "dcgan64", "--batch-size", "2", "--precision", "fp32"]


def ok_record(run_id: str, **config) -> dict:
    made = copy_record(100.0, run_id, backend="cpu", precision="fp32")
    made["config"].update({"batch_size": 2, **config})
    made["run_id"] = run_id
    return made


@pytest.fixture
def full_disk(tmp_path, monkeypatch):
    """A results folder on a full file system (new files can be made, not written), and the fallback."""
    monkeypatch.setenv(run_record.FALLBACK_ENV, str(tmp_path / "fallback"))
    with tmpfs(tmp_path / "disk", size="256k") as disk:
        out = os.path.join(disk, "results")
        os.makedirs(out)
        fill(disk)
        yield out


def fallback_records(tmp_path) -> list[dict]:
    folder = tmp_path / "fallback"
    return [run_record.read_record(str(p)) for p in sorted(folder.glob("*.json"))] if folder.exists() else []


def assert_stopped_with_the_fallback_named(code, capsys, tmp_path, out):
    captured = capsys.readouterr()
    assert code == run_record.EXIT_RECORD_NOT_WRITTEN == 3, captured.err
    assert "Traceback" not in captured.err
    assert f"could not be written to '{out}" in captured.err and str(tmp_path / "fallback") in captured.err
    assert fallback_records(tmp_path), "the measurement was lost"
    return captured


def fake_runs(monkeypatch):
    """child.run as a finished child: its record, not written (the child wrote it before the disk filled)."""
    made = []

    def run(argv, config, out_dir, timeout_s=None, origin="run", **extra):
        made.append(ok_record(f"r{len(made)}", **{k: v for k, v in config.items() if k == "batch_size"}))
        return made[-1]

    monkeypatch.setattr(child, "run", run)
    return made


def test_per_device_on_a_full_disk_keeps_its_record_in_the_fallback(tmp_path, full_disk, monkeypatch, capsys):
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("--per-device 2 on the CPU needs two cores")
    from suite.launching import per_device

    finished = [(child.Child(ok_record(f"copy{i}"), 0, ""), time.time()) for i in range(2)]
    monkeypatch.setattr(per_device, "run_copies", lambda argv, envs, **kw: finished)
    code = main(["run", *CPU_RUN, "--per-device", "2", "--out", full_disk])
    captured = assert_stopped_with_the_fallback_named(code, capsys, tmp_path, full_disk)
    assert "copy 1" in captured.out  # the summary still prints
    (kept,) = fallback_records(tmp_path)
    assert kept["config"]["per_device"] == 2 and kept["metrics"]["images_per_second"] == 200.0


def test_per_device_with_no_folder_to_take_it_prints_the_record(tmp_path, monkeypatch, capsys):
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("--per-device 2 on the CPU needs two cores")
    from suite.launching import per_device

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(run_record.FALLBACK_ENV, str(blocker / "below"))  # ENOTDIR: no fallback either
    finished = [(child.Child(ok_record(f"copy{i}"), 0, ""), time.time()) for i in range(2)]
    with tmpfs(tmp_path / "disk", size="1m") as disk:

        def copies_then_read_only(argv, envs, **kw):
            # the results folder's file system turns read-only while the copies run
            subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
            return finished

        monkeypatch.setattr(per_device, "run_copies", copies_then_read_only)
        code = main(["run", *CPU_RUN, "--per-device", "2", "--out", str(disk), "--json"])
        assert os.listdir(disk) == []
    captured = capsys.readouterr()
    assert code == 3 and "printed on stdout" in captured.err and "Traceback" not in captured.err
    assert json.loads(captured.out)["config"]["per_device"] == 2  # once, as strict JSON


@pytest.mark.parametrize(
    "extra",
    [["--repeat", "3"], ["--repeat", "2", "--against", "batch-size=3"]],
    ids=["repeat", "against"],
)
def test_repeat_and_against_on_a_full_disk_stop_with_the_fallback(
    tmp_path, full_disk, monkeypatch, capsys, extra
):
    made = fake_runs(monkeypatch)
    code = main(["run", *CPU_RUN, *extra, "--out", full_disk])
    assert_stopped_with_the_fallback_named(code, capsys, tmp_path, full_disk)
    assert len(made) == 1  # the group stops at the first record it cannot write: later ones would fail alike
    (kept,) = fallback_records(tmp_path)
    assert kept["group"]["index"] == 1


def test_a_repeat_whose_folder_turns_read_only_stops_with_the_fallback(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(run_record.FALLBACK_ENV, str(tmp_path / "fallback"))
    with tmpfs(tmp_path / "disk", size="1m") as disk:
        made = []

        def run(argv, config, out_dir, timeout_s=None, origin="run", **extra):
            made.append(ok_record(f"r{len(made)}"))
            if len(made) == 2:  # mid-group
                subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
            return made[-1]

        monkeypatch.setattr(child, "run", run)
        code = main(["run", *CPU_RUN, "--repeat", "3", "--out", str(disk)])
        kept_in_out = sorted(os.listdir(disk))
    assert_stopped_with_the_fallback_named(code, capsys, tmp_path, str(disk))
    assert kept_in_out == ["r0.json"] and [r["run_id"] for r in fallback_records(tmp_path)] == ["r1"]


def test_diagnose_on_a_full_disk_keeps_what_it_measured_in_the_fallback(tmp_path, monkeypatch, capsys):
    from test_data_imagefolder import make_folder

    from suite.measurement import loader_only

    photos = make_folder(tmp_path / "photos", count=4)
    monkeypatch.setenv(run_record.FALLBACK_ENV, str(tmp_path / "fallback"))
    with tmpfs(tmp_path / "disk", size="256k") as disk:
        out = os.path.join(disk, "results")
        os.makedirs(out)
        loaders = []  # each round's loader-only arm, a fresh process: its record, as that child returns it

        def fresh_loader(config, **kwargs):
            loaders.append(ok_record(f"loader{len(loaders)}"))
            return loaders[-1]

        monkeypatch.setattr(loader_only, "measure_in_fresh_process", fresh_loader)
        made = fake_runs(monkeypatch)
        run = child.run

        def run_then_fill(*args, **kwargs):  # the loader's record was kept; the disk fills meanwhile
            fill(disk)
            return run(*args, **kwargs)

        monkeypatch.setattr(child, "run", run_then_fill)
        code = main(["diagnose", *CPU_RUN, "--data", photos, "--out", out])
        assert_stopped_with_the_fallback_named(code, capsys, tmp_path, out)
        assert os.listdir(out) == ["loader0.json"] and len(made) == 2 and len(loaders) == 2
    # The second round's loader record could not be written to the full disk: the fallback keeps it, and
    # the diagnosis, which needs every round, stops there with nothing measured lost.
    (kept,) = fallback_records(tmp_path)
    assert kept["run_id"] == "loader1"


def test_batch_size_on_a_full_disk_keeps_its_search_in_the_fallback(tmp_path, full_disk, monkeypatch, capsys):
    fake_runs(monkeypatch)
    argv = ["batch-size", "--backend", "cpu", "--workload", "dcgan64", "--start", "2", "--max-batch", "4"]
    code = main([*argv, "--out", full_disk])
    captured = capsys.readouterr()
    assert code == 3 and "Traceback" not in captured.err, captured.err
    assert f"could not be written to {full_disk!r}" in captured.err
    assert [p.name for p in (tmp_path / "fallback").iterdir()]  # the search's own record, kept


def test_loader_on_a_full_disk_keeps_its_record_in_the_fallback(tmp_path, full_disk, monkeypatch, capsys):
    from test_data_imagefolder import make_folder

    from suite.measurement import loader_only

    data = make_folder(tmp_path / "images", count=8)
    measured = ok_record("loader0")
    measured.update(kind="loader")
    monkeypatch.setattr(loader_only, "measure_setting", lambda plan, **kw: measured)
    argv = ["loader", "--data", data, "--backend", "cpu", "--batch-size", "2", "--workers", "0"]
    code = main([*argv, "--out", full_disk])
    assert_stopped_with_the_fallback_named(code, capsys, tmp_path, full_disk)


def test_a_sweep_on_a_full_disk_stops_and_says_how_to_resume(tmp_path, full_disk, monkeypatch, capsys):
    # a point whose child left no record: the sweep writes its failure record, and cannot
    monkeypatch.setattr(child, "spawn", lambda *a, **k: child.Child(None, 1, "boom"))
    grid = ["--grid", "batch-size=2,3", "--set", "backend=cpu", "--set", "precision=fp32"]
    code = main(["sweep", *grid, "--out", full_disk])
    captured = assert_stopped_with_the_fallback_named(code, capsys, tmp_path, full_disk)
    assert "run the same command again to resume" in captured.err


# -- the class: no module writes a record but through the one writer ------------------------------------

SUITE = Path(__file__).resolve().parent.parent / "suite"
WRITER = SUITE / "run_record" / "write.py"


def test_records_are_written_only_through_the_one_writer():
    """`write_record` (which raises on a bad disk) is called only by save_record; everyone else calls
    save_record or write_record_or_stop. And no module dumps JSON into a file of its own."""
    offenders = []
    for path in SUITE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            if name == "write_record" and path != WRITER:
                offenders.append(f"{path.relative_to(SUITE)}:{node.lineno} write_record")
            if name == "dump" and ast.unparse(node.func) == "json.dump":
                target = ast.unparse(node.args[1]) if len(node.args) > 1 else ""
                if "stdout" not in target:
                    offenders.append(f"{path.relative_to(SUITE)}:{node.lineno} json.dump into {target}")
    assert not offenders, "records written around run_record.save_record: " + ", ".join(offenders)
