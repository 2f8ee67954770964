"""Is the candidate really faster (or cheaper) than the baseline? Run records in, one verdict per metric out.

Configurations are matched by the report's own row key, so `suite compare` and `suite report` agree on
what "the same configuration" means. `--by FIELD` matches them with that one field left out of the key
(threads 1 against threads 2, one instance against another).

The samples are runs, not windows: each run's throughput (the median of its timed windows) is one
sample, because runs in fresh processes are independent and the windows of one process are not (they
share its thread placement, memory layout and clock state). For each matched pair and metric:

    ratio   = candidate ÷ baseline, as the ratio of the runs' geometric means
    95% CI  = exp(Welch's t interval of the difference of mean log throughputs)
    verdict = faster / slower where p < 0.05, reported as "no change" while |ratio − 1| < --min-change

Welch's t-test (unequal variances; B. L. Welch, Biometrika 34, 1947) on log throughput, because a
speed-up is a ratio and because, with the few runs a benchmark affords, an exact rank test cannot decide
at all: with 3 runs a side the smallest two-sided p-value Mann-Whitney U can reach is 2 ÷ C(6, 3) = 0.1
(asv's `statistics.is_different` falls back to interval overlap for the same reason). The test and the
interval come from one computation, so a verdict is "faster" exactly when the interval lies above 1.
Fewer than MIN_RUNS runs on a side is a verdict of its own, never a bare ratio.
"""

from __future__ import annotations

import csv
import dataclasses
import glob
import io
import json
import math
import os
import statistics
from collections import Counter
from dataclasses import dataclass, field

from suite import stats
from suite.config import RunConfig
from suite.errors import UserError

# The one place compare learns what makes two runs the same configuration: the report's row key.
from suite.reporting.identity import LOADER_FIELDS, row_key, settings
from suite.reporting.rows import build_rows
from suite.run_record.facts import data_path, images_per_hour, profiled

MIN_RUNS = 3  # a side; below it the verdict is "too few runs"
ALPHA = 0.05  # two-sided; the interval shown is the matching 95% one
FORMATS = ("md", "csv", "json")
FAIL_ON = ("slower", "costlier")
METHOD = (
    "Welch's t-test on the log of each run's throughput (one sample per run), two-sided, α = 0.05; "
    "ratio = candidate ÷ baseline of the runs' geometric means, with its 95% confidence interval"
)

# What a verdict is called for each metric: (higher, lower).
METRICS = {
    "images_per_second": ("img/s", ("faster", "slower")),
    "images_per_usd": ("images per $", ("cheaper", "costlier")),
}
NO_DIFFERENCE = "no significant difference"
TOO_FEW = "too few runs"


# -- statistics ---------------------------------------------------------------------------------------


def _t_two_sided_p(t: float, df: float) -> float:
    """P(|T| ≥ |t|) for Student's t with `df` degrees of freedom: the regularized incomplete beta
    I_{df/(df+t²)}(df/2, 1/2) (Abramowitz & Stegun 26.7.1), from mpmath (which torch already requires)."""
    import mpmath

    return float(mpmath.betainc(df / 2, 0.5, 0, df / (df + t * t), regularized=True))


def _t_critical(df: float, alpha: float = ALPHA) -> float:
    """The t with P(|T| ≥ t) = alpha, by bisection (p falls as t grows; df ≥ 1 keeps it below 13)."""
    low, high = 0.0, 1000.0
    for _ in range(100):
        middle = (low + high) / 2
        if _t_two_sided_p(middle, df) > alpha:
            low = middle
        else:
            high = middle
    return (low + high) / 2


@dataclass
class Welch:
    difference: float  # mean(candidate) − mean(baseline)
    ci_low: float
    ci_high: float
    p_value: float
    df: float | None  # None when neither side varies


def welch(baseline: list[float], candidate: list[float], alpha: float = ALPHA) -> Welch:
    """Welch's unequal-variance t-test and interval for mean(candidate) − mean(baseline)."""
    na, nb = len(baseline), len(candidate)
    difference = statistics.fmean(candidate) - statistics.fmean(baseline)
    va, vb = statistics.variance(baseline) / na, statistics.variance(candidate) / nb
    se = math.sqrt(va + vb)
    if se == 0:  # no spread at all: any difference is certain, none is none
        return Welch(difference, difference, difference, 0.0 if difference else 1.0, None)
    df = (va + vb) ** 2 / (va**2 / (na - 1) + vb**2 / (nb - 1))  # Welch–Satterthwaite
    df = min(df, 1000.0)  # past this t is the normal distribution (to 0.1%), and the series converge
    half = _t_critical(df, alpha) * se
    return Welch(difference, difference - half, difference + half, _t_two_sided_p(difference / se, df), df)


