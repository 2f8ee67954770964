"""`suite tune`'s search, against a fake backend whose knobs have planted effects: it keeps the knob that
helps, drops the one that does not, refuses a precision whose numerics check fails, records a failed
trial and goes on, stops at its budget, and resumes after a kill without running a finished trial again."""

from __future__ import annotations

import json
import math
import os

import pytest
from conftest import TINY, model_override_options
from suite.backends.declared import Declared, Tunable, tunables

from suite import run_record
from suite.cli import main
from suite.exploring.tune import knobs as tune_knobs
from suite.exploring.tune import lab as tune_lab
from suite.exploring.tune import table as tune_table
from suite.exploring.tune.search import KEPT, BudgetSpent, Outcome, Refused, Search
from suite.run_options import run_options
from suite.run_record.windows import window_metrics

# A fake backend's declaration: knobs with planted effects on the rate (×2: past the noise at once; ×1.03:
# near it, so confirmed by interleaved runs; ×1; and ×3 for a precision whose numerics check fails), and one
# whose runs run out of memory.
HELPS = Tunable("helps", ({"threads": 1},))
SLIGHT = Tunable("slight", ({"warmup": 0},))
USELESS = Tunable("useless", ({"windows": 2},))
RISKY = Tunable("precision", ({"precision": "bf16"},), numerics=True)
TOO_BIG = Tunable("too-big", ({"prefetch": 3},))
FAKE = Declared("fake", "fake", None, tunables=(TOO_BIG, HELPS, SLIGHT, USELESS, RISKY))
EFFECTS = {("threads", 1): 2.0, ("warmup", 0): 1.03, ("windows", 2): 1.0, ("precision", "bf16"): 3.0}
# A run's rate wanders by about 1% from run to run, the same way every time (the tests are deterministic).
JITTER = (1.0, 0.99, 1.012, 1.004, 0.993, 1.008, 0.996)


def planted_rate(options: dict, run: int) -> float:
    rate = 100.0 * JITTER[run % len(JITTER)]
    for (name, value), effect in EFFECTS.items():
        if options.get(name) == value:
            rate *= effect
    return rate


def fake_record(options: dict, run: int, numerics: bool, config: dict | None = None) -> dict:
    """A run's record as the fake backend would leave it: out of memory with TOO_BIG's option, a failed
    numerics check for the precision, otherwise its planted rate over three windows."""
    record = run_record.new_record(f"run-{run}", {"utc_time": f"2026-01-01T00:00:{run:02d}Z"}, config or {})
    record["config"] = config or {"workload": "dcgan64", "backend": "cpu"}
    if "prefetch" in options:
        record.update(status="oom", error={"type": "OutOfMemoryError", "message": "out of memory"})
        return record
    rate, steps = planted_rate(options, run), record["config"].get("steps_per_window") or 1
    record["status"] = "ok"
    record["metrics"] = window_metrics(rate, steps, [1.0, 0.995, 1.005]).to_json()
    if numerics:
        failed = options.get("precision") == "bf16"
        record["numerics"] = {
            "verdict": "fail" if failed else "pass",
            "reason": "loss 0 deviates" if failed else None,
        }
    return record


class FakeLab:
    """Runs nothing: each configuration's record is made from its planted effect; BUDGET runs at most."""

    def __init__(self, budget: int = 1000):
        self.budget, self.runs, self.reserved = budget, [], 0

    def run(self, options, trial, role, numerics=False):
        if len(self.runs) + self.reserved * (role != "final") >= self.budget:
            raise BudgetSpent("the fake budget is spent")
        self.runs.append((trial.label, role))
        return Outcome(fake_record(options, len(self.runs), numerics))

    def affords(self, runs):
        return len(self.runs) + runs + self.reserved <= self.budget

    def reserve(self, runs):
        self.reserved = runs


def by_label(result):
    return {trial.label: trial for trial in result.trials}


