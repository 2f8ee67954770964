"""The terminal summary of one run, rendered from its record."""

from __future__ import annotations

from suite.backends import declared
from suite.inputs import errors
from suite.rows import labels
from suite.run_record import STEPS_CHOSEN_BY
from suite.run_record.parts import Metrics
from suite.run_record.record import RunRecord


def human_bytes(count) -> str:
    if count is None:
        return "n/a"
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.2f} {unit}"
        value /= 1024
    return f"{value:.2f} TiB"


# Gauges worth a glance in the summary: (telemetry key, label, unit). The record keeps them all.
TELEMETRY_SHOWN = [("host_cpu_util_percent", "host CPU", "%"), *declared.gauges()]


def short_choice(backend_choice: str) -> str:
    """Why this backend, without the other backends' reasons ("first available of hpu, cuda, cpu")."""
    return backend_choice.split(" (")[0]


def render(record, path: str | None = None) -> str:
    """The terminal summary of RECORD (a RunRecord, or a record's checked mapping)."""
    typed = RunRecord.of(record)
    metrics = typed.metrics.to_json()
    lines = _setup_lines(typed) + _failure_lines(typed)
    # A diverged run's windows trained on NaN: its timings are no throughput, so none is shown.
    if typed.metrics.images_per_second is not None and typed.status != "diverged":
        lines += _timing_lines(metrics, typed.config) + _efficiency_lines(metrics)
    lines += _observed_lines(typed) + _outcome_lines(typed, metrics)
    if path:
        lines.append(f"  record       {path}")
    return "\n".join(lines)


def _setup_lines(record: RunRecord) -> list[str]:
    """What ran: workload, backend, device, precision, batch and data; the processes; why this backend."""
    config = record.config
    # As the record's JSON has them: a part built in code has no `keys` to say which fields it holds.
    data = record.data.to_json().get("source", config.get("data"))
    device = record.device.to_json().get("name", "?")
    lines = [
        f"{config['workload']} on {config['backend']} ({device}), "
        f"{labels.precision(config)}, batch {config['batch_size']}, {data} data"
    ]
    if (config.get("world_size") or 1) > 1:
        # Each rank's rate in the record's unit: its sequences × the tokens of one, for a language model.
        per_rank = ", ".join(
            f"{r.images_per_second * record.metrics.per_sample:,.1f}"
            for r in record.ranks
            if r.images_per_second
        )
        lines.append(
            f"  processes    world size {config['world_size']} ({config.get('nnodes') or 1} node(s) × "
            f"{config.get('nproc')}), global batch {config.get('global_batch_size')}"
            + (f"; per rank {per_rank} {record.metrics.rate_label}" if per_rank else "")
        )
    if record.backend_choice and record.backend_choice != "asked for":
        # The full reasons stay in the record; `suite list` prints them too.
        lines.append(
            f"  backend      {config['backend']}: {short_choice(record.backend_choice)} "
            "(`suite list` says why others are unavailable)"
        )
    return lines


def _failure_lines(record: RunRecord) -> list[str]:
    """A run that ran out of memory or failed: the error, and its hint."""
    if record.status not in ("oom", "error", "interrupted"):
        return []
    error = record.error.to_json() if record.error else {}
    head = "INTERRUPTED " if record.status == "interrupted" else f"FAILED       {record.status}:"
    lines = [f"  {head} {error.get('message', '')}"]
    if error.get("hint"):
        lines.append(f"  hint         {error['hint']}")
    return lines


def _timing_lines(metrics: dict, config: dict) -> list[str]:
    """The throughput, step time, how the windows were chosen, and the warm-up."""
    # What the windows held; a record made before that was kept has it in its config only.
    steps = metrics.get("steps_per_window") or config.get("steps_per_window")
    lines = (
        token_throughput_lines(metrics, steps)
        if metrics.get("unit") == "tokens"
        else image_throughput_lines(metrics, steps)
    )
    lines.append(f"  step time    {metrics['step_time_s'] * 1000:,.1f} ms")
    chosen = window_length_line(metrics)
    if chosen:
        lines.append(f"  windows      {chosen}")
    first = metrics.get("time_to_first_step_s")
    steps, drained = metrics["warmup_steps"], metrics.get("warmup_loader_drain_steps") or 0
    # the warm-up's time covers the steps that drained the batches the loader made while the model was built
    # (runner._warm_up), which the progress line counts too
    drain = f" + {drained} draining the loader's prefetched batches" if drained else ""
    lines.append(
        f"  warm-up      {steps} step{'' if steps == 1 else 's'}{drain} in {metrics['warmup_time_s']:.2f} s"
        + (f"; time to first step {first:.2f} s (from Python's start)" if first else "")
    )
    return lines


