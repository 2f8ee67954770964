"""How a report's cells read: whole images, dollars and cents, and each column's cell (a failed or
profiled run says so where its number would be; an extrapolated or hypothetical one is marked)."""

from __future__ import annotations

from suite.rows import warning_kinds


def nearest(value: float) -> int:
    """Round half up to a whole image (Python's round() rounds half to even)."""
    return int(value + 0.5)


def whole_number(value) -> str:
    # a figure past the largest float (1.7e308 img/h × 4 accelerators) is no number: shown as none
    return "—" if value is None or value != value or abs(value) == float("inf") else f"{nearest(value):,}"


def _money(value) -> str:
    if value is None:
        return "—"
    text = f"{value:,.4f}".rstrip("0")
    return text + "0" * (2 - len(text.split(".")[1]))  # at least cents: 3.06, 32.7726, 0.90


def dollars(value) -> str:
    """A computed amount: cents, or three significant digits below a dollar."""
    if value is None:
        return "—"
    return f"{value:,.2f}" if value >= 1 else f"{value:.3g}"


def _float(value, digits=2) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def _throughput_cell(row: dict) -> str:
    if row["images_per_hour"] is None:
        if row["status"] == "profiled":
            return f"{whole_number(row['profiled_images_per_hour'])} (profiled: perturbed, not priced)"
        return {
            "diverged": "DIVERGED",
            "oom": "FAILED (out of memory)",
            "interrupted": "INTERRUPTED",
            "numerics failed": "NUMERICS FAILED (not ranked)",
        }.get(row["status"], "FAILED")
    text = whole_number(row["images_per_hour"])
    if row["extrapolated_factor"]:
        text += f" (extrapolated ×{row['extrapolated_factor']:g} from {whole_number(row['measured_images_per_hour'])})"
    if row["hypothetical"]:
        text += " (hypothetical: another device)"
    if row.get("published"):
        text += " (published)"
    return text + (" ⚠" if warning_kinds.of_rate(row) else "")


def interval_cell(row: dict) -> str:
    """The median's distribution-free 95% interval (rows.py) and its coverage; where the runs are too few
    for one, how many they are and how many it needs."""
    from suite.stats import MIN_RUNS_FOR_INTERVAL

    if row["median_ci_low"] is not None:
        low, high = whole_number(row["median_ci_low"]), whole_number(row["median_ci_high"])
        return f"{low}–{high} ({row['median_ci_coverage']:.1%})"
    if row.get("published") or row["images_per_hour"] is None:
        return "—"
    return f"— ({row['runs']} run(s); {MIN_RUNS_FOR_INTERVAL} needed)"


def _spread_cell(row: dict) -> str:
    """Across runs (max − min) ÷ median; within a run, the worst run's window cv when it is wide."""
    from suite.stats import WIDE_SPREAD_CV

    parts = [] if row["spread"] is None else [f"{row['spread']:.1%}"]
    if row["window_cv_max"] is not None and row["window_cv_max"] > WIDE_SPREAD_CV:
        parts.append(f"windows cv {row['window_cv_max']:.0%} ⚠")
    return "; ".join(parts) or "—"


# The figures beside the rate (row_figures.py), and the warnings' figures each cell stands for: a cell
# whose figure a warning concerns is marked † (the warning is listed under the table, the rate keeps no ⚠).
FIGURE_MARK = "†"
_WARNED_BY = {
    "mfu": (warning_kinds.MFU, warning_kinds.DEVICE),
    "energy": (warning_kinds.ENERGY, warning_kinds.TELEMETRY),
    "power": (warning_kinds.ENERGY, warning_kinds.TELEMETRY),
    "memory": (warning_kinds.DEVICE,),
}


def figure_warned(row: dict, figure: str) -> bool:
    """Whether a warning of the row's runs concerns this figure ("mfu", "energy", "power", "memory")."""
    warned = warning_kinds.of_other_figures(row)
    return any(warned.get(kind) for kind in _WARNED_BY.get(figure, ()))


