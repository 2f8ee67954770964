"""`suite run --repeat N`: N runs of one configuration, each in a fresh process, recorded as a group;
with `--against OPTION=VALUE`, N runs of each of two configurations, interleaved A B B A A B … .

Interleaved, because a host's load drifts (another program starts, the CPU warms and slows its clock):
all of A and then all of B puts any drift between the two sides, where a comparison reads it as a
difference of speed; A B B A spreads it over both (a linear drift cancels in each A B B A quartet).
Windows of one process share its thread placement, memory layout and warm caches, so they vary less
than separate runs do; a test of "is B faster than A" needs the run-to-run spread, and so run-level
samples (`suite compare` uses one per run). Each record carries {"group": {"id", "index", "of"}}.
"""

from __future__ import annotations

import statistics
import uuid

from suite import run_record
from suite.run_record.record import metrics_of


def new_group_id() -> str:
    return uuid.uuid4().hex[:12]


def run_group(what, config: dict, out_dir: str, repeats: int, run=None, log=None) -> list[dict]:
    """Run WHAT (a child.Request, or `suite run` options as typed) REPEATS times, one after another, each
    in a fresh process; every record (a failed run's too) gets the group and is written to OUT_DIR."""
    from suite.launching import child

    run = run or child.run
    log = log or child.log
    group = new_group_id()
    records = []
    for index in range(1, repeats + 1):
        record = run(what, config, out_dir)
        # The child wrote its record already; written again (same run id, same file) with its group. A
        # folder that cannot take it stops the group, the record kept in the fallback (exit 3).
        record["group"] = {"id": group, "index": index, "of": repeats}
        run_record.write_record_or_stop(record, out_dir)
        log(f"suite: run {index}/{repeats} of group {group}: {child.describe(record)}")
        records.append(record)
    return records


def interleaved_order(repeats: int) -> list[int]:
    """The side (0: baseline, 1: candidate) of each of 2 × REPEATS runs: A B, then B A, and so on."""
    return [side for index in range(repeats) for side in ((0, 1) if index % 2 == 0 else (1, 0))]


def against_argv(options: list[str]) -> list[str]:
    """`--against batch-size=16` -> the options that make the candidate, as typed (`--batch-size 16`).
    They follow the baseline's own, so that a one-value option replaces it."""
    from suite.inputs.errors import UserError
    from suite.run_options import run_argv

    parsed = {}
    for text in options:
        name, equals, value = text.partition("=")
        name = name.strip().lstrip("-")
        if not equals or not name or name in ("repeat", "against", "out", "json"):
            raise UserError(
                f"--against {text!r} must be OPTION=VALUE with a `suite run` option (e.g. batch-size=16)"
            )
        parsed[name] = value
    return run_argv(parsed)


def run_interleaved(
    sides: list[tuple[list[str], dict, str]], repeats: int, run=None, log=None
) -> tuple[list[dict], list[dict]]:
    """REPEATS runs of each of two configurations ((request, config, out_dir) each: a child.Request, or
    `suite run` options as typed), interleaved A B B A …,
    each in a fresh process; each side is a group of its own, and each record says which group it was
    interleaved with and where in the sequence it ran."""
    from suite.launching import child

    run = run or child.run
    log = log or child.log
    groups = [new_group_id(), new_group_id()]
    records: tuple[list[dict], list[dict]] = ([], [])
    for position, side in enumerate(interleaved_order(repeats), start=1):
        what, config, out_dir = sides[side]
        record = run(what, config, out_dir)
        record["group"] = {
            "id": groups[side],
            "index": len(records[side]) + 1,
            "of": repeats,
            "interleaved_with": groups[1 - side],
            "position": position,
        }
        run_record.write_record_or_stop(record, out_dir)  # as in run_group: exit 3, the fallback named
        name = ("baseline", "candidate")[side]
        log(
            f"suite: run {position}/{2 * repeats} ({name} {len(records[side]) + 1}/{repeats}): {child.describe(record)}"
        )
        records[side].append(record)
    return records


def summary(records: list[dict]) -> str:
    """The group's run-level throughputs and their median, and what to do with them."""
    # Each run's throughput in its unit (tokens/s for a language model: its sequences/s said img/s).
    ok = [metrics_of(r) for r in records if r.get("status") == "ok" and metrics_of(r).images_per_second]
    rates = [metrics.throughput for metrics in ok]
    group = records[0]["group"]["id"] if records else "?"
    if not rates:
        return f"suite: group {group}: no run finished"
    text = ", ".join(f"{rate:,.1f}" for rate in rates)
    line = (
        f"suite: group {group}: {len(rates)} of {len(records)} run(s) ok, "
        f"median {statistics.median(rates):,.1f} {ok[0].rate_label} (runs: {text})"
    )
    return line + "\n  compare two groups: suite compare BASELINE_FOLDER CANDIDATE_FOLDER"
