"""The run's git_commit where the checkout has no .git, or an older one (a working tree copied to a lent GPU
machine): the stamp benchmarks/stamp_commit.sh wrote, and nothing else."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from conftest import ROOT

from suite import context


def test_a_copy_without_git_reads_the_stamp_and_refuses_anything_else(tmp_path):
    copy = tmp_path / "copy"  # a working tree without .git
    copy.mkdir()
    assert context.git_commit(str(copy)) is None  # neither git nor a stamp
    for written, read in (
        ("a" * 40 + "\n", "a" * 40),
        (f"{'0123456789abcdef' * 2}01234567+dirty\n", f"{'0123456789abcdef' * 2}01234567+dirty"),
        ("not a commit\n", None),
        ("A" * 40, None),
    ):
        (copy / context.COMMIT_STAMP).write_text(written)
        assert context.git_commit(str(copy)) == read, written


def test_git_answers_before_a_stamp():
    assert (
        context.git_commit()
        == subprocess.run(
            ["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="no git here")
def test_the_stamp_script_writes_this_checkouts_commit(tmp_path):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", ROOT, str(clone)], check=True)
    done = subprocess.run([str(clone / "benchmarks" / "stamp_commit.sh")], capture_output=True, text=True)
    head = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (clone / ".suite-commit").read_text().strip() == head.stdout.strip() == done.stdout.strip()
    status = subprocess.run(
        ["git", "-C", str(clone), "status", "--porcelain"], capture_output=True, text=True
    )
    assert status.stdout == ""  # the stamp is ignored: it never shows as a change


@pytest.mark.skipif(shutil.which("git") is None, reason="no git here")
def test_a_stamp_newer_than_the_copys_git_wins_and_a_stale_one_does_not(tmp_path):
    # A lent machine's copy carried a .git whose HEAD was the commit before the one that ran.
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", ROOT, str(clone)], check=True)
    head = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True)
    parent = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD~1"], capture_output=True, text=True)
    stamp = clone / context.COMMIT_STAMP
    stamp.write_text("f" * 40 + "\n")  # a commit this .git has never seen: the stamp is newer
    assert context.git_commit(str(clone)) == "f" * 40
    stamp.write_text("f" * 40 + "+dirty\n")
    assert context.git_commit(str(clone)) == "f" * 40 + "+dirty"
    stamp.write_text(parent.stdout)  # a commit git holds, HEAD moved past it: a stale stamp
    assert context.git_commit(str(clone)) == head.stdout.strip()
    stamp.write_text(head.stdout.strip() + "+dirty\n")  # the same commit: git's plain answer
    assert context.git_commit(str(clone)) == head.stdout.strip()
