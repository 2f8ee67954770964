"""`suite scale`: speedup, scaling efficiency and $ per million images, from the runs' records."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import ROOT, SAFETY_NET_S, TINY_DCGAN_OPTIONS, TINY_OPTIONS, suite_env

from suite.cli import main
from suite.inputs.errors import UserError
from suite.reporting import scale


def record(rate, world_size, status="ok", stdev=1.0):
    return {
        "run_id": f"r{world_size}",
        "status": status,
        "error": None if status == "ok" else {"message": "boom"},
        "config": {"world_size": world_size, "global_batch_size": 4 * world_size},
        "metrics": {"images_per_second": rate, "images_per_second_stdev": stdev} if status == "ok" else {},
    }


def test_parse_counts_sorts_and_drops_repeats():
    assert scale.parse_counts("4,1, 2,2") == [1, 2, 4]


@pytest.mark.parametrize("text", ["", "1,x", "0,2", ","])
def test_parse_counts_refuses_bad_counts(text):
    with pytest.raises(UserError, match="--nproc"):
        scale.parse_counts(text)


def test_speedup_and_efficiency_against_one_process():
    rows = scale.scaling_rows({1: record(100.0, 1), 2: record(180.0, 2), 4: record(300.0, 4)})
    assert [r["speedup"] for r in rows] == pytest.approx([1.0, 1.8, 3.0])
    assert [r["efficiency"] for r in rows] == pytest.approx([1.0, 0.9, 0.75])


def test_baseline_is_the_smallest_count_that_ran():
    rows = scale.scaling_rows({1: record(0, 1, status="oom"), 2: record(200.0, 2), 4: record(300.0, 4)})
    assert rows[0]["speedup"] is None and rows[0]["status"] == "oom"
    assert rows[2]["efficiency"] == pytest.approx(0.75)  # 1.5x for twice the processes
    table = scale.render(rows)
    assert "speedup vs 2" in table and "oom: boom" in table


def test_dollars_per_million_images():
    # 1,000 img/s = 3.6 M img/h; at $3.06/h that is $0.85 per million images.
    rows = scale.scaling_rows({1: record(1000.0, 1)}, {1: (3.06, 0.918, "test catalog")})
    assert rows[0]["usd_per_million_images"] == pytest.approx(0.85)
    assert rows[0]["spot_usd_per_million_images"] == pytest.approx(0.255)
    table = scale.render(rows, {1: "p3.2xlarge"})
    assert "$ / M images" in table and "0.85" in table and "p3.2xlarge" in table and "test catalog" in table


def test_instance_price_comes_from_the_catalog():
    on_demand, spot, said = scale.hourly_price("p3.2xlarge", "seed-2022")
    assert (on_demand, spot) == (3.06, 0.92)
    assert said.startswith("seed-2022, as of 2022-02 (the write-up is dated 2022-02-08") and "old)" in said
    with pytest.raises(UserError, match="unknown instance 'p3.2xlrge'"):
        scale.hourly_price("p3.2xlrge", "seed-2022")


def test_instances_one_for_all_or_one_per_count():
    assert scale.parse_instances("dl1.24xlarge", [1, 8]) == {1: "dl1.24xlarge", 8: "dl1.24xlarge"}
    assert scale.parse_instances("1=p3.2xlarge,4=p3.8xlarge", [1, 4]) == {1: "p3.2xlarge", 4: "p3.8xlarge"}
    with pytest.raises(UserError, match="--nproc does not run"):
        scale.parse_instances("3=p3.8xlarge", [1, 4])


@pytest.mark.parametrize(
    "args, message",
    [
        (["--nproc", "1,zero"], "--nproc must be a positive integer, got 'zero'"),
        (
            ["--nproc", "1", "--usd-per-hour", "free"],
            "--usd-per-hour must be a price in $ per hour from 0.0001 to 10,000, got 'free'",
        ),
        (["--nproc", "1", "--usd-per-hour", "1", "--instance", "p3.2xlarge"], "not both"),
        (["--nproc", "1,2", "--instance", "1=p3.2xlarge,x"], "is not COUNT=NAME"),
    ],
)
def test_bad_scale_input_is_a_user_error(args, message, capsys, tmp_path):
    status = main(["scale", "--backend", "cpu", "--out", str(tmp_path), *args])
    err = capsys.readouterr().err
    assert status == 2 and message in err and "Traceback" not in err


@pytest.mark.slow  # trains in a child process
def test_scale_cpu_1_and_2_processes_prints_the_efficiency_table(tmp_path):
    command = [
        sys.executable,
        "-m",
        "suite",
        "scale",
        *TINY_OPTIONS,
        *TINY_DCGAN_OPTIONS,
        "--nproc",
        "1,2",
        "--usd-per-hour",
        "0.5",
        "--out",
        str(tmp_path),
    ]
    done = subprocess.run(
        command,
        cwd=ROOT,
        env=suite_env(tmp_path / "env", PYTHONPATH=ROOT),
        capture_output=True,
        text=True,
        timeout=SAFETY_NET_S,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert "efficiency" in lines[1] and "$ / M images" in lines[1]
    one, two = lines[3].split(), lines[4].split()
    assert one[:2] == ["1", "2"] and one[-4:-2] == ["1.00×", "100%"]  # processes, global batch, baseline
    assert two[:2] == ["2", "4"] and two[-3].endswith("%")
    assert len([name for name in os.listdir(tmp_path) if name.endswith(".json")]) == 2  # one record per count


def test_scaling_compares_like_with_like_or_says_why_not():
    one, two = record(100.0, 1), record(184.0 * 2 / 2, 2)
    one["device"], two["device"] = {"name": "AMD EPYC", "threads": 2}, {"name": "AMD EPYC", "threads": 1}
    rows = scale.scaling_rows({1: one, 2: two})
    assert "not like with like: 1 thread(s) per process here, 2 at 1 process(es)" in rows[1]["notes"]
    assert "(threads differ)" in scale.render(rows)


def test_a_cpu_run_is_not_priced_as_a_gpu_instance():
    cpu = record(1000.0, 1)
    cpu["device"] = {"name": "AMD EPYC", "threads": 2}
    rows = scale.scaling_rows({1: cpu}, {1: (12.24, 3.67, "seed-2022")}, {1: "p3.8xlarge"})
    assert rows[0]["usd_per_million_images"] is None
    assert any(n.startswith("not priced: --instance p3.8xlarge has NVIDIA V100") for n in rows[0]["notes"])
