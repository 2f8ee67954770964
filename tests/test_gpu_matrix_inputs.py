"""The GPU matrix's own inputs (money rides on this command): a budget that is no number of seconds, an
output folder it cannot write, names holding escape sequences and a PYTHON that is not there are each one
line and exit 2 before anything runs, never a traceback or a run with no deadline."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import ROOT
from test_reliability_writes import fill, tmpfs

sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import gpu_matrix  # noqa: E402

SCRIPT = os.path.join(ROOT, "benchmarks", "gpu_matrix.sh")


def refused(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as stopped:
        gpu_matrix.main([*argv])
    err = capsys.readouterr().err
    assert stopped.value.code == 2, err
    assert "Traceback" not in err, err
    said = err.strip().splitlines()[-1]  # after argparse's usage lines, where it gives them
    assert said.startswith("gpu matrix: ") or ": error: " in said, err
    return said


@pytest.mark.parametrize("budget", ["nan", "inf", "-inf", "1e400", "3_00", "100000", "ten"])
def test_a_budget_that_is_no_number_of_seconds_is_refused(tmp_path, capsys, budget):
    said = refused(capsys, str(tmp_path / "out"), "--plan", f"--budget={budget}")
    assert "--budget" in said and "a plain number from 25 to 86,400" in said


@pytest.mark.parametrize("option", ["--as-gpu", "--only"])
def test_a_name_with_an_escape_sequence_is_refused_and_shown_escaped(tmp_path, capsys, option):
    said = refused(capsys, str(tmp_path / "out"), "--plan", option, "env\x1b[2J\x1b[31m")
    assert "\x1b" not in said and "\\x1b[2J" in said and "control characters" in said


def test_an_output_folder_that_is_a_file_or_under_one_is_refused(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    said = refused(capsys, str(tmp_path / "file"), "--dry-run")
    assert "cannot be written: it is a file, not a folder" in said
    said = refused(capsys, str(tmp_path / "file" / "out"), "--dry-run")
    assert "cannot be written: it lies under a file" in said


def test_an_output_folder_on_a_full_or_read_only_disk_is_refused(tmp_path, capsys):
    with tmpfs(tmp_path / "disk") as disk:
        fill(disk)
        assert "No space left on device" in refused(capsys, str(disk / "out"), "--dry-run")
        os.unlink(disk / "filler")
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        assert "Read-only file system" in refused(capsys, str(disk / "out"), "--dry-run")


@pytest.mark.parametrize("python", ["/nonexistent/python3", "no-such-python3"])
def test_a_python_that_is_not_there_is_exit_2(tmp_path, python):
    done = subprocess.run(
        ["sh", SCRIPT, str(tmp_path / "out"), "--plan"],
        env={**os.environ, "PYTHON": python},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and f"PYTHON={python} cannot run the matrix" in done.stderr
