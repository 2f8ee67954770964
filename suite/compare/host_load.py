"""Could the host's load explain a comparison's verdict? Each side's recorded load and noise warnings,
and the rule that withholds a "faster"/"slower" call the load difference could explain.

Every run records the host's load when it starts (suite.context.host_load: the 1-minute load average,
the share of the machine's CPU time other processes used, the CPU clock where readable). Two sides
measured under different load are not a test of the configurations alone: a CPU hog during one side's
runs slows it as surely as a worse setting does. The rule (see docs/compare.md):

  the sides' load differs   when the other processes' CPU share differs by ≥ OTHERS_GAP percentage
                            points, the load average per logical CPU by ≥ LOAD_GAP, or the median CPU
                            clock by ≥ CLOCK_GAP (relative);
                            or this run's own CPU share in its windows (suite.measurement.cpu_share)
                            differs by ≥ OWN_SHARE_GAP (relative) where the side that got less ran on a
                            host with no idle CPU (its windows' host CPU ≥ SATURATED % busy) and both
                            sides ran as many compute threads: less CPU with idle CPUs left, or with
                            fewer threads, is the run's own demand, not the load;
  the verdict is withheld   when any of these signals says the slower side was the busier one (the
                            difference points the way the load would push it). A slower side that every
                            signal calls the quieter one cannot be explained by load: that verdict
                            stands, with the load beside it. Every signal is weighed, none wins by coming
                            first: on a saturated host the other processes' share sits at its ceiling on
                            both sides (82 % beside 83 %) while the CPU each run got still differs, and
                            signals that point different ways are said in the note.
"""

from __future__ import annotations

import statistics

from suite import stats
from suite.compare.significance import ALPHA
from suite.rows import warning_kinds

OTHERS_GAP = 10.0  # percentage points of the machine's CPU time used by other processes
LOAD_GAP = 0.25  # 1-minute load average per logical CPU
CLOCK_GAP = 0.10  # relative difference of the median CPU clock
OWN_SHARE_GAP = 0.25  # relative difference of the CPU cores a side's runs got in their windows
SATURATED = 90.0  # percent of the host's CPU busy in the windows: no idle CPU left to take
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
    # Only the warnings about the rate are noise (warning_kinds, as the report's ⚠): a short energy window
    # says nothing of how well the rate was measured.
    noisy = [warning_kinds.touching_rate(list(r.get("warnings") or [])) for r in records]
    warnings = sorted({w for found in noisy for w in found})
    return {
        "runs_with_load": sum(1 for load in loads if load),
        "others_cpu_percent": _median([load.get("others_cpu_percent") for load in loads]),
        "load_per_cpu": _median(per_core),
        "cpu_mhz": _median([load.get("cpu_mhz") for load in loads]),
        "runs_with_noise_warnings": sum(1 for found in noisy if found),
        "noise_warnings": warnings,
        "own_cpu_cores": _median([load.get("own_cpu_cores") for load in loads]),
        "host_busy_percent": _median([_host_busy(r) for r in records]),
        "threads": sorted({t for r in records if isinstance(t := _threads(r), int)}),
    }


def _host_busy(record: dict) -> float | None:
    """The host's CPU busy share over a run's windows (its telemetry's mean), percent."""
    summary = (record.get("telemetry") or {}).get("summary") or {}
    return (summary.get("host_cpu_util_percent") or {}).get("mean")


def _threads(record: dict):
    return (record.get("device") or {}).get("threads") or (record.get("config") or {}).get("threads")


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
    if load.get("own_cpu_cores") is not None:
        parts.append(f"own {load['own_cpu_cores']:.2f} cores")
    return ", ".join(parts) or "load not readable"


