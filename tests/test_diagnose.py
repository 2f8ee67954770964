"""The bottleneck rules, with numbers."""

from __future__ import annotations

import pytest

from suite.diagnosis.cases import workers_needed
from suite.diagnosis.rules import (
    BottleneckEvidence,
    device_util_percent,
    from_records,
    render,
    verdict,
)


def test_slow_loader_is_input_bound_with_a_workers_suggestion():
    found = verdict(
        BottleneckEvidence(compute_ips=1000.0, end_to_end_ips=240.0, loader_ips=250.0, workers=1, cores=16)
    )
    assert found["verdict"] == "input-bound"
    assert "the loader delivers 250.0 img/s, the device could do 1,000.0 img/s" in found["message"]
    # the figures it rests on, and what it assumes where the host's CPU use was not measured
    assert found["suggestions"][0] == (
        "try --workers 4: more decoding in parallel: 1 worker delivered 250.0 img/s each (cores its workers "
        "kept busy not measured: this assumes decoding is CPU-bound), and compute takes 1,000.0 img/s"
    )
    assert found["changes"][1] == {
        "option": "--data",
        "value": "cache",
        "why": "a prepared cache skips decoding (`suite data prepare`)",
    }
    assert found["end_to_end_over_compute"] == pytest.approx(0.24)


def test_input_bound_beyond_the_cores_suggests_a_prepared_cache():
    found = verdict(
        BottleneckEvidence(compute_ips=1000.0, end_to_end_ips=100.0, loader_ips=100.0, workers=1, cores=2)
    )
    assert "about 10 workers would be needed, and the 2 cores are taken" in "; ".join(found["suggestions"])
    assert not any(c["option"] == "--workers" for c in found["changes"])


def test_input_bound_on_a_cache_does_not_suggest_a_cache():
    found = verdict(
        BottleneckEvidence(compute_ips=1000.0, end_to_end_ips=500.0, loader_ips=500.0, data_kind="cache")
    )
    assert found["verdict"] == "input-bound" and "already skips decoding" in "; ".join(found["suggestions"])
    assert not any(c["value"] == "cache" for c in found["changes"])


def test_end_to_end_near_compute_is_compute_bound():
    found = verdict(BottleneckEvidence(compute_ips=1000.0, end_to_end_ips=950.0, loader_ips=3000.0))
    assert found["verdict"] == "compute-bound"
    assert "reaches 95% of compute-only" in found["message"]


def test_synthetic_data_is_compute_bound():
    found = verdict(BottleneckEvidence(compute_ips=800.0, end_to_end_ips=800.0, loader_ips=None))
    assert found["verdict"] == "compute-bound" and "synthetic data has no loader" in found["message"]


def test_fast_parts_slow_together_is_transfer_bound():
    found = verdict(BottleneckEvidence(compute_ips=1000.0, end_to_end_ips=500.0, loader_ips=2000.0))
    assert found["verdict"] == "transfer-bound"
    assert "--pin-memory" in found["suggestions"][0]


@pytest.mark.parametrize(
    "loader, e2e, expected",
    [
        (899.0, 880.0, "input-bound"),  # just under 90% of compute: the loader is the narrowest pipe
        (901.0, 880.0, "transfer-bound"),  # loader keeps up alone, yet end to end falls short
        (500.0, 900.0, "inconclusive"),  # end to end faster than the loader alone: impossible, re-measure
    ],
)
def test_thresholds(loader, e2e, expected):
    tight = {"compute_cv": 0.01, "loader_cv": 0.01, "end_to_end_cv": 0.01}
    found = verdict(BottleneckEvidence(compute_ips=1000.0, end_to_end_ips=e2e, loader_ips=loader, **tight))
    assert found["verdict"] == expected


def test_telemetry_evidence_follows_seed_002():
    busy_host = verdict(
        BottleneckEvidence(
            compute_ips=1000.0,
            end_to_end_ips=200.0,
            loader_ips=200.0,
            host_cpu_percent=95.0,
            device_util=20.0,
        )
    )
    assert "the device waits on the host" in busy_host["evidence"][0]
    idle = verdict(
        BottleneckEvidence(
            compute_ips=1000.0,
            end_to_end_ips=500.0,
            loader_ips=2000.0,
            host_cpu_percent=10.0,
            device_util=30.0,
        )
    )
    assert "neither is busy" in idle["evidence"][0]
    busy_device = verdict(
        BottleneckEvidence(
            compute_ips=1000.0,
            end_to_end_ips=990.0,
            loader_ips=5000.0,
            host_cpu_percent=10.0,
            device_util=97.0,
        )
    )
    assert busy_device["evidence"] == ["device utilisation 97%"]


