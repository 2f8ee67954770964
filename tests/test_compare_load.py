"""Load drift is not a speed change: runs record the host's load, `--repeat --against` interleaves the
two sides (A B B A …), and `suite compare` shows each side's load and noise warnings beside its verdict
and withholds a faster/slower call that the load difference could explain."""

from __future__ import annotations

import os
import types
from collections import namedtuple

import pytest
from conftest import TINY_RUN
from test_compare import side

from suite import context, run_record
from suite.cli import main
from suite.compare import comparison as compare
from suite.compare import host_load as compare_load
from suite.compare.render import render_markdown
from suite.rows import identity


def loaded(loaded_side, others, load_1m=0.5, mhz=2600, warnings=()):
    for _, rec in loaded_side:
        rec["context"]["load"] = {
            "logical_cpus": 2,
            "load_average_1m": load_1m,
            "others_cpu_percent": others,
            "cpu_mhz": mhz,
        }
        rec["warnings"] = list(warnings)
    return loaded_side


def test_every_run_records_the_hosts_load_and_it_does_not_split_rows():
    load = context.host_load(sample_s=0.02)
    assert load["logical_cpus"] >= 1 and 0 <= load["others_cpu_percent"] <= 100
    assert load["load_average_1m"] is None or load["load_average_1m"] >= 0
    assert "load.others_cpu_percent" in identity.NOT_KEYED["context"]
    a, b = side([100], "a")[0][1], side([100], "b")[0][1]
    a["context"]["load"], b["context"]["load"] = {"others_cpu_percent": 0.0}, {"others_cpu_percent": 80.0}
    assert identity.row_key(a) == identity.row_key(b)


Machine = namedtuple("Machine", "user system idle iowait")
Own = namedtuple("Own", "user system children_user children_system")


def test_the_load_sample_spans_start_up_and_leaves_out_this_process_and_its_reaped_children(monkeypatch):
    pid = os.getpid()
    readings = iter(
        [
            context._Reading(Machine(10.0, 5.0, 100.0, 1.0), Own(1.0, 0.5, 0.0, 0.0), 50.0, pid),  # at start
            # 2 s later on 2 CPUs: 3 busy CPU seconds, 1.5 of them this process's and its reaped children's
            context._Reading(Machine(12.0, 6.0, 101.0, 1.0), Own(1.8, 0.6, 0.4, 0.2), 52.0, pid),
        ]
    )
    slept = []
    monkeypatch.setattr(context, "_sample_start", None)
    monkeypatch.setattr(context, "_reading", lambda: next(readings))
    monkeypatch.setattr(context, "time", types.SimpleNamespace(monotonic=lambda: 52.0, sleep=slept.append))
    monkeypatch.setattr(context.psutil, "cpu_count", lambda logical=True: 2)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    context.start_load_sample()
    context.start_load_sample()  # a second start (a nested command) keeps the first: no reading is taken
    load = context.host_load()
    assert slept == [0.0]  # start-up already took longer than the shortest sample
    assert load["sample_s"] == 2.0 and load["others_cpu_percent"] == 37.5  # (3 - 1.5) / (2 s x 2 CPUs)
    assert context._sample_start.at == 52.0  # the next run's sample starts where this one ended


@pytest.mark.parametrize("variable", ["WORLD_SIZE", context.SIBLINGS_VARIABLE])
def test_a_rank_or_copy_started_beside_its_siblings_takes_the_short_sample_as_its_run_starts(
    monkeypatch, variable
):
    monkeypatch.setattr(context, "_sample_start", None)
    monkeypatch.setenv(variable, "2")
    context.start_load_sample()  # the siblings' start-up would read as other processes' load
    assert context._sample_start is None
    monkeypatch.setenv(variable, "1")
    context.start_load_sample()
    assert context._sample_start is not None


def test_a_run_without_a_started_sample_samples_for_the_shortest_time(monkeypatch):
    monkeypatch.setattr(context, "_sample_start", None)
    load = context.host_load(sample_s=0.02)
    assert load["sample_s"] >= 0.02 and 0 <= load["others_cpu_percent"] <= 100


def test_a_speed_up_the_busier_baseline_could_explain_is_withheld():
    base = loaded(side([100, 101, 99], "a"), others=45.0)  # a CPU hog ran beside the baseline
    cand = loaded(side([170, 172, 169], "c"), others=1.0)
    result = compare.compare(base, cand)
    (comparison,) = result["comparisons"]
    speed = comparison["metrics"]["images_per_second"]
    assert speed["verdict"] == compare_load.WITHHELD and speed["verdict_before_load"] == "faster"
    assert any(
        "faster WITHHELD: other processes' CPU share differs by 44 points" in n for n in comparison["notes"]
    )
    assert (
        comparison["load"]
        == "baseline: others 45% CPU, load 0.25/CPU, 2,600 MHz; candidate: others 1% CPU, load 0.25/CPU, 2,600 MHz"
    )
    assert "others 45% CPU" in render_markdown(result)


