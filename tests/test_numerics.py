"""The numerics parity check: bf16 on the CPU passes, a precision that corrupts the gradient fails, the check
runs after the timed windows without changing a figure, and the report keeps failed rows out of rankings."""

from __future__ import annotations

import copy
import json

import pytest
import torch
from conftest import TINY_RUN, tiny_config
from suite.backends import backend_class
from suite.backends.cpu import CPUBackend
from tiny_workload import make_plan

from suite import cli
from suite.measurement import numerics, runner
from suite.reporting.pricing import load_catalog
from suite.reporting.render import render
from suite.reporting.rows import build_rows

CUDABackend = backend_class("cuda")


class CorruptGradient(CPUBackend):
    """A precision that is wrong on purpose: it flips the sign of every gradient before the update."""

    precisions = ("fp32", "bf16", "corrupt")

    def step(self, optimizer):
        if self.precision == "corrupt":
            for group in optimizer.param_groups:
                for parameter in group["params"]:
                    if parameter.grad is not None:
                        parameter.grad.neg_()
        optimizer.step()


def check(workload: str, precision: str, **fields) -> dict:
    plan = runner.plan_run(
        tiny_config(workload, precision="fp32", batch_size=4, check_numerics=True, **fields)
    )
    plan.config = plan.config.resolved(precision=precision)
    return numerics.check(plan, backend_factory=lambda name, config: CorruptGradient(config))


@pytest.fixture(scope="module")
def checked():
    """check(workload, precision), run once per pair for this module: the parity runs take seconds, and
    several tests read the same result (none changes it)."""
    found = {}

    def get(workload: str, precision: str) -> dict:
        if (workload, precision) not in found:
            with pytest.MonkeyPatch.context() as patch:
                # The wrong precision gets bf16's noise floor, so it fails against a real tolerance, not
                # against ε alone.
                patch.setitem(numerics.ROUNDING, "corrupt", torch.bfloat16)
                found[workload, precision] = check(workload, precision)
        return found[workload, precision]

    return get


@pytest.mark.parametrize("workload", ["resnet18-cifar", "dcgan64"])
def test_bf16_on_the_cpu_passes_and_a_corrupted_gradient_fails(workload, checked):
    good = checked(workload, "bf16")
    assert good["verdict"] == "pass", good["reason"]
    assert all(noise > 0 for noise in good["noise_floor"])  # measured from the rounded fp32 run
    assert good["tolerance"] == [numerics.K * n + numerics.EPSILON for n in good["noise_floor"]]
    assert all(0 < dev <= tol for dev, tol in zip(good["max_rel_dev"], good["tolerance"]))
    bad = checked(workload, "corrupt")
    assert bad["verdict"] == "fail"
    assert bad["noise_floor"] == good["noise_floor"]  # the same reference and noise runs
    assert any(dev > tol for dev, tol in zip(bad["max_rel_dev"], bad["tolerance"]))
    assert "deviates" in bad["reason"]


def test_a_classifier_must_overfit_the_reused_batch(checked):
    result = checked("resnet18-cifar", "corrupt")
    candidate = [step[0] for step in result["losses"]["candidate"]]
    reference = [step[0] for step in result["losses"]["reference"]]
    assert reference[-1] < reference[0] and candidate[-1] > candidate[0]  # gradient ascent
    assert "the candidate's loss did not fall on the reused batch" in result["reason"]
    assert result["steps"] == 6 and len(candidate) == 6


def test_a_gan_runs_fewer_steps_with_a_band_on_each_loss(checked):
    result = checked("dcgan64", "bf16")
    assert result["steps"] == 4 and len(result["losses"]["candidate"]) == 4
    assert len(result["max_rel_dev"]) == len(result["noise_floor"]) == len(result["tolerance"]) == 2  # D, G


def test_fp32_against_fp32_on_the_cpu_is_exact():
    result = check("dcgan64", "fp32")
    assert result["verdict"] == "pass"
    assert result["max_rel_dev"] == [0.0, 0.0] and result["noise_floor"] == [0.0, 0.0]


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
    assert "numerics     pass: deviation " in out and "vs cpu fp32 (TF32 off)" in out
    (path,) = tmp_path.glob("*.json")
    recorded = json.loads(path.read_text())["numerics"]
    assert recorded["verdict"] == "pass" and recorded["reference"] == "cpu fp32 (TF32 off)"
    assert set(recorded) >= {"reference", "steps", "losses", "max_rel_dev", "noise_floor", "verdict"}


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
    table = render(rows, catalog, "md")
    assert "| Numerics |" in table
    line = next(line for line in table.splitlines() if "p3.8xlarge" in line)
    assert "NUMERICS FAILED (not ranked)" in line
    assert "numerics failed: loss 0 deviates 0.9 from the reference" in line
