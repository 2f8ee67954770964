"""Is the candidate really faster (or cheaper) than the baseline? Run records in, one verdict per metric out.

The samples are runs, not windows: each run's throughput (the median of its timed windows) is one
sample, because runs in fresh processes are independent and the windows of one process are not (they
share its thread placement, memory layout and clock state). For each matched pair and metric:

    ratio   = candidate ÷ baseline, as the ratio of the runs' geometric means
    95% CI  = exp(Welch's t interval of the difference of mean log throughputs)
    verdict = faster / slower where the family-corrected p < 0.05 and |ratio − 1| ≥ --min-change;
              "no change (< m)" where two one-sided tests put the ratio within --min-change of 1;
              otherwise "undecided" (with the smallest change the runs could detect and the runs a
              side that --min-change needs); withheld where the two sides' host load could explain it

The steps live apart: matching (matching.py), the tests and the family's correction (significance.py),
the load rule (host_load.py), the `--fail-on` gate (gate.py) and the output (render.py). Fewer
than MIN_RUNS runs on a side is a verdict of its own, never a bare ratio. Each side's numerics standing
(its records' checks and the numerics ledger's, numerics_mark) is said beside it.
"""

from __future__ import annotations

import glob
import math
import os

from suite import stats
from suite.compare import host_load
from suite.compare.matching import (
    Group,
    by_value,
    describe,
    group_records,
    interleaved_hint,
    match_key,
    parse_by,
    rerun_hint,
    why_unpaired,
)
from suite.compare.significance import (
    ALPHA,
    MIN_RUNS,
    POWER,
    TOO_FEW,
    UNDECIDED,
    correct,
    decide,
    detectable_range,
)
from suite.inputs.errors import UserError
from suite.prices.catalog import device_mismatch_warning
from suite.rows.build import build_rows
from suite.rows.numerics_mark import standing_note
from suite.run_record.parts import Metrics

METHOD = (
    "Welch's t-test on the log of each run's throughput (one sample per run), two-sided, α = 0.05; "
    "ratio = candidate ÷ baseline of the runs' geometric means, with its (uncorrected) 95% confidence "
    "interval; no change (< m): two one-sided tests (Schuirmann 1987) put the ratio within --min-change of 1; "
    f"could detect: the smallest change found with {POWER:.0%} power, and the runs a side a --min-change "
    "change needs at these runs' spread"
)

# What a verdict is called for each metric: (higher, lower). A metric's id in the output is the record's
# name for the figure where it is one (Metrics.RATE: images_per_second).
METRICS = {
    Metrics.RATE: ("img/s", ("faster", "slower")),
    "images_per_usd": ("images per $", ("cheaper", "costlier")),
}


def parse_min_change(text: str) -> float:
    """`3%` or `3` -> 0.03 (a percentage, as pyperf's --min-speed)."""
    from suite.inputs import numbers

    percent = str(text).strip()
    percent = percent[:-1] if percent.endswith("%") else percent
    try:
        return numbers.number("--min-change", percent, numbers.PERCENT) / 100
    except UserError:
        raise UserError(f"--min-change must be a percentage from 0 to 100, e.g. 3%, got {text!r}") from None


def expand_paths(path: str) -> list[str]:
    """A record, a folder of records or a glob (quoted, so the shell left it to us)."""
    if not os.path.exists(path) and glob.has_magic(path):
        found = sorted(glob.glob(path))
        if not found:
            raise UserError(f"no file or folder matches {path!r}")
        return found
    return [path]


