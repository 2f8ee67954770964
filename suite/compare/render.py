"""`suite compare`'s output: a markdown table with its notes and method, CSV, or the whole result as JSON."""

from __future__ import annotations

import json

from suite.compare.comparison import METHOD, METRICS
from suite.compare.matching import unpaired_note
from suite.compare.significance import MIN_RUNS, POWER, detectable_range
from suite.inputs import spreadsheet
from suite.run_record import finite_json, printable
from suite.stats import format_log_ratio

FORMATS = ("md", "csv", "json")


def _number(value) -> str:
    if value is None:
        return "—"
    if abs(value) >= 1e15:  # 1e300 img/s written out in full is 300 digits
        return f"{value:.3g}"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.3g}"


def _ratio(metric: dict) -> str:
    if metric.get("log_ratio") is None:
        return "—"
    low, high = (format_log_ratio(x) for x in metric["log_ci"])
    return f"{format_log_ratio(metric['log_ratio'])} ({low} … {high})"


def _p(metric: dict) -> str:
    """The family-corrected p (the one the verdict uses), and the test's own where they differ."""
    if metric["p_value"] is None:
        return "—"
    if metric["p_adjusted"] == metric["p_value"]:
        return f"{metric['p_value']:.3g}"
    return f"{metric['p_adjusted']:.3g} (alone {metric['p_value']:.3g})"


def _detectable(metric: dict) -> str:
    """The ratios these runs would tell from 1 (at POWER), and the runs a side --min-change needs."""
    if metric.get("detectable") is None:
        return "—"
    text = detectable_range(metric)
    if metric.get("runs_needed"):
        text += f"; {metric['min_change']:.0%}: {metric['runs_needed']:,} runs a side"
    return text


def _compared(comparison: dict, by) -> str:
    text = (
        "baseline → candidate"
        if not by
        else f"{comparison['baseline']['value']} → {comparison['candidate']['value']}"
    )
    return text + (" (HYPOTHETICAL)" if comparison.get("hypothetical") else "")


def table_rows(result: dict) -> list[dict]:
    """One flat row per metric of each comparison, then one per unmatched configuration."""
    rows = []
    for c in result["comparisons"]:
        for name, metric in c["metrics"].items():
            rows.append(
                {
                    "configuration": c["configuration"],
                    "compared": _compared(c, result["by"]),
                    "metric": METRICS[name][0],
                    **metric,
                    "detectable_change": metric.get("detectable"),
                    "load": c["load"],
                    "notes": "; ".join(c["notes"]),
                }
            )
    for side in ("baseline", "candidate"):
        for u in result["unmatched"][side]:
            rows.append(
                {
                    "configuration": u["configuration"],
                    "compared": f"{side} only",
                    "metric": "img/s",
                    f"{side}_runs": u["runs"],
                    "verdict": f"unmatched ({side} only)",
                    "notes": "",
                }
            )
    return rows


def render_markdown(result: dict) -> str:
    header = "| Configuration | Compared | Metric | Baseline (median) | Candidate (median) | Runs | "
    header += f"Ratio (95% CI) | p (corrected) | Verdict | Could detect ({POWER:.0%} power) | Host load |"
    lines = [header, "|---|---|---|---:|---:|---:|---:|---:|---|---:|---|"]
    for c in result["comparisons"]:
        for name, m in c["metrics"].items():
            cells = [
                c["configuration"],
                _compared(c, result["by"]),
                METRICS[name][0],
                _number(m["baseline_median"]),
                _number(m["candidate_median"]),
                f"{m['baseline_runs']} / {m['candidate_runs']}",
                _ratio(m),
                _p(m),
                f"**{m['verdict']}**",
                _detectable(m),
                c["load"],
            ]
            lines.append("| " + " | ".join(printable(str(cell).replace("|", "\\|")) for cell in cells) + " |")
    if not result["comparisons"]:
        lines.append("| (no configuration is on both sides) | | | | | | | | | | |")
        why = unpaired_note(result.get("unpaired") or {}, result.get("by"))
        if why:
            lines += ["", f"No configuration is on both sides: {printable(why)}."]
    notes = [
        f"- {printable(c['configuration'])}: {printable(note)}"
        for c in result["comparisons"]
        for note in c["notes"]
    ]
    for side in ("baseline", "candidate"):
        notes += [
            f"- only in the {side}: {printable(u['configuration'])} ({u['runs']} run(s))"
            for u in result["unmatched"][side]
        ]
    if notes:
        lines += ["", *notes]
    change = f"; --min-change {result['min_change']:.0%}: a smaller change is no faster/slower verdict"
    family = result["correction"]
    lines += [
        "",
        f"{METHOD}{change if result['min_change'] else ''}. "
        f"Fewer than {MIN_RUNS} runs on a side: no verdict. Undecided: neither a difference nor no change "
        "could be shown (it does not mean the same). "
        f"Multiple comparisons: {family['name']} over a family of {family['family']} test(s); the verdict "
        "uses the corrected p. A faster/slower call is withheld where the sides' host load differs and "
        "the busier side is the slower (docs/compare.md).",
    ]
    gate = result.get("gate")
    if gate:
        lines += [
            "",
            f"Gate --fail-on {gate['fail_on']}: **{gate['status']}** (exit status {gate['exit_status']})",
        ]
        lines += [
            f"- {printable(f['configuration'])}: {f['status']}: {printable(f['why'])}"
            for f in gate["findings"]
        ]
    return "\n".join(lines) + "\n"


CSV_FIELDS = [
    "configuration",
    "compared",
    "metric",
    "baseline_median",
    "candidate_median",
    "baseline_runs",
    "candidate_runs",
    "ratio",
    "ci_low",
    "ci_high",
    "p_value",
    "p_adjusted",
    "verdict",
    "detectable_change",
    "runs_needed",
    "min_change",
    "p_not_worse",
    "p_equivalent",
    "load",
    "notes",
]


def render_csv(result: dict) -> str:
    return spreadsheet.write(CSV_FIELDS, table_rows(result))


def render(result: dict, fmt: str) -> str:
    if fmt == "md":
        return render_markdown(result)
    if fmt == "csv":
        return render_csv(result)
    return json.dumps(finite_json(result), indent=2, allow_nan=False) + "\n"  # strict JSON