def _efficiency_lines(metrics: dict) -> list[str]:
    """MFU against the datasheet peak, and energy per token or per image, where the run measured them."""
    lines = []
    if metrics.get("mfu") is not None:
        per = (
            f"{metrics['flops_per_token'] / 1e9:.2f} GFLOP per token"
            if metrics.get("flops_per_token") is not None
            else f"{metrics['flops_per_image'] / 1e9:.2f} GFLOP per image"
        )
        lines.append(
            f"  MFU          {metrics['mfu']:.1%} of {metrics['mfu_peak_tflops']:g} TFLOP/s (datasheet peak; {per})"
        )
    if metrics.get("energy_per_token_j") is not None:
        lines.append(
            f"  energy       {metrics['energy_per_token_j']:.3g} J per token ({metrics['energy_method']})"
        )
    elif metrics.get("energy_per_image_j") is not None:
        lines.append(
            f"  energy       {metrics['energy_per_image_j']:.3f} J per image ({metrics['energy_method']})"
        )
    return lines


def _observed_lines(record: RunRecord) -> list[str]:
    """What was seen beside the timing: the telemetry gauges, the bottleneck probe, the peak memory."""
    lines = []
    gauges = record.telemetry.summary or {}
    shown = [
        f"{label} {gauges[key]['mean']:.0f}{unit}" for key, label, unit in TELEMETRY_SHOWN if gauges.get(key)
    ]
    if shown:
        lines.append("  telemetry    " + ", ".join(shown) + " (means over the timed windows)")
    diagnosis = record.diagnosis
    if not diagnosis.is_empty():
        lines.append(f"  bottleneck   {diagnosis.message}")
        lines += [f"               next: {line}" for line in diagnosis.suggestions or []]
    if record.memory.peak_memory_bytes:
        lines.append(f"  peak memory  {human_bytes(record.memory.peak_memory_bytes)}")
    return lines


def _outcome_lines(record: RunRecord, metrics: dict) -> list[str]:
    """How training ended (diverged, or its final losses), the numerics check, and the run's warnings."""
    lines = []
    if record.status == "diverged":
        lines.append(f"  DIVERGED     {record.error.message}")
    elif "final_loss" in metrics:
        losses = ["n/a" if v is None else f"{v:.3f}" for v in metrics["final_loss"]]
        names = metrics.get("final_loss_names")  # absent from records made before it was kept
        if isinstance(names, list) and len(names) == len(losses) and all(isinstance(n, str) for n in names):
            losses = [f"{loss} ({name})" for loss, name in zip(losses, names)]
        lines.append(f"  final loss   {', '.join(losses)}")
    if not record.numerics.is_empty():
        lines.append(f"  numerics     {numerics_line(record.numerics.to_json())}")
    lines += [f"  warning      {warning}" for warning in record.warnings]
    return lines


def _windows(metrics: dict, steps) -> str:
    return f"{len(metrics['window_time_s'])} windows × {steps} step{'s' if steps != 1 else ''}"


def image_throughput_lines(metrics: dict, steps) -> list[str]:
    rate = Metrics.from_json(metrics)
    return [
        f"  throughput   {rate.throughput:,.1f} img/s median "
        f"± {rate.throughput_stdev:,.1f} σ "
        f"({rate.throughput_min:,.1f} … {rate.throughput_max:,.1f}, "
        f"cv {rate.throughput_cv:.1%}; {_windows(metrics, steps)})",
        f"               {rate.throughput_per_hour:,.0f} img/h",
    ]


def token_throughput_lines(metrics: dict, steps) -> list[str]:
    """A token workload (suite/measurement/units.py): tokens/s first, the sequences it is made of after."""
    rate = Metrics.from_json(metrics)  # in tokens: the figures units.unit_metrics stored beside the samples'
    return [
        f"  throughput   {rate.throughput:,.0f} tok/s median "
        f"± {rate.throughput_stdev:,.0f} σ "
        f"({rate.throughput_min:,.0f} … {rate.throughput_max:,.0f}, "
        f"cv {rate.throughput_cv:.1%}; {_windows(metrics, steps)})",
        f"               {rate.throughput_per_hour:,.0f} tok/h; "
        f"{rate.images_per_second:,.2f} sequences/s of {rate.per_sample:,} tokens",
    ]


