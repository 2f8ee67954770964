"""Real data end to end: `suite run` on a cache and on a JPEG folder, and `suite loader`."""

from __future__ import annotations

import io
import json
import os

import pytest
from conftest import TINY

from suite.cli import main
from suite.data.prepare import prepare
from suite.data.progress import Progress
from suite.data.synth import synthesize
from suite.measurement.runner import execute, plan_run
from suite.spec import RunSpec


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    base = tmp_path_factory.mktemp("data")
    jpeg, cache = str(base / "jpeg"), str(base / "cache")
    synthesize(jpeg, 8, size=(80, 60), workers=1, progress=Progress("t", 0, io.StringIO()))
    prepare(jpeg, 64, cache, workers=1, progress=Progress("t", 0, io.StringIO()))
    return jpeg, cache


def run(data: str, workers: int) -> dict:
    config = RunSpec().replace(
        backend="cpu",
        workload="dcgan64",
        batch_size=4,
        warmup_steps=1,
        steps_per_window=2,
        windows=1,
        data=data,
        workers=workers,
        model_overrides=TINY["dcgan64"],
    )
    return execute(plan_run(config))


@pytest.fixture(scope="module")
def real_runs(paths):
    """One run from the cache and one from the JPEG folder, read by several tests (each run takes seconds)."""
    jpeg, cache = paths
    return run(cache, workers=0), run(jpeg, workers=1)


@pytest.mark.slow  # the two real runs train for seconds (each with its bottleneck probe)
def test_cache_and_jpeg_runs_complete_and_their_records_differ_only_where_they_should(real_runs):
    from_cache, from_jpeg = real_runs
    assert from_cache["status"] == "ok" and from_jpeg["status"] == "ok"
    assert from_cache["metrics"]["images_timed"] == from_jpeg["metrics"]["images_timed"] == 8
    a, b = from_cache["data"], from_jpeg["data"]
    assert set(a) - {"pinned", "cache"} == set(b)  # the same description, plus the cache's provenance
    assert (a["source"], b["source"]) == ("cache", "imagefolder")
    same = (
        "images",
        "classes",
        "source_image_size",
        "image_size",
        "batches_per_epoch",
        "pin_memory",
        "rank",
        "world_size",
    )
    assert {k: a[k] for k in same} == {k: b[k] for k in same}
    assert (a["images"], a["source_image_size"], a["image_size"]) == (8, [80, 60], 64)
    assert (a["workers"], a["prefetch"], b["workers"], b["prefetch"]) == (0, None, 1, 2)
    assert a["dataset_bytes"] == 8 * 3 * 64 * 64 and b["dataset_bytes"] > 0
    assert a["cache"]["source"] == b["path"]
    # The batches one worker made ahead (prefetch 2) are drawn in the warm-up, never timed.
    assert from_cache["metrics"]["warmup_loader_drain_steps"] == 0
    assert from_jpeg["metrics"]["warmup_loader_drain_steps"] == 2
    assert from_jpeg["metrics"]["warmup_steps"] == 1
    # Only the data path's own knobs differ in the configuration.
    differing = {k for k in from_cache["config"] if from_cache["config"][k] != from_jpeg["config"][k]}
    assert differing == {"data", "workers"}


def test_bad_data_input_exits_2_before_building_anything(paths, tmp_path, capsys):
    jpeg, cache = paths
    out = str(tmp_path / "r")
    for argv, message in [
        (["--data", cache, "--batch-size", "9"], "--batch-size 9 is larger than the 8 images"),
        (
            ["--data", jpeg, "--batch-size", "4", "--workers", "0", "--prefetch", "2"],
            "--prefetch 2 needs --workers 1 or more",
        ),
        (["--data", cache, "--workload", "dcgan128"], "holds 64 px images but the workload trains on 128 px"),
    ]:
        assert main(["run", "--backend", "cpu", "--out", out, *argv]) == 2
        err = capsys.readouterr().err
        assert err.startswith("suite: error: ") and message in err
    # As a person runs it: one line, exit 2, no traceback, no record.
    assert main(["run", "--backend", "cpu", "--out", out, "--data", str(tmp_path / "missing")]) == 2
    printed, err = capsys.readouterr()
    assert err.startswith("suite: error: --data ") and "no such file or folder" in err
    assert err.count("\n") == 1 and "Traceback" not in err and printed == ""
    assert not os.path.exists(out) or os.listdir(out) == []


def test_loader_command_measures_each_setting_and_writes_records(paths, tmp_path, capsys):
    _, cache = paths
    out = str(tmp_path / "records")
    assert (
        main(
            [
                "loader",
                "--data",
                cache,
                "--backend",
                "cpu",
                "--batch-size",
                "4",
                "--workers",
                "0,1",
                "--pin-memory",
                "off",
                "--batches",
                "2",
                "--windows",
                "2",
                "--warmup",
                "1",
                "--out",
                out,
            ]
        )
        == 0
    )
    table = capsys.readouterr().out
    assert "img/s (median ± σ)" in table and "records: 2" in table
    records = [json.load(open(os.path.join(out, name))) for name in sorted(os.listdir(out))]
    assert sorted(r["data"]["workers"] for r in records) == [0, 1]
    for record in records:
        assert record["kind"] == "loader" and record["status"] == "ok"
        metrics = record["metrics"]
        # 2 batches of 4 asked; a cache serves them in well under 50 ms, so the windows were grown (how long
        # each grown window then lasts depends on the machine's load, so it is not asserted here)
        assert metrics["images_per_window"] == 4 * metrics["batches_per_window"] > 8
        assert metrics["images_per_second"] > 0
        assert record["loader"]["stage"] == "host"


def test_loader_command_bad_values_exit_2(paths, capsys):
    jpeg, _ = paths
    assert main(["loader", "--data", jpeg, "--pin-memory", "maybe"]) == 2
    assert "--pin-memory is a switch" in capsys.readouterr().err
    assert main(["loader", "--data", jpeg, "--workers", "0,,1"]) == 2
    assert "--workers must be a comma-separated list" in capsys.readouterr().err
    assert main(["loader", "--data", "synthetic"]) == 2
    assert "has no loader to measure" in capsys.readouterr().err


@pytest.mark.slow
def test_a_real_data_run_records_where_its_bottleneck_is(real_runs):
    for record in real_runs:
        diagnosis = record["diagnosis"]
        assert diagnosis["verdict"] in ("input-bound", "compute-bound", "host-contention", "inconclusive")
        assert diagnosis["loader_images_per_second"] > 0 and diagnosis["compute_images_per_second"] > 0
        assert diagnosis["end_to_end_images_per_second"] == record["metrics"]["images_per_second"]
        assert diagnosis["message"].startswith(diagnosis["verdict"])
    synthetic = execute(
        plan_run(
            RunSpec().replace(
                backend="cpu",
                workload="dcgan64",
                batch_size=4,
                warmup_steps=1,
                steps_per_window=1,
                windows=1,
                model_overrides=TINY["dcgan64"],
            )
        )
    )
    assert "diagnosis" not in synthetic  # no loader: nothing to place