def test_the_search_keeps_what_helps_drops_what_does_not_and_refuses_failed_numerics():
    lab = FakeLab()
    result = Search(lab, FAKE.tunables, fixed=set()).run()
    trials = by_label(result)
    # ×2: past three times the noise in its one run, kept at once
    assert (
        trials["threads=1"].verdict.startswith("kept: ×1.98")
        and "past 3 × the noise" in trials["threads=1"].verdict
    )
    # ×1.03: near the noise, kept only after interleaved runs test faster
    assert trials["warmup=0"].verdict == KEPT and trials["warmup=0"].decision["verdict"] == "faster"
    assert trials["warmup=0"].options == {"threads": 1, "warmup": 0}  # built on what was kept before it
    assert trials["windows=2"].verdict.endswith("not kept")  # ×1: never shown faster
    assert trials["precision=bf16"].verdict.startswith("refused: numerics fail")  # ×3, but its numerics fail
    assert trials["prefetch=3"].verdict.startswith("failed: oom")  # out of memory: recorded, and on it went
    assert result.best is trials["warmup=0"] and result.stopped == "every knob searched"
    # The end: the best against the default, each with at least three runs, for the gain and its interval.
    assert result.final["ratio"] == pytest.approx(2.06, rel=0.02) and result.final["verdict"] == "faster"
    assert (
        result.final["ci_low"] > 2.0
        and min(result.final["baseline_runs"], result.final["candidate_runs"]) >= 3
    )
    # A refused precision costs one run: its numerics refused it before any confirmation.
    assert [role for label, role in lab.runs if label == "precision=bf16"] == ["screen"]
    assert [role for label, role in lab.runs][:2] == ["default", "default"]  # the default twice, first


def test_a_change_confirmed_against_the_default_is_the_gain():
    result = Search(FakeLab(), (SLIGHT,), fixed=set()).run()
    best = result.best
    assert best.label == "warmup=0" and best.against == 1
    assert result.final is best.decision and result.final["ratio"] == pytest.approx(1.03, rel=0.02)


def test_a_value_far_slower_than_the_best_is_dropped_after_one_run():
    EFFECTS[("windows", 2)] = 0.5
    try:
        lab = FakeLab()
        result = Search(lab, (USELESS,), fixed=set()).run()
    finally:
        EFFECTS[("windows", 2)] = 1.0
    assert by_label(result)["windows=2"].verdict.startswith("slower: ×0.5")
    assert len(lab.runs) == 3  # the default twice and its one screening run: no confirmation


def test_the_search_stops_at_its_budget_and_says_so():
    lab = FakeLab(budget=4)  # the default twice, two screens: then the end's runs are all that would fit
    result = Search(lab, FAKE.tunables, fixed=set()).run()
    assert len(lab.runs) <= 4
    assert result.stopped.startswith("budget:") and "the final comparison" in result.stopped
    assert result.final is None and "budget" in by_label(result)["warmup=0"].verdict
    assert ("useless", "not reached: the budget ended first") in result.skipped


def test_a_knob_the_person_fixed_is_not_searched():
    result = Search(FakeLab(), FAKE.tunables, fixed={"threads"}).run()
    assert ("helps", "--threads is given (--set): the search leaves it as given") in result.skipped
    assert "threads=1" not in by_label(result)


def test_a_configuration_suite_run_refuses_is_a_trial_and_the_search_goes_on():
    class Refusing(FakeLab):
        def run(self, options, trial, role, numerics=False):
            if "windows" in options:
                raise Refused("--windows 2 is refused here")
            return super().run(options, trial, role, numerics)

    result = Search(Refusing(), (USELESS, HELPS), fixed=set()).run()
    assert by_label(result)["windows=2"].verdict == "refused by `suite run`: --windows 2 is refused here"
    assert by_label(result)["threads=1"].kept


def test_every_declared_tunable_sets_real_suite_run_options():
    known = run_options()
    for backend in ("cpu", "cuda", "hpu"):
        for tunable in tunables(backend):
            assert tunable.applies_to in ("all", "images", "tokens") and tunable.stage in (
                "loader",
                "device",
                "batch",
            )
            for name in tune_knobs.knob_options(tunable):
                assert name in known, f"{backend}'s {tunable.name} sets --{name}, which `suite run` lacks"


def test_the_rules_make_values_from_what_the_best_run_recorded():
    facts = tune_knobs.Facts(threads=8, cores=16, workers=4, pin_memory=True, batch_size=16, grad_accum=1)
    labels = lambda rule: [c.label for c in tune_knobs.candidates(Tunable("k", rule=rule), facts)]  # noqa: E731
    assert labels("threads") == ["threads=16", "threads=4", "threads=2", "threads=1"]
    assert labels("workers") == ["workers=8", "workers=2"]
    assert labels("pin-memory") == ["pin-memory=False"]
    assert labels("batch") == ["batch-size=32", "batch-size=64", "batch-size=128"]
    assert labels("grad-accum") == [
        "batch-size=8 grad-accum=2",
        "batch-size=4 grad-accum=4",
        "batch-size=2 grad-accum=8",
        "batch-size=1 grad-accum=16",
    ]
    split = tune_knobs.Facts(batch_size=4, grad_accum=4)
    assert [
        c.options for c in tune_knobs.candidates(tune_knobs.Tunable("c", rule="checkpointing"), split)
    ] == [{"activation-checkpointing": True, "batch-size": 8, "grad-accum": 2}]