def _seconds(value: float) -> str:
    return f"{value:.3g} s" if value >= 1 else f"{value * 1000:.3g} ms"


def window_length_line(metrics: dict) -> str | None:
    """How the steps per window were chosen (suite/measurement/window_length.py), e.g. `120 steps each,
    grown from 10 so a window lasts >= 1 s (a warm-up step took 8.31 ms)`; None for a record without it."""
    given, schedule, warmup_timing, time_box = STEPS_CHOSEN_BY
    how, steps = metrics.get("steps_per_window_chosen_by"), metrics.get("steps_per_window")
    if how not in STEPS_CHOSEN_BY or not steps:
        return None
    if how == given:
        return f"{steps} steps each, as given by --steps"
    if how == schedule:
        return f"{steps} steps each, the backend's default"
    default, step = metrics.get("steps_per_window_default"), metrics.get("warmup_step_time_s")
    if how == time_box:
        windows = len(metrics.get("window_time_s") or ())
        took = f"a warm-up step took {_seconds(step)}" if step is not None else "no warm-up step was timed"
        return (
            f"time-boxed: {windows} × {steps} step{'s' if steps != 1 else ''} fitted to about "
            f"{metrics.get('window_budget_s') or 0:g} s ({took}); --steps or --windows fix them"
        )
    min_window_s = metrics.get("min_window_s") or 0
    if step is None:
        return f"{steps} steps each, the backend's default: no warm-up step was timed to grow them"
    took = f" (a warm-up step took {_seconds(step)})"
    if steps == default:
        return f"{steps} steps each, the backend's default: already a window of >= {min_window_s:g} s{took}"
    if steps == metrics.get("steps_per_window_max") and steps * step < min_window_s:
        return f"{steps} steps each, grown from {default} to the limit: >= {min_window_s:g} s would need more{took}"
    return f"{steps} steps each, grown from {default} so a window lasts >= {min_window_s:g} s{took}"


def _number(value) -> str:
    return "not finite" if value is None or value != value or abs(value) == float("inf") else f"{value:.3g}"


def numerics_line(numerics: dict) -> str:
    """`pass: worst drift generator.norm, deviation 0.00674 within 0.0838 (3 × run-to-run noise; 10
    quantities); 8 steps vs cpu fp32 (TF32 off); check 6.2 s, 22% of the run's 28.5 s`"""
    if numerics.get("verdict") == "error":
        line = f"error: {numerics.get('reason')}"
    elif not numerics.get("compared"):  # the reference's own configuration: trained once, nothing compared
        line = f"{numerics['verdict']}: {numerics['steps']} steps of {numerics['reference']}, trained once"
    else:
        worst = next(row for row in numerics["compared"] if row["name"] == numerics["worst"])
        # A written record holds a non-finite number as null (suite.run_record.write): read back, it is None.
        deviation, tolerance = worst["deviation"], worst["tolerance"]
        inside = deviation is not None and tolerance is not None and deviation <= tolerance
        line = (
            f"{numerics['verdict']}: worst {worst['name']}, deviation {_number(deviation)} "
            f"{'within' if inside else 'over'} {_number(tolerance)} "
            f"({numerics['k']:g} × run-to-run noise; {len(numerics['compared'])} quantities); "
            f"{numerics['steps']} steps vs {numerics['reference']}"
        )
    if numerics.get("grad_scaler"):
        scaler = numerics["grad_scaler"]
        line += (
            f"; GradScaler final scale {scaler['final_scale']:g}, {scaler['skipped_steps']} skipped step(s)"
        )
    if numerics.get("time_s") is not None:
        line += f"; check {numerics['time_s']:.1f} s"
        if numerics.get("run_s"):
            line += f", {numerics['time_s'] / numerics['run_s']:.0%} of the run's {numerics['run_s']:.1f} s"
    if numerics.get("reason") and numerics.get("verdict") != "error":
        line += f" — {numerics['reason']}"
    return line


def show(record: dict, path: str | None, as_json: bool = False) -> None:
    """Print a written record: the whole record as JSON, or the summary naming its file. A record that
    could not be written anywhere (path None) is printed as JSON in any case, so it is not lost."""
    import sys

    from suite import run_record

    if as_json or path is None:
        sys.stdout.write(run_record.record_json(record))
    if not as_json:
        print(
            render(record, errors.shown_path(path) if path else "not written: the JSON above is the record")
        )