def compare(
    baseline: list[tuple[str, dict]],
    candidate: list[tuple[str, dict]],
    by: tuple[str, ...] | str | None = None,
    min_change: float = 0.0,
    catalog=None,
    correction: str = "auto",
) -> dict:
    """Match the two sides' configurations, decide each metric of each matched pair, correct the verdicts
    for the family of tests, then withhold those the load difference could explain."""
    by = parse_by(by) if isinstance(by, str) else by
    base_groups, cand_groups = group_records(baseline), group_records(candidate)
    comparisons, matched_base, matched_cand, same_runs = [], set(), set(), 0
    cand_by_match: dict[tuple, list] = {}
    for cand_key, cand in cand_groups.items():
        cand_by_match.setdefault(match_key(cand.first, by), []).append((cand_key, cand))
    for base_key, base in base_groups.items():
        for cand_key, cand in cand_by_match.get(match_key(base.first, by), []):
            matched_base.add(base_key)
            matched_cand.add(cand_key)
            if base.run_ids() == cand.run_ids():
                same_runs += 1
                continue  # the same runs on both sides (one folder given twice): nothing to compare
            comparisons.append(_compare_pair(base, cand, by, min_change, catalog))
    family = correct(
        [(m, min_change, METRICS[name][1]) for c in comparisons for name, m in c["metrics"].items()],
        correction,
    )
    for comparison in comparisons:
        _weigh_load(comparison)
        _undecided_notes(comparison)
    return {
        "by": by,
        "min_change": min_change,
        "alpha": ALPHA,
        "min_runs": MIN_RUNS,
        "method": METHOD,
        "correction": family,
        "comparisons": comparisons,
        "unmatched": {
            "baseline": [_unmatched(g, by) for k, g in base_groups.items() if k not in matched_base],
            "candidate": [_unmatched(g, by) for k, g in cand_groups.items() if k not in matched_cand],
        },
        # Nothing compared: why (the same runs twice, or what the sides differ in and the --by that pairs them).
        "unpaired": None if comparisons else why_unpaired(base_groups, cand_groups, by, same_runs),
    }


def _usd_per_hour(group: Group, catalog) -> float | None:
    """The price of the accelerators the runs used, as `suite report` prices this configuration (None:
    not priced)."""
    if catalog is None:
        return None
    rows = build_rows(group.records, catalog)
    return rows[0]["usd_per_hour"] if rows else None


def _compare_pair(base: Group, cand: Group, by, min_change, catalog) -> dict:
    rates_base, rates_cand = base.rates(), cand.rates()
    logs = base.log_rates(), cand.log_rates()  # every ratio in log space: rates may be 5e-324 or 1e300
    metrics = {Metrics.RATE: decide(rates_base, rates_cand, min_change, METRICS[Metrics.RATE][1], logs=logs)}
    price_base, price_cand = _usd_per_hour(base, catalog), _usd_per_hour(cand, catalog)
    # Images per $ tells something new only when the two sides pay different prices.
    if price_base and price_cand and price_base != price_cand:
        usd_logs = tuple(
            [x + stats.LOG_SECONDS_PER_HOUR - math.log(price) for x in side]
            for side, price in zip(logs, (price_base, price_cand))
        )
        # a value that is no float is None here; its median is then taken from the logs
        values = [[stats.from_log(x) or 0.0 for x in side] for side in usd_logs]
        metrics["images_per_usd"] = decide(*values, min_change, METRICS["images_per_usd"][1], logs=usd_logs)
    notes = []
    if any(m["verdict"] == TOO_FEW for m in metrics.values()):
        notes.append(_too_few_note(base, cand, len(rates_base), len(rates_cand)))
    for side, group in (("baseline", base), ("candidate", cand)):
        # a failed check (in the records or the numerics ledger), a reduced precision never checked
        numerics = standing_note(group.records, group.numerics_standing)
        if numerics:
            notes.append(f"{side}: {numerics}")
        if group.not_counted():
            notes.append(
                f"{side}: "
                + ", ".join(f"{n} {why}" for why, n in sorted(group.not_counted().items()))
                + " run(s) not counted"
            )
    hypothetical = _hypothetical(base, cand, by)
    notes += hypothetical
    return {
        "configuration": describe(base.first, by),
        "baseline": _side(base, by, price_base),
        "candidate": _side(cand, by, price_cand),
        "metrics": metrics,
        "hypothetical": bool(hypothetical),
        "notes": notes,
    }


def _hypothetical(base: Group, cand: Group, by) -> list[str]:
    """Comparing instances with runs made on another device (a CPU run given `--instance p3.2xlarge`)
    compares devices, not instances: each such side is marked HYPOTHETICAL."""
    if not by or "instance" not in by:
        return []
    notes = []
    for side, group in (("baseline", base), ("candidate", cand)):
        mismatch = device_mismatch_warning(group.first)
        if mismatch:
            notes.append(
                f"HYPOTHETICAL {side}: {mismatch.split(':')[0]}, so this is not that instance's rate"
            )
    return notes