def test_a_language_models_batch_that_does_not_fit_is_split_into_micro_batches():
    from suite.backends.declared import ACCUMULATION, CHECKPOINTING

    class Memory(FakeLab):
        """Fits 4 sequences a micro-batch, or 8 with recomputed activations; checkpointing is faster here."""

        def run(self, options, trial, role, numerics=False):
            if len(self.runs) >= self.budget:
                raise BudgetSpent("spent")
            batch = options.get("batch-size", 16)
            fits = batch <= (8 if options.get("activation-checkpointing") else 4)
            self.runs.append((trial.label, role))
            config = {"workload": "gpt2-small", "backend": "cpu", "batch_size": batch}
            config["grad_accum"] = options.get("grad-accum", 1)
            record = fake_record({} if fits else {"prefetch": 1}, len(self.runs), numerics, config)
            if fits:
                record["metrics"]["unit"] = "tokens"
                speed = 1.3 if options.get("activation-checkpointing") else 1.0
                for key in ("images_per_second", "images_per_hour"):
                    record["metrics"][key] *= speed
            else:
                record["metrics"] = {"unit": "tokens"}
            return Outcome(record)

    result = Search(Memory(), (ACCUMULATION, CHECKPOINTING), fixed=set()).run()
    trials = by_label(result)
    assert trials["the default run"].verdict.startswith("failed: oom")
    assert trials["batch-size=4 grad-accum=4"].verdict.startswith("kept: the first split")
    assert result.default is trials["batch-size=4 grad-accum=4"]  # the rates are measured against it
    assert trials["activation-checkpointing batch-size=8 grad-accum=2"].kept


# -- the lab: fresh processes (here a fake runner), records, resume ---------------------------------------

BASE = {
    "backend": ["cpu"],
    "workload": ["dcgan64"],
    "model-override": model_override_options(TINY["dcgan64"])[1::2],
}
REAL = (HELPS, USELESS, RISKY)  # real `suite run` options, each resolved as a run of them would be


class KilledAt(Exception):
    """The search's process died here (a kill -9 leaves the records already written, nothing else)."""


def fake_runner(out_dir, calls: list, kill_after: int | None = None):
    def runner(point, out, timeout, origin, keep_failure, tune):
        if kill_after is not None and len(calls) >= kill_after:
            raise KilledAt
        calls.append(tune["run"])
        options = {name: _typed(value) for name, value in point.knobs.items()}
        record = fake_record(options, tune["run"], "--check-numerics" in point.argv, point.config)
        record.update(origin=origin, tune=tune)
        run_record.write_record(record, out)
        return record

    return runner


def _typed(value: str):
    return int(value) if value.isdigit() else value


def lab_search(out_dir: str, calls: list, kill_after=None, search_id="s1"):
    budget = tune_lab.Budget(3600)
    lab = tune_lab.Lab(BASE, out_dir, search_id, budget, runner=fake_runner(out_dir, calls, kill_after))
    return lab, Search(lab, REAL, fixed=set(BASE))


def test_a_search_killed_midway_resumes_without_running_a_finished_trial_again(tmp_path):
    out = str(tmp_path / "tune")
    os.makedirs(out)
    whole_calls: list = []
    _, whole = lab_search(str(tmp_path / "whole"), whole_calls)
    os.makedirs(tmp_path / "whole")
    expected = whole.run()

    first: list = []
    _, killed = lab_search(out, first, kill_after=5)
    with pytest.raises(KilledAt):
        killed.run()
    assert first == [0, 1, 2, 3, 4]
    again: list = []
    lab, resumed = lab_search(out, again)
    result = resumed.run()
    assert again == list(range(5, len(whole_calls)))  # only what no record held
    assert lab.replayed == 5
    assert [(t.label, t.verdict) for t in result.trials] == [(t.label, t.verdict) for t in expected.trials]
    tags = [r["tune"]["run"] for r in grid_records(out)]
    assert sorted(tags) == list(range(len(whole_calls)))  # each run once: none ran twice


