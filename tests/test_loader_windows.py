"""Loader windows that mean something: grown past a minimum duration, and a spread larger than the value
always a warning."""

from __future__ import annotations

import pytest
import torch

from suite.commands.loader import render_table, significant
from suite.data import loader_bench
from suite.data.loader_bench import batches_for, measure_loader
from suite.run_record.windows import spread_warnings, window_metrics


class FakeClock:
    """time.perf_counter for the loader bench, advanced by the batches themselves: each costs 0.1 ms, so
    what the windows grow to is arithmetic, not the host's speed."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now

    def batches(self, seconds_each: float):
        batch = (torch.zeros(4, 1), torch.zeros(4))
        while True:
            self.now += seconds_each
            yield batch


def test_windows_shorter_than_the_minimum_are_grown_before_any_counts(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(loader_bench, "time", clock)
    metrics = measure_loader(clock.batches(0.0001), batches=2, windows=3, warmup_batches=1)
    # 2 batches took 0.2 ms: grown to 2 x 50 ms of them, 1,000 batches, which reach the minimum
    assert metrics["batches_per_window_asked"] == 2 and metrics["batches_per_window"] == 1000
    assert metrics["window_time_s"] == pytest.approx([0.1, 0.1, 0.1])
    assert metrics["images_per_window"] == 4 * 1000
    assert any("grown to 1000 batches" in w for w in metrics["warnings"])


def test_growth_is_computed_from_what_the_short_window_took():
    assert batches_for(0.05, 10, 0.001) == 1000  # 0.1 ms a batch: 2 × 50 ms of them
    assert batches_for(0.05, 10, 0.2) == 10  # already long enough: untouched


def test_a_spread_larger_than_the_value_is_always_a_warning():
    metrics = window_metrics(100, 1, [0.0002, 0.004, 0.0003, 0.002])
    assert metrics.images_per_second_stdev > metrics.images_per_second
    assert any("larger than the value" in w for w in spread_warnings(metrics))


def test_the_loader_table_shows_significant_digits_and_marks_warnings():
    assert significant(144_555.3) == "145,000" and significant(520_399_080.0) == "520,000,000"
    assert significant(6.71) == "6.71"
    record = {
        "status": "ok",
        "config": {"batch_size": 4},
        "data": {"source": "cache", "workers": 0, "pin_memory": False},
        "metrics": {
            "images_per_second": 144_555.3,
            "images_per_second_stdev": 204_790.0,
            "images_per_hour": 520_399_080.0,
            "first_batch_s": 0.01,
        },
        "warnings": ["the spread between windows is larger than the value"],
    }
    table = render_table([record])
    assert "145,000 ± 205,000 ⚠" in table and "520,000,000" in table and "520,399,080" not in table
    assert "⚠ cache workers 0 pin_memory False: the spread between windows" in table


def test_batch_size_shows_each_tries_spread_and_says_when_its_advice_is_noise():
    from suite.exploring.batch_size import Search, Try, noise_caveat, recommend, render, try_from_record

    one = {"status": "ok", "metrics": {"images_per_second": 100.0, "window_time_s": [0.1]}}
    single = try_from_record(4, one)
    assert single.cv is None and single.windows == 1
    tries = [single, Try(8, "ok", 98.0, cv=0.01, windows=3)]
    result = Search(tries=tries, largest_fit=8)
    result.recommended, result.best_images_per_second = recommend(tries)
    text = render(result, "dcgan64", "cpu")
    assert "1 window: spread unknown" in text and "cv 1.0%" in text
    assert "caveat: batch(es) 4 measured in one window" in text
    assert text.split("\n")[0].split()[-1] == "verdict"  # no empty header
    assert (
        noise_caveat([Try(4, "ok", 100.0, cv=0.01, windows=3), Try(8, "ok", 99.0, cv=0.01, windows=3)])
        is None
    )


def test_sweep_shows_no_spread_of_zero_from_one_window_and_caveats_its_effects():
    from suite.exploring.grid import Point
    from suite.exploring.sweep_table import render

    def record(rate, windows):
        return {
            "status": "ok",
            "metrics": {
                "images_per_second": rate,
                "images_per_second_stdev": 0.0,
                "images_per_second_cv": 0.0,
                "step_time_s": 0.1,
                "window_time_s": [0.1] * windows,
            },
            "memory": {},
        }

    outcome = [
        (Point(0, {"batch-size": "2"}, [], {}), record(10.0, 1)),
        (Point(1, {"batch-size": "4"}, [], {}), record(43.2, 1)),
    ]
    text = render(outcome, {"batch-size": ["2", "4"]})
    assert "0.0" not in text.split("effect")[0].replace("10.0", "").replace("43.2", "").replace("100.0", "")
    assert "caveat: 2 point(s) measured in one window" in text


@pytest.mark.parametrize(
    "cores, workers, threads, expected",
    [
        (2, None, None, (1, 1)),  # a 2-core host: one of each, not 4 workers over 2 threads
        (16, None, None, (4, 12)),
        (2, 2, None, (2, 1)),  # workers asked: compute gets what is left, at least one
        (8, None, 6, (2, 6)),  # threads asked: workers beside them
        (2, 3, 3, (3, 3)),  # both asked: kept, and the reason says they oversubscribe
    ],
)
def test_default_workers_and_threads_fit_the_cores(cores, workers, threads, expected):
    from suite.data import split_host_cores

    got_workers, got_threads, why = split_host_cores(cores, 4, workers, threads)
    assert (got_workers, got_threads) == expected
    assert (
        got_workers + got_threads <= cores
        or (workers is not None and threads is not None)
        or got_threads == 1
    )
    assert why


def test_a_real_data_cpu_run_records_why_it_has_its_threads(tmp_path):
    from conftest import tiny_config
    from suite.backends.cpu import CPUBackend

    backend = CPUBackend(tiny_config(data=str(tmp_path)))
    before = torch.get_num_threads()
    try:
        backend.setup()
        info = backend.device_info()
    finally:
        torch.set_num_threads(before)
    assert "compute thread(s) on" in info["threads_reason"]
