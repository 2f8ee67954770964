"""The answer a report opens with: per workload, the fastest configuration and the cheapest (images per $
on demand, and on spot where priced; a workload measured in tokens in tok/s and tokens per $, never ranked
against images), by how much each leads the next one, and whether the runs decide it. A configuration is
named with its precision and settings and the flags that set them (`amp + channels-last (`--channels-last`)`,
labels.py). The verdict is `suite compare`'s: Welch's t-test on the log of each run's throughput (one sample per
run, at least significance.MIN_RUNS a side), corrected for the family of tests the answer makes, and
withheld where the hosts' load could explain it (suite/compare/host_load.py). Rows are named by their number in their
table (#3 in images, T1 in tokens), which lists the runs behind each.
"""

from __future__ import annotations

import math

from suite import stats
from suite.compare import host_load
from suite.compare.matching import Group
from suite.compare.significance import ALPHA, MIN_RUNS, correct, decide
from suite.reporting import tuned_answer
from suite.reporting.narrow import images_per_second, marks, short_device, wrapped
from suite.rows import labels
from suite.rows.cells import accelerators_priced, whole_number
from suite.rows.row_prices import NO_ON_DEMAND
from suite.run_record import printable

# (what it answers, the row's field, how its value reads, the verdict's words: leader better / worse)
LEADS = (
    ("fastest", "images_per_hour", "img/s", ("faster", "slower")),
    ("cheapest on demand", "images_per_usd", "images per $", ("cheaper", "costlier")),
    ("cheapest on spot", "spot_images_per_usd", "images per $ on spot", ("cheaper", "costlier")),
)
# A workload measured in tokens (token_rows.py), by its figures in tokens.
TOKEN_LEADS = (
    ("fastest", "tokens_per_hour", "tok/s", ("faster", "slower")),
    ("cheapest on demand", "tokens_per_usd", "tokens per $", ("cheaper", "costlier")),
    ("cheapest on spot", "spot_tokens_per_usd", "tokens per $ on spot", ("cheaper", "costlier")),
)
RATES = ("images_per_hour", "tokens_per_hour")  # the leads in speed; the others are per $
HEADING = "Fastest and cheapest, per workload"
PUBLISHED_LINE = (
    "Published figures (marked pub in the table) are not ranked here; those whose source ran a workload's "
    "own recipe are ranked with the suite's runs of it under One recipe across accelerators."
)
ALONE = {  # a lead with no next one
    "images_per_hour": "the only configuration measured",
    "images_per_usd": "the only row priced",
    "spot_images_per_usd": "the only row with a spot price",
}
ALONE.update({tokens[1]: ALONE[images[1]] for images, tokens in zip(LEADS, TOKEN_LEADS)})
PRICE_HINT = (
    "name it on the run (`suite run --instance NAME`, see `suite prices list`; on AWS a run finds it "
    "itself), or price runs made elsewhere with `suite report --instance NAME` (`--price-as-if` where the "
    "run's device is not that instance's)"
)
_MARK_WORDS = {
    "hyp": "hypothetical price: another device",
    "synth": "synthetic data: a ceiling",
    "ext": "extrapolated",
    "retired": "retired instance",
}


def _value(row: dict, field: str) -> str:
    if field in RATES:
        unit = "img/s" if field == "images_per_hour" else "tok/s"
        return f"{images_per_second(row[field])} {unit}"
    return whole_number(row[field])


