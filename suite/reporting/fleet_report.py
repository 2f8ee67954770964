"""`suite fleet report`: a fleet folder's cost table, one row per instance, with its status and its cost.

A fleet folder (`suite fleet run --out OUT`) holds each instance's records in OUT/TYPE/, and the ledger
OUT/fleet-ledger.json that `fleet run` keeps: per instance, every attempt's hours held and what they cost
(hours x $/hour from the launch request to the end of its job), and the managed-jobs controller's.

The table is the report's own (gather -> rows -> render, suite/reporting/), with two columns more: the
instance's status and what getting its figure cost. Status comes from the records, which every ending
leaves (the run's own, or the one `fleet run` writes for an instance it stopped or that failed):

- measured: a finished (`ok`) record;
- timed out / over budget / torn down: stopped by the run's deadline, its budget, or the teardown of the
  whole run (Ctrl-C, an error);
- failed: anything else (the launch failed, the benchmark failed, no record came back).

An instance tried more than once (a resumed campaign) is one row: its figure if one was measured, and the
cost of every attempt.

A fleet rents whole instances, so what getting a figure cost is the whole instance's hours; a row's images
per $ are `suite report`'s all the same, for the accelerators its run used (what a buyer who fills the
instance, or rents an instance of that size, pays per image), and the whole instance's figure beside it is
what this fleet got for what it paid. The last line says so where a run used part of its instance.
"""

from __future__ import annotations

import json
import os

from suite.inputs import errors
from suite.inputs.errors import UserError
from suite.rows.row_prices import WHOLE

LEDGER = "fleet-ledger.json"
LEDGER_SCHEMA = "suite.fleet-ledger"  # a `suite.` schema: run-record readers skip the file silently
# The error types of the records `fleet run` writes for an instance without a figure, and what they mean.
STOPPED = {
    "FleetTimeout": "timed out",
    "FleetOverBudget": "over budget",
    "FleetTornDown": "torn down",
    "FleetFailed": "failed",
}
STATUS_ORDER = ("measured", "timed out", "over budget", "torn down", "failed")


def ledger_path(folder: str) -> str:
    return os.path.join(folder, LEDGER)


def read_ledger(folder: str) -> dict:
    """The folder's ledger, or an empty one (a folder of records from elsewhere has none)."""
    path = ledger_path(folder)
    if not os.path.isfile(path):
        return {"schema": LEDGER_SCHEMA, "instances": {}, "controller": None}
    from suite.inputs.files import NotAFile, read_text

    try:
        data = json.loads(read_text(path))  # bounded: a FIFO or /dev/zero named like a ledger cannot hang it
    except (NotAFile, ValueError, RecursionError) as error:
        errors.warn(f"{path} cannot be read ({error}); costs are left out")
        data = {}
    if not isinstance(data, dict) or data.get("schema") != LEDGER_SCHEMA:
        return {"schema": LEDGER_SCHEMA, "instances": {}, "controller": None}
    data.setdefault("instances", {})
    return data


def status_of(records: list[dict]) -> str:
    """An instance's status from its records (see the module's docstring)."""
    if any(r.get("status") == "ok" for r in records):
        return "measured"
    types = [((r.get("error") or {}).get("type")) for r in records]
    for error_type in ("FleetOverBudget", "FleetTimeout", "FleetTornDown"):
        if error_type in types:
            return STOPPED[error_type]
    kinds = sorted({r.get("status") for r in records if r.get("status") in ("oom", "diverged")})
    return f"failed ({', '.join(kinds)})" if kinds else "failed"


def attempts_cost(entry: dict | None, records: list[dict]) -> tuple[float | None, float | None]:
    """(hours held, $) over every attempt: from the ledger; without one, what the stop records say."""
    attempts = (entry or {}).get("attempts") or []
    if attempts:
        return (
            sum(float(a.get("held_hours") or 0) for a in attempts),
            sum(float(a.get("cost_usd") or 0) for a in attempts),
        )
    said = [r.get("fleet") for r in records if isinstance(r.get("fleet"), dict)]
    if said:
        return (
            sum(float(s.get("held_hours") or 0) for s in said),
            sum(float(s.get("cost_usd") or 0) for s in said),
        )
    return None, None