def decide(
    baseline: list[float], candidate: list[float], min_change: float = 0.0, words=("faster", "slower")
) -> dict:
    """One metric of one matched pair: medians, the ratio with its interval, p and the verdict."""
    result = {
        "baseline_median": statistics.median(baseline) if baseline else None,
        "candidate_median": statistics.median(candidate) if candidate else None,
        "baseline_runs": len(baseline),
        "candidate_runs": len(candidate),
        "ratio": None,
        "ci_low": None,
        "ci_high": None,
        "p_value": None,
        "verdict": TOO_FEW,
    }
    if min(len(baseline), len(candidate)) < MIN_RUNS:
        return result
    test = welch([math.log(x) for x in baseline], [math.log(x) for x in candidate])
    ratio = math.exp(test.difference)
    result.update(
        ratio=ratio, ci_low=math.exp(test.ci_low), ci_high=math.exp(test.ci_high), p_value=test.p_value
    )
    if test.p_value >= ALPHA:
        result["verdict"] = NO_DIFFERENCE
    elif abs(ratio - 1) < min_change:
        result["verdict"] = f"no change (< {min_change:.0%})"
    else:
        result["verdict"] = words[0] if ratio > 1 else words[1]
    return result


def parse_min_change(text: str) -> float:
    """`3%` or `3` -> 0.03 (a percentage, as pyperf's --min-speed)."""
    try:
        value = float(str(text).strip().rstrip("%"))
    except ValueError:
        value = -1.0
    if not 0 <= value < 100:
        raise UserError(f"--min-change must be a percentage from 0 to 100, e.g. 3%, got {text!r}")
    return value / 100


# -- records to samples ---------------------------------------------------------------------------------


def expand_paths(path: str) -> list[str]:
    """A record, a folder of records or a glob (quoted, so the shell left it to us)."""
    if not os.path.exists(path) and glob.has_magic(path):
        found = sorted(glob.glob(path))
        if not found:
            raise UserError(f"no file or folder matches {path!r}")
        return found
    return [path]


def counted(record: dict) -> bool:
    """A run that is one sample: it finished ok, has a throughput and was not slowed by a profiler."""
    return record.get("status") == "ok" and bool(images_per_hour(record)) and not profiled(record)


# Where `--by FIELD` looks: a RunConfig field is in the record's config; these few are elsewhere or mean
# more than one value ("*": the whole section). An instance comes with its hardware and its machine, so
# comparing instances leaves the backend, the device and the machine's context out of the match too
# (a V100 instance against a Gaudi one).
BY_PARTS = {
    "device": [("device", "name"), ("device", "*")],
    "instance": [
        ("config", "instance"),
        ("config", "backend"),
        ("config", "accelerators_used"),
        ("device", "*"),
        ("context", "*"),
    ],
    "data": [("config", "data"), ("data", "source")],
    "threads": [("config", "threads"), ("device", "threads")],  # as asked, and as the backend ran it
    **{name: [("data", name)] for name in LOADER_FIELDS},  # what the loader actually used
}


def by_fields() -> list[str]:
    return sorted({f.name for f in dataclasses.fields(RunConfig)} | set(BY_PARTS))


def parse_by(text: str | None) -> tuple[str, ...] | None:
    """`instance` or `threads,precision` -> the fields compared across (None: all must match)."""
    if text is None:
        return None
    fields = tuple(name.strip() for name in str(text).split(",") if name.strip())
    for name in fields or ("",):
        if name not in by_fields():
            raise UserError(f"--by {name!r} is not a field of a run (known: {', '.join(by_fields())})")
    return fields


def _parts(field_name: str) -> list[tuple[str, str]]:
    return BY_PARTS.get(field_name, [("config", field_name)])


def by_value(record: dict, by: tuple[str, ...]) -> str:
    """What a side is, in the fields compared across: `p3.2xlarge`, `threads=2`."""
    values = []
    for name in by:
        section, key = _parts(name)[0]
        value = (record.get(section) or {}).get(key)
        values.append(str(value) if len(by) == 1 and name == "instance" else f"{name}={value}")
    return ", ".join(values)


def _without(record: dict, by: tuple[str, ...]) -> dict:
    """The record with the compared-across fields blanked, so the row key no longer tells runs apart by
    them (the key's own definition is never repeated here)."""
    blanked = {**record}
    for name in by:
        for section, key in _parts(name):
            blanked[section] = {} if key == "*" else {**(blanked.get(section) or {}), key: None}
    return blanked


