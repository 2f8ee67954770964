"""Loader-only measurement: batches pulled from a run's data path as the run would pull them, with no
model. Used by `suite loader` (per loader setting) and `suite diagnose` (the loader's bound)."""

from __future__ import annotations


def measure_setting(plan, batches: int, windows: int, warmup: int, to_device: bool) -> dict:
    """One loader setting -> one record (kind "loader"). A failure is recorded, not raised."""
    from suite import context, run_record
    from suite.data import open_data
    from suite.data.loader_bench import measure_loader
    from suite.errors import UserError

    config, backend = plan.config, plan.backend
    ctx = context.collect()
    record = run_record.new_record(
        run_record.new_run_id(f"loader-{plan.workload.name}", backend.name, ctx["utc_time"]),
        ctx,
        config.to_dict(),
    )
    record["kind"] = "loader"  # not a training run: no model, images/s of the loader alone
    record["loader"] = {
        "stage": "device" if to_device else "host",
        "batches_per_window": batches,
        "windows": windows,
        "warmup_batches": warmup,
    }
    backend.setup()
    source = open_data(config, plan.workload, backend, config.batch_size)  # UserError: bad input, raised
    record["data"] = source.describe()
    try:
        feed = source if to_device else source.host_batches()
        record["metrics"] = measure_loader(
            feed,
            batches=batches,
            windows=windows,
            warmup_batches=warmup,
            synchronize=backend.synchronize if to_device else None,
        )
        record["warnings"].extend(record["metrics"].pop("warnings"))
        # Windows too short to mean anything are grown before they count: record what ran.
        record["loader"]["batches_per_window"] = record["metrics"]["batches_per_window"]
        record["status"] = "ok"
    except UserError:
        raise
    except Exception as error:  # noqa: BLE001 - a failing setting is recorded; the others still run
        record["error"] = run_record.error_of(error)
    finally:
        source.close()
    record["device"] = backend.device_info()
    return record