def signals(base: dict, cand: dict) -> list[tuple[str, str]]:
    """Every load signal that differs materially between the sides: (the side it calls busier, why)."""

    def gap(name: str, threshold: float, relative: bool = False):
        a, b = base.get(name), cand.get(name)
        if a is None or b is None:
            return None
        if relative and max(a, b) <= 0:
            return None  # no clock recorded on either side (0 MHz): no relative difference
        difference = (b - a) / max(a, b) if relative else b - a
        return difference if abs(difference) >= threshold else None

    found = []
    others, load = gap("others_cpu_percent", OTHERS_GAP), gap("load_per_cpu", LOAD_GAP)
    if others is not None:
        side = "candidate" if others > 0 else "baseline"
        found.append((side, f"other processes' CPU share differs by {abs(others):.0f} points"))
    if load is not None:
        side = "candidate" if load > 0 else "baseline"
        found.append((side, f"load average per CPU differs by {abs(load):.2f}"))
    clock = gap("cpu_mhz", CLOCK_GAP, relative=True)
    if clock is not None:  # a lower clock is the busier (or hotter, throttled) side
        found.append(("baseline" if clock > 0 else "candidate", f"CPU clock differs by {abs(clock):.0%}"))
    own = gap("own_cpu_cores", OWN_SHARE_GAP, relative=True)
    if own is not None and base.get("threads") == cand.get("threads"):
        starved, side = (base, "baseline") if own > 0 else (cand, "candidate")
        busy = starved.get("host_busy_percent")
        if busy is not None and busy >= SATURATED:  # less CPU with none idle: taken by others
            found.append(
                (
                    side,
                    f"the {side}'s runs got {abs(own):.0%} less CPU in their windows "
                    f"({starved['own_cpu_cores']:.2f} cores, the host {busy:.0f}% busy)",
                )
            )
    return found


def busier(base: dict, cand: dict) -> tuple[str | None, str]:
    """Which side ran under more load ("baseline" / "candidate"; None: no material difference, or signals
    that disagree), and why (every signal, and their disagreement)."""
    found = signals(base, cand)
    sides = {side for side, _ in found}
    if len(sides) == 1:
        return sides.pop(), "; ".join(why for _, why in found)
    return None, disagreement(found)


def disagreement(found: list[tuple[str, str]]) -> str:
    """The note for signals that point to different sides ("" when they agree or there are none)."""
    if len({side for side, _ in found}) < 2:
        return ""
    return "the load signals disagree: " + "; ".join(f"{why} (the {side} busier)" for side, why in found)


def could_be_busier(base: dict, cand: dict, side: str) -> str | None:
    """Why SIDE may have run busier (every signal that says so, and those that say otherwise), or None
    where no signal says so."""
    found = signals(base, cand)
    pointing = [why for s, why in found if s == side]
    if not pointing:
        return None
    text = "; ".join(pointing)
    against = [why for s, why in found if s != side]
    if against:
        text += f" (the load signals disagree: {'; '.join(against)} point(s) the other way)"
    return text


def withhold(metric: dict, base: dict, cand: dict) -> str | None:
    """The note that withholds this metric's faster/slower call, or None when the load cannot explain it
    (no material difference, not recorded, or every signal calls the slower side the quieter one)."""
    if metric["log_ratio"] is None or metric["p_adjusted"] is None or metric["p_adjusted"] >= ALPHA:
        return None
    if metric["log_ratio"] == 0:
        return None
    slower_side = "baseline" if metric["log_ratio"] > 0 else "candidate"
    why = could_be_busier(base, cand, slower_side)
    if why is None:
        return None
    ratio = stats.format_log_ratio(metric["log_ratio"])
    return f"{why} and the {slower_side} ran busier: the load could explain a ×{ratio} ratio"


def noise_note(base: dict, cand: dict) -> str | None:
    """Says so when the sides' own noise warnings differ (one side noisy, the other not)."""
    counts = (base["runs_with_noise_warnings"], cand["runs_with_noise_warnings"])
    if (counts[0] > 0) == (counts[1] > 0):
        return None
    return f"noise warnings differ: baseline {counts[0]} run(s), candidate {counts[1]} run(s) warned"
