"""The numerics parity check: on the CPU at tiny widths (the real registry entries), bf16 and fp32 pass and a
bf16 whose convolutional body never updates fails; the check trains the workload's own recipe, derives its
tolerance from two fp32 runs, is deterministic, runs after the timed windows without changing a figure, and
the report keeps failed rows out of rankings."""

from __future__ import annotations

import copy
import json
import os
import statistics
import sys

import pytest
import torch
from conftest import ROOT, TINY_RUN, computed_once, tiny_config
from suite.backends import backend_class
from suite.workloads.dcgan import ADAMW
from suite.workloads.resnet import SGD
from tiny_workload import make_plan

from suite import cli
from suite.measurement import runner
from suite.numerics import check as numerics
from suite.prices.catalog import load_catalog
from suite.reporting.render import render
from suite.reporting.summary import numerics_line
from suite.rows.build import build_rows
from suite.run_record.write import record_json

sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
from numerics_power import FrozenBody  # noqa: E402 - the benchmark's frozen body is the one tested here

CUDABackend = backend_class("cuda")


class BrokenPrecisions(FrozenBody):
    """Two more precisions that are wrong on purpose, beside the CPU's real fp32 and bf16 and the
    benchmark's `frozen` (bf16 autocast whose convolutions' weights are put back after each optimizer step:
    the body never trains, the rest does):

    corrupt  fp32 with the sign of every gradient flipped before the update (gradient ascent)
    poison   fp32 whose fourth optimizer step gets NaN gradients
    twin     fp32's arithmetic under another name: a candidate the check must compare (three runs) that
             cannot differ from the reference
    """

    precisions = (*FrozenBody.precisions, "corrupt", "poison", "twin")
    lr_seen: list[float] = []

    def step(self, optimizer):
        BrokenPrecisions.lr_seen.append(optimizer.param_groups[0]["lr"])
        if self.precision == "corrupt":
            for group in optimizer.param_groups:
                for parameter in group["params"]:
                    if parameter.grad is not None:
                        parameter.grad.neg_()
        self.steps = getattr(self, "steps", 0) + 1
        if self.precision == "poison" and self.steps == 4:
            for group in optimizer.param_groups:
                for parameter in group["params"]:
                    if parameter.grad is not None:
                        parameter.grad.fill_(float("nan"))
        super().step(optimizer)  # frozen: the convolutions' weights are put back


# The run's batch, which the check takes up to the workload's numerics_batch (the DCGAN's 2, the
# classifiers' 8). 4, not the classifiers' 8: the CPU emulates bf16, and the tiny ResNet's bf16 step costs in
# proportion to its batch (8 steps of 4 s at batch 8, half that at 4: the two bf16 checks were a minute and a
# half of the session); at 4 its bf16 still deviates at most a quarter of its tolerance, a frozen body 4 times.
CHECK_BATCH = 4


def check(workload: str, precision: str, **fields) -> dict:
    plan = runner.plan_run(
        tiny_config(workload, precision="fp32", batch_size=CHECK_BATCH, check_numerics=True, **fields)
    )
    plan.spec = plan.spec.replace(precision=precision)
    return numerics.check(plan, backend_factory=lambda name, config: BrokenPrecisions(config))


@pytest.fixture(scope="session")
def checked(tmp_path_factory):
    """check(workload, precision), run once per pair in the whole session (every worker reads the same
    result: conftest.computed_once): the parity runs take seconds, a classifier's tens of seconds, and
    several tests read the same result (none changes it)."""
    found = {}

    def get(workload: str, precision: str) -> dict:
        if (workload, precision) not in found:
            found[workload, precision] = computed_once(
                tmp_path_factory, f"numerics-{workload}-{precision}", lambda: check(workload, precision)
            )
        return found[workload, precision]

    return get


def rows(result: dict) -> dict[str, dict]:
    return {row["name"]: row for row in result["compared"]}