def test_a_slower_side_that_ran_quieter_keeps_its_verdict():
    base = loaded(side([100, 101, 99], "a"), others=1.0)
    cand = loaded(side([170, 172, 169], "c"), others=45.0)  # faster despite the hog: load cannot explain it
    (comparison,) = compare.compare(base, cand)["comparisons"]
    assert comparison["metrics"]["images_per_second"]["verdict"] == "faster"


@pytest.mark.parametrize(
    "base_load, cand_load",
    [
        pytest.param({"others": 5.0, "load_1m": 1.5}, {"others": 5.0, "load_1m": 0.5}, id="load-average"),
        pytest.param({"others": 5.0, "mhz": 1800}, {"others": 5.0, "mhz": 2600}, id="throttled-clock"),
    ],
)
def test_load_average_and_clock_differences_withhold_too(base_load, cand_load):
    base = loaded(side([100, 101, 99], "a"), **base_load)
    cand = loaded(side([130, 131, 129], "c"), **cand_load)
    (comparison,) = compare.compare(base, cand)["comparisons"]
    assert comparison["metrics"]["images_per_second"]["verdict"] == compare_load.WITHHELD


def test_equal_load_decides_and_noise_warnings_are_shown_per_side():
    base = loaded(side([100, 101, 99], "a"), others=3.0, warnings=["windows vary widely (cv 9.0%)"])
    cand = loaded(side([130, 131, 129], "c"), others=4.0)
    (comparison,) = compare.compare(base, cand)["comparisons"]
    assert comparison["metrics"]["images_per_second"]["verdict"] == "faster"
    notes = " | ".join(comparison["notes"])
    assert "baseline noise warnings (3 run(s)): windows vary widely (cv 9.0%)" in notes
    assert "noise warnings differ: baseline 3 run(s), candidate 0 run(s) warned" in notes


def test_records_without_load_say_it_cannot_be_ruled_out():
    (comparison,) = compare.compare(side([100, 101, 99], "a"), side([130, 131, 129], "c"))["comparisons"]
    assert (
        "host load not recorded (baseline and candidate): a load difference cannot be ruled out"
        in comparison["notes"]
    )


def test_fail_on_is_undecided_on_a_withheld_verdict(tmp_path, capsys):
    for folder, rates, others in (("a", [100, 101, 99], 2.0), ("b", [60, 61, 59], 50.0)):
        (tmp_path / folder).mkdir()
        for _, rec in loaded(side(rates, folder), others=others):
            run_record.write_record(rec, str(tmp_path / folder))
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--fail-on", "slower"]) == 4
    assert "undecided (withheld: load differs)" in capsys.readouterr().err


# -- interleaving -----------------------------------------------------------------------------------------


def test_interleaved_order_is_abba():
    from suite.launching import repeat

    assert repeat.interleaved_order(3) == [0, 1, 1, 0, 0, 1]


def test_run_interleaved_alternates_the_sides_and_groups_each(tmp_path):
    from suite.launching import repeat

    calls = []

    def run(argv, config, out_dir):
        calls.append(argv[0])
        rec = run_record.new_record(f"run-{len(calls)}", {"utc_time": "2026-01-01T00:00:00Z"}, config)
        rec.update(status="ok", metrics={"images_per_second": 1.0})
        run_record.write_record(rec, out_dir)
        return rec

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    base, cand = repeat.run_interleaved(
        [(["A"], {}, str(tmp_path / "a")), (["B"], {}, str(tmp_path / "b"))], 2, run=run, log=lambda _: None
    )
    assert calls == ["A", "B", "B", "A"]
    assert [r["group"]["position"] for r in base] == [1, 4] and [r["group"]["position"] for r in cand] == [
        2,
        3,
    ]
    assert base[0]["group"]["interleaved_with"] == cand[0]["group"]["id"] != base[0]["group"]["id"]
    assert len(list((tmp_path / "a").glob("*.json"))) == 2


def test_against_options_become_the_candidates_argv():
    from suite.inputs.errors import UserError
    from suite.launching import repeat

    assert repeat.against_argv(["batch-size=16", "precision=bf16"]) == [
        "--batch-size",
        "16",
        "--precision",
        "bf16",
    ]
    with pytest.raises(UserError, match="--against 'batch-size' must be OPTION=VALUE"):
        repeat.against_argv(["batch-size"])


def test_against_without_repeat_is_one_line_exit_2(tmp_path, capsys):
    assert main([*TINY_RUN, "--against", "batch-size=4", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("suite: error: ") and "--against needs --repeat" in err


@pytest.mark.slow  # trains in child processes
def test_repeat_against_runs_both_sides_interleaved(tmp_path, capsys):
    assert main([*TINY_RUN, "--repeat", "1", "--against", "batch-size=4", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"suite compare {tmp_path / 'baseline'} {tmp_path / 'candidate'}" in out
    (cand,) = [run_record.read_record(str(p)) for p in (tmp_path / "candidate").glob("*.json")]
    assert cand["config"]["batch_size"] == 4 and cand["group"]["position"] == 2
    assert "others_cpu_percent" in cand["context"]["load"]
