"""Nothing measured is lost to a bad disk: atomic writes, a fallback for records, no NaN in JSON, and run
ids that are plain file names. The disk faults are real: a file-size limit (RLIMIT_FSIZE, what
`ulimit -f` sets) in a child process, and a tiny tmpfs (full, or remounted read-only) where mounting is
allowed."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import stat
import subprocess
import sys
import time

import pytest
from conftest import SAFETY_NET_S, TINY_RUN, TINY_SWEEP_SET, suite_env
from held_runs import hold_env, release, wait_held

from suite import atomic, run_record
from suite.inputs.errors import UserError


def file_size_limit(limit: int):
    """preexec_fn: files this child writes stop at `limit` bytes (EFBIG, not the default SIGXFSZ kill)."""

    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def record(run_id="r1", **fields):
    made = run_record.new_record(run_id, {"utc_time": "2026-01-01T00:00:00Z"}, {"workload": "dcgan64"})
    made.update(fields)
    return made


@contextlib.contextmanager
def tmpfs(path, size="64k"):
    """A real small file system, or a skip where this machine does not allow mounting."""
    os.makedirs(path, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root in a namespace that allows it)")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def fill(folder) -> None:
    with contextlib.suppress(OSError), open(os.path.join(folder, "filler"), "wb") as handle:
        while True:
            handle.write(b"\0" * 4096)
            handle.flush()


# -- 1: a record that cannot be written ----------------------------------------------------------------


@pytest.mark.slow
def test_a_run_over_a_file_size_limit_prints_its_record_and_says_the_write_failed(tmp_path):
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "suite", *TINY_RUN, "--out", str(out), "--json"],
        env=suite_env(tmp_path, SUITE_FALLBACK_DIR=str(tmp_path / "fallback")),
        capture_output=True,
        text=True,
        preexec_fn=file_size_limit(1024),  # a record is several KiB: neither --out nor the fallback takes it
        timeout=SAFETY_NET_S,
    )
    assert done.returncode == run_record.EXIT_RECORD_NOT_WRITTEN, done.stderr
    printed = json.loads(done.stdout)  # the record, once, as strict JSON
    assert printed["status"] == "ok" and printed["metrics"]["images_per_second"] > 0
    assert "Traceback" not in done.stderr
    assert f"could not be written to {str(out)!r}" in done.stderr and "printed on stdout" in done.stderr
    assert not [n for n in os.listdir(out) if not n.startswith(".suite-probe")]  # nothing half-written


@pytest.mark.slow
def test_a_run_on_a_full_disk_writes_its_record_to_the_named_fallback(tmp_path):
    with tmpfs(tmp_path / "disk") as disk:
        out = os.path.join(disk, "results")
        os.makedirs(out)
        fill(disk)
        done = subprocess.run(
            [sys.executable, "-m", "suite", *TINY_RUN, "--out", out],
            env=suite_env(tmp_path, SUITE_FALLBACK_DIR=str(tmp_path / "fallback")),
            capture_output=True,
            text=True,
            timeout=SAFETY_NET_S,
        )
    assert done.returncode == run_record.EXIT_RECORD_NOT_WRITTEN, done.stderr
    assert "throughput" in done.stdout  # the summary still prints
    saved = os.listdir(tmp_path / "fallback")
    assert len(saved) == 1 and str(tmp_path / "fallback" / saved[0]) in done.stderr
    assert run_record.read_record(str(tmp_path / "fallback" / saved[0]))["status"] == "ok"


def test_a_folder_that_turned_read_only_sends_the_record_to_the_fallback(tmp_path, monkeypatch):
    monkeypatch.setenv(run_record.FALLBACK_ENV, str(tmp_path / "fallback"))
    with tmpfs(tmp_path / "disk", size="1m") as disk:
        assert run_record.save_record(record("first"), disk).failed is None
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        saved = run_record.save_record(record("second"), disk)
        assert saved.failed and "Read-only" in saved.failed
        assert saved.path == str(tmp_path / "fallback" / "second.json")
        assert os.listdir(disk) == ["first.json"]


def test_when_no_folder_takes_the_record_it_goes_to_stdout(tmp_path, monkeypatch, capsys):
    from suite.reporting import summary

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(run_record.FALLBACK_ENV, str(blocker / "below"))  # a folder under a file: ENOTDIR
    made = record("lost", status="ok")
    saved = run_record.save_record(made, str(blocker / "out"))
    assert saved.path is None and saved.failed
    summary.show(made, saved.path, as_json=True)
    assert json.loads(capsys.readouterr().out)["run_id"] == "lost"


def test_commands_that_write_as_they_go_stop_with_the_fallback_named(tmp_path, monkeypatch):
    # diagnose, loader, batch-size, a sweep's failure records and the launcher's all write through this
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(run_record.FALLBACK_ENV, str(tmp_path / "fallback"))
    with pytest.raises(
        run_record.RecordNotWritten, match="written to .*fallback/kept.json instead"
    ) as caught:
        run_record.write_record_or_stop(record("kept"), str(blocker / "out"))
    assert run_record.read_record(str(tmp_path / "fallback" / "kept.json"))["run_id"] == "kept"
    assert isinstance(caught.value, UserError)  # one line, no traceback; the CLI exits 3 for it


def test_the_cli_exits_3_when_a_record_is_not_written(monkeypatch, capsys):
    from suite import cli

    def fails(argv=None):
        raise run_record.RecordNotWritten(
            "the record could not be written to 'x'; it was written to y instead"
        )

    monkeypatch.setattr(cli, "build_parser", fails)
    assert cli.main(["list"]) == run_record.EXIT_RECORD_NOT_WRITTEN == 3
    assert capsys.readouterr().err.startswith("suite: error: the record could not be written")


# -- 2: every file is written atomically ---------------------------------------------------------------


def _limited_child(code: str, limit: int) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        preexec_fn=file_size_limit(limit),
        timeout=SAFETY_NET_S,
    )


@pytest.mark.parametrize(
    "writer",
    [
        "from suite import run_record; run_record.write_text(PATH, 'x' * 100_000)",
        "from suite import atomic; atomic.write_atomic(PATH, b'x' * 100_000)",
    ],
)
def test_an_existing_report_survives_a_full_disk_whole(tmp_path, writer):
    path = tmp_path / "report.json"
    path.write_text('{"rows": []}\n')
    done = _limited_child(writer.replace("PATH", repr(str(path))), 8192)
    assert done.returncode != 0
    assert path.read_text() == '{"rows": []}\n'  # not truncated, not 4 KiB of half a report
    assert os.listdir(tmp_path) == ["report.json"]  # and the temporary file is gone


def test_report_out_on_a_full_disk_is_one_line_and_keeps_the_old_report(tmp_path):
    records = tmp_path / "results"
    records.mkdir()
    made = record("r1", status="ok", metrics={"images_per_second": 10.0, "images_per_hour": 36000.0})
    made["config"].update(backend="cpu", precision="fp32", batch_size=2)
    run_record.write_record(made, str(records))
    old = tmp_path / "report.md"
    old.write_text("old report\n" * 10)
    code = (
        "import sys; from suite.cli import main; "
        f"sys.exit(main(['report', {str(records)!r}, '--out', {str(old)!r}, '--format', 'md']))"
    )
    done = _limited_child(code, 512)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("suite: error: --out") and "Traceback" not in done.stderr
    assert old.read_text() == "old report\n" * 10


def test_prices_import_out_is_atomic(tmp_path):
    source = tmp_path / "instances.json"
    source.write_text(
        json.dumps(
            [
                {
                    "instance_type": f"p{i}.big",
                    "vCPU": 8,
                    "memory": 61,
                    "GPU": 1,
                    "GPU_model": "V100",
                    "GPU_memory": 16,
                    "pricing": {"us-east-1": {"linux": {"ondemand": "3.06", "spot_avg": "0.9"}}},
                }
                for i in range(200)
            ]
        )
    )
    out = tmp_path / "catalog.yaml"
    out.write_text("name: old\n")
    code = (
        "import sys; from suite.cli import main; "
        f"sys.exit(main(['prices', 'import', {str(source)!r}, '--out', {str(out)!r}]))"
    )
    done = _limited_child(code, 4096)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert out.read_text() == "name: old\n"


def test_stale_temporaries_are_cleaned_and_never_read(tmp_path):
    stale = tmp_path / ".tmp-r1.json.suite-atomic-abcdefgh.json"
    stale.write_text("{half a rec")
    old = time.time() - 2 * atomic.STALE_AFTER_S
    os.utime(stale, (old, old))
    fresh = (
        tmp_path / ".tmp-r1.json.suite-atomic-ijklmnop.json"
    )  # may be another process's write in progress: kept
    fresh.write_text("{")
    assert [os.path.basename(p) for p in run_record.iter_record_paths([str(tmp_path)])] == []
    run_record.write_record(record("r1"), str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == [".tmp-r1.json.suite-atomic-ijklmnop.json", "r1.json"]


def test_a_new_file_has_the_umask_mode_and_a_replaced_one_keeps_its_own(tmp_path):
    before = os.umask(0o027)
    try:
        atomic.write_atomic(str(tmp_path / "new.json"), "{}")
    finally:
        os.umask(before)
    assert stat.S_IMODE(os.stat(tmp_path / "new.json").st_mode) == 0o640  # 0666 less the umask, as open()
    kept = tmp_path / "kept.json"
    kept.write_text("old")
    os.chmod(kept, 0o604)
    atomic.write_atomic(str(kept), "new")
    assert kept.read_text() == "new" and stat.S_IMODE(os.stat(kept).st_mode) == 0o604
    assert sorted(os.listdir(tmp_path)) == ["kept.json", "new.json"]  # no temporary left


def test_plots_and_the_flops_cache_go_through_the_atomic_writer():
    import inspect

    from suite.measurement import counts_cache
    from suite.reporting import plots

    # savefig straight onto the target would truncate an existing plot on a full disk
    assert "atomic_path" in inspect.getsource(plots) and ".savefig(path" not in inspect.getsource(plots)
    assert "atomic.write_atomic" in inspect.getsource(counts_cache.write)


# -- 12: run ids are plain names, and only the launcher's children take one ------------------------------


@pytest.mark.parametrize("bad", ["../../x", "a/b", "/abs", "..", ".hidden", "", "a\0b", "x" * 300])
def test_a_run_id_that_is_not_a_plain_name_is_refused(tmp_path, bad):
    with pytest.raises(UserError, match="not a plain name"):
        run_record.write_record(record(bad), str(tmp_path))
    assert not os.listdir(tmp_path)


def test_new_run_ids_never_contain_a_path_separator():
    run_id = run_record.new_run_id("../evil/work", "cpu/x", "2026-01-01T00:00:00Z")
    assert "/" not in run_id and run_record.is_plain_name(run_id)


def test_a_run_id_in_the_environment_is_ignored_unless_an_ancestor_set_it(monkeypatch):
    from suite import context
    from suite.measurement import distributed

    assert distributed.launcher_run_id({"SUITE_RUN_ID": "../../x"}) is None  # from a shell: not ours
    assert distributed.launcher_run_id({"SUITE_RUN_ID": "r1", "SUITE_RUN_ID_OWNER": "1x"}) is None
    parent = context.owner_token(os.getppid())
    assert distributed.launcher_run_id({"SUITE_RUN_ID": "r1", "SUITE_RUN_ID_OWNER": parent}) == "r1"
    with pytest.raises(UserError, match="SUITE_RUN_ID '../../x' is not a plain name"):
        distributed.launcher_run_id({"SUITE_RUN_ID": "../../x", "SUITE_RUN_ID_OWNER": parent})


def test_children_never_inherit_a_run_id(monkeypatch):
    from suite import context

    monkeypatch.setenv("SUITE_RUN_ID", "inherited")
    monkeypatch.setenv("SUITE_RUN_ID_OWNER", "1")
    assert "SUITE_RUN_ID" not in context.child_env()  # a sweep's points would share one record
    env = context.child_env(SUITE_RUN_ID="mine")
    assert env["SUITE_RUN_ID"] == "mine" and env["SUITE_RUN_ID_OWNER"] == context.owner_token()


@pytest.mark.slow
def test_a_run_started_with_a_hostile_run_id_writes_inside_out(tmp_path):
    out = tmp_path / "deep" / "out"
    done = subprocess.run(
        [sys.executable, "-m", "suite", *TINY_RUN, "--out", str(out)],
        env=suite_env(tmp_path, SUITE_RUN_ID="../../escaped"),  # left in a shell: not a launcher's
        capture_output=True,
        text=True,
        timeout=SAFETY_NET_S,
    )
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "escaped.json").exists()
    assert [n for n in os.listdir(out) if n.endswith(".json") and "escaped" not in n]


# -- 14: diverged records are JSON: null plus the reason ------------------------------------------------


def test_a_diverged_record_holds_null_and_the_reason_not_nan(tmp_path):
    made = record(
        "d1",
        status="diverged",
        error={"type": "diverged", "message": "loss is not finite at step 3"},
        metrics={"final_loss": [float("nan"), 1.5], "images_per_second": float("inf")},
    )
    path = run_record.write_record(made, str(tmp_path))
    text = open(path).read()
    assert "NaN" not in text and "Infinity" not in text
    data = json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in a record"))
    assert data["metrics"]["final_loss"] == [None, 1.5]
    assert data["non_finite"] == {"metrics.final_loss[0]": "nan", "metrics.images_per_second": "inf"}


def test_a_diverged_summary_prints_no_throughput():
    from suite.reporting import summary

    made = record(
        "d1",
        status="diverged",
        error={"type": "diverged", "message": "loss is not finite at step 3"},
        metrics={
            "final_loss": [None],
            "images_per_second": 100.0,
            "images_per_second_stdev": 1.0,
            "images_per_second_min": 99.0,
            "images_per_second_max": 101.0,
            "images_per_second_cv": 0.01,
            "window_time_s": [1.0],
            "images_per_hour": 360000.0,
            "step_time_s": 0.01,
            "warmup_steps": 1,
            "warmup_time_s": 0.1,
        },
    )
    made["config"].update(backend="cpu", precision="fp32", batch_size=2, steps_per_window=1)
    text = summary.render(made)
    assert "DIVERGED" in text
    assert "throughput" not in text and "img/h" not in text and "step time" not in text


@pytest.mark.slow
def test_a_sweep_whose_folder_turns_read_only_stops_cleanly_and_says_how_to_resume(tmp_path):
    with tmpfs(tmp_path / "disk", size="4m") as disk:
        out = os.path.join(disk, "sweep")
        grid = ["--grid", "batch-size=2,3,4,5", *TINY_SWEEP_SET]
        # The second point's run holds as it starts: the first is recorded, and the disk turns read-only
        # while the second is running, however fast or slow this machine is.
        env, hold = hold_env(tmp_path, at=2, SUITE_FALLBACK_DIR=str(tmp_path / "fallback"))
        sweep = subprocess.Popen(
            [sys.executable, "-m", "suite", "sweep", *grid, "--out", out],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            wait_held(hold, sweep)
            remount = subprocess.run(
                ["mount", "-o", "remount,ro", disk], capture_output=True, text=True
            )  # mid-sweep
            if remount.returncode != 0:
                pytest.fail(f"could not remount the sweep's folder read-only: {remount.stderr.strip()}")
            release(hold)
            _, err = sweep.communicate(timeout=SAFETY_NET_S)
        finally:
            if sweep.poll() is None:
                sweep.kill()
                sweep.communicate()
        kept = [n for n in os.listdir(out) if n.endswith(".json")]
    assert sweep.returncode == run_record.EXIT_RECORD_NOT_WRITTEN, err
    assert "Traceback" not in err
    assert "make it writable and run the same command again to resume" in err
    assert len(kept) == 1