# A classifier's three check runs take seconds (slow); the DCGAN's stay in the quick loop.
@pytest.mark.parametrize("workload", [pytest.param("resnet18-cifar", marks=pytest.mark.slow), "dcgan64"])
def test_bf16_and_fp32_pass_and_a_frozen_convolutional_body_fails(workload, checked):
    for precision in ("bf16", "fp32"):
        good = checked(workload, precision)
        assert good["verdict"] == "pass", good["reason"]
    bad = checked(workload, "frozen")
    assert bad["verdict"] == "fail"
    conv = [row for name, row in rows(bad).items() if name.startswith("drift") and name.endswith(".conv")]
    assert conv and all(row["deviation"] == 1.0 > row["tolerance"] for row in conv)  # it never moved
    assert all(f"{row['name']} deviates 1 from the reference" in bad["reason"] for row in conv)
    if workload == "dcgan64":
        # Not the drift alone: the model it trains is another one, and its losses show it (by 2 to 4 times
        # their tolerance; the tiny ResNet's by 9 %, too close to assert across CPUs: docs/numerics.md).
        losses = [row for name, row in rows(bad).items() if name.startswith("loss")]
        assert all(row["deviation"] > 2 * row["tolerance"] for row in losses)


@pytest.mark.parametrize("workload", [pytest.param("resnet18-cifar", marks=pytest.mark.slow), "dcgan64"])
def test_the_tolerance_is_three_times_the_noise_of_two_fp32_runs(workload, checked):
    result = checked(workload, "bf16")
    compared = result["compared"]
    kinds = {row["name"].split()[0] for row in compared}
    assert kinds == {"loss", "drift", "grad", "update"}
    groups = {row["name"].split()[1] for row in compared if not row["name"].startswith("loss")}
    assert {group.rsplit(".", 1)[1] for group in groups} >= {"conv", "norm"}  # per layer group
    assert all(row["noise"] > 0 for row in compared)  # measured: the other order moved every quantity
    typical = statistics.median(row["noise"] for row in compared)
    assert all(row["tolerance"] == numerics.K * max(row["noise"], typical) for row in compared)
    assert numerics.K == 3.0
    # The same reference and noise runs whatever the candidate: only the candidate's column differs.
    frozen = rows(checked(workload, "frozen"))
    for name, row in rows(result).items():
        assert row["values"]["reference"] == frozen[name]["values"]["reference"]
        assert row["values"]["noise"] == frozen[name]["values"]["noise"]
        assert (row["noise"], row["tolerance"]) == (frozen[name]["noise"], frozen[name]["tolerance"])


def test_the_check_trains_the_workloads_own_recipe(checked):
    BrokenPrecisions.lr_seen.clear()
    result = check("dcgan64", "bf16")
    assert result["steps"] == 8 and len(result["losses"]["candidate"]) == 8
    # AdamW's rate, as the timed run trains: every step of the three runs (two optimizers each) used it.
    assert BrokenPrecisions.lr_seen == [ADAMW["lr"]] * 8 * 2 * 3
    assert result["learning_rate"] == {"generator": ADAMW["lr"], "discriminator": ADAMW["lr"]}


@pytest.mark.slow  # a classifier's check runs
def test_a_classifiers_check_trains_at_the_recipes_share_of_the_rate(checked):
    # SGD's 0.1 is given for 256 images; the check's batch gets the recipe's linear share.
    assert checked("resnet18-cifar", "bf16")["learning_rate"] == {"model": SGD["lr"] * CHECK_BATCH / 256}


def test_the_check_is_deterministic_on_the_cpu(checked):
    first, again = checked("dcgan64", "bf16"), check("dcgan64", "bf16")
    assert again["compared"] == first["compared"] and again["losses"] == first["losses"]


def test_a_candidate_that_is_the_reference_is_trained_once_and_loses_nothing(checked):
    # fp32 with TF32 off on the reference's backend is the reference's own configuration: one run, not three.
    BrokenPrecisions.lr_seen.clear()
    result = check("dcgan64", "fp32")
    assert BrokenPrecisions.lr_seen == [ADAMW["lr"]] * 8 * 2 * 1
    assert "nothing to compare, trained once" in result["candidate"]
    assert result["trained_runs"] == 1 and checked("dcgan64", "bf16")["trained_runs"] == 3
    assert result["verdict"] == "pass" and list(result["losses"]) == ["reference"]
    assert result["compared"] == [] and result["worst"] is None and result["noise"] is None
    assert "equal to it by construction" in result["reason"]
    assert numerics_line(result).startswith("pass: 8 steps of cpu fp32 (TF32 off), trained once; check ")
    # What the candidate's own run would have given: the same arithmetic under another name is compared
    # (three runs), repeats the reference bit for bit on the CPU, and deviates by exactly nothing.
    twin = check("dcgan64", "twin")
    assert twin["trained_runs"] == 3 and twin["verdict"] == "pass"
    assert twin["losses"]["candidate"] == twin["losses"]["reference"] == result["losses"]["reference"]
    assert twin["compared"] and all(row["deviation"] == 0 for row in twin["compared"])


