"""A report and a comparison grow with their records, not with their square: the work each does is counted
here (never timed). benchmarks/report_scale.py times them."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import ROOT, SAFETY_NET_S
from test_report import make_record

from suite.prices.catalog import load_catalog
from suite.rows.build import build_rows

SEED = load_catalog("seed-2022")


class _Figures:
    """matplotlib.pyplot, keeping each figure a plot closes (to count what it drew)."""

    def __init__(self, plt):
        self._plt, self.closed = plt, []

    def __getattr__(self, name):
        return getattr(self._plt, name)

    def close(self, fig):
        self.closed.append(fig)
        self._plt.close(fig)


@pytest.fixture
def figures(monkeypatch):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from suite.reporting import plots

    kept = _Figures(plots._pyplot())
    monkeypatch.setattr(plots, "_pyplot", lambda: kept)
    # what was drawn is counted, not rendered: an empty file stands for the PNG
    monkeypatch.setattr(Figure, "savefig", lambda self, path, **_: open(path, "wb").close())
    return kept


def test_many_runs_are_one_collection_without_a_legend(figures, tmp_path):
    from suite.reporting import plots

    records = [make_record(1_000_000 + i, run=str(i)) for i in range(plots.MAX_NAMED_RUNS + 60)]
    plots.throughput_over_run(records, str(tmp_path / "many.png"))
    plots.throughput_over_run(records[:3], str(tmp_path / "few.png"))
    many, few = (fig.axes[0] for fig in figures.closed)
    # drawn as one artist, whatever the count: no line and no legend entry per run
    assert len(many.lines) == 0 and len(many.collections) == 1 and many.get_legend() is None
    assert len(many.collections[0].get_segments()) == len(records)
    assert "too many to name" in many.get_title()
    # a few runs are drawn as before: a line and a legend entry each
    assert len(few.lines) == 3 and len(few.get_legend().get_texts()) == 3
    assert few.get_title() == "Throughput over each run"


def test_many_priced_rows_draw_at_most_max_bars(figures, tmp_path):
    from suite.reporting import plots

    count = plots.MAX_BARS + 30
    records = [make_record(1_000_000 + 1000 * i, batch=i + 1, run=str(i)) for i in range(count)]
    rows = build_rows(records, SEED)
    plots.images_per_dollar(rows, "caption", str(tmp_path / "bars.png"))
    (ax,) = figures.closed[0].axes
    assert len(ax.patches) == 2 * plots.MAX_BARS  # on-demand and spot, per row kept
    kept = sorted(r["images_per_usd"] for r in rows)[-plots.MAX_BARS :]
    assert sorted(bar.get_height() for bar in ax.containers[0]) == pytest.approx(kept)
    assert f"the {plots.MAX_BARS} rows with the most of {count} priced" in ax.get_title()


def _brute_closest(ours: list[dict], theirs: list[dict]) -> tuple[int, int]:
    """compare's closest pair as it was found before: every pair, in order, the first of the fewest."""
    best = None
    for i, a in enumerate(ours):
        for j, b in enumerate(theirs):
            differ = sum(a.get(k) != b.get(k) for k in a.keys() | b.keys())
            if best is None or differ < best[0]:
                best = (differ, i, j)
    return best[1], best[2]


def test_the_closest_pair_is_the_one_every_pair_compared_finds():
    import random

    from suite.compare import closest_pair

    rng = random.Random(7)
    for _ in range(300):
        width = rng.randint(0, 7)
        values = rng.randint(1, 3)

        ours, theirs = (
            [
                {f"f{k}": str(rng.randint(1, values)) for k in range(width) if rng.random() < 0.9}
                for _ in range(rng.randint(1, 12))
            ]
            for _side in range(2)
        )
        assert closest_pair.closest(ours, theirs) == _brute_closest(ours, theirs)
    assert closest_pair.closest([], [{"a": "1"}]) is None


def test_many_configurations_a_side_are_not_compared_pair_by_pair(monkeypatch):
    from suite.compare import closest_pair
    from suite.compare import comparison as compare

    compared = []
    real = closest_pair._compare_pairs
    monkeypatch.setattr(closest_pair, "_compare_pairs", lambda *a: compared.append(a) or real(*a))
    # 150 configurations a side (batch sizes), the candidate's on another torch: no pair matches
    base = [
        (f"a/{b}.json", make_record(1_000_000, batch=b, run=f"a{b}", backend="cpu", device="CPU"))
        for b in range(1, 151)
    ]
    cand = []
    for b in range(1, 151):
        record = make_record(1_000_000, batch=b, run=f"b{b}", backend="cpu", device="CPU")
        record["context"]["torch"] = "9.9"
        cand.append((f"b/{b}.json", record))
    result = compare.compare(base, cand)
    assert not result["comparisons"] and not compared  # found by hashing, not by 22,500 pairs
    assert result["unpaired"]["differs"] == [{"field": "context.torch", "baseline": None, "candidate": "9.9"}]


class _CountedReads(list):
    """A list of records that counts how often it is read through."""

    reads = 0

    def __iter__(self):
        self.reads += 1
        return super().__iter__()


def _repeats(configurations: int, runs: int) -> list[dict]:
    return [
        make_record(1_000_000 * (1 + c) * (1 + 0.01 * r), batch=c + 1, run=f"{c}-{r}")
        for c in range(configurations)
        for r in range(runs)
    ]


def test_the_answer_reads_the_records_once_not_once_per_lead():
    from suite.reporting import answer

    runs = _repeats(20, 3)
    rows, records = build_rows(runs, SEED), _CountedReads(runs)
    result = answer.answer(rows, records)
    assert result["family"]["family"] >= 3  # leads were judged from their runs
    assert records.reads == 1


def test_a_row_consults_the_numerics_standing_once(monkeypatch):
    from suite.rows import build as rows_module

    asked = []
    real = rows_module.numerics_standing
    monkeypatch.setattr(rows_module, "numerics_standing", lambda group: asked.append(1) or real(group))
    build_rows(_repeats(10, 3), SEED)
    assert len(asked) == 10


def test_compare_declares_the_run_options_once_for_every_rerun_command(monkeypatch):
    from suite import run_options
    from suite.compare import comparison as compare

    built = []
    real = run_options.run_parser
    monkeypatch.setattr(run_options, "run_parser", lambda: built.append(1) or real())
    run_options._listed_options.cache_clear()
    side = [(f"{b}.json", make_record(1_000_000, batch=b, run=f"{s}{b}")) for s in "ab" for b in range(1, 31)]
    result = compare.compare(side[:30], side[30:])
    assert sum("--repeat" in note for c in result["comparisons"] for note in c["notes"]) == 30
    assert len(built) == 1  # not two per configuration and side


@pytest.mark.slow  # fresh Pythons: the benchmark runs each command as a user runs it
def test_the_benchmark_runs_on_a_few_records_from_a_committed_template(tmp_path):
    # The smallest sizes: that the script still works with the suite as it is (not how fast it is).
    template = os.path.join(ROOT, "tests", "data", "records", "dcgan64-cpu.json")
    done = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", "report_scale.py"), "--records", "4",
         "--compare-runs", "2", "--formats", "md", "--runs-per-group", "2", "--template", template,
         "--timeout", str(SAFETY_NET_S)],
        capture_output=True, text=True, timeout=SAFETY_NET_S,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("| 4 | ") for line in lines) and any(
        line.startswith("| 2 | ") for line in lines
    )
    assert ">" not in "".join(line for line in lines if line.startswith("| "))  # nothing stopped