class _Answer:
    """The leads of one report and the tests behind their verdicts, corrected as one family."""

    def __init__(self, rows: list[dict], records: list[dict] | None, tokens: list[dict] = ()):
        # Each row by its name in its table: #3 among images, T1 among tokens.
        self.name = {id(row): f"#{n}" for n, row in enumerate(rows, 1)}
        self.name.update({id(row): f"T{n}" for n, row in enumerate(tokens, 1)})
        self.records = records
        self.tests: list[tuple] = []  # (metric, words, lead, sides' samples)
        # Each run by its id and instance, and its place among the records: a row finds its runs without
        # reading every record (a report of thousands asks for the runs of a few rows per workload).
        self.by_run: dict[tuple, list[dict]] = {}
        self.place: dict[int, int] = {}
        for n, r in enumerate(records or []):
            self.by_run.setdefault(
                (str(r.get("run_id")), (r.get("config") or {}).get("instance")), []
            ).append(r)
            self.place[id(r)] = n

    def runs_of(self, row: dict) -> list[dict]:
        """The row's runs: its run ids, on its instance (the same run priced as two instances is two rows),
        in the records' order."""
        found = [r for run_id in set(row["run_ids"]) for r in self.by_run.get((run_id, row["instance"]), [])]
        return sorted(found, key=lambda r: self.place[id(r)])

    def lead(self, kind: str, field: str, rows: list[dict], words) -> dict | None:
        candidates = [r for r in rows if r[field] is not None and r[field] > 0]
        if field in RATES:  # one configuration's speed, however many instances price it
            candidates = list({tuple(r["run_ids"]): r for r in reversed(candidates)}.values())[::-1]
        ordered = sorted(candidates, key=lambda r: -r[field])
        if not ordered:
            return None
        top = ordered[0]
        lead = {"kind": kind, "field": field, "row": self.name[id(top)], "top": top, "value": top[field]}
        lead.update(next_row=None, following=None, next_value=None, log_ratio=None, verdict=ALONE[field])
        if len(ordered) == 1:
            return lead
        following = ordered[1]
        lead.update(
            next_row=self.name[id(following)],
            following=following,
            next_value=following[field],
            log_ratio=stats.log_rate(top[field]) - stats.log_rate(following[field]),
        )
        self._judge(lead, top, following, field, words)
        return lead

    def _judge(self, lead: dict, top: dict, following: dict, field: str, words) -> None:
        if self.records is None:
            lead["verdict"] = "runs not read: no verdict"
            return
        if set(top["run_ids"]) == set(following["run_ids"]):
            lead["verdict"] = "the same runs priced as two instances: the prices decide"
            return
        sides = [Group(self.runs_of(row)) for row in (following, top)]
        counts = [len(group.samples()) for group in sides]
        if max(counts) <= 1:
            lead["verdict"] = "one run each: no verdict"
            return
        if min(counts) < MIN_RUNS:
            lead["verdict"] = f"{counts[1]} vs {counts[0]} runs: no verdict (≥ {MIN_RUNS} a side needed)"
            return
        logs = tuple(self._logs(group, row, field) for group, row in zip(sides, (following, top)))
        values = [[stats.from_log(x) or 0.0 for x in side] for side in logs]
        metric = decide(*values, 0.0, words, logs=logs)
        lead["runs"] = counts[::-1]
        self.tests.append((metric, words, lead, sides))

    @staticmethod
    def _logs(group: Group, row: dict, field: str) -> list[float]:
        """Each run's log img/s as the row counts it (scaled to the whole instance where it is; in tokens,
        × the tokens of a sample), and per $ of the row's price for images (tokens) per $."""
        offset = math.log(row["extrapolated_factor"] or 1)
        if field.startswith("tokens") or field.startswith("spot_tokens"):
            offset += math.log(row["units_per_sample"] or 1)
        if field not in RATES:
            price = row["spot_usd_per_hour"] if field.startswith("spot_") else row["usd_per_hour"]
            offset += stats.LOG_SECONDS_PER_HOUR - math.log(price)
        return [x + offset for x in group.log_rates()]

    def decide_all(self) -> dict | None:
        """Correct the family of tests, then withhold a call the load could explain; the correction used."""
        if not self.tests:
            return None
        family = correct([(metric, 0.0, words) for metric, words, _, _ in self.tests])
        for metric, _, lead, sides in self.tests:
            loads = [host_load.side_load(group.samples()) for group in sides]
            verdict = metric["verdict"]
            reason = (
                host_load.withhold(metric, *loads)
                if verdict in ("faster", "slower", "cheaper", "costlier")
                else None
            )
            if reason:
                verdict = f"{host_load.WITHHELD} ({reason})"
            p = metric["p_adjusted"]
            lead["p"] = p
            lead["verdict"] = (
                f"{verdict} (Welch's t-test, {lead['runs'][0]} vs {lead['runs'][1]} runs, p = {p:.2g})"
            )
        return family


def answer(
    rows: list[dict], records: list[dict] | None, assumed: set[str] = frozenset(), tokens: list[dict] = ()
) -> dict:
    """Per workload of the measured rows: its fastest row and its cheapest on demand and on spot, each
    with the next one, the ratio and the verdict, said in sentences; and how the verdicts were made.
    `tokens`: the rows measured in tokens (token_rows.split), answered in tokens, after the rows in images.
    `assumed`: the catalogs whose spot price is assumed rather than observed."""
    tokens = list(tokens)
    found = _Answer(rows, records, tokens)
    measured = [r for r in rows if not r.get("published")]
    workloads = _workloads(found, measured, "images", LEADS)
    workloads += _workloads(found, [r for r in tokens if not r.get("published")], "tokens", TOKEN_LEADS)
    family = found.decide_all()  # the verdicts are final only now: the sentences come after
    for item in workloads:
        # where a device has a `suite tune` best: the devices at their tuned best (tuned_answer.py)
        item["sentences"] = _sentences(item, assumed) + tuned_answer.sentences(item["ranked"], found.name)
        item["ranked"] = len(item["ranked"])
    return {
        "workloads": workloads,
        "family": family,
        "method": method_line(family),
        "published": sum(1 for r in (*rows, *tokens) if r.get("published")),
    }


def _workloads(found: _Answer, measured: list[dict], unit: str, leads) -> list[dict]:
    """Each workload of `measured` (rows of one unit) with its leads, judged."""
    items = []
    for workload in dict.fromkeys(str(r["model_run"]) for r in measured):
        own = [r for r in measured if str(r["model_run"]) == workload]
        ranked = [r for r in own if r[leads[0][1]] is not None]
        found_leads = [found.lead(kind, field, ranked, words) for kind, field, _, words in leads]
        items.append(
            {
                "workload": workload,
                "unit": unit,
                "rows": len(own),
                "ranked": ranked,
                "leads": [lead for lead in found_leads if lead],
                "data_differs": len({r["data"] for r in own}) > 1,
            }
        )
    return items


