"""`suite diagnose` from repeated evidence: arms measured in interleaved processes, a verdict only where
their run-to-run intervals separate, with fake measurements (seeded)."""

from __future__ import annotations

import random
import types

import pytest

from suite.compare.significance import welch
from suite.diagnosis import repeated, rules

ARMS = repeated.ARMS


def fake_arms(true_rates: dict[str, float], noise: float, seed: int, calls: list | None = None):
    """Each arm's process gives its true rate × a log-normal host factor: NOISE is the σ of log rate."""
    rng = random.Random(seed)

    def arm(name):
        def measure(round_):
            if calls is not None:
                calls.append((round_, name))
            rate = true_rates[name] * rng.lognormvariate(0.0, noise)
            return {"status": "ok", "run_id": f"{name}-{round_}", "metrics": {"images_per_second": rate}}

        return measure

    return {name: arm(name) for name in ARMS}


def diagnosed(true_rates, noise, seed, processes=3, **settings):
    records = repeated.measure_interleaved(fake_arms(true_rates, noise, seed), processes)
    rates = repeated.rates_of(records)
    decided = repeated.decide(rates, welch)
    medians = repeated.medians(rates)
    return rules.verdict(
        rules.BottleneckEvidence(
            loader_ips=medians["loader"],
            compute_ips=medians["compute"],
            end_to_end_ips=medians["end_to_end"],
            decided=decided,
            **settings,
        ),
    )


def test_the_arms_run_interleaved_one_process_each_round_after_round():
    calls = []
    records = repeated.measure_interleaved(
        fake_arms({a: 100.0 for a in ARMS}, 0.1, seed=1, calls=calls), rounds=3
    )
    assert calls == [(r, arm) for r in range(3) for arm in ("loader", "compute", "end_to_end")]
    assert {arm: len(found) for arm, found in records.items()} == {arm: 3 for arm in ARMS}


def test_a_failed_process_stops_the_rounds():
    calls = []
    measure = fake_arms({a: 100.0 for a in ARMS}, 0.1, seed=1, calls=calls)
    failing = measure["compute"]
    measure["compute"] = lambda r: {**failing(r), "status": "error"} if r == 1 else failing(r)
    records = repeated.measure_interleaved(measure, 3, ok=lambda rec: rec["status"] == "ok")
    assert calls[-1] == (1, "compute") and len(calls) == 5
    assert [len(records[a]) for a in ARMS] == [2, 2, 1]


INPUT_BOUND = {"loader": 50.0, "compute": 100.0, "end_to_end": 48.0}
HOST_CONTENTION = {"loader": 300.0, "compute": 100.0, "end_to_end": 60.0}
# A setup on the edge: the loader at 85 % of compute, end to end at 80 %, measured on a host whose runs
# vary 3-7x (σ 0.5 of log rate): one process each would call it either way.
EDGE = {"loader": 85.0, "compute": 100.0, "end_to_end": 80.0}
CPU = {"copies_to_device": False, "cores": 2, "workers": 1, "threads": 1}


@pytest.mark.parametrize("seed", range(10))
def test_separated_arms_give_the_verdict_every_time(seed):
    assert diagnosed(INPUT_BOUND, noise=0.02, seed=seed, **CPU)["verdict"] == "input-bound"
    assert diagnosed(HOST_CONTENTION, noise=0.02, seed=seed, **CPU)["verdict"] == "host-contention"


def test_a_noisy_host_never_flips_between_verdicts_on_an_unchanged_setup():
    verdicts = [diagnosed(EDGE, noise=0.5, seed=seed, **CPU)["verdict"] for seed in range(40)]
    assert not {"input-bound", "host-contention"} <= set(verdicts)
    # 95 % intervals: now and then three processes agree by chance (about 1 setup in 70 at this noise)
    assert verdicts.count("inconclusive") >= 36
    # the same host with one process per arm and each process's windows as its spread (the rule before):
    # one setup, several verdicts
    rng = random.Random(0)
    single = {
        rules.verdict(
            rules.BottleneckEvidence(
                **{f"{arm}_ips": EDGE[arm] * rng.lognormvariate(0, 0.5) for arm in ("loader", "compute")},
                end_to_end_ips=EDGE["end_to_end"] * rng.lognormvariate(0, 0.5),
                loader_cv=0.05,
                compute_cv=0.05,
                end_to_end_cv=0.05,
                **CPU,
            ),
        )["verdict"]
        for _ in range(40)
    }
    assert {"input-bound", "host-contention"} <= single


