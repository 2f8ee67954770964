"""Loader-only measurement: batches pulled from a run's data path as the run would pull them, with no
model. Used by `suite loader` (per loader setting) and `suite diagnose` (the loader's bound, in a fresh
process of its own like the diagnosis's other arms: `python -m suite.measurement.loader_only`)."""

from __future__ import annotations

import json
import subprocess
import sys


def measure_setting(plan, batches: int, windows: int, warmup: int, to_device: bool) -> dict:
    """One loader setting -> one record (kind "loader"). A failure is recorded, not raised."""
    from suite import context, run_record
    from suite.data import open_data
    from suite.data.loader_bench import measure_loader
    from suite.inputs.errors import UserError
    from suite.measurement import units

    spec, backend = plan.spec, plan.backend
    ctx = context.collect()
    record = run_record.new_record(
        run_record.new_run_id(f"loader-{plan.workload.name}", backend.name, ctx["utc_time"]),
        ctx,
        plan.record_config(),
    )
    record["kind"] = "loader"  # not a training run: no model, images/s of the loader alone
    record["loader"] = {
        "stage": "device" if to_device else "host",
        "batches_per_window": batches,
        "windows": windows,
        "warmup_batches": warmup,
    }
    backend.setup()
    source = open_data(spec, plan.workload, backend, spec.workload.batch_size)  # UserError: bad input, raised
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
        # A token workload's sequences counted in tokens too, as a training run's record counts them.
        record["metrics"].update(
            units.unit_metrics(record["metrics"], plan.workload.unit, plan.workload.units_per_sample())
        )
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


def measure_in_fresh_process(config: dict, batches: int, windows: int, warmup: int, origin: str) -> dict:
    """measure_setting (host batches) for the record config CONFIG (flat fields) in a fresh Python, as a run's other
    measurements are taken: one process's state (its imports, its allocator, the host's spell while it ran)
    is one sample. The child ends with this process; one that leaves no record gets a failure record."""
    from suite import context, limits, run_record

    request = {"config": config, "batches": batches, "windows": windows, "warmup": warmup}
    child = subprocess.Popen(
        [sys.executable, "-m", "suite.measurement.loader_only"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=context.child_env(**{run_record.ORIGIN_ENV: origin}),
        preexec_fn=limits.end_with_parent(),  # SIGTERM when this process ends, however it ends
    )
    try:
        stdout, stderr = child.communicate(json.dumps(request))
    except BaseException:  # Ctrl-C: the child stops with this command
        child.kill()
        child.communicate()
        raise
    try:
        record = json.loads(stdout)
    except json.JSONDecodeError:
        record = None
    if isinstance(record, dict) and record.get("schema") == run_record.SCHEMA:
        return record
    last = [line for line in stderr.strip().splitlines() if line.strip()]
    ctx = context.collect()
    run_id = run_record.new_run_id(
        f"loader-{config.get('workload')}", config.get("backend", "?"), ctx["utc_time"]
    )
    record = run_record.new_record(run_id, ctx, config)
    record["kind"] = "loader"
    record["origin"] = origin
    message = last[-1] if last else f"exited with status {child.returncode} and no record"
    record["error"] = {"type": "ChildFailed", "message": message, "exit_status": child.returncode}
    return record


def _main() -> int:
    """The fresh process: a request on stdin, the record on stdout."""
    from suite.measurement.runner import plan_run
    from suite.spec import RunSpec

    request = json.load(sys.stdin)
    plan = plan_run(RunSpec.from_record_config(request["config"]))
    record = measure_setting(
        plan,
        batches=request["batches"],
        windows=request["windows"],
        warmup=request["warmup"],
        to_device=False,
    )
    json.dump(record, sys.stdout, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(_main())
