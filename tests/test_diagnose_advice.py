"""The verdict's advice as a table of cases: a function of measured rates, the run's settings and the
backend's capabilities; only changes not already made; following it never returns to the start; and
rates the probe could not have measured are "inconclusive", not a verdict."""

from __future__ import annotations

import pytest

from suite.diagnosis.rules import BottleneckEvidence, verdict

TIGHT = {"compute_cv": 0.01, "loader_cv": 0.01, "end_to_end_cv": 0.01}
CPU = {"copies_to_device": False, "precisions": ("fp32", "bf16"), "cores": 2}
GPU = {"copies_to_device": True, "precisions": ("fp32", "amp", "bf16"), "cores": 8}


def options(found: dict) -> dict:
    return {c["option"]: c["value"] for c in found["changes"]}


CASES = [
    # (name, rates (loader, compute, e2e), settings, capabilities, verdict, changes wanted, changes refused)
    (
        "cpu: no transfer, so not transfer-bound",
        (400, 100, 50),
        {"workers": 1, "threads": 2},
        CPU,
        "host-contention",
        {},
        {"--pin-memory", "--prefetch"},
    ),
    (
        "cpu contention: fewer threads, never fewer workers",
        (400, 100, 50),
        {"workers": 2, "threads": 2},
        CPU,
        "host-contention",
        {"--threads": 1},
        {"--workers"},
    ),
    (
        "pinned already: no --pin-memory",
        (4000, 1000, 500),
        {"workers": 4, "pin_memory": True, "prefetch": 2},
        GPU,
        "transfer-bound",
        {"--prefetch": 4},
        {"--pin-memory"},
    ),
    (
        "not pinned: --pin-memory",
        (4000, 1000, 500),
        {"workers": 4, "pin_memory": False},
        GPU,
        "transfer-bound",
        {"--pin-memory": "on"},
        {"--workers"},
    ),
    (
        "on a cache: no cache",
        (4000, 1000, 500),
        {"workers": 1, "pin_memory": True, "prefetch": 4, "data_kind": "cache"},
        GPU,
        "transfer-bound",
        {},
        {"--data", "--pin-memory", "--prefetch"},
    ),
    (
        "bf16 already: no bf16",
        (5000, 1000, 990),
        {"precision": "bf16"},
        GPU,
        "compute-bound",
        {},
        {"--precision"},
    ),
    (
        "fp32 on a backend with bf16: bf16",
        (5000, 1000, 990),
        {"precision": "fp32"},
        GPU,
        "compute-bound",
        {"--precision": "amp"},
        set(),
    ),
    (
        "input-bound with free cores: more workers",
        (250, 1000, 240),
        {"workers": 1},
        GPU,
        "input-bound",
        {"--workers": 4, "--data": "cache"},
        set(),
    ),
    (
        "input-bound, cores taken by compute: no more workers",
        (50, 100, 45),
        {"workers": 1, "threads": 2},
        CPU,
        "input-bound",
        {"--data": "cache"},
        {"--workers"},
    ),
]


@pytest.mark.parametrize(
    "name, rates, settings, backend, expected, wanted, refused", CASES, ids=[c[0] for c in CASES]
)
def test_advice_table(name, rates, settings, backend, expected, wanted, refused):
    loader, compute, e2e = rates
    found = verdict(
        BottleneckEvidence(
            compute_ips=compute, end_to_end_ips=e2e, loader_ips=loader, **TIGHT, **settings, **backend
        )
    )
    assert found["verdict"] == expected
    assert wanted.items() <= options(found).items()
    assert not refused & set(options(found))
    said = {
        "--workers": settings.get("workers"),
        "--threads": settings.get("threads"),
        "--precision": settings.get("precision"),
        "--pin-memory": "on" if settings.get("pin_memory") else None,
        "--data": settings.get("data_kind"),
    }
    for option, value in options(found).items():
        assert said.get(option) != value, f"{option} {value} is already set"


def test_the_loader_slower_than_compute_is_never_called_enough_to_keep_up():
    found = verdict(BottleneckEvidence(compute_ips=1000, end_to_end_ips=950, loader_ips=980, **TIGHT))
    assert found["verdict"] == "compute-bound" and "enough to keep up" not in found["message"]
    fast = verdict(BottleneckEvidence(compute_ips=1000, end_to_end_ips=950, loader_ips=3000, **TIGHT))
    assert "enough to keep up" in fast["message"]


@pytest.mark.parametrize("loader, e2e", [(3000.0, 2010.0), (500.0, 900.0)])
def test_end_to_end_faster_than_a_part_alone_is_inconclusive(loader, e2e):
    found = verdict(BottleneckEvidence(compute_ips=1000.0, end_to_end_ips=e2e, loader_ips=loader, **TIGHT))
    assert found["verdict"] == "inconclusive" and "cannot be" in found["message"]
    assert found["changes"] == []


def test_rates_within_their_spread_are_inconclusive_not_a_verdict():
    noisy = {"compute_cv": 0.3, "loader_cv": 0.3, "end_to_end_cv": 0.3}
    found = verdict(BottleneckEvidence(compute_ips=1000.0, end_to_end_ips=600.0, loader_ips=800.0, **noisy))
    assert found["verdict"] == "inconclusive"
    assert (
        verdict(BottleneckEvidence(compute_ips=1000.0, end_to_end_ips=600.0, loader_ips=800.0, **TIGHT))[
            "verdict"
        ]
        == "input-bound"
    )


def simulated_rates(workers: int, threads: int, cores: int) -> tuple[float, float, float]:
    """A 2-core CPU host: each worker decodes 60 img/s, each thread computes 50 img/s, and together they
    share the cores (oversubscribed, everything slows in proportion)."""
    loader = 60.0 * max(workers, 1)
    compute = 50.0 * threads
    share = min(1.0, cores / (workers + threads))
    return loader, compute, min(loader, compute) * share


def test_following_the_advice_never_returns_to_the_start():
    state = {"workers": 2, "threads": 2}
    seen = [dict(state)]
    for _ in range(4):
        loader, compute, e2e = simulated_rates(state["workers"], state["threads"], cores=2)
        found = verdict(
            BottleneckEvidence(
                compute_ips=compute, end_to_end_ips=e2e, loader_ips=loader, **TIGHT, **state, **CPU
            )
        )
        steps = {k: v for k, v in options(found).items() if k in ("--workers", "--threads")}
        if not steps:
            break
        for option, value in steps.items():
            state[option.lstrip("-")] = value
        assert state not in seen, f"advice went round in a circle: {seen} -> {state}"
        seen.append(dict(state))
    assert len(seen) >= 2  # it did advise something


def test_the_probe_repeats_windows_long_enough_to_mean_something():
    from suite.measurement import bottleneck_probe

    class Host:
        def synchronize(self):
            pass

    import time

    found = bottleneck_probe.compute_only(
        lambda batch: time.sleep(0.001), None, Host(), steps=1, images_per_step=4
    )
    assert len(found.window_time_s) == bottleneck_probe.PROBE_WINDOWS
    assert min(found.window_time_s) >= bottleneck_probe.PROBE_MIN_WINDOW_S * 0.8
    assert found.images_per_second_cv is not None
