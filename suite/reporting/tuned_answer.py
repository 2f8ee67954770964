"""The opening answer's word on tuning (suite/reporting/answer.py calls it per workload): where any device
has a `suite tune` best, the devices compared at their tuned best, and a device that has only its
untuned runs said to be so, with the command that would find its best. Rows are named by their number in
the table; each row's part in a search is `row["tuned"]` (suite/reporting/tuned.py)."""

from __future__ import annotations

from suite.reporting.tuned import BEST


def _rate(row: dict) -> float | None:
    """The row's median rate per second in its unit (images, or a language model's tokens)."""
    per_hour = row.get("images_per_hour")
    if per_hour is None:
        return None
    return per_hour / 3600 * (row.get("units_per_sample") or 1)


def _label(row: dict) -> str:
    return "tok/s" if row.get("unit") == "tokens" else "img/s"


def _device(row: dict) -> str:
    return f"{row.get('backend')} ({row.get('device') or '?'})"


def sentences(rows: list[dict], name: dict[int, str]) -> list[str]:
    """For one workload's ROWS (NAME: each row's name in its table, `#3` or `T1`, by id): nothing where no
    row is a tuned best; else each device at its tuned best, compared, and those with only untuned runs
    named."""
    measured = [r for r in rows if _rate(r) is not None and not r.get("published")]
    if not any(r.get("tuned") == BEST for r in measured):
        return []
    devices: dict[str, list[dict]] = {}
    for row in measured:
        devices.setdefault(_device(row), []).append(row)
    tuned, untuned = {}, {}
    for device, own in devices.items():
        best = [r for r in own if r.get("tuned") == BEST]
        if best:
            tuned[device] = max(best, key=_rate)
        else:
            untuned[device] = max(own, key=_rate)
    ranked = sorted(tuned.items(), key=lambda item: -_rate(item[1]))
    shown = "; ".join(f"{device} {name[id(row)]} {_rate(row):,.4g} {_label(row)}" for device, row in ranked)
    said = [f"At each device's tuned best (`suite tune`): {shown}" + _lead(ranked) + "."]
    for device, row in untuned.items():
        said.append(
            f"{device} has only its untuned runs (the fastest {name[id(row)]}, {_rate(row):,.4g} {_label(row)}): "
            f"compared at its best only after `suite tune --backend {row.get('backend')} --workload "
            f"{str(row.get('model_run')).split(' (modified')[0]}` on it."
        )
    return said


def _lead(ranked: list[tuple[str, dict]]) -> str:
    if len(ranked) < 2:
        return ""
    (first, top), (second, following) = ranked[0], ranked[1]
    return f"; {first} is ×{_rate(top) / _rate(following):.2f} {second} at their best"
