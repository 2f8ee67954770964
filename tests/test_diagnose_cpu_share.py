"""The CPU share a run actually got: its own CPU time ÷ wall time per timed window, read at the window
edges, kept beside the host's load."""

from __future__ import annotations

import pytest
from suite.backends import backend_class
from tiny_workload import make_plan

from suite.measurement import cpu_share
from suite.measurement.cpu_share import CpuShare
from suite.measurement.runner import execute
from suite.measurement.telemetry import Telemetry


def fake_clock(*values):
    readings = iter(values)
    return lambda: next(readings)


def test_each_window_is_own_cpu_time_over_wall_time():
    share = CpuShare(
        cpu_seconds=fake_clock(10.0, 11.5, 12.0, 12.2), wall_seconds=fake_clock(100.0, 101.0, 102.0, 104.0)
    )
    share.open()
    share.close()  # 1.5 CPU s in 1 s: one and a half cores (two threads)
    share.open()
    share.close()  # 0.2 CPU s in 2 s: a tenth of a core (starved, or waiting)
    assert share.cores == pytest.approx([1.5, 0.1])


def test_telemetry_reads_it_at_its_window_edges():
    share = CpuShare(cpu_seconds=fake_clock(1.0, 1.9, 2.0, 2.6), wall_seconds=fake_clock(0.0, 1.0, 5.0, 6.0))
    telemetry = Telemetry([], cpu_share=share)
    for _ in range(2):
        telemetry.window_open()
        telemetry.window_closed()
    assert telemetry.close()["own_cpu_cores"] == [0.9, 0.6]


def test_the_median_window_goes_beside_the_hosts_load():
    record = {
        "context": {"load": {"logical_cpus": 2, "others_cpu_percent": 82.0}},
        "telemetry": {"own_cpu_cores": [1.5, 0.1, 0.8]},
    }
    cpu_share.add_to_load(record)
    assert record["context"]["load"] == {
        "logical_cpus": 2,
        "others_cpu_percent": 82.0,
        "own_cpu_cores": 0.8,
        "own_cpu_percent": 40.0,
    }
    empty = {"context": {"load": {"logical_cpus": 2}}, "telemetry": {}}
    cpu_share.add_to_load(empty)  # no window (a failed run): nothing is claimed
    assert empty["context"]["load"] == {"logical_cpus": 2}


@pytest.mark.slow  # trains the tiny model in this process for a few steps
def test_a_run_records_its_own_share_per_window():
    record = execute(make_plan(backend_class("cpu"), warmup_steps=1, steps_per_window=2, windows=2))
    assert record["status"] == "ok"
    cores = record["telemetry"]["own_cpu_cores"]
    assert len(cores) == 2 and all(c > 0 for c in cores)
    assert record["context"]["load"]["own_cpu_cores"] > 0