def test_inconclusive_says_the_interval_and_each_arms_range():
    found = diagnosed(EDGE, noise=0.5, seed=3, **CPU)
    assert found["verdict"] == "inconclusive"
    assert "across processes anywhere in ×" in found["message"] or "takes in the 90% line" in found["message"]
    assert any("--processes" in line and "img/s" in line for line in found["suggestions"])
    assert found["evidence"][0].startswith(
        "run to run (3 loader only, 3 compute only, 3 end to end processes"
    )
    assert found["changes"] == []  # no worker advice from evidence that does not separate


def test_inconclusive_still_says_what_the_evidence_rules_out():
    # Measured on the 2-core CPU (dcgan64 at its own widths, benchmarks/diagnose_stability.py --width 64):
    # the loader alone many times faster than compute, end to end near compute but spread across the line.
    rates = {
        "loader": [275.99, 242.26, 255.98],
        "compute": [15.80, 15.45, 14.62],
        "end_to_end": [15.88, 12.00, 14.80],
    }
    decided = repeated.decide(rates, welch)
    assert decided["case"] == "inconclusive"
    assert (
        "takes in the 90% line of a compute-bound run; not input-bound: the loader alone delivers ×16."
        in (decided["message"])
    )
    # A loader whose interval takes in the line rules nothing out, and says nothing of it.
    edge = diagnosed(EDGE, noise=0.5, seed=3, **CPU)
    assert "not input-bound" not in edge["message"]


def test_worker_advice_comes_from_the_interval_not_one_run():
    """compute ÷ loader is 4 (0.25 loader share): the advice is the fewest workers the interval supports,
    the same across seeds though each seed's medians differ."""
    setup = {"loader": 25.0, "compute": 100.0, "end_to_end": 24.0}
    gpu = {"copies_to_device": True, "cores": 64, "workers": 1}
    advised = {
        next(
            c["value"]
            for c in diagnosed(setup, noise=0.03, seed=seed, **gpu)["changes"]
            if c["option"] == "--workers"
        )
        for seed in range(10)
    }
    assert advised <= {3, 4} and max(advised) <= 4  # never more than the evidence demands


def test_identical_processes_show_no_noise_and_decide_nothing():
    rates = {"loader": [50.0] * 3, "compute": [100.0] * 3, "end_to_end": [48.0] * 3}
    decided = repeated.decide(rates, welch)
    assert decided["case"] == "inconclusive" and "noise cannot be estimated" in decided["message"]


def test_end_to_end_separably_faster_than_a_part_is_a_disturbed_probe():
    rates = {"loader": [50.0, 51.0, 49.0], "compute": [100.0, 101.0, 99.0], "end_to_end": [80.0, 81.0, 79.0]}
    found = rules.verdict(
        rules.BottleneckEvidence(
            loader_ips=50.0,
            compute_ips=100.0,
            end_to_end_ips=80.0,
            decided=repeated.decide(rates, welch),
        ),
    )
    assert found["verdict"] == "inconclusive" and "cannot be" in found["message"]


def test_the_command_runs_each_arm_in_fresh_processes_in_turn(monkeypatch, tmp_path):
    calls = []

    def loader_process(config, batches, windows, warmup, origin):
        calls.append("loader")
        assert origin == "diagnose" and config["data"] == "photos"
        return {"status": "ok", "run_id": f"l{len(calls)}", "metrics": {"images_per_second": 50.0}}

    def run_point(point, out_dir, origin):
        arm = "compute" if point.config["data"] == "synthetic" else "end_to_end"
        calls.append(arm)
        return {"status": "ok", "run_id": f"r{len(calls)}", "metrics": {"images_per_second": 100.0}}

    from suite.exploring import diagnose_arms, grid
    from suite.measurement import loader_only

    monkeypatch.setattr(loader_only, "measure_in_fresh_process", loader_process)
    monkeypatch.setattr(grid, "run_point", run_point)
    from suite import run_record

    monkeypatch.setattr(run_record, "write_record_or_stop", lambda record, out: None)
    point = grid.Point(
        0,
        {},
        ["--data", "photos"],
        {"data": "photos", "steps_per_window": 2, "windows": 2, "warmup_steps": 1},
    )
    plan = types.SimpleNamespace(
        backend=types.SimpleNamespace(schedule=types.SimpleNamespace(steps_per_window=4))
    )
    records = diagnose_arms.measure_interleaved(plan, point, str(tmp_path), processes=4)
    assert calls == ["loader", "compute", "end_to_end"] * 4
    assert [len(records[a]) for a in ARMS] == [4, 4, 4]


@pytest.mark.parametrize("value", ["2", "0", "three", "-3", "2.5"])
def test_fewer_than_three_processes_is_refused_naming_the_value(value, capsys):
    from suite.cli import main

    assert main(["diagnose", "--data", "photos", "--processes", value]) == 2
    err = capsys.readouterr().err
    assert "--processes must be a whole number ≥ 3" in err and repr(value) in err
    assert "Traceback" not in err