def fleet_rows(folder: str, prices: str | None = None):
    """(rows, catalog, ledger): the report's rows, one per instance, each with `fleet_status`,
    `fleet_hours` and `fleet_cost_usd`."""
    from suite.prices.catalog import load_catalog
    from suite.rows.build import DEFAULT_DATASET_SIZE, build_rows
    from suite.rows.gather import load_records

    if not os.path.isdir(folder):
        raise UserError(f"fleet folder {folder!r} does not exist (give the --out of `suite fleet run`)")
    ledger = read_ledger(folder)
    records = [record for _, record in load_records([folder])]
    catalog = load_catalog(prices or ledger.get("prices"))
    by_instance: dict[str, list[dict]] = {}
    for record in records:
        by_instance.setdefault((record.get("config") or {}).get("instance") or "", []).append(record)
    rows = []
    for instance, group in by_instance.items():
        status = status_of(group)
        # The figure, if there is one; else the instance's latest ending.
        shown = [r for r in group if r.get("status") == "ok"] or [group[-1]]
        instance_rows = build_rows(shown, catalog, DEFAULT_DATASET_SIZE, False)
        hours, cost = attempts_cost(ledger["instances"].get(instance), group)
        for n, row in enumerate(instance_rows):
            row["fleet_status"] = status
            row["fleet_hours"] = hours if n == 0 else None
            row["fleet_cost_usd"] = cost if n == 0 else None  # once per instance, never counted twice
            if len(group) > len(shown) and status == "measured":
                row["notes"].append(f"after {len(group) - len(shown)} earlier attempt(s), costed here")
        rows += instance_rows
    rows.sort(key=lambda r: (STATUS_ORDER.index(r["fleet_status"].split(" (")[0]), str(r["instance"])))
    return rows, catalog, ledger


def summary(rows: list[dict], ledger: dict) -> str:
    """The fleet's count by status and its total cost, instances and controller."""
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["fleet_status"]] = counts.get(row["fleet_status"], 0) + 1
    costs = [row["fleet_cost_usd"] for row in rows if row["fleet_cost_usd"] is not None]
    controller = ledger.get("controller") or {}
    controller_cost = sum(float(a.get("cost_usd") or 0) for a in controller.get("attempts") or [])
    parts = ", ".join(f"{n} {status}" for status, n in counts.items())
    line = f"Fleet: {len(rows)} instance row(s): {parts}."
    if costs:
        line += f" Cost: ${sum(costs) + controller_cost:,.2f} (instances ${sum(costs):,.2f}"
        if controller.get("attempts"):
            line += (
                f" + managed-jobs controller {controller.get('instance_type', '')} ${controller_cost:,.2f}"
            )
        line += "), hours held x $/hour from each launch request to the end of its job."
    else:
        line += f" Cost: unknown (no {LEDGER} in this folder, and no stopped instance's record says)."
    if any(row.get("price_basis") not in (None, WHOLE) for row in rows):
        line += (
            " Each instance was rented whole: its cost is the whole instance's, while img/$ counts the "
            "accelerators a run used; what the fleet got per $ it paid is the whole instance's figure "
            "(--wide, CSV and JSON: instance_images_per_usd)."
        )
    return line


def render_fleet(folder: str, fmt: str = "md", prices: str | None = None) -> str:
    from suite.reporting.render import render

    rows, catalog, ledger = fleet_rows(folder, prices)
    if not rows:
        raise UserError(f"no records in {folder!r}: nothing to report (was `suite fleet run` run there?)")
    text = render(rows, catalog, fmt)
    if fmt == "md":
        text = text.rstrip("\n") + "\n\n" + summary(rows, ledger) + "\n"
    return text