def test_free_memory_suggests_a_larger_batch_only_when_compute_bound():
    roomy = verdict(
        BottleneckEvidence(
            compute_ips=1000.0,
            end_to_end_ips=990.0,
            loader_ips=5000.0,
            peak_memory_bytes=2e9,
            total_memory_bytes=16e9,
        ),
    )
    assert any("a larger batch may help" in s for s in roomy["suggestions"])
    full = verdict(
        BottleneckEvidence(
            compute_ips=1000.0,
            end_to_end_ips=990.0,
            loader_ips=5000.0,
            peak_memory_bytes=14e9,
            total_memory_bytes=16e9,
        ),
    )
    assert not any("may help" in s for s in full["suggestions"])
    starved = verdict(
        BottleneckEvidence(
            compute_ips=1000.0,
            end_to_end_ips=100.0,
            loader_ips=100.0,
            peak_memory_bytes=2e9,
            total_memory_bytes=16e9,
        ),
    )
    assert not any("may help" in s for s in starved["suggestions"])


def test_device_gauge_is_found_by_suffix_not_by_backend():
    summary = {
        "host_cpu_util_percent": {"mean": 90.0},
        "gpu_mem_util_percent": {"mean": 5.0},
        "gpu_util_percent": {"mean": 40.0},
    }
    assert device_util_percent(summary) == 40.0
    assert device_util_percent({"host_cpu_util_percent": {"mean": 90.0}}) is None
    assert workers_needed(0, 100.0, 250.0) == 3


def test_from_records_reads_the_three_records():
    def run(rate, **extra):
        return {"metrics": {"images_per_second": rate}, **extra}

    def end_to_end(host_cpu_percent):
        return run(
            90.0,
            data={"source": "imagefolder", "workers": 1},
            telemetry={"summary": {"host_cpu_util_percent": {"mean": host_cpu_percent}}},
            memory={},
        )

    found = from_records(end_to_end(40.0), run(1000.0), run(100.0), cores=4)
    assert found["verdict"] == "input-bound" and found["host_cpu_util_percent"] == 40.0
    assert found["suggestions"][0].startswith("try --workers 3")  # of 4 cores, 1 feeds the device
    text = render(found)
    assert "loader only   100.0 img/s" in text and "verdict: input-bound" in text
    # 99 % of the 4 cores busy: the host has none to give a worker more
    full = from_records(end_to_end(99.0), run(1000.0), run(100.0), cores=4)
    assert not any(c["option"] == "--workers" for c in full["changes"])
    assert "the 4 cores are taken (4.0 were busy)" in "; ".join(full["suggestions"])


def test_telemetry_from_too_few_samples_is_not_evidence():
    rates = dict(compute_ips=1000.0, end_to_end_ips=500.0, loader_ips=2000.0)
    # "host CPUs 0 % busy" from 3 samples: recorded, but it backs nothing, and the evidence says why
    few = verdict(BottleneckEvidence(**rates, host_cpu_percent=0.0, device_util=30.0, telemetry_samples=3))
    assert few["host_cpu_util_percent"] == 0.0 and few["telemetry_samples"] == 3
    assert few["evidence"] == [
        "telemetry: only 3 sample(s), fewer than 10: not evidence (utilisation not used; run longer windows "
        "with --steps or --windows)"
    ]
    enough = verdict(
        BottleneckEvidence(**rates, host_cpu_percent=0.0, device_util=30.0, telemetry_samples=40)
    )
    assert "neither is busy" in enough["evidence"][0]


def test_from_records_reads_the_telemetry_sample_count():
    e2e = {
        "metrics": {"images_per_second": 500.0},
        "data": {"source": "imagefolder", "workers": 1},
        "telemetry": {"samples": 2, "summary": {"host_cpu_util_percent": {"mean": 0.0}}},
        "memory": {},
    }
    found = from_records(
        e2e, {"metrics": {"images_per_second": 1000.0}}, {"metrics": {"images_per_second": 2000.0}}
    )
    assert found["evidence"][0].startswith("telemetry: only 2 sample(s)")
    assert not any("0% busy" in line for line in found["evidence"])
