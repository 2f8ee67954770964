"""`suite report --format html`: one self-contained page (table, plots, runs, warnings, price sources), read
as a string here and as a browser sees it (headless Chromium) where one is installed."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess

import pytest
from test_report import make_record

from suite.cli import main


@pytest.fixture
def folder(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    ok = make_record(5_830_000, run="a")
    ok["warnings"] = ["window <2> was slow & noisy"]  # text from a record: escaped on the page
    records = {
        "a": ok,
        "b": make_record(1_000_000, instance="p3.8xlarge", used=1, run="b"),
        "c": make_record(None, status="oom", run="c", batch=9999),
    }
    for name, record in records.items():
        (results / f"{name}.json").write_text(json.dumps(record))
    return results


# The page of each folder's records, by their files and the options: most tests here read the same page,
# and drawing its plots is most of the time a page takes (about 0.3 s).
_pages: dict[tuple, str] = {}


def page(folder, tmp_path, *extra, cached=True) -> str:
    """The page, also written to TMP_PATH/report.html; CACHED False: drawn again (its stderr to read)."""
    out = tmp_path / "report.html"
    key = (tuple(sorted((path.name, path.read_bytes()) for path in folder.iterdir())), extra)
    if key not in _pages or not cached:
        argv = ["report", str(folder), "--prices", "seed-2022", "--format", "html", "--out", str(out), *extra]
        assert main(argv) == 0
        _pages[key] = out.read_text(encoding="utf-8")
    out.write_text(_pages[key], encoding="utf-8")
    return _pages[key]


def test_the_page_holds_the_table_runs_warnings_and_price_sources_and_fetches_nothing(folder, tmp_path):
    text = page(folder, tmp_path)
    body = text.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    assert body.count("<tr") == 3  # one row per configuration, the failed one included
    assert "1,619" in body and "OOM" in body  # 5,830,000 img/h in img/s; the failed row says how it failed
    assert "run-a" in text and "run-b" in text and "Runs behind each row" in text
    assert "window &lt;2&gt; was slow &amp; noisy" in text and "<2>" not in text
    assert "Prices: seed-2022 (USD/hour), as of 2022-02" in text and "source: the seed DCGAN" in text
    # Nothing is fetched when the page is viewed: no external script, style, image or frame.
    assert not re.search(r"""<(script|link|img|iframe)[^>]+(src|href)=["']?(https?:|//)""", text)
    assert 'class="sortable ' in text and "<script>" in text


def test_plots_are_embedded_in_the_page(folder, tmp_path):
    pytest.importorskip("matplotlib")
    text = page(folder, tmp_path)
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', text)
    assert len(images) == 2 and all(len(data) > 10_000 for data in images)


def test_published_figures_are_marked_on_the_page(folder, tmp_path):
    text = page(folder, tmp_path, "--published")
    assert '<tr class="published">' in text and "[PUBLISHED]" in text
    assert "Published figures" in text  # their sources, under the table


