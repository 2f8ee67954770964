"""Which figure a run's warning concerns: the rate a row shows, or another figure of the run (its energy and
power, its MFU, its device figures), or none. Only a warning that concerns the rate earns the row its ⚠;
the others are listed with the figure they concern, and leave the rate as it stands.

A record keeps its warnings as sentences (`record["warnings"]`), so they are told apart by what they say.
Each pattern below is a warning the suite writes, with the module that writes it. A warning none of them
matches — a later version's, or one this list has not met — is taken to concern the rate: an unknown
warning alarms rather than hides.
"""

from __future__ import annotations

import re

from suite.run_record import printable

RATE = "rate"
ENERGY = "energy and power"
MFU = "MFU"
DEVICE = "device figures"  # peak memory, the device's name and datasheet peak
TELEMETRY = "telemetry"  # energy, power and utilisation: a sampler that did not run
NO_FIGURE = "no figure"

# (what the warning says, the figure it concerns). Everything not here concerns the rate, among them:
# the spread between windows and a slow first window (run_record/windows.py), a per-device run's copies
# that overlapped little (launching/per_device.py), an instance whose accelerator did not run
# (prices/catalog.py), a profiled run (measurement/profiling.py) and a fork by the model's code
# (workloads/user_code.py: "it may have slowed this run").
_OTHER_FIGURES = (
    # measurement/window_length.py: windows too short for the device's energy counter and power gauge
    (re.compile(r"power and energy per image cover too little time"), ENERGY),
    # measurement/runner.py: a sampler that failed is dropped, the windows go on
    (re.compile(r"telemetry '[^']*' off: "), TELEMETRY),
    # measurement/runner.py: the FLOP count, read after the windows
    (re.compile(r"FLOP count failed, MFU left blank"), MFU),
    # measurement/runner.py: the device's name and memory, read after the windows
    (re.compile(r"device query failed: "), DEVICE),
    # data/loader_bench.py: the loader's windows were grown to be long enough (done, then measured)
    (re.compile(r"batches took under \d+ ms: each window grown to"), NO_FIGURE),
    # workloads/user_code.py: what the model's code did that the suite undid or let be, after or beside
    # the timing
    (re.compile(r"debuggers are off while the suite runs"), NO_FIGURE),
    (re.compile(r"undone, the suite keeps its own variables"), NO_FIGURE),
    (re.compile(r"thread\(s\) started during the run still running at its end"), NO_FIGURE),
)


def concerns(warning: str) -> str:
    """The figure `warning` concerns: RATE, or one of the other figures' names."""
    for pattern, figure in _OTHER_FIGURES:
        if pattern.search(warning):
            return figure
    return RATE


def touching_rate(warnings: list[str]) -> list[str]:
    """The warnings that concern the shown rate (the ones that earn ⚠), in their order."""
    return [w for w in warnings if concerns(w) == RATE]


def by_figure(warnings: list[str]) -> dict[str, list[str]]:
    """The other warnings, by the figure each concerns, in their order."""
    found: dict[str, list[str]] = {}
    for warning in warnings:
        figure = concerns(warning)
        if figure != RATE:
            found.setdefault(figure, []).append(warning)
    return found


def of_rate(row: dict) -> list[str]:
    """A row's warnings about its rate (a row made elsewhere, a published figure's, classified here)."""
    return row["rate_warnings"] if "rate_warnings" in row else touching_rate(row["warnings"])


def of_other_figures(row: dict) -> dict[str, list[str]]:
    """A row's warnings about its other figures, by figure."""
    return row["other_warnings"] if "other_warnings" in row else by_figure(row["warnings"])


RATE_WARNINGS = "⚠ Warnings about the rate, recorded by the runs (the rate is marked ⚠):"
OTHER_WARNINGS = (
    "Warnings about other figures, recorded by the runs (the rate stands; in --wide the figure is marked †):"
)


def warnings_by_row(rows: list[dict]) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """(row number, text) of each warning about a row's rate, then of each about another of its figures
    (`figure: text`), in the rows' order."""
    about_rate = [(n, w) for n, row in enumerate(rows, 1) for w in of_rate(row)]
    about_others = [
        (n, f"{figure}: {w}")
        for n, row in enumerate(rows, 1)
        for figure, said in of_other_figures(row).items()
        for w in said
    ]
    return about_rate, about_others


def warning_lines(rows: list[dict], prefix: str = "#") -> list[str]:
    """The rows' warnings under the table: those about the rate, then those about other figures."""
    lines = []
    for heading, found in zip((RATE_WARNINGS, OTHER_WARNINGS), warnings_by_row(rows)):
        if found:
            lines += ["", heading, ""]
            lines += [f"- {prefix}{n} {printable(text)}" for n, text in found]
    return lines
