"""The numerics check step by step: one update that vanished is caught on a real torchvision network, at the
step it vanished; the per-step noise is the spread over the steps of two fp32 trainings; and a reduced
precision that is noisy but right, where fp32 itself does not clearly learn, is inconclusive, never failed."""

from __future__ import annotations

import math
import os
import sys

import pytest
import torch
from conftest import ROOT, tiny_config

from suite.measurement import runner
from suite.numerics import check as numerics
from suite.numerics import training, updates
from suite.spec import RunSpec

sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
from numerics_power import FrozenBody  # noqa: E402 - the CPU's fp32 and bf16, a frozen body, a lost update

# `lost`: fp32 whose third optimizer step never happens, as under a loss scale that zeroed that step's
# update (a test-only fault; every other step is fp32's own).
SKIPPED_STEP = FrozenBody.LOST_STEP


@pytest.mark.slow  # three 8-step trainings of a real torchvision ResNet-18 (32 px, batch 8): seconds
def test_one_vanished_update_on_a_real_torchvision_network_is_caught_at_its_step():
    config = RunSpec().replace(
        backend="cpu", workload="torchvision:resnet18", image_size=32, num_classes=10, batch_size=8,
        precision="fp32", check_numerics=True, threads=1,
    )  # fmt: skip
    plan = runner.plan_run(config)
    plan.spec = plan.spec.replace(precision="lost")
    result = numerics.check(plan, backend_factory=lambda name, cfg: FrozenBody(cfg))
    assert result["verdict"] == "fail", result["reason"]
    rows = {row["name"]: row for row in result["compared"]}
    for group in ("model.conv", "model.norm", "model.linear"):
        row = rows[f"update {group}"]
        assert (
            row["values"]["candidate"][SKIPPED_STEP - 1] == 0.0 < row["values"]["reference"][SKIPPED_STEP - 1]
        )
        assert row["deviation"] == math.inf and row["step"] == SKIPPED_STEP
        assert f"update {group} vanished at step {SKIPPED_STEP}" in result["reason"]


def _run(losses: list[float], updates: dict[str, list[float]], drift: float = 1.0, grad: float = 1.0) -> dict:
    """One check run as training.run returns it, made up: what the verdict reads, no training."""
    return {
        "lr": {"model": 0.1},
        "losses": torch.tensor(losses).reshape(-1, 1),
        "drift": {group: drift for group in updates},
        "grad": {group: grad for group in updates},
        "updates": updates,
    }


def _check_made_up(monkeypatch, runs: dict) -> dict:
    """numerics.check on a real plan of the tiny ResNet, with each run's measurements made up: what the
    verdict decides from them, in milliseconds."""
    order = iter(("reference", "noise", "candidate"))
    monkeypatch.setattr(training, "run", lambda *args: runs[next(order)])
    plan = runner.plan_run(tiny_config("resnet18-cifar", precision="fp32", batch_size=8, check_numerics=True))
    plan.spec = plan.spec.replace(precision="bf16")
    return numerics.check(plan, backend_factory=lambda name, cfg: FrozenBody(cfg))


# fp32's loss swinging by more than it falls, as torchvision's efficientnet_b0 does at a small batch (from
# about 5.4 to 10.7 over 8 steps): the reference happens to end below its start, the other fp32 run barely.
SWINGING = {
    "reference": [6.9, 7.1, 10.7, 6.0, 8.2, 5.4, 6.5, 6.6],
    "noise": [7.0, 6.9, 6.2, 9.8, 5.9, 7.7, 6.3, 7.4],
    "candidate": [6.9, 7.1, 10.1, 6.3, 8.0, 5.9, 6.6, 7.5],
}


def _updates(scale: float, wobble: float) -> dict[str, list[float]]:
    return {
        group: [scale * (1 + wobble * (-1) ** t) for t in range(8)] for group in ("model.conv", "model.norm")
    }


def test_a_noisy_but_right_precision_where_fp32_does_not_clearly_learn_is_inconclusive(monkeypatch):
    runs = {
        "reference": _run(SWINGING["reference"], _updates(1.0, 0.0)),
        "noise": _run(SWINGING["noise"], _updates(1.0, 0.3), drift=1.1, grad=1.1),
        "candidate": _run(SWINGING["candidate"], _updates(1.0, 0.05), drift=1.02, grad=1.02),
    }
    result = _check_made_up(monkeypatch, runs)
    assert result["verdict"] == "inconclusive", result["reason"]
    assert "the candidate's loss did not fall, but fp32's own fall is not clear" in result["reason"]


def test_where_both_fp32_runs_clearly_learn_a_candidate_that_does_not_fails(monkeypatch):
    runs = {
        "reference": _run([6.9, 7.0, 5.0, 5.1, 3.0, 3.1, 1.9, 2.0], _updates(1.0, 0.0)),
        "noise": _run([7.0, 6.9, 5.1, 5.0, 3.1, 3.0, 2.0, 1.9], _updates(1.0, 0.3)),
        "candidate": _run([6.9, 7.0, 7.0, 7.1, 7.2, 7.1, 7.0, 7.2], _updates(1.0, 0.05)),
    }
    result = _check_made_up(monkeypatch, runs)
    assert result["verdict"] == "fail"
    assert "the candidate's loss did not fall where both fp32 runs' fell clearly" in result["reason"]


def test_the_update_tolerance_is_k_times_the_spread_of_two_fp32_trainings_over_the_steps():
    reference = [1.0] * 8
    noise = [math.exp(0.2 * (-1) ** t) for t in range(8)]  # |ln ratio| 0.2 at every step
    exploded = [1.0] * 8
    exploded[4] = 10.0
    runs = {
        "reference": {"updates": {"g": reference}},
        "noise": {"updates": {"g": noise}},
        "candidate": {"updates": {"g": exploded}},
    }
    (row,) = updates.rows(runs, skipped=[])
    assert row["noise"] == pytest.approx(0.2)  # the root mean square over the 8 steps
    assert row["deviation"] == pytest.approx(math.log(10)) and row["step"] == 5
    # A step the candidate's GradScaler skipped by design is not compared.
    (row,) = updates.rows(runs, skipped=[5])
    assert row["deviation"] == 0.0
    assert updates.log_ratio(0.0, 1.0) == math.inf and updates.log_ratio(0.0, 0.0) == 0.0
    assert updates.log_ratio(float("nan"), 1.0) == math.inf
