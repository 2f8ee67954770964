"""A configuration whose numerics check failed stays marked until a later check of it passes.

A failed check says the precision trains another model; a run of the same configuration made afterwards
without the check is the same precision on the same model, so it is no evidence that it now trains the
same one. The configuration's standing is its latest check's verdict (by the records' start times);
`suite report` and `suite compare` leave every run of a configuration under a failed check out of the
ranking, the prices and the samples, and say so.
"""

from __future__ import annotations


def _checked(record: dict) -> str | None:
    verdict = (record.get("numerics") or {}).get("verdict")
    return verdict if verdict in ("pass", "fail") else None


def latest_check(records: list[dict]) -> dict | None:
    """The newest record of these runs that carries a pass or fail numerics verdict (None: never checked)."""
    checked = [r for r in records if _checked(r)]
    return (
        max(checked, key=lambda r: str((r.get("context") or {}).get("utc_time") or "")) if checked else None
    )


def under_failed_numerics(records: list[dict]) -> bool:
    """The runs of one configuration stand under a failed numerics check: its latest check failed."""
    latest = latest_check(records)
    return latest is not None and _checked(latest) == "fail"