def _marked(text: str, row: dict, figure: str) -> str:
    return f"{text} {FIGURE_MARK}" if text != "—" and figure_warned(row, figure) else text


def mfu_text(value) -> str:
    return "—" if value is None else f"{value:.1%}"


def millijoules(joules) -> str:
    """Energy per sample in mJ: a decimal from 10 mJ up (14.4, 175.1), three digits below (2.54)."""
    if joules is None:
        return "—"
    value = joules * 1000
    return f"{value:,.1f}" if value >= 10 else f"{value:.3g}"


def gibibytes(value) -> str:
    return "—" if value is None else f"{value / 2**30:,.2f}"


def watts(value) -> str:
    return "—" if value is None else f"{value:,.0f}"


def seconds(value) -> str:
    return "—" if value is None else f"{value:,.1f}"


def figure_cells(energy_field: str) -> list[tuple]:
    """(key, header, cell) of the figures beside the rate; energy per image, or per token
    (`energy_field`)."""
    unit = "token" if energy_field == "energy_per_token_j" else "image"
    return [
        ("mfu", "MFU", lambda r: _marked(mfu_text(r.get("mfu")), r, "mfu")),
        (
            energy_field,
            f"Energy (mJ/{unit})",
            lambda r: _marked(millijoules(r.get(energy_field)), r, "energy"),
        ),
        ("mean_power_w", "Mean power (W)", lambda r: _marked(watts(r.get("mean_power_w")), r, "power")),
        (
            "peak_memory_bytes",
            "Peak memory (GiB)",
            lambda r: _marked(gibibytes(r.get("peak_memory_bytes")), r, "memory"),
        ),
        ("time_to_first_step_s", "First step (s)", lambda r: seconds(r.get("time_to_first_step_s"))),
    ]


def _stated(value) -> str:
    # A published figure whose source does not state a batch or a precision says so, not "None".
    return "not stated" if value is None else value


def settings_cell(row: dict) -> str:
    """A row's non-default settings in words (labels.py): `channels-last, 8 workers`, or — for none (a
    published figure's source states none)."""
    return ", ".join(row.get("settings") or []) or "—"


def _model_cell(row: dict) -> str:
    # A published figure is marked where the eye starts: its model cell.
    return f"{row['model_run']} [PUBLISHED]" if row.get("published") else row["model_run"]


def _instance_cell(row: dict) -> str:
    # A retired instance is marked where its name is: its price is its last listed one.
    return (row["instance"] or "—") + (" (retired)" if row.get("retired") else "")


def accelerators_priced(row: dict) -> int:
    """What the row's rate and price count: the accelerators used, or all of the instance's when its rate is
    extrapolated to them (a row without the field, from an older report, counts those used)."""
    return row.get("accelerators_priced") or row["accelerators_used"]


def _device_cell(row: dict) -> str:
    # A part of an instance says of how many: `NVIDIA H200 ×1 of 8`.
    count, total = accelerators_priced(row), row.get("instance_accelerators")
    return f"{row['device'] or '?'} ×{count}" + (f" of {total}" if total and 0 < count < total else "")


