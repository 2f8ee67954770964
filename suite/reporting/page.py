"""Stage 4b of a report, the page: `suite report --format html --out report.html` writes one self-contained
file a team can paste into a review — the answer first (per workload the fastest and the cheapest
configuration, by how much, and whether the runs decide it), then the plots, then the table (sortable by
any column; the default columns with numbered notes below, or every column with --wide), the rows measured
in tokens in a table of their own (token_table.py's columns: tok/s, tokens per $, $ per million tokens on
demand and on spot; never ranked with images), the price sources, and the runs behind each row with their
warnings. It reads without a sideways scroll in a
1,280-pixel window: text wraps, the plots shrink to the page.

Self-contained means nothing is fetched when the page is viewed: the style and the small sorting script are
inline, the plots are PNGs embedded as data URIs. Every text that comes from a record is HTML-escaped (and
its control characters made visible, as in every other format).
"""

from __future__ import annotations

import base64
import html
import os
import re
import tempfile

from suite.inputs.errors import UserError
from suite.reporting import answer, narrow, page_links, recipe_ranking, token_table
from suite.reporting.published import table as published_table
from suite.reporting.published.rows import sources
from suite.reporting.render import assumed_spot, footer, published_footer, runs_behind, table_columns
from suite.rows.row_figures import figures_footer
from suite.run_record import printable

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em auto; padding: 0 1em; max-width: 84em;
       color: #1b1b1b; }
table { border-collapse: collapse; margin: 1em 0; }
table.wide { width: 100%; font-size: 12px; }
/* The wide table has some 35 columns: its text wraps to fit, and where its numbers still do not fit the
   window it scrolls sideways in its own box, never the page with it. */