def match_key(record: dict, by: tuple[str, ...] | None) -> tuple:
    return row_key(record if not by else _without(record, by))


@dataclass
class Group:
    """The runs of one configuration on one side."""

    records: list[dict]
    paths: list[str] = field(default_factory=list)

    @property
    def first(self) -> dict:
        return self.records[0]

    def rates(self) -> list[float]:
        return [images_per_hour(r) / stats.SECONDS_PER_HOUR for r in self.records if counted(r)]

    def not_counted(self) -> dict:
        return dict(Counter(_why_not(r) for r in self.records if not counted(r)))

    def run_ids(self) -> set:
        return {r.get("run_id") for r in self.records}


def _why_not(record: dict) -> str:
    if record.get("status") != "ok":
        return record.get("status") or "error"
    return "profiled" if profiled(record) else "no throughput"


def group_records(loaded: list[tuple[str, dict]]) -> dict[tuple, Group]:
    groups: dict[tuple, Group] = {}
    for path, record in loaded:
        group = groups.setdefault(row_key(record), Group([]))
        group.records.append(record)
        group.paths.append(path)
    return groups


def describe(record: dict, by: tuple[str, ...] | None = None) -> str:
    """A configuration in words, without the fields compared across:
    `dcgan64 · cpu (Intel Xeon) · batch 8 · fp32 · synthetic · threads=2`."""
    config, device = record["config"], record.get("device") or {}
    left_out = {f"{section}.{key}" for name in by or () for section, key in _parts(name)}
    parts = [config.get("workload")]
    if "config.backend" not in left_out:
        parts.append(f"{config.get('backend')} ({device.get('name')})")
    parts += [f"batch {config.get('batch_size')}", config.get("precision"), data_path(record)]
    if config.get("instance") and "config.instance" not in left_out:
        parts.append(config["instance"])
    parts += [s for s in settings(record) if s.split("=")[0] not in (by or ())]
    return " · ".join(str(p) for p in parts if p not in (None, ""))


def _usd_per_hour(group: Group, catalog) -> float | None:
    """The whole instance's price, as `suite report` prices this configuration (None: not priced)."""
    if catalog is None:
        return None
    rows = build_rows(group.records, catalog)
    return rows[0]["usd_per_hour"] if rows else None


def rerun_hint(group: Group, runs: int) -> str:
    """The command that would add `runs` runs of this configuration next to its records."""
    config = group.first["config"]
    options = [
        f"--workload {config.get('workload')}",
        f"--backend {config.get('backend')}",
        f"--batch-size {config.get('batch_size')}",
        f"--precision {config.get('precision')}",
    ]
    options += [
        f"--{name.replace('_', '-')} {config[name]}" for name in ("threads", "instance") if config.get(name)
    ]
    if data_path(group.first) not in ("synthetic", "?"):
        options.append(f"--data {data_path(group.first)}")
    out = os.path.dirname(group.paths[0]) if group.paths else "results"
    return f"suite run {' '.join(options)} --repeat {runs} --out {out or '.'}"


def _too_few_note(baseline: Group, candidate: Group, n_base: int, n_cand: int) -> str:
    hints = [
        rerun_hint(group, MIN_RUNS - n)
        for group, n in ((baseline, n_base), (candidate, n_cand))
        if n < MIN_RUNS
    ]
    return f"{n_base} vs {n_cand} runs: need ≥ {MIN_RUNS} a side for a verdict; " + "; ".join(hints)


# -- the comparison ---------------------------------------------------------------------------------------


def compare(
    baseline: list[tuple[str, dict]],
    candidate: list[tuple[str, dict]],
    by: tuple[str, ...] | str | None = None,
    min_change: float = 0.0,
    catalog=None,
) -> dict:
    """Match the two sides' configurations and decide each metric of each matched pair."""
    by = parse_by(by) if isinstance(by, str) else by
    base_groups, cand_groups = group_records(baseline), group_records(candidate)
    comparisons, matched_base, matched_cand = [], set(), set()
    for base_key, base in base_groups.items():
        for cand_key, cand in cand_groups.items():
            if match_key(base.first, by) != match_key(cand.first, by):
                continue
            matched_base.add(base_key)
            matched_cand.add(cand_key)
            if base.run_ids() == cand.run_ids():
                continue  # the same runs on both sides (one folder given twice): nothing to compare
            comparisons.append(_compare_pair(base, cand, by, min_change, catalog))
    return {
        "by": by,
        "min_change": min_change,
        "alpha": ALPHA,
        "min_runs": MIN_RUNS,
        "method": METHOD,
        "comparisons": comparisons,
        "unmatched": {
            "baseline": [_unmatched(g, by) for k, g in base_groups.items() if k not in matched_base],
            "candidate": [_unmatched(g, by) for k, g in cand_groups.items() if k not in matched_cand],
        },
    }


