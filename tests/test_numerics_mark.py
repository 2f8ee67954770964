"""A numerics failure sticks: a configuration whose latest check failed is left out of the ranking, the
prices and compare's samples, unchecked runs made after it included, until a later check passes."""

from __future__ import annotations

from test_compare import SEED, side

from suite.compare import comparison as compare
from suite.compare import significance as compare_stats
from suite.rows.build import build_rows
from suite.rows.numerics_mark import under_failed_numerics


def checked(loaded, verdicts, start_hour=0):
    """Each run's numerics verdict (None: not checked), in time order."""
    for hour, ((_, rec), verdict) in enumerate(zip(loaded, verdicts), start=start_hour):
        rec["context"]["utc_time"] = f"2026-01-01T{hour:02d}:00:00Z"
        if verdict:
            rec["numerics"] = {"verdict": verdict, "reason": "loss 0 deviates 0.9 from the reference"}
    return loaded


def records(loaded):
    return [rec for _, rec in loaded]


def test_an_unchecked_run_after_a_failure_does_not_reenter_the_ranking_or_the_prices():
    group = checked(side([100, 101, 99], "a", instance="p3.2xlarge", backend="cuda"), ["fail", None, None])
    for rec in records(group):
        rec["device"] = {"name": "Tesla V100-SXM2-16GB", "count": 1}
    (row,) = build_rows(records(group), SEED)
    assert row["images_per_hour"] is None and row["usd_per_hour"] is None
    assert row["status"] == "numerics failed"
    assert any("latest numerics check FAILED" in note and "2 unchecked" in note for note in row["notes"])


def test_a_later_passing_check_lifts_the_mark():
    group = checked(side([100, 101, 99, 102], "a"), ["fail", None, "pass", None])
    assert not under_failed_numerics(records(group))
    (row,) = build_rows(records(group), SEED)
    assert row["runs"] == 3 and row["runs_not_ok"] == {"numerics failed": 1}


def test_the_latest_check_decides_not_the_file_order():
    group = checked(side([100, 101], "a"), ["pass", "fail"])
    assert under_failed_numerics(list(reversed(records(group))))


def test_compare_counts_no_run_of_a_configuration_under_a_failed_check():
    base = side([100, 101, 99], "a")
    cand = checked(side([120, 121, 119, 118], "c"), ["fail", None, None, None])
    (comparison,) = compare.compare(base, cand)["comparisons"]
    assert comparison["metrics"]["images_per_second"]["verdict"] == compare_stats.TOO_FEW
    assert comparison["candidate"]["runs"] == 0 and comparison["candidate"]["numerics_failed"]
    notes = " ".join(comparison["notes"])
    assert "candidate: its latest numerics check FAILED" in notes
    assert "1 numerics failed, 3 unchecked after a numerics failure run(s) not counted" in notes


def test_compare_does_not_count_a_failed_run_even_when_a_later_check_passed():
    base = side([100, 101, 99], "a")
    cand = checked(side([500, 120, 121, 119], "c"), ["fail", "pass", None, None])
    (comparison,) = compare.compare(base, cand)["comparisons"]
    assert comparison["candidate"]["images_per_second"] == [120, 121, 119]