@pytest.mark.slow  # a classifier's check runs
def test_a_classifier_must_learn_its_batches_where_the_reference_does(checked):
    result = checked("resnet18-cifar", "corrupt")
    assert result["verdict"] == "fail"
    assert "the candidate's loss did not fall where both fp32 runs' fell clearly" in result["reason"]


def test_the_reference_itself_fails_where_its_own_loss_is_not_finite():
    # The reference's own configuration whose fp32 recipe diverges: nothing to compare, and still a fail.
    plan = runner.plan_run(tiny_config("dcgan64", precision="fp32", batch_size=8, check_numerics=True))
    poisoned = BrokenPrecisions(plan.spec)
    poisoned.precision = "poison"
    result = numerics.check(plan, backend_factory=lambda name, config: poisoned)
    assert result["trained_runs"] == 1 and result["verdict"] == "fail"
    assert result["reason"] == "the reference's loss is not finite from step 3"
    assert numerics_line(result).startswith("fail: 8 steps of cpu fp32 (TF32 off), trained once")


def test_a_nan_fails_and_says_from_which_step():
    # DCGAN steps two optimizers per iteration: the fourth optimizer step is iteration 2's generator step,
    # so iteration 3's losses are the first computed from NaN weights.
    result = check("dcgan64", "poison")
    assert result["verdict"] == "fail"
    assert "the candidate's loss is not finite from step 3" in result["reason"]
    assert any(row["deviation"] == float("inf") for row in result["compared"])
    # The summary reads the same from the check and from the written record (non-finite numbers as null).
    written = json.loads(record_json({"numerics": result}))["numerics"]
    for numerics_result in (result, written):
        assert numerics_line(numerics_result).startswith("fail: worst ")
        assert "deviation not finite over " in numerics_line(numerics_result)


@pytest.mark.slow  # a classifier's check runs
def test_where_fp32_itself_is_chaotic_the_check_says_it_cannot_judge():
    # At batch 2 the tiny ResNet's last BatchNorm normalises two numbers (a 1×1 map): fp32 runs in two
    # orders disagree on the drift by more than a frozen body would, and a pass would prove nothing.
    found = {}
    for precision in ("twin", "frozen"):  # twin: fp32's arithmetic, compared as a candidate
        plan = runner.plan_run(tiny_config("resnet18-cifar", precision="fp32", check_numerics=True))
        plan.spec = plan.spec.replace(precision=precision)
        found[precision] = numerics.check(plan, backend_factory=lambda name, config: BrokenPrecisions(config))
    result = found["twin"]
    assert result["verdict"] == "inconclusive", result["reason"]
    assert "the check cannot tell a layer group that never trains" in result["reason"]
    assert "a larger --batch-size, up to 8" in result["reason"]
    # But a body that never moves is an update that vanished at every step, which no fp32 noise explains.
    frozen = found["frozen"]
    assert frozen["verdict"] == "fail" and "update model.conv vanished at step 1" in frozen["reason"]


def test_the_summary_names_the_worst_quantity_and_the_checks_cost(checked):
    result = dict(checked("dcgan64", "frozen"), run_s=40.0)
    line = numerics_line(result)
    assert line.startswith(f"fail: worst {result['worst']}, deviation ")
    assert f"check {result['time_s']:.1f} s, {result['time_s'] / 40:.0%} of the run's 40.0 s" in line
    assert "3 × run-to-run noise" in line and "8 steps vs cpu fp32 (TF32 off)" in line


def test_the_check_runs_after_the_windows_and_changes_no_figure(monkeypatch):
    events, measured = [], {}
    original_measure, original_check = runner._measure, numerics.check

    def measure(plan, record, progress, group=None):
        original_measure(plan, record, progress, group)
        events.append("windows")
        measured.update(copy.deepcopy(record["metrics"]))

    def checked(plan, **kwargs):
        events.append("check")
        return original_check(plan, **kwargs)

    monkeypatch.setattr(runner, "_measure", measure)
    monkeypatch.setattr(numerics, "check", checked)
    record = runner.execute(runner.plan_run(tiny_config("dcgan64", check_numerics=True)))
    assert record["status"] == "ok" and events == ["windows", "check"]
    assert record["numerics"]["verdict"] == "pass"
    assert {key: record["metrics"][key] for key in measured} == measured  # nothing measured was touched


