"""Could the host's load explain a comparison's verdict? Each side's recorded load and noise warnings,
and the rule that withholds a "faster"/"slower" call the load difference could explain.

Every run records the host's load when it starts (suite.context.host_load: the 1-minute load average,
the share of the machine's CPU time other processes used, the CPU clock where readable). Two sides
measured under different load are not a test of the configurations alone: a CPU hog during one side's
runs slows it as surely as a worse setting does. The rule (see docs/compare.md):

  the sides' load differs   when the other processes' CPU share differs by ≥ OTHERS_GAP percentage
                            points, the load average per logical CPU by ≥ LOAD_GAP, or the median CPU
                            clock by ≥ CLOCK_GAP (relative);
  the verdict is withheld   when the load differs and the slower side is the busier one (the difference
                            points the way the load would push it). A slower side that was the quieter
                            one cannot be explained by load: that verdict stands, with the load beside it.
"""

from __future__ import annotations

import statistics

from suite import stats
from suite.reporting.compare_stats import ALPHA

OTHERS_GAP = 10.0  # percentage points of the machine's CPU time used by other processes
LOAD_GAP = 0.25  # 1-minute load average per logical CPU
CLOCK_GAP = 0.10  # relative difference of the median CPU clock
WITHHELD = "withheld: load differs"


def _median(values: list[float]) -> float | None:
    values = [v for v in values if isinstance(v, (int, float))]
    return statistics.median(values) if values else None


def side_load(records: list[dict]) -> dict:
    """One side's load over its runs (medians) and its runs' own noise warnings."""
    loads = [(r.get("context") or {}).get("load") or {} for r in records]
    per_core = [
        load["load_average_1m"] / load["logical_cpus"]
        for load in loads
        if isinstance(load.get("load_average_1m"), (int, float)) and load.get("logical_cpus")
    ]
    warnings = sorted({w for r in records for w in (r.get("warnings") or [])})
    return {
        "runs_with_load": sum(1 for load in loads if load),
        "others_cpu_percent": _median([load.get("others_cpu_percent") for load in loads]),
        "load_per_cpu": _median(per_core),
        "cpu_mhz": _median([load.get("cpu_mhz") for load in loads]),
        "runs_with_noise_warnings": sum(1 for r in records if r.get("warnings")),
        "noise_warnings": warnings,
    }


def describe_load(load: dict) -> str:
    if not load["runs_with_load"]:
        return "load not recorded"
    parts = []
    if load["others_cpu_percent"] is not None:
        parts.append(f"others {load['others_cpu_percent']:.0f}% CPU")
    if load["load_per_cpu"] is not None:
        parts.append(f"load {load['load_per_cpu']:.2f}/CPU")
    if load["cpu_mhz"] is not None:
        parts.append(f"{load['cpu_mhz']:,.0f} MHz")
    return ", ".join(parts) or "load not readable"


def busier(base: dict, cand: dict) -> tuple[str | None, str]:
    """Which side ran under more load ("baseline" / "candidate", None: no material difference), and why."""

    def gap(name: str, threshold: float, relative: bool = False):
        a, b = base[name], cand[name]
        if a is None or b is None:
            return None
        if relative and max(a, b) <= 0:
            return None  # no clock recorded on either side (0 MHz): no relative difference
        difference = (b - a) / max(a, b) if relative else b - a
        return difference if abs(difference) >= threshold else None

    others, load = gap("others_cpu_percent", OTHERS_GAP), gap("load_per_cpu", LOAD_GAP)
    clock = gap("cpu_mhz", CLOCK_GAP, relative=True)
    if others is not None:
        return (
            "candidate" if others > 0 else "baseline"
        ), f"other processes' CPU share differs by {abs(others):.0f} points"
    if load is not None:
        return ("candidate" if load > 0 else "baseline"), f"load average per CPU differs by {abs(load):.2f}"
    if clock is not None:  # a lower clock is the busier (or hotter, throttled) side
        return ("baseline" if clock > 0 else "candidate"), f"CPU clock differs by {abs(clock):.0%}"
    return None, ""


def withhold(metric: dict, base: dict, cand: dict) -> str | None:
    """The note that withholds this metric's faster/slower call, or None when the load cannot explain it
    (no material difference, not recorded, or the slower side was the quieter one)."""
    if metric["log_ratio"] is None or metric["p_adjusted"] is None or metric["p_adjusted"] >= ALPHA:
        return None
    side, why = busier(base, cand)
    if side is None or metric["log_ratio"] == 0:
        return None
    slower_side = "baseline" if metric["log_ratio"] > 0 else "candidate"
    if slower_side != side:
        return None
    ratio = stats.format_log_ratio(metric["log_ratio"])
    return f"{why} and the {side} ran busier: the load could explain a ×{ratio} ratio"


def noise_note(base: dict, cand: dict) -> str | None:
    """Says so when the sides' own noise warnings differ (one side noisy, the other not)."""
    counts = (base["runs_with_noise_warnings"], cand["runs_with_noise_warnings"])
    if (counts[0] > 0) == (counts[1] > 0):
        return None
    return f"noise warnings differ: baseline {counts[0]} run(s), candidate {counts[1]} run(s) warned"