def grid_records(out: str) -> list[dict]:
    from suite.exploring import grid

    return grid.existing_records(out)


def test_a_folder_holding_another_plans_run_is_refused_naming_it(tmp_path):
    out = str(tmp_path)
    calls: list = []
    _, search = lab_search(out, calls, kill_after=3)  # the default twice, then threads=1
    with pytest.raises(KilledAt):
        search.run()
    lab = tune_lab.Lab(BASE, out, "s1", tune_lab.Budget(60), runner=fake_runner(out, []))
    from suite.inputs.errors import UserError

    with pytest.raises(UserError, match="holds run 2 of search s1 as another configuration"):
        Search(lab, (USELESS,), fixed=set()).run()


def test_a_run_that_does_not_fit_the_budget_is_not_started(tmp_path):
    clock = [0.0]
    budget = tune_lab.Budget(100, clock=lambda: clock[0])
    calls: list = []
    runner = fake_runner(str(tmp_path), calls)

    def slow(point, out, timeout, **settings):
        clock[0] += 40  # each run takes 40 s of the budget's 100
        assert timeout <= 100 - (clock[0] - 40)  # a started run is bounded by what is left
        return runner(point, out, timeout, **settings)

    lab = tune_lab.Lab(BASE, str(tmp_path), "s2", budget, runner=slow)
    result = Search(lab, REAL, fixed=set(BASE)).run()
    # 80 s spent on the default's two runs: a screening run of about 40 s cannot fit in the 20 s left
    assert calls == [0, 1] and clock[0] <= 100
    assert result.stopped == "budget: #2 threads=1 needs about 40 s, 15 s left"  # 5 s kept to stop a run
    assert not lab.affords(1) and lab.estimate() == 40


def test_a_tuning_trials_record_says_its_search_and_is_not_a_row_key_field(tmp_path, monkeypatch):
    from suite.rows.identity import row_key

    monkeypatch.setenv(
        run_record.TUNE_ENV, json.dumps({"search": "s1", "run": 3, "trial": "threads=1", "role": "screen"})
    )
    record = run_record.new_record("r1", {"utc_time": "2026-01-01T00:00:00Z"}, {"workload": "dcgan64"})
    assert list(record)[:9] == [
        "schema",
        "schema_version",
        "run_id",
        "status",
        "error",
        "warnings",
        "origin",
        "tune",
        "context",
    ]
    assert record["tune"]["search"] == "s1"
    untagged = {k: v for k, v in record.items() if k != "tune"}
    assert row_key(record) == row_key(untagged)
    monkeypatch.setenv(run_record.TUNE_ENV, "[1, 2]")  # not a tag: no tag
    assert "tune" not in run_record.new_record("r2", {}, {"workload": "dcgan64"})


def test_the_table_and_the_search_record_say_what_each_trial_did():
    result = Search(FakeLab(), FAKE.tunables, fixed=set()).run()
    text = tune_table.render(result)
    assert "× default" in text and "--threads 1 --warmup 0" in text and "kept, faster than #3: ×1.0" in text
    summary = tune_table.summary_record(result, {"search_id": "abc", "config": {}})
    assert summary["schema"] == tune_table.SEARCH_SCHEMA and summary["run_id"] == "tune-abc"
    assert summary["best"]["setting"] == "--threads 1 --warmup 0"
    assert summary["best"]["suite_run"] == "suite run --backend cpu --workload dcgan64"  # the fake's config
    assert summary["gain"]["ratio"] == pytest.approx(2.06, rel=0.02)
    assert [t["kept"] for t in summary["trials"]].count(True) == 2
    assert math.isclose(summary["trials"][0]["times_default"], 1.0)


def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path):
    assert main(["tune", "--budget", "soon", "--out", str(tmp_path)]) == 2
    assert "--budget must be a wall time" in capsys.readouterr().err
    assert main(["tune", "--set", "repeat=3", "--out", str(tmp_path)]) == 2
    assert "--set repeat=... cannot be used here" in capsys.readouterr().err


# -- the report of a tune folder ---------------------------------------------------------------------------


def tuned_folder(out: str):
    """A search run into OUT with its own record kept after every trial, as `suite tune` keeps it."""
    _, search = lab_search(out, [])
    about = {"search_id": "s1", "config": {}}
    search.progress = lambda result: run_record.write_record_or_stop(
        tune_table.summary_record(result, about), out
    )
    return search.run()


