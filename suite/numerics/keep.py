"""After a numerics check: its verdict goes into the numerics ledger (suite/run_record/numerics_ledger.py),
keyed by the configuration as the run's record will name it, so that `suite report` and `suite compare`
find it beside records written to any other folder."""

from __future__ import annotations

from suite.run_record import numerics_ledger


def as_recorded(plan) -> dict:
    """The fields of the run's record the ledger's key reads, taken from where the runner takes them
    (its config, the backend's device_info, suite.context's versions, the workload's provenance)."""
    from suite.context import software_versions

    return {
        "config": plan.record_config(),
        "device": plan.backend.device_info(),
        "context": software_versions(),
        "workload": plan.workload.provenance(),
    }


def keep(plan, result: dict) -> None:
    """Write RESULT's verdict to the ledger; where it cannot be written, say so in the result (the check's
    verdict and the measurement stand)."""
    try:
        result["ledger"] = numerics_ledger.remember(as_recorded(plan), result)
    except Exception as error:  # noqa: BLE001 - a cache that cannot be written must not lose the check
        result["ledger"] = None
        result["ledger_error"] = f"not kept in the numerics ledger: {type(error).__name__}: {error}"
