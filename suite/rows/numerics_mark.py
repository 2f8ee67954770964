"""A configuration whose numerics check failed stays marked until a later check of it passes.

A failed check says the precision trains another model; a run of the same configuration made afterwards
without the check is the same precision on the same model, so it is no evidence that it now trains the
same one. The configuration's standing is its latest check's verdict, pass or fail, from the records given
and from the numerics ledger (suite/run_record/numerics_ledger.py: every check made on this machine, kept
in the suite's cache folder), by time: a check made once and benchmark runs written to another folder
afterwards are still judged by that check. `suite report` and `suite compare` leave every run of a
configuration under a failed check out of the ranking, the prices and the samples, and say so; a reduced
precision that no check passed or failed says that it was never checked.

An `inconclusive` or `error` verdict neither passes nor fails: it lifts no mark and sets none.
"""

from __future__ import annotations

from suite.run_record import numerics_ledger

DECISIVE = ("pass", "fail")
REFERENCE_PRECISION = "fp32"


def _checked(record: dict) -> str | None:
    verdict = (record.get("numerics") or {}).get("verdict")
    return verdict if verdict in DECISIVE else None


def latest_check(records: list[dict]) -> dict | None:
    """The newest record of these runs that carries a pass or fail numerics verdict (None: never checked)."""
    checked = [r for r in records if _checked(r)]
    return (
        max(checked, key=lambda r: numerics_ledger.when((r.get("context") or {}).get("utc_time")))
        if checked
        else None
    )


def all_checks(records: list[dict]) -> list[dict]:
    """Every check of these runs' configuration, oldest first: the records' own (`source` record) and the
    ledger's (`source` ledger), each as {verdict, reason, when, utc, source}."""
    found = []
    for record in records:
        numerics = record.get("numerics") or {}
        if numerics.get("verdict") in numerics_ledger.VERDICTS:
            utc = (record.get("context") or {}).get("utc_time")
            found.append(
                {
                    "verdict": numerics["verdict"],
                    "reason": numerics.get("reason"),
                    "utc": utc,
                    "when": numerics_ledger.when(utc),
                    "source": "record",
                }
            )
    for entry in numerics_ledger.ledger_checks(records):
        if any(_same_check(entry, record) for record in records):
            continue  # the ledger's copy of a check these records hold themselves
        found.append(
            {
                "verdict": entry["verdict"],
                "reason": entry.get("reason"),
                "utc": entry.get("checked_utc"),
                "when": numerics_ledger.when(entry.get("checked_utc")),
                "source": "ledger",
            }
        )
    return sorted(found, key=lambda c: c["when"])


SAME_CHECK_SLACK_S = 120.0  # a ledger entry is kept this soon after its run's check ends, at the latest


def _same_check(entry: dict, record: dict) -> bool:
    """ENTRY is RECORD's own check, kept in the ledger: the same verdict, reason and worst quantity, kept
    between the run's start and its check's end (the run's start + numerics.run_s + time_s)."""
    numerics = record.get("numerics") or {}
    if (entry.get("verdict"), entry.get("reason"), entry.get("worst")) != (
        numerics.get("verdict"),
        numerics.get("reason"),
        numerics.get("worst"),
    ):
        return False
    start = numerics_ledger.when((record.get("context") or {}).get("utc_time"))
    took = sum(x for x in (numerics.get("run_s"), numerics.get("time_s")) if isinstance(x, (int, float)))
    return start - 1.0 <= numerics_ledger.when(entry.get("checked_utc")) <= start + took + SAME_CHECK_SLACK_S


def standing(records: list[dict]) -> dict:
    """Where these runs' configuration stands: `verdict` pass / fail (its latest decisive check) or None
    (never passed or failed), the check that decided it, how many checks were found and how many of them
    were inconclusive or errors, and the reduced precision the runs use (None: fp32 without TF32)."""
    checks = all_checks(records)
    decisive = [c for c in checks if c["verdict"] in DECISIVE]
    latest = decisive[-1] if decisive else None
    return {
        "verdict": latest["verdict"] if latest else None,
        "latest": latest,
        "checks": len(checks),
        "undecisive": sum(1 for c in checks if c["verdict"] not in DECISIVE),
        "reduced_precision": reduced_precision(records[0]) if records else None,
    }


def under_failed_numerics(records: list[dict]) -> bool:
    """The runs of one configuration stand under a failed numerics check: its latest check failed."""
    return bool(records) and standing(records)["verdict"] == "fail"


def reduced_precision(record: dict) -> str | None:
    """The precision a run computed in where it is less than fp32 (bf16, amp, hmp; fp32 with TF32 on),
    else None. A record without its precision is not judged."""
    config = record.get("config") or {}
    precision = config.get("precision")
    if precision not in (None, REFERENCE_PRECISION):
        return str(precision)
    if precision == REFERENCE_PRECISION and config.get("tf32"):
        return "fp32 with TF32"
    return None


def standing_note(records: list[dict], found: dict | None = None) -> str | None:
    """One line on the configuration's numerics where there is something to say: a failed latest check
    (and where it was found), or a reduced precision that no check passed. FOUND: `standing(records)`,
    where the caller has it."""
    found = found or standing(records)
    latest = found["latest"]
    if found["verdict"] == "fail":
        where = "in the numerics ledger" if latest["source"] == "ledger" else "in these records"
        reason = f": {latest['reason']}" if latest.get("reason") else ""
        return (
            f"its latest numerics check FAILED ({latest['utc']}, {where}){reason}: no run counts until a "
            "later check passes"
        )
    precision = found["reduced_precision"]
    if found["verdict"] is None and precision:
        if found["undecisive"]:
            return (
                f"{precision}: never passed a numerics check ({found['undecisive']} check(s) inconclusive "
                "or in error): it may train another model than fp32 (`suite run --check-numerics`)"
            )
        return (
            f"{precision}: never checked for numerics (no check in these records or in the numerics "
            "ledger): it may train another model than fp32 (`suite run --check-numerics`)"
        )
    return None
