"""`suite run --per-device N`: the whole instance measured, not extrapolated.

N independent copies of one run start at once, each in its own process and pinned to its own device
through the backend (`pin_envs`: CUDA_VISIBLE_DEVICES, HABANA_VISIBLE_MODULES, or a core group on the
CPU). They share nothing and never communicate: no collectives, so what the sum measures is what a
whole instance does with N separate jobs (milabench's `per_gpu` plan does the same). What they do share
is the host (its cores, PCIe, memory bandwidth, power), and that is exactly the part that linear
extrapolation from one device leaves out.

One record holds each copy's rate and their sum. The sum is honest only while the copies' timed windows
ran side by side: a copy that was timed while another was still warming up had the host to itself. The
overlap of the copies' timed spans is recorded, and a warning is added when it is short.
"""

from __future__ import annotations

import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from suite import context, limits, run_record, stats
from suite.inputs.errors import UserError
from suite.measurement import units
from suite.run_record.parts import DeviceCopy, Metrics
from suite.run_record.record import RunRecord, metrics_of

# Below this share of the shortest copy's timed span, the copies were not measured side by side.
MIN_OVERLAP = 0.8
UNIT_ABBREVIATIONS = {"tokens": "tok"}  # as the run's summary writes a language model's rate (tok/s)


def check(spec, copies: int) -> None:
    """Refuse what a per-device run cannot be, before anything starts."""
    if copies < 2:
        raise UserError(f"--per-device must be 2 or more copies, got {copies}")
    limits.check_processes(
        f"--per-device {copies}", copies, limits.TRAINING_PROCESS_BYTES, "training process"
    )
    if spec.launch.nproc is not None or (spec.launch.nnodes or 1) > 1:
        raise UserError(
            "--per-device runs independent copies, one per device, with no collectives: "
            "it cannot be combined with --nproc or --nnodes"
        )
    if spec.cost.instance:  # `--per-device 8 --instance p3.2xlarge` cannot be: that instance has one GPU
        from suite.prices.catalog import find_instance

        instance, _ = find_instance(spec.cost.instance, spec.cost.prices)
        if instance.accelerator_count and copies > instance.accelerator_count:
            raise UserError(
                f"--per-device {copies}: {instance.name} has {instance.accelerator_count} "
                f"accelerator(s) ({instance.accelerator})"
            )


def run_copies(what, envs: list[dict[str, str]], spawn=None, timeout_s: float | None = None) -> list:
    """Start one child per environment at once, each running WHAT (a child.Request, or `suite run`
    options as typed); wait for all. Returns (Child, end time) per copy."""
    if spawn is None:
        from suite.launching.child import spawn
    with tempfile.TemporaryDirectory(prefix="suite-per-device-") as scratch:

        def one(index: int):
            # The copies' own records stay out of the results folder: alone, each would read as a
            # one-device run, which it was not (it shared the host with the others).
            siblings = {context.SIBLINGS_VARIABLE: str(len(envs))}  # its host-load sample is its own run's
            child = spawn(what, os.path.join(scratch, str(index)), timeout_s, **envs[index], **siblings)
            return child, time.time()

        with ThreadPoolExecutor(max_workers=len(envs)) as pool:
            return list(pool.map(one, range(len(envs))))


def timed_overlap(copies: list[tuple[float, float]]) -> float | None:
    """Share of the shortest timed span during which every copy was in its timed windows.
    Each span is (end wall time, timed seconds): a copy's windows end just before its process does."""
    if not copies:
        return None
    starts = [end - timed for end, timed in copies]
    shortest = min(timed for _, timed in copies)
    if shortest <= 0:
        return None
    return max(0.0, min(end for end, _ in copies) - max(starts)) / shortest


def combine(config: dict, copies: list[tuple[dict, dict[str, str], float]], ctx: dict | None = None) -> dict:
    """One record from the copies' records: (record, pin environment, end wall time) each."""
    record = _record_of(config, [child for child, _, _ in copies], ctx or context.collect())
    devices = [_device_entry(index, child, env) for index, (child, env, _) in enumerate(copies)]
    for index, (child, _, _) in enumerate(copies):
        record["warnings"] += [f"copy {index}: {w}" for w in child.get("warnings") or []]
    record["per_device"] = {
        "copies": len(copies),
        "devices": [d.to_json() for d in devices],
        "images_per_second_sum": None,
    }
    failed = [d for d in devices if d.status != "ok" or d.images_per_second is None]
    if failed:
        _mark_failed(record, failed, len(copies))
    else:
        _mark_summed(record, devices, [end for _, _, end in copies])
    return record