def test_run_check_numerics_from_the_command_line(capsys, tmp_path):
    code = cli.main([*TINY_RUN, "--precision", "bf16", "--check-numerics", "--out", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "numerics     pass: worst " in out and "vs cpu fp32 (TF32 off)" in out
    (path,) = tmp_path.glob("*.json")
    recorded = json.loads(path.read_text())["numerics"]
    assert recorded["verdict"] == "pass" and recorded["reference"] == "cpu fp32 (TF32 off)"
    assert set(recorded) >= {
        "reference",
        "steps",
        "losses",
        "compared",
        "worst",
        "verdict",
        "time_s",
        "run_s",
    }
    # The check's cost is in the printed summary, not only in the record.
    share = recorded["time_s"] / recorded["run_s"]
    assert f"check {recorded['time_s']:.1f} s, {share:.0%} of the run's {recorded['run_s']:.1f} s" in out


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--reference-backend", "cpu"], "--reference-backend needs --check-numerics"),
        (["--check-numerics", "--reference-backend", "tpu"], "unknown --reference-backend 'tpu' (known: cpu"),
        (["--check-numerics", "--reference-backend", "hpu"], "--reference-backend hpu is not available here"),
    ],
)
def test_bad_numerics_options_are_one_line(capsys, tmp_path, argv, message):
    code = cli.main(["run", "--backend", "cpu", *argv, "--out", str(tmp_path)])
    _, err = capsys.readouterr()
    assert code == 2 and message in err and err.strip().count("\n") == 0
    assert not list(tmp_path.iterdir())


# -- CUDA against the fakes ------------------------------------------------------------------------------


def test_amp_records_the_grad_scalers_final_scale_and_skipped_steps_wiring(fake_gpu, monkeypatch):
    huge = 2.0**120  # so large that fp16 gradients overflow: the scaler must skip and back off
    original_setup = CUDABackend.setup

    def setup(self):
        original_setup(self)
        if self.scaler is not None:
            self.scaler = torch.amp.GradScaler(self.device.type, init_scale=huge)

    monkeypatch.setattr(CUDABackend, "setup", setup)
    plan = make_plan(CUDABackend, precision="amp", check_numerics=True)
    fake_gpu.events.clear()
    result = numerics.check(plan)
    scaler = result["grad_scaler"]
    assert scaler["skipped_steps"] >= 1
    assert scaler["final_scale"] == huge * 0.5 ** scaler["skipped_steps"]  # backoff 0.5, one per skip
    assert result["reference"] == "cuda fp32 (TF32 off)" and result["candidate"] == "cuda amp"
    assert fake_gpu.events.count("sync") == 3  # one read per run: reference, noise, candidate


def test_reference_backend_cpu_compares_the_device_with_the_cpu_wiring(fake_gpu):
    plan = make_plan(CUDABackend, precision="fp32", check_numerics=True, reference_backend="cpu")
    result = numerics.check(plan)
    assert result["reference"] == "cpu fp32 (TF32 off)" and result["candidate"] == "cuda fp32"
    assert result["verdict"] == "pass"  # the fake GPU is the CPU: the same fp32 arithmetic
    assert fake_gpu.events.count("sync") == 1  # only the candidate ran on the (fake) GPU


# -- the report --------------------------------------------------------------------------------------------


def _record(instance: str, verdict: str | None, rate: float) -> dict:
    record = {
        "status": "ok",
        "config": {"workload": "resnet50", "backend": "cuda", "precision": "amp", "batch_size": 64,
                   "instance": instance},
        "device": {"name": "Tesla V100-SXM2-16GB", "count": 1},
        "metrics": {"images_per_second": rate},
    }  # fmt: skip
    if verdict:
        record["numerics"] = {"verdict": verdict, "reason": "loss 0 deviates 0.9 from the reference"}
    return record


def test_report_keeps_a_failed_numerics_row_out_of_the_ranking_and_says_why():
    catalog = load_catalog("seed-2022")
    rows = build_rows([_record("p3.2xlarge", "pass", 100.0), _record("p3.8xlarge", "fail", 1000.0)], catalog)
    passed, failed = rows
    assert passed["instance"] == "p3.2xlarge" and passed["images_per_usd"] is not None
    assert failed["images_per_hour"] is None and failed["images_per_usd"] is None
    assert failed["status"] == "numerics failed" and failed["numerics"] == "fail"
    table = render(rows, catalog, "md", wide=True)
    assert "| Numerics |" in table
    line = next(line for line in table.splitlines() if "p3.8xlarge" in line)
    assert "NUMERICS FAILED (not ranked)" in line
    assert "numerics failed: loss 0 deviates 0.9 from the reference" in table  # a note under the table