def test_a_bad_format_names_the_accepted_ones(folder, capsys):
    assert main(["report", str(folder), "--format", "htm"]) == 2
    assert "md, csv, json, html" in capsys.readouterr().err


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Headless, and quiet on a closed network: no background connections, a fresh profile.
BROWSER_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.mark.slow  # starts a browser
@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (Debian: apt-get install chromium)")
def test_a_browser_renders_the_page_with_its_table_and_plots(folder, tmp_path):
    text = page(folder, tmp_path)
    url = (tmp_path / "report.html").as_uri()
    browse = [CHROMIUM, *BROWSER_FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([*browse, "--dump-dom", url], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    seen = dom.stdout
    assert "Training throughput and cost" in seen and "1,619" in seen and "Runs behind each row" in seen
    assert seen.count("<tr") == text.count("<tr")  # the browser parsed every row
    shot = tmp_path / "page.png"
    drawn = subprocess.run(
        [*browse, "--window-size=1280,1000", f"--screenshot={shot}", url], capture_output=True, timeout=120
    )
    png = shot.read_bytes()
    assert drawn.returncode == 0 and png[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(png[16:20], "big") == 1280  # the PNG's width (IHDR): the window asked for


def test_the_page_opens_with_the_answer_then_the_plots_then_the_table(folder, tmp_path):
    text = page(folder, tmp_path)
    answer, plots, table = (text.index(mark) for mark in ("Fastest and cheapest", "<h2>Plots", "<table"))
    assert answer < plots < table
    assert "Fastest: #1 p3.2xlarge (V100 16GB ×1, amp, batch 256; retired instance) at 1,619 img/s" in text
    assert '<ol class="note" id="notes">' in text  # the notes under the table, not in a cell


# The page's own width as the browser lays it out, written into the DOM that --dump-dom prints.
MEASURE = (
    "<script>document.documentElement.setAttribute('data-scroll-width', "
    "document.documentElement.scrollWidth);</script></body>"
)


def laid_out_width(html_file, tmp_path, window: int) -> int:
    measured = html_file.with_suffix(".measured.html")
    measured.write_text(html_file.read_text(encoding="utf-8").replace("</body>", MEASURE), encoding="utf-8")
    browse = [CHROMIUM, *BROWSER_FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run(
        [*browse, f"--window-size={window},900", "--dump-dom", measured.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    return int(re.search(r'data-scroll-width="(\d+)"', dom.stdout).group(1))


@pytest.mark.slow  # starts a browser
@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (Debian: apt-get install chromium)")
@pytest.mark.parametrize("extra", [(), ("--published",), ("--published", "--wide")])
def test_the_page_needs_no_sideways_scroll_at_1280_pixels(folder, tmp_path, extra):
    diagnosed = make_record(2_000_000, run="d", batch=64, diagnosis="data loader")
    (folder / "d.json").write_text(json.dumps(diagnosed))  # one more column in the wide table
    page(folder, tmp_path, *extra)
    width = laid_out_width(tmp_path / "report.html", tmp_path, 1280)
    assert 1000 < width <= 1280, f"the page is {width} px wide in a 1,280 px window"


def token_record() -> dict:
    """A gpt2-small run, as a record in tokens: 1,000 sequences/hour of 1,024 tokens each."""
    record = make_record(1_000, workload="gpt2-small", instance="p3.2xlarge", run="t", batch=16)
    record["metrics"].update(unit="tokens", tokens_per_sample=1024)
    return record


def test_token_rows_have_their_own_table_on_the_page(folder, tmp_path, capsys):
    (folder / "t.json").write_text(json.dumps(token_record()))
    text = page(folder, tmp_path, cached=False)
    assert "not on the page" not in capsys.readouterr().err
    images = text.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    assert "gpt2-small" not in images  # never a row of the image table
    tokens = text.split('id="token-rows"', 1)[1].split("</table>", 1)[0]
    for header in ("tok/s", "Tokens per $", "$ per M tokens", "Spot $ per M tokens"):
        assert f"<th>{html.escape(header)}</th>" in tokens
    (row,) = re.findall(r"<tr>(.*?)</tr>", tokens.split("<tbody>", 1)[1])
    assert "<td>gpt2-small</td>" in row and "T1" in row and ">284</td>" in row  # 1,000 × 1,024 / 3,600 tok/s
    assert ">16 × 1,024</td>" in row and "Runs behind each row in tokens" in text and "T1: run-t" in text
    assert text.index("Language models, in tokens") < text.index("<h2>Prices and method")


def test_published_figures_on_other_bases_are_the_pages_own_table(folder, tmp_path):
    text = page(folder, tmp_path, "--published")
    # LLaMA on Gaudi 2 is no suite workload: per card and in model FLOP/s, in the table of other bases
    others = text.split('id="other-rows"', 1)[1].split("</table>", 1)[0]
    assert others.count("Gaudi 2") == 5 and ">4,680 tok/s</td><td>286</td>" in others
    assert others.count('<tr class="published">') == 5 + 12 + 4  # and NVIDIA's ImageNet rows, the article's
    assert 'id="token-rows"' not in text  # no token row measured, none of the recipe of one
    assert "(intel-gaudi2-llama-3.1-8b-x8-fp8): 37,440 tokens/s at 8,192 tokens a sequence" in text
    assert "llama-3.1-8b is not a suite workload" in text
    images = text.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    assert "gaudi" not in images.lower()


# Sorts the token table by its tok/s column (ascending) and writes its first row's number into the DOM.
SORT_TOKENS = (
    "<script>var t = document.getElementById('token-rows');"
    "var th = Array.from(t.tHead.rows[0].cells).find(function (c) { return c.textContent === 'tok/s'; });"
    "th.click();"
    "document.documentElement.setAttribute('data-first', t.tBodies[0].rows[0].cells[0].textContent);"
    "</script></body>"
)


@pytest.mark.slow  # starts a browser
@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (Debian: apt-get install chromium)")
def test_the_token_table_sorts_by_its_own_columns(folder, tmp_path):
    # Two measured token rows; the table lists the smaller batch first (T1), which is the faster one
    fast = make_record(3_000, workload="gpt2-small", instance="p3.2xlarge", run="t", batch=16)
    slow = make_record(1_000, workload="gpt2-small", instance="p3.2xlarge", run="u", batch=32)
    for record in (fast, slow):
        record["metrics"].update(unit="tokens", tokens_per_sample=1024)
    (folder / "t.json").write_text(json.dumps(fast))
    (folder / "u.json").write_text(json.dumps(slow))
    page(folder, tmp_path)
    text = (tmp_path / "report.html").read_text(encoding="utf-8")
    tokens = text.split('id="token-rows"', 1)[1].split("</table>", 1)[0]
    assert tokens.index(">16 × 1,024<") < tokens.index(">32 × 1,024<")  # T1 is the faster one, unsorted
    sorting = tmp_path / "sorting.html"
    sorting.write_text(text.replace("</body>", SORT_TOKENS))
    browse = [CHROMIUM, *BROWSER_FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run(
        [*browse, "--dump-dom", sorting.as_uri()], capture_output=True, text=True, timeout=120
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert 'data-first="T2"' in dom.stdout  # sorted by tok/s, ascending: the slower row first
