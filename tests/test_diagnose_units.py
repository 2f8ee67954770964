"""The bottleneck verdict speaks in the workload's unit: a token workload's rates are sequences a second
(its loader reads a token file), said "seq/s" in every sentence, the rendered figures and the run-to-run
spread; an image workload's wording is unchanged ("img/s", and no unit field in its diagnosis)."""

from __future__ import annotations

import pytest

from suite.diagnosis import repeated, rules
from suite.diagnosis.cases import (
    IMAGE_RATE,
    SEQUENCE_RATE,
    BottleneckEvidence,
    judge,
    rate_unit_of,
)

# Rates and settings that reach each case's sentence; "apart" is the copy (a device) or the cores (none).
CASES = [
    ("synthetic", {}),
    ("disturbed", {"loader_ips": 500.0, "end_to_end_ips": 900.0}),
    ("compute-bound", {}),
    ("loader-within-spread", {}),
    ("input-bound", {}),
    ("short-within-spread", {}),
    ("apart", {"copies_to_device": True}),
    ("apart", {"copies_to_device": False, "cores": 2, "workers": 1, "threads": 2}),
]


def evidence(**change) -> BottleneckEvidence:
    rates = {"compute_ips": 1000.0, "end_to_end_ips": 700.0, "loader_ips": 800.0, "data_kind": "tokens"}
    return BottleneckEvidence(**{**rates, **change})


@pytest.mark.parametrize("case, change", CASES)
def test_every_sentence_of_a_token_workload_says_sequences_a_second(case, change):
    message = judge(case, evidence(rate_unit=SEQUENCE_RATE, **change)).message
    assert "seq/s" in message and "img/s" not in message


@pytest.mark.parametrize("case, change", CASES)
def test_an_image_workloads_sentences_still_say_img_s(case, change):
    message = judge(case, evidence(data_kind="imagefolder", **change)).message
    assert "img/s" in message and "seq/s" not in message


def test_the_unit_comes_from_the_record():
    assert rate_unit_of({"metrics": {"unit": "tokens", "tokens_per_sample": 1024}}) == SEQUENCE_RATE
    assert rate_unit_of({"metrics": {}, "workload": {"unit": "tokens"}}) == SEQUENCE_RATE  # a failed run's
    assert rate_unit_of({"metrics": {"images_per_second": 5.0}}) == IMAGE_RATE
    assert rate_unit_of({}) == IMAGE_RATE


def record(rate: float, unit: str | None) -> dict:
    metrics = {"images_per_second": rate, "images_per_second_cv": 0.01}
    if unit:
        metrics.update(unit=unit, tokens_per_sample=1024)
    data = {"source": "tokens" if unit else "imagefolder", "workers": 1, "pin_memory": True, "prefetch": 4}
    return {"metrics": metrics, "data": data, "config": {"precision": "bf16"}, "device": {"threads": 1}}


def test_a_token_records_verdict_and_its_rendering_say_seq_s():
    found = rules.from_records(record(500.0, "tokens"), record(1000.0, "tokens"), record(520.0, "tokens"))
    assert found["verdict"] == "input-bound" and found["rate_unit"] == SEQUENCE_RATE
    assert "520.0 seq/s" in found["message"] and "img/s" not in found["message"]
    shown = rules.render(found)
    assert "loader only   520.0 seq/s" in shown and "img/s" not in shown


def test_an_image_records_verdict_is_unchanged():
    found = rules.from_records(record(500.0, None), record(1000.0, None), record(520.0, None))
    assert "rate_unit" not in found  # the record's diagnosis section keeps its fields
    assert "the loader delivers 520.0 img/s, the device could do 1,000.0 img/s" in found["message"]
    assert "loader only   520.0 img/s (cv 1.0%)" in rules.render(found)


def test_the_run_to_run_spread_says_the_unit():
    rates = {"loader": [100.0, 300.0], "compute": [100.0, 300.0], "end_to_end": [100.0, 300.0]}

    def interval(a, b):  # an interval that takes in every ratio: nothing decided, the spread advised
        from types import SimpleNamespace

        return SimpleNamespace(difference=0.0, ci_low=-5.0, ci_high=5.0, df=3.0)

    tokens = repeated.decide(rates, interval, SEQUENCE_RATE)
    assert tokens["case"] == "inconclusive" and "100.0 … 300.0 seq/s" in tokens["advice"]
    images = repeated.decide(rates, interval)
    assert "100.0 … 300.0 img/s" in images["advice"]