def _too_few_note(baseline: Group, candidate: Group, n_base: int, n_cand: int) -> str:
    head = f"{n_base} vs {n_cand} runs: need ≥ {MIN_RUNS} a side for a verdict; "
    both = interleaved_hint(baseline, candidate, MIN_RUNS)  # not runs added to one side after the fact
    if both:
        return head + both
    hints = [
        rerun_hint(group, MIN_RUNS - n)
        for group, n in ((baseline, n_base), (candidate, n_cand))
        if n < MIN_RUNS
    ]
    return head + "; ".join(hints)


def _side(group: Group, by, usd_per_hour) -> dict:
    return {
        "value": by_value(group.first, by) if by else None,
        "runs": len(group.rates()),
        "run_ids": sorted(str(r.get("run_id")) for r in group.records),
        "usd_per_hour": usd_per_hour,
        Metrics.RATE: group.rates(),
        "numerics_failed": group.numerics_failed,
        "numerics": _numerics(group),
        "load": host_load.side_load(group.samples() or group.records),
    }


def _numerics(group: Group) -> dict:
    """The side's numerics standing: its latest decisive check (pass / fail / None: never), from where."""
    found = group.numerics_standing
    latest = found["latest"] or {}
    return {
        "verdict": found["verdict"],
        "source": latest.get("source"),
        "checked_utc": latest.get("utc"),
        "checks": found["checks"],
        "reduced_precision": found["reduced_precision"],
    }


def _undecided_notes(comparison: dict) -> None:
    """For each undecided metric: why, in numbers — the interval, the smallest change these runs could
    detect and the runs a side the margin needs — so that "undecided" never reads as "the same"."""
    for name, metric in comparison["metrics"].items():
        if metric["verdict"] != UNDECIDED:
            continue
        label = METRICS[name][0]
        if metric["se_log"] == 0:
            comparison["notes"].append(
                f"{label}: undecided: the runs on both sides are identical, so their noise cannot be "
                "estimated and no test can be made (are these copies of one run?)"
            )
            continue
        low, high = (stats.format_log_ratio(x) for x in metric["log_ci"])
        text = (
            f"{label}: undecided: the ratio may lie anywhere in ×{low} … ×{high}; these runs could detect "
            f"only a ratio outside {detectable_range(metric)} ({POWER:.0%} power)"
        )
        m = metric["min_change"]
        if metric["runs_needed"]:
            text += f"; a {m:.0%} change needs about {metric['runs_needed']:,} runs a side at this spread"
        elif not m:
            text += "; give --min-change (the change you would accept) to test for no change"
        comparison["notes"].append(text)


def _weigh_load(comparison: dict) -> None:
    """Each side's load beside the verdict; a faster/slower call the load difference could explain is
    withheld (host_load's rule), and differing noise warnings are said."""
    base, cand = comparison["baseline"]["load"], comparison["candidate"]["load"]
    comparison["load"] = (
        f"baseline: {host_load.describe_load(base)}; candidate: {host_load.describe_load(cand)}"
    )
    for name, metric in comparison["metrics"].items():
        if metric["verdict"] not in METRICS[name][1]:
            continue
        reason = host_load.withhold(metric, base, cand)
        if reason:
            metric["verdict_before_load"] = metric["verdict"]
            metric["verdict"] = host_load.WITHHELD
            comparison["notes"].append(
                f"{METRICS[name][0]}: {metric['verdict_before_load']} WITHHELD: {reason}"
            )
    unrecorded = [
        side for side, load in (("baseline", base), ("candidate", cand)) if not load["runs_with_load"]
    ]
    if unrecorded:
        comparison["notes"].append(
            f"host load not recorded ({' and '.join(unrecorded)}): a load difference cannot be ruled out"
        )
    for side, load in (("baseline", base), ("candidate", cand)):
        if load["noise_warnings"]:
            comparison["notes"].append(
                f"{side} noise warnings ({load['runs_with_noise_warnings']} run(s)): "
                + "; ".join(load["noise_warnings"])
            )
    noise = host_load.noise_note(base, cand)
    if noise:
        comparison["notes"].append(noise)


def _unmatched(group: Group, by) -> dict:
    return {
        "configuration": describe(group.first),
        "runs": len(group.rates()),
        "value": by_value(group.first, by) if by else None,
    }