def table_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("| ") and "dcgan64" in line]


def test_a_tune_folders_report_shows_its_default_and_tuned_best_and_can_show_the_best_alone(tmp_path, capsys):
    out = str(tmp_path)
    result = tuned_folder(out)
    assert result.best.label == "threads=1"
    assert main(["report", out]) == 0
    report = capsys.readouterr()
    rows = table_rows(report.out)
    assert len(rows) == 2  # the default and the tuned best; the refused bf16 trial is a sub-run
    assert [("tuned" in row.split("|")[-2]) for row in rows] == [False, True]
    words = " ".join(report.out.split())  # notes and answers are wrapped
    assert "the tuned best of `suite tune` search s1 (--threads 1): ×2.0" in words
    assert "the default of `suite tune` search s1" in words
    assert "At each device's tuned best (`suite tune`): cpu (?) #2" in words
    assert "--include tune reports them" in report.err

    assert main(["report", out, "--tuned-best"]) == 0
    rows = table_rows(capsys.readouterr().out)
    assert len(rows) == 1 and "tuned" in rows[0]

    assert main(["report", out, "--include", "tune"]) == 0
    rows = table_rows(capsys.readouterr().out)
    assert len(rows) == 3 and sum(" trial " in row for row in rows) == 1  # bf16, refused by its numerics


def test_the_answer_compares_devices_at_their_tuned_best_and_names_one_without():
    from suite.reporting.tuned_answer import sentences

    def row(backend, device, rate, tuned=None):
        found = {
            "backend": backend,
            "device": device,
            "images_per_hour": rate * 3600,
            "model_run": "resnet50",
        }
        return {**found, "unit": "images", "units_per_sample": 1, **({"tuned": tuned} if tuned else {})}

    rows = [
        row("cuda", "H100", 2900, "default"),
        row("cuda", "H100", 5700, "best"),
        row("hpu", "Gaudi2", 4000),
    ]
    rows.append(row("cpu", "EPYC", 20, "best"))
    said = sentences(rows, {id(r): f"#{n}" for n, r in enumerate(rows, 1)})
    assert said[0] == (
        "At each device's tuned best (`suite tune`): cuda (H100) #2 5,700 img/s; cpu (EPYC) #4 20 img/s; "
        "cuda (H100) is ×285.00 cpu (EPYC) at their best."
    )
    assert said[1].startswith("hpu (Gaudi2) has only its untuned runs (the fastest #3, 4,000 img/s)")
    assert "`suite tune --backend hpu --workload resnet50`" in said[1]
    assert sentences(rows[2:3], {id(rows[2]): "#1"}) == []  # no search anywhere: nothing said


# -- real tunes on the CPU: tiny models, a short budget -----------------------------------------------------


