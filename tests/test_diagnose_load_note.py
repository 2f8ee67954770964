"""The load note weighs every signal: the host's load, other processes' share and the CPU a run itself got
in its windows; signals that point different ways are said, and none wins by coming first."""

from __future__ import annotations

from test_compare import side

from suite.compare import comparison as compare
from suite.compare import gate as compare_gate
from suite.compare import host_load as compare_load


def loaded(runs, others, own=None, busy=None, threads=1):
    for _, rec in runs:
        rec["context"]["load"] = {"logical_cpus": 2, "load_average_1m": 2.0, "others_cpu_percent": others}
        if own is not None:
            rec["context"]["load"]["own_cpu_cores"] = own
        if busy is not None:
            rec["telemetry"] = {"summary": {"host_cpu_util_percent": {"mean": busy}}}
        rec["config"]["threads"] = threads
    return runs


def speed(base, cand) -> dict:
    (comparison,) = compare.compare(base, cand)["comparisons"]
    return comparison


def test_a_saturated_host_still_shows_the_cpu_a_run_got():
    # others at their ceiling on both sides (82 % beside 83 %): only the runs' own share tells them apart
    base = loaded(side([100, 101, 99], "a"), others=82.0, own=0.35, busy=99.0)
    cand = loaded(side([170, 172, 169], "c"), others=83.0, own=0.90, busy=99.0)
    comparison = speed(base, cand)
    assert comparison["metrics"]["images_per_second"]["verdict"] == compare_load.WITHHELD
    note = " | ".join(comparison["notes"])
    assert "the baseline's runs got 61% less CPU in their windows (0.35 cores, the host 99% busy)" in note
    assert "own 0.35 cores" in comparison["load"]


def test_signals_pointing_different_ways_are_a_note_not_the_first_one_winning():
    # others' share calls the baseline busier; the CPU the runs got calls the (slower) candidate starved
    base = loaded(side([100, 101, 99], "a"), others=45.0, own=1.00, busy=98.0)
    cand = loaded(side([80, 81, 79], "c"), others=1.0, own=0.30, busy=98.0)
    comparison = speed(base, cand)
    metric = comparison["metrics"]["images_per_second"]
    assert metric["verdict"] == compare_load.WITHHELD and metric["verdict_before_load"] == "slower"
    note = " | ".join(comparison["notes"])
    assert "the candidate's runs got 70% less CPU" in note
    assert "the load signals disagree: other processes' CPU share differs by 44 points" in note
    side_, why = compare_load.busier(comparison["baseline"]["load"], comparison["candidate"]["load"])
    assert side_ is None and why.startswith("the load signals disagree")


def test_less_cpu_with_idle_cpus_or_fewer_threads_is_the_runs_own_demand():
    quiet = {"others_cpu_percent": 5.0, "own_cpu_cores": 0.5, "host_busy_percent": 40.0, "threads": [1]}
    busy = {"others_cpu_percent": 5.0, "own_cpu_cores": 1.0, "host_busy_percent": 40.0, "threads": [1]}
    assert compare_load.signals(quiet, busy) == []  # idle CPUs were there to take
    saturated = {**quiet, "host_busy_percent": 97.0}
    assert [s for s, _ in compare_load.signals(saturated, busy)] == ["baseline"]
    fewer = {**saturated, "threads": [1]}
    assert compare_load.signals(fewer, {**busy, "threads": [2]}) == []  # half the threads: half the CPU


def test_the_gate_is_undecided_when_any_signal_calls_the_baseline_busier():
    base_load = {"others_cpu_percent": 1.0, "load_per_cpu": 0.5, "cpu_mhz": None, "own_cpu_cores": 0.3}
    base_load |= {"host_busy_percent": 99.0, "threads": [1]}
    cand_load = {"others_cpu_percent": 40.0, "load_per_cpu": 0.5, "cpu_mhz": None, "own_cpu_cores": 1.0}
    cand_load |= {"host_busy_percent": 99.0, "threads": [1]}
    why = compare_load.could_be_busier(base_load, cand_load, "baseline")
    assert why.startswith("the baseline's runs got 70% less CPU") and "disagree" in why
    assert compare_gate.host_load is compare_load