def _compare_pair(base: Group, cand: Group, by, min_change, catalog) -> dict:
    rates_base, rates_cand = base.rates(), cand.rates()
    metrics = {
        "images_per_second": decide(rates_base, rates_cand, min_change, METRICS["images_per_second"][1])
    }
    price_base, price_cand = _usd_per_hour(base, catalog), _usd_per_hour(cand, catalog)
    # Images per $ tells something new only when the two sides pay different prices.
    if price_base and price_cand and price_base != price_cand:
        metrics["images_per_usd"] = decide(
            [r * stats.SECONDS_PER_HOUR / price_base for r in rates_base],
            [r * stats.SECONDS_PER_HOUR / price_cand for r in rates_cand],
            min_change,
            METRICS["images_per_usd"][1],
        )
    notes = []
    if any(m["verdict"] == TOO_FEW for m in metrics.values()):
        notes.append(_too_few_note(base, cand, len(rates_base), len(rates_cand)))
    for side, group in (("baseline", base), ("candidate", cand)):
        if group.not_counted():
            notes.append(
                f"{side}: "
                + ", ".join(f"{n} {why}" for why, n in sorted(group.not_counted().items()))
                + " run(s) not counted"
            )
    return {
        "configuration": describe(base.first, by),
        "baseline": _side(base, by, price_base),
        "candidate": _side(cand, by, price_cand),
        "metrics": metrics,
        "notes": notes,
    }


def _side(group: Group, by, usd_per_hour) -> dict:
    return {
        "value": by_value(group.first, by) if by else None,
        "runs": len(group.rates()),
        "run_ids": sorted(str(r.get("run_id")) for r in group.records),
        "usd_per_hour": usd_per_hour,
        "images_per_second": group.rates(),
    }


def _unmatched(group: Group, by) -> dict:
    return {
        "configuration": describe(group.first),
        "runs": len(group.rates()),
        "value": by_value(group.first, by) if by else None,
    }


def failing(result: dict, fail_on: str | None) -> list[dict]:
    """The comparisons whose verdict is the one `--fail-on` names (slower: img/s; costlier: images per $)."""
    if fail_on is None:
        return []
    metric = "images_per_second" if fail_on == "slower" else "images_per_usd"
    return [c for c in result["comparisons"] if (c["metrics"].get(metric) or {}).get("verdict") == fail_on]


# -- rendering -------------------------------------------------------------------------------------------


def _number(value) -> str:
    if value is None:
        return "—"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.3g}"


def _ratio(metric: dict) -> str:
    if metric["ratio"] is None:
        return "—"
    return f"{metric['ratio']:.3f} ({metric['ci_low']:.3f} … {metric['ci_high']:.3f})"


def _p(metric: dict) -> str:
    return "—" if metric["p_value"] is None else f"{metric['p_value']:.3g}"


def _compared(comparison: dict, by) -> str:
    if not by:
        return "baseline → candidate"
    return f"{comparison['baseline']['value']} → {comparison['candidate']['value']}"


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
    header += "Ratio (95% CI) | p | Verdict |"
    lines = [header, "|---|---|---|---:|---:|---:|---:|---:|---|"]
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
            ]
            lines.append("| " + " | ".join(str(cell).replace("|", "\\|") for cell in cells) + " |")
    if not result["comparisons"]:
        lines.append("| (no configuration is on both sides) | | | | | | | | |")
    notes = [f"- {c['configuration']}: {note}" for c in result["comparisons"] for note in c["notes"]]
    for side in ("baseline", "candidate"):
        notes += [
            f"- only in the {side}: {u['configuration']} ({u['runs']} run(s))"
            for u in result["unmatched"][side]
        ]
    if notes:
        lines += ["", *notes]
    change = f"; below a {result['min_change']:.0%} change a difference is reported as no change"
    lines += [
        "",
        f"{METHOD}{change if result['min_change'] else ''}. "
        f"Fewer than {MIN_RUNS} runs on a side: no verdict.",
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
    "verdict",
    "notes",
]


def render_csv(result: dict) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(table_rows(result))
    return buffer.getvalue()


def render(result: dict, fmt: str) -> str:
    if fmt == "md":
        return render_markdown(result)
    if fmt == "csv":
        return render_csv(result)
    return json.dumps(result, indent=2) + "\n"
