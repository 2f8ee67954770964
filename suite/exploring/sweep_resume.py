"""Which of a sweep's points its folder already holds (resume): a point's newest record whose outcome a
re-run would only repeat; for a point that runs a group (`repeat`, with `against`), its newest whole
group, taken as one outcome (`child.group_outcome`) from the records the group's runs wrote."""

from __future__ import annotations

import json

from suite.launching import child
from suite.launching.repeat import against_argv

# A point is a `grid.Point` (its config, and its group's `repeat` and `candidate_config`), read here
# without importing the grid engine, which imports this.

# Outcomes that a second run would only repeat: such a point is done. "error" points are run again.
DONE_STATUSES = ("ok", "diverged", "oom")


def matches(config: dict, record: dict) -> bool:
    from suite.spec import RunSpec

    defaults = json.loads(json.dumps(RunSpec().to_record_config()))
    recorded = record.get("config") or {}
    return all(recorded.get(key, defaults.get(key)) == value for key, value in config.items())


def _utc_time(record: dict) -> str:
    return str((record.get("context") or {}).get("utc_time") or "")


def find_record(point, records: list[dict]) -> dict | None:
    """The newest record of this point's configuration whose outcome a re-run would only repeat; for a
    point that runs a group, the outcome of its newest whole group (`recorded_group`)."""
    if point.repeat is not None:
        return recorded_group(point, records)
    done = [r for r in records if r.get("status") in DONE_STATUSES and matches(point.config, r)]
    return max(done, key=_utc_time, default=None)


def recorded_group(point, records: list[dict]) -> dict | None:
    """The outcome (`child.group_outcome`) of the newest group in RECORDS that is this point's: `repeat`
    runs of its configuration, each ended as a re-run would only repeat, and with `against`, as many of
    the other side's, interleaved with them. A group cut short is no outcome: the point runs again."""
    groups: dict[str, list[dict]] = {}
    for record in records:
        group = record.get("group") or {}
        if isinstance(group.get("id"), str):
            groups.setdefault(group["id"], []).append(record)

    def whole(group_id, config) -> list[dict] | None:
        runs = groups.get(group_id) or []
        if len(runs) != point.repeat or not all(
            r["group"].get("of") == point.repeat and r.get("status") in DONE_STATUSES and matches(config, r)
            for r in runs
        ):
            return None
        return runs

    found = []
    for group_id in groups:
        own = whole(group_id, point.config)
        if own is None:
            continue
        partner = own[0]["group"].get("interleaved_with")
        if (partner is None) != (point.candidate_config is None):
            continue
        other = whole(partner, point.candidate_config) if partner else []
        if other is None:
            continue
        found.append((max(_utc_time(r) for r in own), own, other))
    if not found:
        return None
    _, own, other = max(found, key=lambda item: item[0])
    return child.group_outcome([*own, *other], own)


def group_of(argv: list[str]) -> tuple[int | None, dict | None]:
    """For `suite run ARGV`: the runs of its group (--repeat N; None for a single run) and, with
    --against, the configuration of the group's other side (what its records will hold)."""
    from suite.run_options import run_parser

    args = run_parser().parse_args(argv)
    if args.repeat is None or not args.against:
        return args.repeat, None
    return args.repeat, child.resolved_config(argv + against_argv(args.against))
