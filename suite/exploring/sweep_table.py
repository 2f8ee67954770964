"""A finished sweep read back: its table, best first, and the effect of each knob (`suite sweep` prints
both). The effects are geometric means of throughput ratios, taken in log space: rates may be 5e-324 or
1e300 img/h, whose quotient is no float.

Every rate is in its record's unit (`child.rate_in_unit`): images per second, or tokens per second for a
workload that counts tokens, so that a sweep over sequence length compares the tokens it trains, not
sequences of different lengths. Points of different units are never compared with each other."""

from __future__ import annotations

import math

from suite import stats
from suite.launching.child import describe, rate_in_unit, throughput

# Within this band an effect reads better as a percentage ("+4%") than as a ratio ("1.04×").
PERCENT_BAND = (0.8, 1.25)


def format_effect(log_ratio: float) -> str:
    """An effect given by the log of its ratio (rates may be 5e-324 or 1e300: their ratio is no float)."""
    ratio = stats.from_log(log_ratio)
    if ratio is not None and PERCENT_BAND[0] <= ratio <= PERCENT_BAND[1]:
        return f"{(ratio - 1) * 100:+.0f}%"
    if ratio is not None and ratio >= 0.01:
        return f"{ratio:.2f}×"
    return f"{stats.format_log_ratio(log_ratio)}×"


def knob_effects(
    grid: dict[str, list[str]], rates: list[tuple[dict, float | None]], units: list[str] | None = None
) -> list[str]:
    """The effect of each knob, step by step along its values: the geometric mean, over every pair of
    points that differ only in that knob, of the throughput ratio. "precision fp32→bf16: 1.70×". UNITS,
    each rate's unit: a pair of two units (a workload of images and one of tokens) is no pair."""
    units = units or [None] * len(rates)
    unit_of = {tuple(sorted(knobs.items())): unit for (knobs, _), unit in zip(rates, units)}
    by_knobs = {tuple(sorted(knobs.items())): rate for knobs, rate in rates if rate}
    lines = []
    for name, values in grid.items():
        if len(values) < 2:
            continue
        steps = []
        for before, after in zip(values, values[1:]):
            logs = []
            for knobs, rate in rates:
                if knobs.get(name) != before or not rate:
                    continue
                other = tuple(sorted({**knobs, name: after}.items()))
                if by_knobs.get(other) and unit_of[other] == unit_of[tuple(sorted(knobs.items()))]:
                    logs.append(stats.log_rate(by_knobs[other]) - stats.log_rate(rate))  # no quotient
            effect = format_effect(math.fsum(logs) / len(logs)) if logs else "n/a (no pair completed)"
            steps.append(f"{before}→{after}: {effect}")
        lines.append(f"{name} " + ", ".join(steps))
    return lines


def effects_caveat(records: list[dict]) -> str | None:
    """The noise behind the knob effects: a point of one window has no spread to judge an effect by,
    and an effect smaller than the points' own window spread may be that spread."""
    measured = [(r.get("metrics") or {}) for r in records if throughput(r) is not None]
    single = sum(1 for m in measured if len(m.get("window_time_s") or []) < 2)
    if single:
        return f"{single} point(s) measured in one window: their noise is unknown, the effects may be noise"
    cvs = [m.get("images_per_second_cv") or 0.0 for m in measured]
    if cvs and max(cvs) > 0.05:
        return f"window spread up to cv {max(cvs):.0%}: effects within about ±{2 * max(cvs):.0%} may be noise"
    return None


def rate_header(labels: list[str]) -> str:
    """The rate column's name: the unit every measured point shares (img/s where none was measured), else
    "rate", each cell then naming its own unit."""
    return labels[0] if len(set(labels)) == 1 else ("img/s" if not labels else "rate")


def render(outcome: list, grid: dict[str, list[str]]) -> str:
    from tabulate import tabulate

    from suite.reporting.summary import human_bytes
    from suite.run_record.record import metrics_of

    names = list(grid)
    rated = [(point, record, *rate_in_unit(record)) for point, record in outcome]
    header = rate_header([label for _, _, rate, label in rated if rate is not None])
    ordered = sorted(rated, key=lambda item: (item[2] is None, -(item[2] or 0)))
    rows = []
    for point, record, rate, label in ordered:
        metrics = metrics_of(record)
        shown_unit = f" {label}" if header == "rate" else ""
        rows.append(
            [
                *(point.knobs[n] for n in names),
                f"{rate:,.1f}{shown_unit}" if rate is not None else "-",
                f"{metrics.throughput_stdev:,.1f}"
                if rate is not None and len(metrics.window_time_s or []) > 1
                else "-",  # one window has no spread to show (not a spread of zero)
                f"{metrics.step_time_s * 1e3:,.1f}" if rate is not None else "-",
                human_bytes((record.get("memory") or {}).get("peak_memory_bytes")),
                record.get("status") if rate is not None else describe(record)[:60],
            ]
        )
    table = tabulate(
        rows,
        headers=[*names, header, "± σ", "step (ms)", "peak memory", "status"],
        disable_numparse=True,
        colalign=("left",) * len(names) + ("right",) * 3 + ("left",) * 2,
    )
    effects = knob_effects(
        grid, [(p.knobs, rate) for p, _, rate, _ in rated], [label for _, _, _, label in rated]
    )
    lines = [table]
    if effects:
        lines += [
            "",
            "effect of each knob (throughput ratio, geometric mean over points that differ only in it):",
        ]
        lines += [f"  {line}" for line in effects]
        caveat = effects_caveat([r for _, r in outcome])
        if caveat:
            lines.append(f"  caveat: {caveat}")
    return "\n".join(lines)
