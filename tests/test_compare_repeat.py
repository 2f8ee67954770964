"""`suite run --repeat N`: N runs in fresh processes, each record marked with one group; `suite compare`
reads them as run-level samples."""

from __future__ import annotations

import os

import pytest
from conftest import TINY_RUN, records

from suite import run_record
from suite.cli import main
from suite.launching import repeat


def fake_run(rates):
    """Stands in for child.run: a record per call, written where the child would write it."""
    calls = []

    def run(argv, config, out_dir):
        index = len(calls)
        calls.append(argv)
        record = run_record.new_record(f"run-{index}", {"utc_time": "2026-01-01T00:00:00Z"}, config)
        if rates[index] is None:
            record["error"] = {"type": "ChildFailed", "message": "killed"}
        else:
            record.update(status="ok", metrics={"images_per_second": rates[index]})
        run_record.write_record(record, out_dir)
        return record

    return run, calls


def test_every_run_of_a_group_carries_its_id_index_and_size(tmp_path):
    run, calls = fake_run([10.0, None, 12.0])
    got = repeat.run_group(
        ["--threads", "1"], {"workload": "dcgan64"}, str(tmp_path), 3, run=run, log=lambda _: None
    )
    assert calls == [["--threads", "1"]] * 3  # the same configuration each time
    groups = [r["group"] for r in got]
    assert len({g["id"] for g in groups}) == 1
    assert [(g["index"], g["of"]) for g in groups] == [(1, 3), (2, 3), (3, 3)]
    on_disk = records(tmp_path)
    assert sorted(r["group"]["index"] for r in on_disk.values()) == [1, 2, 3]  # the failed run's too
    text = repeat.summary(got)
    assert "2 of 3 run(s) ok, median 11.0 img/s (runs: 10.0, 12.0)" in text


def test_two_groups_of_different_ids(tmp_path):
    first = repeat.run_group([], {}, str(tmp_path / "a"), 1, run=fake_run([1.0])[0], log=lambda _: None)
    second = repeat.run_group([], {}, str(tmp_path / "b"), 1, run=fake_run([1.0])[0], log=lambda _: None)
    assert first[0]["group"]["id"] != second[0]["group"]["id"]


def test_bad_repeat_is_one_line_exit_2(tmp_path, capsys):
    assert main([*TINY_RUN, "--repeat", "0", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("suite: error: ") and "--repeat" in err and "Traceback" not in err
    assert not os.listdir(tmp_path)


@pytest.mark.slow  # trains in child processes
def test_repeat_runs_fresh_processes_and_compare_reads_them(tmp_path, capsys):
    out = tmp_path / "group"
    assert main([*TINY_RUN, "--repeat", "2", "--out", str(out)]) == 0
    found = list(records(out).values())
    assert len(found) == 2 and all(r["status"] == "ok" for r in found)
    assert len({r["group"]["id"] for r in found}) == 1 and len({r["run_id"] for r in found}) == 2
    assert all(r["config"].get("per_device") is None and "repeat" not in r["config"] for r in found)
    # A candidate of the same configuration, 2 runs as well: too few to decide, and compare says so,
    # with the command that measures both sides again, interleaved.
    for record in found:
        twin = {**record, "run_id": record["run_id"] + "-b"}
        run_record.write_record(twin, str(tmp_path / "other"))
    capsys.readouterr()
    assert main(["compare", str(out), str(tmp_path / "other")]) == 0
    text = capsys.readouterr().out
    assert "**too few runs**" in text
    assert f"--repeat 3 --against workload=dcgan64 --out {tmp_path / 'interleaved'}" in text
