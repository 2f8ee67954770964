"""`suite run --repeat N`: N runs of one configuration, each in a fresh process, recorded as a group.

Windows of one process share its thread placement, memory layout and warm caches, so they vary less
than separate runs do; a test of "is B faster than A" needs the run-to-run spread, and so run-level
samples (`suite compare` uses one per run). Each record carries {"group": {"id", "index", "of"}}.
"""

from __future__ import annotations

import statistics
import uuid

from suite import run_record


def new_group_id() -> str:
    return uuid.uuid4().hex[:12]


def run_group(argv: list[str], config: dict, out_dir: str, repeats: int, run=None, log=None) -> list[dict]:
    """Run `suite run ARGV` REPEATS times, one after another, each in a fresh process; every record
    (a failed run's too) gets the group and is written to OUT_DIR."""
    from suite.orchestration import child

    run = run or child.run
    log = log or child.log
    group = new_group_id()
    records = []
    for index in range(1, repeats + 1):
        record = run(argv, config, out_dir)
        # The child wrote its record already; written again (same run id, same file) with its group.
        record["group"] = {"id": group, "index": index, "of": repeats}
        run_record.write_record(record, out_dir)
        log(f"suite: run {index}/{repeats} of group {group}: {child.describe(record)}")
        records.append(record)
    return records


def summary(records: list[dict]) -> str:
    """The group's run-level throughputs and their median, and what to do with them."""
    rates = [
        r["metrics"]["images_per_second"]
        for r in records
        if r.get("status") == "ok" and (r.get("metrics") or {}).get("images_per_second")
    ]
    group = records[0]["group"]["id"] if records else "?"
    if not rates:
        return f"suite: group {group}: no run finished"
    text = ", ".join(f"{rate:,.1f}" for rate in rates)
    line = (
        f"suite: group {group}: {len(rates)} of {len(records)} run(s) ok, "
        f"median {statistics.median(rates):,.1f} img/s (runs: {text})"
    )
    return line + "\n  compare two groups: suite compare BASELINE_FOLDER CANDIDATE_FOLDER"
