"""MFU for a record made before its peak was known: a run of fp32 with TF32 recorded no datasheet peak
(backends/peaks.py listed no TF32 figure then), so it counted no FLOPs and left MFU blank. The report
completes such a record as it reads it, in memory (the file stays as the run wrote it):

    peak               backends/peaks.py, from the record's device name, precision and TF32 setting
    FLOPs per sample   what the suite counted for the same model (the same workload section, model
                       overrides and torch) in another run of the report: the count depends on neither
                       the device nor the precision (measurement/flops.py)
    model TFLOP/s, MFU as a run derives them (run_record/derived.py)

and says so in `metrics.mfu_derived` and the device's `peak_tflops_note`. A record with no such run
beside it keeps its blank MFU.
"""

from __future__ import annotations

import json

from suite.backends import peaks
from suite.run_record.record import GatheredRecord, metrics_of

DERIVED = "derived by the report: the run recorded no peak"


def _model(record: dict) -> str:
    """What a FLOP count is of: the model (the workload's section, its overrides) under one torch."""
    return json.dumps(
        [
            record.get("workload") or {},
            (record.get("config") or {}).get("model_overrides") or {},
            (record.get("context") or {}).get("torch"),
        ],
        sort_keys=True,
        default=str,
    )


def _counted(records: list[dict]) -> dict[str, tuple[float, str]]:
    """FLOPs per sample by model, and the run that counted them."""
    found: dict[str, tuple[float, str]] = {}
    for record in records:
        flops = (record.get("metrics") or {}).get("flops_per_image")
        if isinstance(flops, (int, float)) and flops > 0 and record.get("workload"):
            found.setdefault(_model(record), (float(flops), str(record.get("run_id"))))
    return found


def _completed(record: dict, counted: dict[str, tuple[float, str]]) -> dict | None:
    """The record with its MFU derived, or None where it has one, or where it cannot be derived."""
    metrics, device, config = record.get("metrics") or {}, record.get("device") or {}, record["config"]
    rate = metrics_of(record).images_per_second  # samples per second: a token run's sequences
    if record.get("status") != "ok" or not rate:
        return None  # no throughput: no MFU
    if metrics.get("mfu") is not None or device.get("peak_tflops") is not None:
        return None
    if config.get("per_device") or _model(record) not in counted:
        return None  # a per-device record's rate is its copies' sum: one device's peak is not its basis
    peak, note = peaks.peak_tflops(
        str(device.get("name") or ""), str(config.get("precision")), bool(config.get("tf32"))
    )
    if peak is None:
        return None
    flops, counted_by = counted[_model(record)]
    tflops = flops * rate / (config.get("world_size") or 1) / 1e12
    return {
        **record,
        "device": {**device, "peak_tflops": peak, "peak_tflops_note": f"{note} ({DERIVED})"},
        "metrics": {
            **metrics,
            "flops_per_image": flops,
            "model_tflops_per_second": tflops,
            "mfu": tflops / peak,
            "mfu_peak_tflops": peak,
            "mfu_derived": f"{DERIVED}; the peak from the device's name, precision and TF32 setting, the "
            f"FLOPs per sample as run {counted_by} of the same model counted them",
        },
    }


def complete(records: list[dict]) -> list[dict]:
    """The records, those whose MFU can now be derived completed (a new record each; the rest as given)."""
    counted = _counted(records)
    done = []
    for record in records:
        completed = _completed(record, counted)
        done.append(record if completed is None else GatheredRecord(completed))
    return done
