"""What `fleet run` leaves in the campaign folder besides the runs' own records: a record for every
instance that ended without one, and the ledger of hours held and their cost (read back by
`suite fleet report`, suite/reporting/fleet_report.py).

Costs are hours held x the $/hour the estimate used, from the launch request (the instance may be billed
from there) to the end of its job or the moment the run stopped it; the managed-jobs controller from the
first spot instance's request to the end of the run, plus the idle minutes before it stops itself.
"""

from __future__ import annotations

import json
import os

from suite import run_record
from suite.fleet import sky_catalog
from suite.reporting import fleet_report

# Why an instance has no figure -> the error type of the record written for it (fleet_report.STOPPED).
STOP_ERRORS = {
    "timeout": "FleetTimeout",
    "over-budget": "FleetOverBudget",
    "torn-down": "FleetTornDown",
    "failed": "FleetFailed",
}


def has_records(out_dir: str, target) -> bool:
    folder = os.path.join(out_dir, target.instance_type)
    return os.path.isdir(folder) and any(True for _ in run_record.iter_record_paths([folder]))


def write_stop_record(
    campaign, target, out_dir: str, reason: str, why: str, cost_usd: float, held_hours: float = 0.0
) -> None:
    """An error record for an instance that ended without a figure (stopped by the caps, torn down with
    the run, or failed), through the suite's record writer, so the report shows the instance, why it has
    no figure, and what it cost."""
    from datetime import datetime, timezone

    from suite.fleet import sky_tasks

    backend = sky_tasks.backend_for(target)
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    record = run_record.new_record(
        run_record.new_run_id(campaign.workload, backend, now),
        {"started_utc": now, "fleet": campaign.name},
        {"workload": campaign.workload, "backend": backend, "instance": target.instance_type},
    )
    record["error"] = {
        "type": STOP_ERRORS[reason],
        "message": f"{reason}: {why}; cost about ${cost_usd:,.2f}",
    }
    record["fleet"] = {
        "status": fleet_report.STOPPED[STOP_ERRORS[reason]],
        "cost_usd": round(cost_usd, 6),
        "held_hours": round(held_hours, 6),
    }
    run_record.write_record_or_stop(record, os.path.join(out_dir, target.instance_type))


def write_ledger(campaign, out_dir: str, launches, end: float) -> None:
    """Add this run's attempts (and the controller's) to OUT/fleet-ledger.json, kept across resumes."""
    ledger = fleet_report.read_ledger(out_dir)
    ledger.update(campaign=campaign.name, prices=campaign.prices)
    for launch in launches:
        if launch.started is None:
            continue  # never requested: nothing was rented
        held = max(0.0, (launch.ended or end) - launch.started) / 3600
        entry = ledger["instances"].setdefault(launch.target.instance_type, {"attempts": []})
        entry["attempts"].append(
            {
                "outcome": launch.outcome or launch.stop_reason or "unknown",
                "spot": launch.target.spot,
                "usd_per_hour": launch.target.usd_per_hour,
                "held_hours": round(held, 6),
                "cost_usd": round(held * launch.target.usd_per_hour, 6),
            }
        )
    managed = [launch.started for launch in launches if launch.managed and launch.started is not None]
    controller = campaign.controller
    if managed and controller is not None and controller.usd_per_hour:
        held = max(0.0, end - min(managed)) / 3600 + sky_catalog.CONTROLLER_IDLE_MINUTES / 60
        entry = ledger.get("controller") or {"attempts": []}
        entry.update(instance_type=controller.instance_type, usd_per_hour=controller.usd_per_hour)
        entry["attempts"].append(
            {"held_hours": round(held, 6), "cost_usd": round(held * controller.usd_per_hour, 6)}
        )
        ledger["controller"] = entry
    os.makedirs(out_dir, exist_ok=True)
    run_record.write_text(
        fleet_report.ledger_path(out_dir), json.dumps(ledger, indent=2) + "\n", option="the fleet ledger"
    )


def progress_line(launches, now: float, spent_usd: float) -> str:
    """Where a running fleet is, said now and then while it waits: `2 of 3 instance(s) still running,
    20 min 00 s since the first request; about 1.2 h left by the plan's hours; $4.10 so far`."""
    from suite.data.progress import about, seconds

    running = [launch for launch in launches if launch.phase == "requested"]
    first = min((launch.started for launch in launches if launch.started is not None), default=now)
    left = max(
        (
            launch.started + launch.target.hours * 3600 - now
            for launch in running
            if launch.started is not None
        ),
        default=0.0,
    )
    plan = (
        f"{about(left)} left by the plan's hours"
        if left > 0
        else "past the plan's hours (each stops at its cap)"
    )
    return (
        f"{len(running)} of {len(launches)} instance(s) still running, {seconds(now - first)} since the first "
        f"request; {plan}; ${spent_usd:,.2f} so far"
    )