# Threads are left as given (--set): their values are the knob tests' above, and a trial of them beside the
# other test worker measures that worker's load. Fewer trials: dcgan64 92 s and gpt2-small 82 s before, 14 to
# 68 s each since (the noisier the host, the more the search confirms). Precision is still searched, its
# numerics check included.
@pytest.mark.slow  # trains in child processes for up to its budget, 100 s
@pytest.mark.parametrize("workload", ["dcgan64", "gpt2-small"])
def test_a_real_cpu_tune_ends_with_the_suite_run_line_of_its_best(workload, tmp_path):
    import shlex
    import subprocess
    import sys

    from conftest import SAFETY_NET_S, suite_env

    from suite.run_options import run_parser, spec_from_args
    from suite.spec import RunSpec

    out = tmp_path / "tune"
    tiny = [f"--set=model-override={key}={value}" for key, value in TINY[workload].items()]
    schedule = ["--set=batch-size=2", "--set=warmup=1", "--set=steps=1", "--set=windows=2", "--set=threads=1"]
    command = [sys.executable, "-m", "suite", "tune", "--backend", "cpu", "--workload", workload, *tiny]
    command += [*schedule, "--budget", "100s", "--out", str(out)]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=SAFETY_NET_S, env=suite_env(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    assert "× default" in done.stdout and "best found:  #" in done.stdout
    line = next(line for line in done.stdout.splitlines() if line.startswith("reproduce:"))
    argv = shlex.split(line.removeprefix("reproduce:").strip())
    assert argv[:2] == ["suite", "run"]
    [search] = [json.load(open(p)) for p in out.glob("tune-*.json")]
    best = next(
        r
        for r in map(lambda p: json.load(open(p)), out.glob("2*.json"))
        if r["run_id"] in search["best"]["run_ids"]
    )
    asked = spec_from_args(run_parser().parse_args(argv[2:]))
    assert asked == RunSpec.from_record_config({**best["config"], "check_numerics": False})
    spec_file = next(out.glob("tune-*.spec"))
    assert run_record_spec(spec_file) == asked
    assert float(done.stdout.split("spent:")[1].split(" s of")[0]) <= 100  # within its budget


def run_record_spec(path):
    from suite.run_options import read_spec

    return read_spec(str(path))


def test_ctrl_c_keeps_what_finished_and_says_how_to_resume(tmp_path, monkeypatch, capsys):
    started = []

    def run(self, options, trial, role, numerics=False):
        if started:
            raise KeyboardInterrupt  # Ctrl-C while the second run is running
        started.append(role)
        self.asked += 1
        return Outcome(fake_record(options, 0, numerics, self.point(options).config))

    monkeypatch.setattr(tune_lab.Lab, "run", run)
    argv = [
        "tune",
        "--backend",
        "cpu",
        "--workload",
        "dcgan64",
        "--set",
        "model-override=ngf=8",
        "--out",
        str(tmp_path),
    ]
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert "tune: interrupted. 1 run(s) of search" in err and "run the same command again to resume" in err
    [summary] = [
        json.load(open(tmp_path / name)) for name in os.listdir(tmp_path) if name.startswith("tune-")
    ]
    assert summary["trials"][0]["trial"] == "the default run" and summary["trials"][0]["run_ids"] == ["run-0"]
    assert not [name for name in os.listdir(tmp_path) if name.startswith(".claim-")]  # the claim is released


def test_a_difference_the_hosts_load_could_explain_is_neither_kept_at_once_nor_kept():
    class Busy(FakeLab):
        """The default's runs all met a busy host (4 runnable a CPU), every other run a quiet one."""

        def run(self, options, trial, role, numerics=False):
            outcome = super().run(options, trial, role, numerics)
            busy = not options
            outcome.record["context"]["load"] = {"load_average_1m": 8.0 if busy else 1.0, "logical_cpus": 2}
            return outcome

    lab = Busy()
    result = Search(lab, (HELPS,), fixed=set()).run()
    verdict = by_label(result)["threads=1"].verdict
    # ×2 is past three times the noise, but the slower side ran busier: interleaved runs, and the load
    # still differs between their sides, so `suite compare`'s rule withholds the call
    assert [role for _, role in lab.runs].count("confirm") >= 6
    assert verdict.startswith("withheld: load differs") and verdict.endswith("not kept")
    assert result.best is result.default


def test_a_trial_slower_than_its_estimate_is_cut_before_the_final_comparisons_time(tmp_path):
    clock = [0.0]
    budget = tune_lab.Budget(1000, clock=lambda: clock[0])
    calls: list = []
    runner = fake_runner(str(tmp_path), calls)
    cuts = []

    def timed(point, out, timeout, **settings):
        needs = 10_000 if "--check-numerics" in point.argv else 40  # bf16 on this CPU: far slower
        if needs > timeout:  # what child.run does at its timeout: the child killed, a failure returned
            cuts.append((clock[0] + timeout, settings["keep_failure"]))
            clock[0] += timeout
            return {
                "status": "error",
                "error": {"type": "Timeout", "message": f"no result within {timeout:g} s"},
            }
        clock[0] += needs
        return runner(point, out, timeout, **settings)

    lab = tune_lab.Lab(BASE, str(tmp_path), "s3", budget, runner=timed)
    result = Search(lab, REAL, fixed=set(BASE)).run()
    # threads=1 was kept at once (×2), so three runs' time (40 s each) is kept for the end: the bf16
    # screen was stopped there, unrecorded, and the final comparison ran in the time kept for it
    # it ended where the 120 s kept for the end began, less the time kept to stop a run
    assert cuts == [(1000 - 120 - tune_lab.STOP_S, False)]
    assert "was stopped at the budget's end beside the 120 s kept for the final comparison" in result.stopped
    assert result.final is not None and result.final["ratio"] == pytest.approx(2.0, rel=0.03)
    assert clock[0] <= 1000
