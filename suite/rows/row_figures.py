"""A row's figures beside its rate: MFU, energy per image, mean device power, peak memory and time to first
step. Each is the median over the row's runs in the median that record it, as the rate is the median of
theirs; a run records them as `suite run` derives them (measurement/runner.py, run_record/derived.py):

    MFU                  model FLOP/s per device ÷ the datasheet's dense peak for the precision
    energy per image (J) the device's energy counter over the timed windows ÷ the images this device
                         trained in them (or its mean sampled power × the windows' time, where it has
                         no counter)
    mean power (W)       that energy ÷ the windows' time: the energy's own method, so the two agree
    peak memory (bytes)  the device allocator's peak over the run
    time to first step   process start → the first step done (imports, data open, compile)

A run that also checked numerics trained the check's own models on the device after its windows, so its
peak memory is the check's too: where a row has runs without a check, its peak memory is theirs (a note
says so); where every run had one, the row's note says that its peak includes the check.
"""

from __future__ import annotations

from suite import stats

FIGURES = (
    "mfu",
    "model_tflops_per_second",
    "energy_per_image_j",
    "mean_power_w",
    "peak_memory_bytes",
    "time_to_first_step_s",
)
DEFINITION = (
    "MFU, energy per image (per token), mean power, peak memory and first step: each the median over the "
    "row's runs in the median that record it, as the throughput is. MFU: model FLOP/s per device ÷ the "
    "datasheet's dense peak for the precision; energy: the device's energy counter over the timed windows "
    "÷ the images (tokens) it trained in them (its mean sampled power × the windows' time where it has no "
    "counter); mean power: that energy ÷ the windows' time, per device; peak memory: the device "
    "allocator's peak over the run; first step: process start to the first step done."
)
CHECK_LEFT_OUT = (
    "peak memory: of the {kept} run(s) without a numerics check (a check trains its own models on the "
    "device after the windows, so its run's peak is the check's too)"
)
CHECK_INCLUDED = "peak memory includes a numerics check's training (every run of the row checked numerics)"


def none_measured() -> dict:
    """A row of no runs (a published figure's): the figures beside the rate, the runs' days, commits and
    hosts and their warnings by what they concern, all empty, so that every row has the same fields."""
    return {
        **dict.fromkeys(FIGURES),
        "run_days": [],
        "run_commits": [],
        "run_hosts": [],
        "rate_warnings": [],
        "other_warnings": {},
    }


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def mean_power_w(metrics: dict, world_size: int) -> float | None:
    """The device's mean power over the timed windows: its energy per image × its images ÷ the time."""
    energy, images, seconds = (
        _number(metrics.get(name)) for name in ("energy_per_image_j", "images_timed", "time_timed_s")
    )
    if energy is None or not images or not seconds:
        return None
    return energy * images / max(world_size, 1) / seconds


def run_figures(record: dict) -> dict[str, float | None]:
    """One run's figures beside its rate (None where it has none)."""
    metrics, memory = record.get("metrics") or {}, record.get("memory") or {}
    world_size = int(_number((record.get("config") or {}).get("world_size")) or 1)
    return {
        "mfu": _number(metrics.get("mfu")),
        "model_tflops_per_second": _number(metrics.get("model_tflops_per_second")),
        "energy_per_image_j": _number(metrics.get("energy_per_image_j")),
        "mean_power_w": mean_power_w(metrics, world_size),
        "peak_memory_bytes": _number(memory.get("peak_memory_bytes")),
        "time_to_first_step_s": _number(metrics.get("time_to_first_step_s")),
    }


def derived_mfu_note(runs: list[dict]) -> str | None:
    """Where the report derived a run's MFU as it read it (efficiency.py: the run recorded no peak), the row
    says so: the figure is the report's arithmetic on the datasheet, not the run's own."""
    derived = [str((r.get("metrics") or {}).get("mfu_derived")) for r in runs]
    derived = [text for text in derived if text != "None"]
    if not derived:
        return None
    return f"MFU of {len(derived)} of {len(runs)} run(s) {derived[0]}"


def _checked(record: dict) -> bool:
    return bool(record.get("numerics"))


def figures(runs: list[dict]) -> tuple[dict[str, float | None], str | None]:
    """The row's figures from its runs in the median, and the note its peak memory needs (or None)."""
    each = [run_figures(r) for r in runs]
    found = {}
    for name in FIGURES:
        values = [f[name] for f in each if f[name] is not None]
        found[name] = stats.median(values) if values else None
    unchecked = [f["peak_memory_bytes"] for r, f in zip(runs, each) if not _checked(r)]
    unchecked = [v for v in unchecked if v is not None]
    with_memory = [r for r, f in zip(runs, each) if f["peak_memory_bytes"] is not None]
    note = None
    if unchecked and len(unchecked) < len(with_memory):
        found["peak_memory_bytes"] = stats.median(unchecked)
        note = CHECK_LEFT_OUT.format(kept=len(unchecked))
    elif with_memory and not unchecked:
        note = CHECK_INCLUDED
    return found, note


def figures_footer(rows: list[dict]) -> list[str]:
    """How the figures beside the rate are made and combined across runs, where a row has one."""
    if not any(row.get(name) is not None for row in rows for name in FIGURES):
        return []
    return [DEFINITION, ""]