def _sentences(item: dict, assumed: set[str]) -> list[str]:
    if not item["ranked"]:
        return ["No row has a throughput (every run failed): see the table's notes."]
    described: set[str] = set()
    said = []
    for lead in item["leads"]:
        said.append(_lead_sentence(lead, described, item["data_differs"], assumed))
        described.add(lead["row"])
    if not any(lead["kind"] == "cheapest on demand" for lead in item["leads"]):
        said.append(f"Cheapest: no row is priced — {_why_unpriced(item['ranked'])}.")
    return said


def _why_unpriced(rows: list[dict]) -> str:
    unsold = [n for r in rows for n in r["notes"] if NO_ON_DEMAND in n]
    if unsold:  # e.g. an instance rented only through capacity blocks
        return unsold[0].removesuffix(": not priced")
    if any(r["instance"] and r.get("device_matches_instance") is False for r in rows):
        return (
            "measured on another device than the instance's accelerator: `suite report --price-as-if` prices "
            "it hypothetically"
        )
    return "no row has an instance the catalog prices: " + PRICE_HINT


def describe(row: dict, name: str, data_differs: bool = False) -> str:
    """`#3 p5.48xlarge (H100 80GB ×8, amp + channels-last (`--channels-last`), batch 256)`: its precision
    and settings with the flags that set them, the data where rows differ in it, and the row's caveats."""
    batch = f"batch {row['batch_size']}"
    if row.get("unit") == "tokens":
        batch += f" × {row['units_per_sample']:,} tokens"
    parts = [f"{short_device(row['device'])} ×{accelerators_priced(row)}", labels.configuration(row), batch]
    if data_differs:
        parts.append(f"{row['data']} data")
    caveats = [
        _MARK_WORDS.get(m, m.replace("/", " of ") + " accelerators" if "/" in m else "") for m in marks(row)
    ]
    caveats = [c for c in caveats if c]
    return (
        f"{name} {row['instance'] or 'no instance'} ({', '.join(parts)}"
        + (f"; {'; '.join(caveats)}" if caveats else "")
        + ")"
    )


def _lead_sentence(lead: dict, described: set[str], data_differs: bool, assumed) -> str:
    unit = next(u for kind, field, u, _ in (*LEADS, *TOKEN_LEADS) if field == lead["field"])
    top = lead["top"]
    shown = _value(top, lead["field"]) + ("" if lead["field"] in RATES else f" {unit}")
    if lead["field"].startswith("spot_") and top.get("prices_catalog") in assumed:
        shown += " (the spot price is assumed, not observed)"
    who = lead["row"] if lead["row"] in described else describe(top, lead["row"], data_differs)
    sentence = f"{lead['kind'].capitalize()}: {who} at {shown}"
    if lead["next_row"] is None:
        return sentence + f", {lead['verdict']}."
    following = lead["following"]
    ratio = stats.format_log_ratio(lead["log_ratio"], 2)
    # The next one named by what it ran, where that is not what the leader ran: "#7 amp NCHW".
    unlike = labels.contrast(top, following)
    return (
        sentence + f", {ratio}× the next, {lead['next_row']}{' ' + unlike if unlike else ''} "
        f"({_value(following, lead['field'])}): {lead['verdict']}."
    )


def counted(item: dict) -> str:
    """`6 row(s), 5 with a throughput`; a workload in tokens says so (its rows are T1, T2, …)."""
    unit = " in tokens" if item["unit"] == "tokens" else ""
    return f"{item['rows']} row(s){unit}, {item['ranked']} with a throughput"


def lines(result: dict, width: int = 110) -> list[str]:
    """The answer as markdown: a heading, per workload a list of its leads, then how verdicts are made;
    wrapped to `width` (a list item's lines go on indented)."""
    out = [f"## {HEADING}", ""]
    if not result["workloads"]:
        return out + ["No measured row: the table lists published figures only.", ""]
    for item in result["workloads"]:
        out += [
            f"**{printable(item['workload'])}** ({counted(item)}):",
            "",
        ]
        out += [line for sentence in item["sentences"] for line in wrapped(printable(sentence), width, "- ")]
        out.append("")
    out += wrapped(result["method"], width)
    if result["published"]:
        out.append(PUBLISHED_LINE)
    return out + [""]


def method_line(family: dict | None) -> str:
    if family is None:
        return (
            f"Verdicts: none made — a verdict needs ≥ {MIN_RUNS} runs of each configuration compared "
            "(`suite run --repeat N`)."
        )
    return (
        f"Verdicts: `suite compare`'s test — Welch's t-test on the log of each run's throughput, one sample per "
        f"run, α = {ALPHA:g}, two-sided; {family['name']} over the answer's {family['family']} test(s); a call "
        "the hosts' load could explain is withheld."
    )
