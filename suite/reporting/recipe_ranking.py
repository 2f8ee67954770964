"""One recipe across accelerators: the suite's runs of a workload's recipe and the published figures whose
source ran the same recipe (published_basis.py: matched), ranked together, one accelerator each — which
accelerator trains this recipe fastest, and which cheapest per image.

A row is of a recipe when it shares its `recipe_group` (published/rows.py: the workload, precision and
data, and no other setting). Rows of several accelerators (a per-device run, an eight-GPU figure) are not
ranked here: their rate includes what one accelerator alone does not pay (all-reduce, a shared host).
Where the suite and a source measured the same device, the pair is said with their batches: that the two
agree is what makes the source's other accelerators comparable with the suite's runs. The measured runs
of the same workload and precision with another setting (channels-last, TF32) are named as not this
recipe: they stand in the answer above, not here.
"""

from __future__ import annotations

import re

from suite import stats
from suite.reporting.narrow import images_per_second, wrapped
from suite.rows.cells import dollars, whole_number
from suite.run_record import printable

HEADING = "One recipe across accelerators"
INTRODUCTION = (
    "The suite's runs of a workload's recipe beside the published figures whose source ran that same "
    "recipe (its sources under the table), one accelerator each, ranked by img/s; a figure on another "
    "basis is never here (see its own table)."
)
_VENDOR = re.compile(r"^(?:NVIDIA|Tesla)\s+", re.IGNORECASE)


def groups(rows: list[dict]) -> dict[str, list[tuple[int, dict]]]:
    """Per recipe that has a published figure, its rows of one accelerator with a rate, as (number in the
    table, row)."""
    found: dict[str, list[tuple[int, dict]]] = {}
    for n, row in enumerate(rows, 1):
        if row.get("recipe_group") and row["accelerators_used"] == 1 and row["images_per_hour"]:
            found.setdefault(row["recipe_group"], []).append((n, row))
    return {group: members for group, members in found.items() if any(r["published"] for _, r in members)}


def _device(row: dict) -> str:
    return _VENDOR.sub("", str(row["device"] or "?"))


def _by(row: dict) -> str:
    return str(row["published_by"]) if row.get("published") else "the suite"


def _accelerators(members: list[tuple[int, dict]]) -> int:
    """How many accelerator models the rows are of (the suite's H200 and a source's H200 SXM are one)."""
    from suite.reporting.published.rows import same_device

    models: list[str] = []
    for _, row in members:
        if not any(same_device(row["device"], seen) for seen in models):
            models.append(row["device"])
    return len(models)


def _table(members: list[tuple[int, dict]]) -> list[str]:
    lines = [
        "| Rank | # | Device | Measured by | Batch | img/s | $/h | img/$ |",
        "|---:|---:|---|---|---:|---:|---:|---:|",
    ]
    for rank, (n, row) in enumerate(members, 1):
        cells = [
            str(rank),
            f"#{n}",
            _device(row),
            _by(row),
            f"{row['batch_size']:,}" if row["batch_size"] else "—",
            images_per_second(row["images_per_hour"]),
            dollars(row["usd_per_hour"]),
            whole_number(row["images_per_usd"]),
        ]
        lines.append("| " + " | ".join(printable(cell).replace("|", "\\|") for cell in cells) + " |")
    return lines


def _lead(what: str, field: str, members: list[tuple[int, dict]], shown) -> str:
    ranked = sorted((m for m in members if m[1][field]), key=lambda m: -m[1][field])
    if not ranked:
        return f"{what}: no row of this recipe is priced."
    (n, top), following = ranked[0], ranked[1:]
    text = f"{what}: #{n} {_device(top)} ({_by(top)}) at {shown(top)}"
    if not following:
        return text + "."
    m, second = following[0]
    ratio = stats.format_log_ratio(stats.log_rate(top[field]) - stats.log_rate(second[field]), 2)
    return text + f", {ratio}× the next, #{m} {_device(second)} ({shown(second)})."


def _same_device(members: list[tuple[int, dict]]) -> list[str]:
    """Each device both the suite and a source measured: the two rates and their batches."""
    from suite.reporting.published.rows import same_device

    said = []
    for n, ours in members:
        if ours.get("published"):
            continue
        for m, theirs in members:
            if theirs.get("published") and same_device(ours["device"], theirs["device"]):
                ratio = ours["images_per_hour"] / theirs["images_per_hour"]
                said.append(
                    f"The same device both ways, {_device(ours)}: the suite's #{n} at "
                    f"{images_per_second(ours['images_per_hour'])} img/s (batch {ours['batch_size']:,}) is "
                    f"{ratio:.2f}× {theirs['published_by']}'s #{m} at "
                    f"{images_per_second(theirs['images_per_hour'])} (batch {theirs['batch_size']:,})."
                )
    return said


def _not_this_recipe(rows: list[dict], group: str, members: list[tuple[int, dict]]) -> str | None:
    """The suite's rows of the recipe's workload and precision that are not of the recipe."""
    first = members[0][1]
    ranked = {id(row) for _, row in members}
    others = [
        f"#{n}"
        for n, row in enumerate(rows, 1)
        if not row.get("published")
        and id(row) not in ranked
        and row["model_run"] == first["model_run"]
        and row["precision"] == first["precision"]
    ]
    if not others:
        return None
    return (
        f"Not ranked here: the suite's {first['model_run']} {first['precision']} row(s) {', '.join(others)} "
        "(another setting, data or number of accelerators: not this recipe)."
    )


def lines(rows: list[dict], width: int = 110) -> list[str]:
    """The section, per recipe with a published figure: its table, the fastest and the cheapest per
    image, the device both measured, and the measured rows left out; nothing where no recipe has one."""
    found = groups(rows)
    if not found:
        return []
    out = [f"## {HEADING}", "", *wrapped(INTRODUCTION, width), ""]
    for group, members in found.items():
        members = sorted(members, key=lambda m: -m[1]["images_per_hour"])
        out += [
            f"**{printable(group)}** ({len(members)} row(s), {_accelerators(members)} accelerator(s)):",
            "",
        ]
        out += [*_table(members), ""]
        said = [
            _lead(
                "Fastest",
                "images_per_hour",
                members,
                lambda r: f"{images_per_second(r['images_per_hour'])} img/s",
            ),
            _lead(
                "Cheapest on demand",
                "images_per_usd",
                members,
                lambda r: f"{whole_number(r['images_per_usd'])} images per $",
            ),
            *_same_device(members),
        ]
        left_out = _not_this_recipe(rows, group, members)
        said += [left_out] if left_out else []
        out += [line for sentence in said for line in wrapped(printable(sentence), width, "- ")]
        out.append("")
    return out