# Every column of the wide table (`--wide`, `--columns seed`, the page with --wide), by key: (seed's name,
# exact name with unit, cell). The default table is reporting/narrow.py's.
COLUMNS = [
    ("model_run", "Model Run", "Model", _model_cell),
    ("instance", "Instance", "Instance", _instance_cell),
    ("region", None, "Region", lambda r: r.get("region") or "—"),
    ("images_per_hour", "Average Throughput (Imgs/Hr)", "Median throughput (img/h)", _throughput_cell),
    ("usd_per_hour", "Rate ($)", "On-demand ($/h)", lambda r: _money(r["usd_per_hour"])),
    ("images_per_usd", "Throughput / $", "Images per $", lambda r: whole_number(r["images_per_usd"])),
    ("spot_usd_per_hour", "Spot Rate ($)", "Spot ($/h)", lambda r: _money(r["spot_usd_per_hour"])),
    (
        "spot_images_per_usd",
        "Spot Throughput / $",
        "Spot images per $",
        lambda r: whole_number(r["spot_images_per_usd"]),
    ),
    (
        "usd_per_accelerator_hour",
        None,
        "On-demand ($/accelerator-h)",
        lambda r: _money(r.get("usd_per_accelerator_hour")),
    ),
    (
        "instance_images_per_usd",
        None,
        "Images per $, whole instance",
        lambda r: whole_number(r.get("instance_images_per_usd")),
    ),
    (
        "instance_spot_images_per_usd",
        None,
        "Spot images per $, whole instance",
        lambda r: whole_number(r.get("instance_spot_images_per_usd")),
    ),
    ("backend", "Backend", "Backend", lambda r: r["backend"] or "—"),
    ("device", "Device", "Device", _device_cell),
    ("precision", "Precision", "Precision", lambda r: _stated(r["precision"])),
    ("settings", "Settings", "Settings", settings_cell),
    ("batch_size", "Batch", "Batch", lambda r: _stated(r["batch_size"])),
    (
        "data",
        "Data",
        "Data",
        lambda r: f"{r['data']} (compute-only ceiling)" if r["upper_bound"] else r["data"],
    ),
    (
        "usd_per_million_images",
        "$ / M imgs",
        "$ per M images",
        lambda r: dollars(r["usd_per_million_images"]),
    ),
    (
        "spot_usd_per_million_images",
        "Spot $ / M imgs",
        "Spot $ per M images",
        lambda r: dollars(r["spot_usd_per_million_images"]),
    ),
    ("epoch_hours", "Epoch (h)", "Epoch (h)", lambda r: _float(r["epoch_hours"])),
    ("epoch_usd", "Epoch ($)", "Epoch ($)", lambda r: dollars(r["epoch_usd"])),
    ("spot_epoch_usd", "Spot Epoch ($)", "Spot epoch ($)", lambda r: dollars(r["spot_epoch_usd"])),
    ("runs", "Runs", "Runs", lambda r: "published" if r.get("published") else r["runs"]),
    ("spread", "Spread", "Spread", _spread_cell),
    ("median_ci", "Median 95% CI (Imgs/Hr)", "95% interval of the median (img/h)", interval_cell),
    # beside the rate: the seed's table had none of them, so they keep their names in its style too
    *((key, name, name, cell) for key, name, cell in figure_cells("energy_per_image_j")),
]
VERDICT_COLUMN = ("Bottleneck", lambda r: r["verdict"] or "—")
NUMERICS_COLUMN = ("Numerics", lambda r: r["numerics"] or "—")
# A fleet's rows (suite/reporting/fleet_report.py) say how each instance ended and what it cost.
FLEET_COLUMNS = [
    ("Fleet status", lambda r: r["fleet_status"], True),
    ("Hours held", lambda r: _float(r["fleet_hours"]), False),
    ("Cost to measure ($)", lambda r: dollars(r["fleet_cost_usd"]), False),
]
LEFT_ALIGNED = {"model_run", "instance", "region", "backend", "device", "precision", "settings", "data"}


# Only in a report with --published, once a measured row shares a published figure's configuration.
def ratio_text(row: dict) -> str:
    """The table's cell: measured ÷ each published figure of the row's configuration."""
    ratios = row.get("published_ratios") or {}
    return "; ".join(f"{ratio:.2f}× published ({fid})" for fid, ratio in ratios.items()) or "—"


PUBLISHED_RATIO_COLUMN = ("Measured ÷ published", ratio_text)

SCALING_COLUMN = (
    "Measured scaling",
    lambda r: "—" if r["measured_scaling"] is None else f"{r['measured_scaling']:.0%}",
)
