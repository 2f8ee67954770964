"""PNG plots for `suite report --plot DIR`, drawn from the same records and rows as the table.

- throughput_over_run.png: each run's timed windows, images/s against time into the timed part of the run
  (a run that slows down — thermal throttling, a starving data loader — shows as a falling line).
- images_per_dollar.png: images per $ per configuration and instance, on-demand beside spot.

A plot stays one picture however many records there are: past MAX_NAMED_RUNS runs the runs are drawn as
one collection of thin lines with no legend (a legend of thousands of names is unreadable, and laying it
out took minutes), and past MAX_BARS priced rows the bars are the MAX_BARS rows with the most images per $
(the figure grew 1.6 inches a row: 66,288 pixels wide at 344 rows, each bar with four lines of label); each
title says so.

matplotlib is imported here only (the `plot` extra), so the rest of the suite never needs it.
"""

from __future__ import annotations

import os

from suite import atomic, stats
from suite.inputs.errors import UserError

MAX_NAMED_RUNS = 40  # runs drawn one by one, with markers and a legend entry each
MAX_BARS = 24  # priced rows drawn as bars


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise UserError("--plot needs matplotlib: pip install 'suite[plot]'") from None
    matplotlib.use("Agg")  # files only; never open a window
    import matplotlib.pyplot as plt

    return plt


def _data_label(record: dict) -> str:
    from suite.run_record.facts import data_path

    source = data_path(record)
    return "synthetic (ceiling)" if source == "synthetic" else source


def _run_label(record: dict) -> str:
    from suite.rows import labels
    from suite.run_record.facts import profiled

    config = record["config"]
    parts = [
        config.get("workload"),
        config.get("backend"),
        labels.precision(config),  # fp32+TF32 where TF32 did the fp32 math
        *labels.shown(labels.settings([record])),
        f"batch {config.get('batch_size')}",  # spelled out: "b16" reads as bf16
        _data_label(record),
    ]
    if profiled(record):
        parts.append("[profiled: perturbed]")
    if config.get("instance"):
        parts.append(config["instance"])
    return f"{' '.join(str(p) for p in parts)} (run {str(record.get('run_id', '')).rsplit('-', 1)[-1]})"