def _record_of(config: dict, children: list[dict], ctx: dict) -> dict:
    """A new record of what one copy ran (on the CPU the backend recorded its group's thread count), as N
    copies, with the first copy's workload, device, data and backend choice."""
    count = len(children)
    first = children[0]
    config = {**first.get("config", config), "per_device": count, "accelerators_used": count}
    run_id = run_record.new_run_id(config["workload"], config["backend"], ctx["utc_time"])
    record = run_record.new_record(run_id, ctx, config)
    for section in ("workload", "device", "data", "backend_choice"):
        if first.get(section) is not None:
            record[section] = first[section]
    return record


def _device_entry(index: int, child: dict, env: dict[str, str]) -> DeviceCopy:
    """One copy as the record lists it: its pin, outcome and rates (a rate only where it succeeded)."""
    metrics = metrics_of(child)
    return DeviceCopy.with_every_field(
        copy=index,
        pin=env,
        run_id=child.get("run_id"),
        status=child.get("status"),
        error=child.get("error"),
        device=child.get("device"),
        images_per_second=metrics.images_per_second if child.get("status") == "ok" else None,
        window_images_per_second=metrics.window_images_per_second,
        time_timed_s=metrics.time_timed_s,
    )


def _mark_failed(record: dict, failed: list[DeviceCopy], count: int) -> None:
    """The record fails as its worst copy did (error, then oom, then diverged), naming that copy."""
    worst = next((s for s in ("error", "oom", "diverged") if any(d.status == s for d in failed)), "error")
    first_failed = next(d for d in failed if d.status == worst)
    error = first_failed.error or {}
    record["status"] = worst
    record["error"] = {
        "type": error.get("type", worst),
        "message": f"copy {first_failed.copy} of {count}: {error.get('message', 'no throughput')}",
    }


def _mark_summed(record: dict, devices: list[DeviceCopy], ends: list[float]) -> None:
    """The record's rate is the copies' sum, with how long their timed windows overlapped."""
    rates = [d.images_per_second for d in devices]
    total = sum(rates)
    overlap = timed_overlap([(end, d.time_timed_s) for end, d in zip(ends, devices)])
    record["status"] = "ok"
    record["per_device"].update(images_per_second_sum=total, timed_overlap=overlap)
    metrics = Metrics(
        images_per_second=total,
        images_per_hour=total * stats.SECONDS_PER_HOUR,
        images_per_second_per_device=rates,
        # (max − min) ÷ median across the copies: devices of one instance that are not equal
        per_device_spread=stats.relative_range(rates),
    ).to_json()
    record["metrics"] = {**metrics, **_in_the_workloads_unit(record, metrics, rates)}
    if overlap is not None and overlap < MIN_OVERLAP:
        record["warnings"].append(
            f"the copies' timed windows overlapped for only {overlap:.0%} of the shortest: part of the "
            "time a copy had the host to itself, so the sum may overstate the whole instance"
        )


def _in_the_workloads_unit(record: dict, metrics: dict, rates: list[float]) -> dict:
    """The sum and each copy's rate in the workload's unit where it is not images (a language model's
    tokens: `tokens_per_second`, `tokens_per_second_per_device`, …), as one run's record has them."""
    workload = record.get("workload") or {}
    unit = workload.get("unit")
    per_sample = workload.get(f"{unit}_per_sample")
    if unit in (None, units.IMAGES) or not per_sample:
        return {}
    figures = units.unit_metrics(metrics, unit, per_sample)
    figures[f"{unit}_per_second_per_device"] = [rate * per_sample for rate in rates]
    return figures


def _rate_text(record: RunRecord, samples: float, per: str = "s", decimals: int = 1) -> str:
    """A rate in samples per second (or hour) as the person reads it: images, or the workload's unit
    (a language model's tokens)."""
    unit = record.metrics.get("unit")
    per_sample = record.metrics.get(f"{unit}_per_sample")
    if not per_sample:
        return f"{samples:,.{decimals}f} img/{per}"
    return f"{samples * per_sample:,.{decimals}f} {UNIT_ABBREVIATIONS.get(unit, unit)}/{per}"


def render(record: dict, path: str) -> str:
    """What a person sees after a per-device run."""
    typed = RunRecord.of(record)
    per = typed.per_device
    lines = [f"suite: {typed.workload_name} on {per.copies} devices at once ({typed.backend})"]
    for d in per.entries:
        pin = " ".join(f"{k}={v}" for k, v in d.pin.items())
        rate = _rate_text(typed, d.images_per_second) if d.images_per_second is not None else d.status
        lines.append(f"  copy {d.copy}  {pin:<40} {rate}")
    if typed.ok:
        hourly = _rate_text(typed, typed.metrics.images_per_hour, per="h", decimals=0)
        lines.append(f"  sum     {_rate_text(typed, per.images_per_second_sum)} ({hourly})")
    else:
        lines.append(f"  FAILED  {typed.status}: {typed.error.message}")
    lines += [f"  warning  {w}" for w in typed.warnings]
    lines.append(f"  record   {path}")
    return "\n".join(lines)
