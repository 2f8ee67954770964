"""`suite compare --fail-on slower|costlier`: a gate that passes only what the runs decide.

For each matched configuration the gate reads one metric (slower: img/s; costlier: images per $):

    fail       its verdict is the one named: the family-corrected test finds the candidate slower
               (costlier) by at least --min-change
    pass       the runs rule out a change for the worse beyond --min-change: the lower of the two
               one-sided tests of equivalence (Schuirmann 1987) rejects at α, i.e. the 90 % interval of
               the ratio lies above 1 − min-change, and the host's load cannot explain it (the baseline
               did not run busier)
    undecided  anything else: too few runs (a numerics failure leaves a side none), a verdict withheld
               for load, runs with no spread at all, an interval that reaches past the margin, a metric
               that cannot be computed (images per $ without a price on both sides), or no configuration
               on both sides

The gate as a whole fails (exit 1) when any configuration fails, is undecided (exit 4) when none fails
and any is undecided, and passes (exit 0) only when every configuration passes. Passing thus asks each
configuration's test to reject at α on its own: an intersection-union test (R. L. Berger, Technometrics
24(4), 295-300, 1982), whose level is α however many configurations it covers, so no family correction
is needed for a pass; a fail uses the family-corrected verdicts.
"""

from __future__ import annotations

from suite import stats
from suite.compare import host_load
from suite.compare.matching import unpaired_note
from suite.compare.significance import ALPHA, POWER, TOO_FEW, detectable_range
from suite.run_record.parts import Metrics

FAIL_ON = ("slower", "costlier")
PASS, FAIL, UNDECIDED = "pass", "fail", "undecided"
EXIT = {PASS: 0, FAIL: 1, UNDECIDED: 4}


def _metric(comparison: dict, fail_on: str) -> tuple[dict | None, str, str | None]:
    """The metric the gate reads, the verdict that fails it, and a note (or why it cannot be read)."""
    metrics = comparison["metrics"]
    if fail_on == "slower":
        return metrics.get(Metrics.RATE), "slower", None
    if metrics.get("images_per_usd"):
        return metrics["images_per_usd"], "costlier", None
    prices = {side: comparison[side].get("usd_per_hour") for side in ("baseline", "candidate")}
    if all(prices.values()):  # one price on both sides: images per $ moves exactly as img/s does
        return metrics.get(Metrics.RATE), "slower", f"both sides cost ${prices['baseline']:,.2f}/h"
    missing = " and the ".join(side for side, price in prices.items() if not price)
    return (
        None,
        "costlier",
        f"images per $ cannot be computed: the {missing} has no price (name the instance the runs "
        "stand for: `suite run --instance NAME`, or `suite report --instance NAME` for runs made elsewhere)",
    )


def _not_ruled_out(metric: dict, word: str) -> str:
    """Why a change for the worse beyond the margin is not ruled out, in numbers."""
    m = metric["min_change"]
    low = stats.format_log_ratio(metric["log_ci90"][0])
    text = f"{word} by more than {m:.0%} not ruled out (the 90% interval reaches ×{low})"
    text += f"; these runs could detect only a ratio outside {detectable_range(metric)} ({POWER:.0%} power)"
    if metric["runs_needed"]:
        return text + f"; about {metric['runs_needed']:,} runs a side would decide a {m:.0%} margin"
    return text + (
        "; with --min-change 0% only a significant improvement passes: give the change the gate accepts "
        "(e.g. --min-change 5%)"
    )


def judge(comparison: dict, fail_on: str) -> tuple[str, str]:
    """One configuration's gate: (pass / fail / undecided, why)."""
    metric, word, said = _metric(comparison, fail_on)
    if metric is None:
        return UNDECIDED, said
    prefix = f"{said}, so images per $ is judged by img/s: " if said else ""
    verdict = metric["verdict"]
    if verdict == word:
        return FAIL, prefix + word
    if verdict == TOO_FEW:
        failed = [s for s in ("baseline", "candidate") if comparison[s].get("numerics_failed")]
        why = f" (the {' and '.join(failed)}'s numerics check FAILED)" if failed else ""
        return UNDECIDED, prefix + TOO_FEW + why
    if verdict == host_load.WITHHELD:
        return UNDECIDED, prefix + verdict
    if metric["se_log"] == 0:
        return UNDECIDED, prefix + "no run-to-run spread on either side: the noise cannot be estimated"
    if metric["p_not_worse"] is None or metric["p_not_worse"] >= ALPHA:
        return UNDECIDED, prefix + _not_ruled_out(metric, word)
    # any load signal that calls the baseline busier, whatever the others say (host_load.signals)
    why = host_load.could_be_busier(
        comparison["baseline"]["load"], comparison["candidate"]["load"], "baseline"
    )
    if why:
        return (
            UNDECIDED,
            prefix + f"{why} and the baseline ran busier: its load could hide a change for the worse",
        )
    return (
        PASS,
        prefix
        + f"{word} by more than {metric['min_change']:.0%} ruled out (p = {metric['p_not_worse']:.2g})",
    )


def gate(result: dict, fail_on: str | None) -> dict | None:
    """The gate over a whole comparison (None without --fail-on): its status, exit status and each
    configuration's finding."""
    if fail_on is None:
        return None
    findings = [
        {"status": status, "why": why, "configuration": c["configuration"]}
        for c in result["comparisons"]
        for status, why in [judge(c, fail_on)]
    ]
    if not result["comparisons"]:
        why = unpaired_note(result.get("unpaired") or {}, result.get("by"))
        findings.append(
            {"status": UNDECIDED, "why": "no configuration is on both sides", "configuration": why or "—"}
        )
    statuses = {f["status"] for f in findings}
    status = FAIL if FAIL in statuses else UNDECIDED if UNDECIDED in statuses else PASS
    return {
        "fail_on": fail_on,
        "min_change": result["min_change"],
        "status": status,
        "exit_status": EXIT[status],
        "findings": findings,
    }