div.table-box { max-width: 100%; overflow-x: auto; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.5em; vertical-align: top; overflow-wrap: break-word; }
table.wide th, table.wide td { overflow-wrap: anywhere; }  /* every column in 1,280 px: text wraps */
table.wide td.num { overflow-wrap: normal; }  /* a number breaks only at its spaces */
table.wide td { min-width: 2.5em; }  /* no column squeezed to a letter a line */
th { background: #f2f2f2; cursor: pointer; user-select: none; }
th[aria-sort="ascending"]::after { content: " ▲"; }
th[aria-sort="descending"]::after { content: " ▼"; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.narrow td.num { white-space: nowrap; }
tr.published td { font-style: italic; background: #fbf7e9; }
p, li { overflow-wrap: anywhere; }
img { max-width: 100%; height: auto; border: 1px solid #ddd; margin: 0.5em 0; }
.note { color: #555; }
ul.answer li { margin: 0.3em 0; }
"""

# Click a header to sort by it; again to reverse. Numbers sort as numbers ("1,234" and "0.91×" included),
# "—" (no value, also "— (2 run(s); 6 needed)") always last.
SCRIPT = """
document.querySelectorAll("table.sortable th").forEach(function (th) {
  var column = th.cellIndex;  /* its own table's column: the page has a table of tokens too */
  th.addEventListener("click", function () {
    var table = th.closest("table"), body = table.tBodies[0];
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    function key(row) {
      var text = row.cells[column].textContent.trim();
      var number = parseFloat(text.replace(/,/g, ""));
      return { none: text.charAt(0) === "—" || text === "", number: number, text: text };
    }
    Array.from(body.rows).sort(function (a, b) {
      var x = key(a), y = key(b);
      if (x.none !== y.none) { return x.none ? 1 : -1; }
      var order = (!isNaN(x.number) && !isNaN(y.number)) ? x.number - y.number : x.text.localeCompare(y.text);
      return ascending ? order : -order;
    }).forEach(function (row) { body.appendChild(row); });
  });
});
"""


def _text(value) -> str:
    return html.escape(printable(str(value)))


def _inline(text) -> str:
    """Record text as HTML, with `a command` set as code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", _text(text))


def _paragraphs(text: str) -> str:
    """Plain report text (footer, traces) as HTML: blank lines part paragraphs, "- " lines are a list."""
    blocks, items = [], []
    for line in text.splitlines() + [""]:
        if line.lstrip().startswith("- "):  # a nested item (a published source's figures) listed flat
            items.append(f"<li>{_text(line.lstrip()[2:])}</li>")
            continue
        if items:
            blocks.append("<ul>" + "".join(items) + "</ul>")
            items = []
        if line.strip():
            blocks.append(f'<p class="note">{_text(line)}</p>')
    return "\n".join(blocks)


NUMBER = ' class="num"'


def _table(rows: list[dict], catalogs, style: str, wide: bool) -> str:
    kind = "wide" if wide or style == "seed" else "narrow"
    columns = table_columns(rows, style, wide, catalogs)
    return _rows_table(rows, columns, f"sortable {kind}", "rows", _targets(rows, catalogs, style, wide))


def _token_table(tokens: list[dict], wide: bool) -> str:
    targets = page_links.warning_targets(tokens, "T")
    targets |= page_links.legend_targets(page_links.marks_said(tokens), TOKEN_MARKS)
    return _rows_table(tokens, token_table.columns(wide), "sortable narrow", "token-rows", targets, "T")


LISTED = {"Marks", "Notes"}  # the columns that list marks and note numbers, each linked to what it means
TOKEN_MARKS = "token-"  # the token table's marks' legend entries: token-mark-synth, …


def _rows_table(rows, columns, classes: str, table_id: str, targets: set[str], prefix: str = "") -> str:
    """A table of `rows` (numbered `prefix`1, 2, …), its marks linked to their notes (page_links.py)."""
    head = "<th>#</th>" + "".join(f"<th>{_text(name)}</th>" for name, _, _ in columns)
    body = []
    for n, row in enumerate(rows, 1):
        cells = [f'<td class="num">{prefix}{n}</td>']
        cells += [
            f"<td{'' if left else NUMBER}>"
            + page_links.cell(cell(row), f"{prefix}{n}", targets, name in LISTED, prefix and TOKEN_MARKS)
            + "</td>"
            for name, cell, left in columns
        ]
        marked = ' class="published"' if row.get("published") else ""
        body.append(f"<tr{marked}>" + "".join(cells) + "</tr>")
    return (
        f'<div class="table-box"><table class="{classes}" id="{table_id}"><thead><tr>'
        + head
        + "</tr></thead><tbody>\n"
        + "\n".join(body)
        + "\n</tbody></table></div>"
    )


def _targets(rows: list[dict], catalogs, style: str, wide: bool) -> set[str]:
    """The ids the image table's marks may link to: its rows' warnings, its notes and its marks' legend."""
    wide = wide or style == "seed"
    texts, _ = narrow.numbered(rows, wide)
    said = [] if wide else narrow.marks_said(rows, *assumed_spot(catalogs))
    return (
        page_links.warning_targets(rows)
        | {f"note-{n}" for n in range(1, len(texts) + 1)}
        | page_links.legend_targets(said)
    )


def _tokens(tokens: list[dict], wide: bool = False) -> list[str]:
    """The rows measured in tokens, as the markdown report has them (token_table.py): the leads per
    workload, their table (rows T1, T2, …; with `wide` the figures beside the rate), its marks and notes,
    the published figures' sources, the runs and their warnings."""
    if not tokens:
        return []
    leads = token_table.leads(tokens)
    said = page_links.marks_said(tokens)
    noted = [(n, r) for n, r in enumerate(tokens, 1) if r["notes"] or r["errors"]]
    published = sources(tokens, "T")
    return [
        f"<h2>{_text(token_table.HEADING)}</h2>",
        f'<p class="note">{_text(token_table.INTRODUCTION)}</p>',
        ('<ul class="answer">' + "".join(f"<li>{_text(line[2:])}</li>" for line in leads) + "</ul>")
        if leads
        else "",
        _token_table(tokens, wide),
        page_links.legend(said, TOKEN_MARKS, _inline) if said else "",
        (
            '<ol class="note" id="token-notes">'
            + "".join(f"<li>T{n}: {_inline('; '.join(r['notes'] + r['errors']))}</li>" for n, r in noted)
            + "</ol>"
        )
        if noted
        else "",
        _paragraphs("\n".join([token_table.PUBLISHED_HEADING, "", *published])) if published else "",
        _paragraphs(
            "\n".join(
                ["Runs behind each row in tokens:", ""]
                + [f"- T{n}: {token_table.runs_behind(r)}" for n, r in enumerate(tokens, 1)]
            )
        ),
        *page_links.warnings(tokens, "T"),
    ]


def _answer(rows: list[dict], records: list[dict], catalogs, tokens: list[dict] = ()) -> list[str]:
    """The answer section: per workload its leads as a list (those in tokens after those in images), then
    how the verdicts were made."""
    result = answer.answer(rows, records, assumed_spot(catalogs)[0], tokens)
    parts = [f"<h2>{_text(answer.HEADING)}</h2>"]
    if not result["workloads"]:
        return parts + ['<p class="note">No measured row: the table lists published figures only.</p>']
    for item in result["workloads"]:
        parts.append(f"<p><strong>{_text(item['workload'])}</strong> ({_text(answer.counted(item))}):</p>")
        parts.append(
            '<ul class="answer">' + "".join(f"<li>{_inline(s)}</li>" for s in item["sentences"]) + "</ul>"
        )
    parts.append(f'<p class="note">{_inline(result["method"])}</p>')
    if result["published"]:
        parts.append(f'<p class="note">{_text(answer.PUBLISHED_LINE)}</p>')
    return parts + _ranking(rows)


def _ranking(rows: list[dict]) -> list[str]:
    """One recipe across accelerators (recipe_ranking.py), as the markdown report has it."""
    found = recipe_ranking.lines(rows, width=10_000)  # one line a sentence: the page wraps them
    return [_markdown_block(found)] if found else []


def _markdown_block(lines: list[str], table_id: str = "") -> str:
    """A section written as markdown (a heading, paragraphs, a pipe table, "- " sentences) as HTML; its
    table given `table_id` (its rows are published figures: shaded as in the table)."""
    parts, table, items = [], [], []
    for line in [*lines, ""]:
        if line.startswith("|"):
            table.append(line)
            continue
        if table:
            parts.append(_pipe_table(table, table_id))
            table = []
        if line.lstrip().startswith("- "):  # a nested item (a source's figures) listed flat
            items.append(f"<li>{_inline(line.lstrip()[2:])}</li>")
            continue
        if items:
            parts.append('<ul class="answer">' + "".join(items) + "</ul>")
            items = []
        if line.startswith("## "):
            parts.append(f"<h2>{_text(line[3:])}</h2>")
        elif line.strip():
            parts.append(f'<p class="note">{_inline(line.replace("**", ""))}</p>')
    return "\n".join(parts)


def _pipe_table(lines: list[str], table_id: str = "") -> str:
    """A markdown pipe table (header, rule, rows) as a sortable HTML table."""
    cells = [[c.strip().replace("\\|", "|") for c in line.strip().strip("|").split(" | ")] for line in lines]
    head, body = cells[0], cells[2:]
    named, marked = (f' id="{table_id}"', ' class="published"') if table_id else ("", "")
    return (
        f'<table class="sortable narrow"{named}><thead><tr>'
        + "".join(f"<th>{_text(c)}</th>" for c in head)
        + "</tr></thead><tbody>\n"
        + "\n".join(f"<tr{marked}>" + "".join(f"<td>{_text(c)}</td>" for c in row) + "</tr>" for row in body)
        + "\n</tbody></table>"
    )


def _notes(rows: list[dict], catalogs, style: str, wide: bool) -> list[str]:
    """Under the table: the marks in words (the default table) and the numbered notes the rows point to."""
    wide = wide or style == "seed"
    assumed, every = assumed_spot(catalogs)
    texts, _ = narrow.numbered(rows, wide)
    said = [] if wide else narrow.marks_said(rows, assumed, every)
    parts = [page_links.legend(said, inline=_inline)] if said else []
    if texts:  # each note an item its number in the table links to
        parts.append(
            '<ol class="note" id="notes">'
            + "".join(f'<li id="note-{n}">{_inline(t)}</li>' for n, t in enumerate(texts, 1))
            + "</ol>"
        )
    return parts


def _plots(records: list[dict], rows: list[dict], catalogs) -> tuple[list[str], list[str]]:
    """The report's plots as embedded <img> tags, and a line for each one not drawn (and why)."""
    from suite.reporting import plots

    notes: list[str] = []
    try:
        with tempfile.TemporaryDirectory(prefix="suite-page-") as folder:
            paths = plots.draw_all(records, rows, catalogs, folder, notes.append)
            images = []
            for path in paths:
                with open(path, "rb") as handle:  # our own file, just drawn
                    data = base64.b64encode(handle.read()).decode("ascii")
                name = os.path.splitext(os.path.basename(path))[0].replace("_", " ")
                images.append(
                    f'<figure><img alt="{_text(name)}" src="data:image/png;base64,{data}"></figure>'
                )
    except UserError as error:  # matplotlib missing: the page still has everything else
        return [], [str(error)]
    return images, notes


def render_page(
    rows: list[dict],
    catalogs,
    records: list[dict],
    dataset_size: int,
    style: str = "exact",
    wide: bool = False,
    tokens: tuple[dict, ...] | list[dict] = (),
    others: tuple[dict, ...] | list[dict] = (),
) -> str:
    """The page: `rows` in images (the answer, the plots, the table), then `tokens`, the rows in tokens
    (token_rows.split), in a table of their own, then `others`, the published figures on other bases
    (published_basis.split), in theirs."""
    tokens, others = list(tokens), list(others)
    every = rows + tokens + others
    measured = sum(1 for row in every if not row.get("published"))
    published = len(every) - measured
    summary = f"{len(records)} run(s) in {measured} measured row(s)" + (
        f" and {published} published figure(s)" if published else ""
    )
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>suite report</title>",
        f"<style>{STYLE}</style>",
        "</head><body>",
        "<h1>Training throughput and cost</h1>",
        f'<p class="note">{_text(summary)}; the rows are numbered as in the table.</p>',
        # Rows in tokens (or figures on other bases) only: no plot or table in images to show (as the
        # markdown report), the answer still.
        *(
            _images(rows, catalogs, records, style, wide, tokens)
            if rows or not (tokens or others)
            else _answer([], records, catalogs, tokens)
        ),
        *_tokens(tokens, wide or style == "seed"),
        # one line a paragraph or note: the page wraps them
        _markdown_block(published_table.markdown(others, width=10_000), "other-rows") if others else "",
        "<h2>Prices and method</h2>",
        _paragraphs(footer(catalogs, dataset_size)),
        _paragraphs("\n".join(figures_footer(every))) if wide or style == "seed" else "",
        _paragraphs("\n".join(published_footer(rows))),
        "<h2>Runs and warnings</h2>",
        _paragraphs("\n".join(runs_behind(rows))),
        *page_links.warnings(rows),
        f"<script>{SCRIPT}</script>",
        "</body></html>",
    ]
    return "\n".join(part for part in parts if part) + "\n"


def _images(rows: list[dict], catalogs, records: list[dict], style: str, wide: bool, tokens=()) -> list[str]:
    """The page's part in images: the answer (the rows in tokens answered too), the plots, the table and
    its notes."""
    images, not_drawn = _plots(records, rows, catalogs)
    return [
        *_answer(rows, records, catalogs, tokens),
        "<h2>Plots</h2>",
        *(images or ['<p class="note">No plot.</p>']),
        *(f'<p class="note">{_text(line)}</p>' for line in not_drawn),
        "<h2>The table</h2>",
        '<p class="note">Click a column\'s header to sort by it.</p>',
        _table(rows, catalogs, style, wide),
        *_notes(rows, catalogs, style, wide),
    ]