def throughput_over_run(records: list[dict], path: str) -> str | None:
    from suite.run_record.facts import profiled

    runs = [r for r in records if (r.get("metrics") or {}).get("window_images_per_second")]
    if not runs:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 5))
    named = len(runs) <= MAX_NAMED_RUNS
    lines = []
    for record in runs:
        metrics = record["metrics"]
        rates = [
            rate * stats.SECONDS_PER_HOUR for rate in metrics["window_images_per_second"]
        ]  # the table's unit: img/h
        times = metrics.get("window_time_s") or [1.0] * len(rates)
        # x: the end of each window, in seconds of timed work (warm-up excluded)
        ends, total = [], 0.0
        for t in times:
            total += t
            ends.append(total)
        # dashed: failed or diverged; dotted: profiled (its steps were slowed by the profiler)
        style = "--" if record.get("status") != "ok" else (":" if profiled(record) else "-")
        if not named:
            lines.append((list(zip(ends, rates)), style))
            continue
        ax.plot(
            ends,
            rates,
            style,
            marker="o",
            label=_run_label(record) + ("" if record.get("status") == "ok" else f" [{record.get('status')}]"),
        )
    if lines:  # one artist for every run: drawing and laying out grow with the points, not per run
        from matplotlib.collections import LineCollection

        segments, styles = zip(*lines)
        ax.add_collection(LineCollection(segments, linestyles=styles, linewidths=0.6, alpha=0.5))
        ax.autoscale_view()
    ax.set_xlabel("time into the timed windows (s, warm-up excluded)")
    ax.set_ylabel("throughput (img/h, per window)")
    ax.set_title(
        "Throughput over each run"
        if named
        else f"Throughput over each run ({len(runs):,} runs, too many to name: the table lists them)"
    )
    ax.set_ylim(bottom=0)
    ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.grid(alpha=0.3)
    if named:  # below the axes, so that no line is hidden behind it
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, frameon=False)
    fig.tight_layout()
    with atomic.atomic_path(path) as tmp:  # an existing plot stays whole if the disk is full
        fig.savefig(tmp, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


def _caveats(row: dict) -> list[str]:
    """The table's marks, on the plot too."""
    caveats = []
    if row.get("published"):
        caveats.append(f"PUBLISHED: {row['published_id']}")
    if row.get("hypothetical"):
        caveats.append(f"hypothetical: ran on {row['device']}")
    if row.get("extrapolated_factor"):
        caveats.append(f"extrapolated ×{row['extrapolated_factor']:g}")
    elif row.get("instance_accelerators") and 0 < row["accelerators_used"] < row["instance_accelerators"]:
        caveats.append(f"{row['accelerators_used']} of {row['instance_accelerators']} accelerators")
    if row.get("upper_bound"):
        caveats.append("synthetic: ceiling")
    return caveats


def bar_label(row: dict) -> str:
    """A bar's label: what the row is (its precision as it ran and its settings, as the table says them),
    where, and its caveats."""
    settings = ", ".join(row.get("settings") or [])
    return (
        f"{row['model_run']}\n{row['instance']}\n{row['backend'] or 'published'} "
        f"{row['precision'] or '(precision not stated)'}{' + ' + settings if settings else ''} "
        f"batch {row['batch_size'] or 'not stated'}\n{row['data']}"
        + "".join(f"\n({caveat})" for caveat in _caveats(row))
    )


def images_per_dollar(rows: list[dict], caption: str, path: str) -> str | None:
    # Rows in tokens (measured or published) count sequences, not images: never drawn among them.
    priced = [r for r in rows if r["images_per_usd"] is not None and r.get("unit", "images") == "images"]
    if not priced:
        return None
    title = "Images per dollar, on-demand beside spot"
    if len(priced) > MAX_BARS:  # the most images per $, in the table's order
        kept = {id(r) for r in sorted(priced, key=lambda r: -r["images_per_usd"])[:MAX_BARS]}
        title += f": the {MAX_BARS} rows with the most of {len(priced):,} priced"
        priced = [r for r in priced if id(r) in kept]
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(priced) + 2), 5.5))
    width = 0.38
    positions = list(range(len(priced)))
    on_demand = [r["images_per_usd"] for r in priced]
    spot = [r["spot_images_per_usd"] or 0 for r in priced]
    # hatched: not a plain measurement of the whole instance (extrapolated, hypothetical, a ceiling, or a
    # figure published by others)
    hatch = ["//" if _caveats(r) else "" for r in priced]
    bars = ax.bar([p - width / 2 for p in positions], on_demand, width, label="on-demand", color="#4472c4")
    spot_bars = ax.bar([p + width / 2 for p in positions], spot, width, label="spot", color="#ed7d31")
    for bar, mark in zip(list(bars) + list(spot_bars), hatch + hatch):
        bar.set_hatch(mark)
    for bar, row in zip(spot_bars, priced):
        if row["spot_images_per_usd"] is None:
            ax.annotate(
                "no spot\nquote", (bar.get_x() + bar.get_width() / 2, 0), ha="center", va="bottom", fontsize=7
            )
    ax.set_xticks(positions)
    ax.set_xticklabels([bar_label(r) for r in priced], fontsize=8)
    ax.set_ylabel("images per $")
    ax.set_title(title)
    ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.grid(axis="y", alpha=0.3)
    ax.legend()
    fig.text(0.01, 0.01, caption, fontsize=6, wrap=True)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    with atomic.atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=120)
    plt.close(fig)
    return path


def draw_all(records: list[dict], rows: list[dict], catalog, out_dir: str, skipped=None) -> list[str]:
    """Draw what can be drawn; `skipped(line)` hears, in one line each, what was not and why."""
    skipped = skipped or (lambda line: None)
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as error:
        raise UserError(f"--plot {out_dir!r} cannot be created: {error.strerror or error}") from None
    catalogs = catalog if isinstance(catalog, (list, tuple)) else [catalog]
    caption = " ".join(c.caption() for c in catalogs) + " Hatched bars: see their label's caveat."
    try:
        over_run = throughput_over_run(records, os.path.join(out_dir, "throughput_over_run.png"))
        per_dollar = images_per_dollar(rows, caption, os.path.join(out_dir, "images_per_dollar.png"))
    except OSError as error:  # a full disk: the plots already there stay whole (atomic writes)
        raise UserError(f"--plot {out_dir!r}: a plot cannot be written: {error.strerror or error}") from None
    if over_run is None:
        skipped("throughput_over_run.png not drawn: no run has timed windows")
    if per_dollar is None:
        skipped("images_per_dollar.png not drawn: no row has a price (see the table's notes)")
    return [path for path in (per_dollar, over_run) if path]  # the buyer's plot first
