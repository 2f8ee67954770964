"""Cost reports: run records -> one row per configuration -> markdown, CSV or JSON.

    images per $      = images/hour ÷ $/hour           (the instance's whole price, even if partly used)
    $ per M images    = $/hour ÷ images/hour × 1,000,000
    epoch hours, $    = dataset size ÷ images/hour,  × $/hour

Repeated runs of one configuration become one row: the median of the runs' throughputs (each already the
median of its timed windows), how many runs stand behind it and their spread. Failed and diverged runs are
shown as such, never dropped. A run that used fewer accelerators than its instance has is marked; it is
scaled to the whole instance only when asked (extrapolate), and then marked as extrapolated.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
import statistics
import sys
from collections import Counter

from suite import results
from suite.backends import declared
from suite.reporting.pricing import Catalog

# The seed's data set: Mapillary Street Level Sequences, ~1.2 M JPEGs.
DEFAULT_DATASET_SIZE = 1_200_000
FORMATS = ("md", "csv", "json")

# Words that name a vendor or a memory size, not the accelerator model (for "ran on another device").
_GENERIC_TOKENS = re.compile(
    r"^(nvidia|tesla|habana|labs|amd|intel|aws|r|tm|cpu|gpu|hbm\d*|sxm\d*|pcie|"
    r"\d+gb|\d+(\.\d+)?ghz)$"
)


def load_records(paths: list[str], warn=None) -> list[tuple[str, dict]]:
    """Every readable run record under `paths`; anything else is skipped with a warning naming it."""
    warn = warn or (lambda message: print(f"suite: warning: {message}", file=sys.stderr))
    loaded = []
    for path in results.iter_record_paths(paths):
        try:
            record = results.read_record(path)
        except results.OtherSuiteRecord:
            continue  # the suite's own non-run records (batch-size searches) share results folders
        except results.NotARecord as error:
            warn(f"skipped {path}: {error}")
            continue
        except (OSError, UnicodeDecodeError) as error:
            warn(f"skipped {path}: cannot be read ({error})")
            continue
        if record.get("kind", "train") != "train":
            continue  # loader-only and other non-training records are not rows of a training table
        if not isinstance(record.get("config"), dict) or not record["config"].get("workload"):
            warn(f"skipped {path}: a suite.run record without its config (damaged?)")
            continue
        loaded.append((path, record))
    return loaded


def data_path(record: dict) -> str:
    data = record.get("data") or {}
    return str(data.get("source") or record["config"].get("data") or "?")


# Knobs beyond the table's columns that change a number (RunConfig fields; the loader's three are read
# from what actually ran, in record["data"]). Runs that differ in any of them are not one configuration.
# The knobs that change a number: the suite's own, and every backend option declared as changing one.
SETTING_FIELDS = ("threads", *declared.setting_fields(), "nnodes", "model_overrides")
LOADER_FIELDS = ("workers", "pin_memory", "prefetch")


def settings(record: dict) -> tuple[str, ...]:
    """The non-default knobs of a run, as `name=value` (e.g. `workers=4`, `channels_last=True`)."""
    from suite.config import RunConfig

    defaults = {f.name: f.default for f in dataclasses.fields(RunConfig)}
    config, data = record["config"], record.get("data") or {}
    found = [
        f"{name}={config[name]}"
        for name in SETTING_FIELDS
        if config.get(name, defaults[name]) not in (defaults[name], None, {})
    ]
    found += [f"{name}={data[name]}" for name in LOADER_FIELDS if data.get(name) is not None]
    return tuple(found)


def group_key(record: dict) -> tuple:
    """What makes two runs the same configuration."""
    config, device = record["config"], record.get("device") or {}
    return (
        config.get("workload"),
        config.get("backend"),
        device.get("name"),
        device.get("count"),
        config.get("world_size", 1),
        config.get("precision"),
        config.get("batch_size"),
        data_path(record),
        config.get("instance"),
        settings(record),
    )


def nodes(record: dict) -> int:
    return int(record["config"].get("nnodes") or 1)


def accelerators_used(record: dict) -> int:
    """Accelerators used on each instance (node) of the run."""
    config = record["config"]
    used = config.get("accelerators_used")
    return int(used) if used is not None else max(1, int(config.get("world_size", 1) or 1) // nodes(record))


def profiled(record: dict) -> bool:
    """A profiled run's steps were slowed by the profiler: shown, never in a median."""
    return bool(record.get("profile") or record["config"].get("profile_dir"))


def images_per_hour(record: dict) -> float | None:
    metrics = record.get("metrics") or {}
    if metrics.get("images_per_hour") is not None:
        return float(metrics["images_per_hour"])
    if metrics.get("images_per_second") is not None:
        return float(metrics["images_per_second"]) * 3600.0
    return None


def _model_tokens(name: str) -> set[str]:
    return {t for t in re.findall(r"[a-z0-9]+", name.lower()) if not _GENERIC_TOKENS.match(t)}


def other_device(device_name: str | None, accelerator: str) -> bool:
    """True when the run's device is plainly not the instance's accelerator (e.g. a CPU run priced as a
    V100 instance): the two names share no model word."""
    if not device_name:
        return False
    return not (_model_tokens(device_name) & _model_tokens(accelerator))


def build_rows(
    records: list[dict], catalog: Catalog, dataset_size: int = DEFAULT_DATASET_SIZE, extrapolate: bool = False
) -> list[dict]:
    groups: dict[tuple, list[dict]] = {}
    for record in records:
        groups.setdefault(group_key(record), []).append(record)
    rows = [_row(group, catalog, dataset_size, extrapolate) for group in groups.values()]
    # like the seed's table: by model, then cheapest instance first; failed rows after measured ones
    rows.sort(
        key=lambda r: (
            str(r["model_run"]),
            r["images_per_hour"] is None,
            r["usd_per_hour"] or 0,
            str(r["instance"]),
            str(r["backend"]),
            str(r["precision"]),
            r["batch_size"] or 0,
        )
    )
    return rows


def _row(group: list[dict], catalog: Catalog, dataset_size: int, extrapolate: bool) -> dict:
    first = group[0]
    config, device = first["config"], first.get("device") or {}
    ok = [r for r in group if r.get("status") == "ok" and images_per_hour(r) and not profiled(r)]
    failed = [r for r in group if not any(r is o for o in ok)]
    # an "ok" record without a throughput is damaged, a profiled one perturbed: counted apart, never in the median
    not_ok = Counter(
        ("profiled" if profiled(r) else "no throughput")
        if r.get("status") == "ok"
        else (r.get("status") or "error")
        for r in failed
    )
    used = accelerators_used(first)
    row = {
        "model_run": config.get("workload"),
        "instance": config.get("instance"),
        "images_per_hour": None,
        "usd_per_hour": None,
        "images_per_usd": None,
        "spot_usd_per_hour": None,
        "spot_images_per_usd": None,
        "backend": config.get("backend"),
        "device": device.get("name"),
        "device_count": device.get("count"),
        "world_size": config.get("world_size", 1),
        "accelerators_used": used,
        "instance_accelerators": None,
        "precision": config.get("precision"),
        "batch_size": config.get("batch_size"),
        "data": data_path(first),
        "usd_per_million_images": None,
        "spot_usd_per_million_images": None,
        "epoch_hours": None,
        "epoch_usd": None,
        "spot_epoch_usd": None,
        "runs": len(ok),
        "runs_not_ok": dict(not_ok),
        "spread": None,
        "images_per_hour_min": None,
        "images_per_hour_max": None,
        "status": "ok" if ok else _worst(not_ok),
        "extrapolated_factor": None,
        "verdict": _verdict(group),
        "errors": sorted({_error_text(r) for r in failed}),
        "notes": [],
        "prices_catalog": catalog.name,
        "prices_as_of": catalog.as_of,
    }
    if settings(first):
        row["notes"].append("settings: " + ", ".join(settings(first)))
    if not_ok:
        row["notes"].append(
            ", ".join(f"{n} {status}" for status, n in sorted(not_ok.items()))
            + (" run(s) not in the median" if ok else "")
        )
    if not ok:
        return row
    rates = [images_per_hour(r) for r in ok]
    rate = statistics.median(rates)
    row.update(
        images_per_hour_min=min(rates),
        images_per_hour_max=max(rates),
        spread=(max(rates) - min(rates)) / rate if len(rates) > 1 else None,
    )

    instance = catalog.instances.get(row["instance"]) if row["instance"] else None
    if row["instance"] is None:
        row["notes"].append("no --instance recorded: no price")
    elif instance is None:
        row["notes"].append(f"{row['instance']} is not in the {catalog.name} catalog: no price")
    else:
        row["instance_accelerators"] = instance.accelerator_count
        if other_device(row["device"], instance.accelerator):
            row["notes"].append(f"measured on {row['device']}, not on the instance's {instance.accelerator}")
        if 0 < used < instance.accelerator_count:
            if extrapolate:
                factor = instance.accelerator_count / used
                rate *= factor
                row.update(
                    extrapolated_factor=factor,
                    images_per_hour_min=row["images_per_hour_min"] * factor,
                    images_per_hour_max=row["images_per_hour_max"] * factor,
                )
                row["notes"].append(
                    f"EXTRAPOLATED ×{factor:g} from {used} of {instance.accelerator_count} "
                    "accelerators (assumes linear scaling)"
                )
            else:
                row["notes"].append(
                    f"used {used} of {instance.accelerator_count} accelerators (priced as the whole instance)"
                )
        if instance.note:
            row["notes"].append(instance.note)
    row["images_per_hour"] = rate
    row["epoch_hours"] = dataset_size / rate
    if instance is not None:
        # A multi-node run rents one instance per node.
        count = nodes(first)
        on_demand = instance.on_demand_usd_per_hour * count
        spot = instance.spot_usd_per_hour * count if instance.spot_usd_per_hour is not None else None
        if count > 1:
            row["notes"].append(f"priced as {count} × {instance.name} (one per node)")
        row.update(
            usd_per_hour=on_demand,
            images_per_usd=rate / on_demand,
            usd_per_million_images=on_demand / rate * 1e6,
            epoch_usd=row["epoch_hours"] * on_demand,
        )
        if spot is not None:
            row.update(
                spot_usd_per_hour=spot,
                spot_images_per_usd=rate / spot,
                spot_usd_per_million_images=spot / rate * 1e6,
                spot_epoch_usd=row["epoch_hours"] * spot,
            )
    return row


def _worst(statuses: Counter) -> str:
    for status in ("error", "oom", "diverged"):
        if statuses.get(status):
            return status
    return next(iter(statuses), "error")


def _error_text(record: dict) -> str:
    error = record.get("error") or {}
    return f"{record.get('status')}: {error.get('message', '')}".strip(": ")


def _verdict(group: list[dict]) -> str | None:
    verdicts = sorted({str(v) for r in group if (v := (r.get("diagnosis") or {}).get("verdict"))})
    return " / ".join(verdicts) or None


# -- rendering ----------------------------------------------------------------------------------------


def nearest(value: float) -> int:
    """Round half up to a whole image (Python's round() rounds half to even)."""
    return int(value + 0.5)


def _int(value) -> str:
    return "—" if value is None else f"{nearest(value):,}"


def _money(value) -> str:
    if value is None:
        return "—"
    text = f"{value:,.4f}".rstrip("0")
    return text + "0" * (2 - len(text.split(".")[1]))  # at least cents: 3.06, 32.7726, 0.90


def _dollars(value) -> str:
    """A computed amount: cents, or three significant digits below a dollar."""
    if value is None:
        return "—"
    return f"{value:,.2f}" if value >= 1 else f"{value:.3g}"


def _float(value, digits=2) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def _throughput_cell(row: dict) -> str:
    if row["images_per_hour"] is None:
        return {"diverged": "DIVERGED", "oom": "FAILED (out of memory)"}.get(row["status"], "FAILED")
    text = _int(row["images_per_hour"])
    return f"{text} (extrapolated)" if row["extrapolated_factor"] else text


def _device_cell(row: dict) -> str:
    return f"{row['device'] or '?'} ×{row['accelerators_used']}"


MD_COLUMNS = [
    ("Model Run", lambda r: r["model_run"]),
    ("Instance", lambda r: r["instance"] or "—"),
    ("Average Throughput (Imgs/Hr)", _throughput_cell),
    ("Rate ($)", lambda r: _money(r["usd_per_hour"])),
    ("Throughput / $", lambda r: _int(r["images_per_usd"])),
    ("Spot Rate ($)", lambda r: _money(r["spot_usd_per_hour"])),
    ("Spot Throughput / $", lambda r: _int(r["spot_images_per_usd"])),
    ("Backend", lambda r: r["backend"]),
    ("Device", _device_cell),
    ("Precision", lambda r: r["precision"]),
    ("Batch", lambda r: r["batch_size"]),
    ("Data", lambda r: r["data"]),
    ("$ / M imgs", lambda r: _dollars(r["usd_per_million_images"])),
    ("Spot $ / M imgs", lambda r: _dollars(r["spot_usd_per_million_images"])),
    ("Epoch (h)", lambda r: _float(r["epoch_hours"])),
    ("Epoch ($)", lambda r: _dollars(r["epoch_usd"])),
    ("Spot Epoch ($)", lambda r: _dollars(r["spot_epoch_usd"])),
    ("Runs", lambda r: r["runs"]),
    ("Spread", lambda r: "—" if r["spread"] is None else f"{r['spread']:.1%}"),
]
VERDICT_COLUMN = ("Bottleneck", lambda r: r["verdict"] or "—")
NOTES_COLUMN = ("Notes", lambda r: "; ".join(r["notes"] + r["errors"]) or "")


def _columns(rows: list[dict]) -> list:
    # The bottleneck column appears only once some record carries a diagnosis.
    return MD_COLUMNS + ([VERDICT_COLUMN] if any(r["verdict"] for r in rows) else []) + [NOTES_COLUMN]


def _escape(cell) -> str:
    return str(cell).replace("|", "\\|").replace("\n", " ")


def render_markdown(rows: list[dict], catalog: Catalog, dataset_size: int) -> str:
    columns = _columns(rows)
    lines = [
        "| " + " | ".join(name for name, _ in columns) + " |",
        "|"
        + "|".join(
            "---:"
            if name
            not in {"Model Run", "Instance", "Backend", "Device", "Precision", "Data", "Bottleneck", "Notes"}
            else "---"
            for name, _ in columns
        )
        + "|",
    ]
    lines += ["| " + " | ".join(_escape(cell(row)) for _, cell in columns) + " |" for row in rows]
    lines += ["", footer(catalog, dataset_size)]
    return "\n".join(lines)


def footer(catalog: Catalog, dataset_size: int) -> str:
    return (
        f"{catalog.caption()}\n\n"
        f"Throughput: median over runs of each run's median timed window; Spread: (max − min) ÷ median "
        f"across runs. Images per $ = images/hour ÷ $/hour of the whole instance. "
        f"Epoch: {dataset_size:,} images."
    )


CSV_FIELDS = [
    "model_run",
    "instance",
    "images_per_hour",
    "usd_per_hour",
    "images_per_usd",
    "spot_usd_per_hour",
    "spot_images_per_usd",
    "backend",
    "device",
    "device_count",
    "world_size",
    "accelerators_used",
    "instance_accelerators",
    "extrapolated_factor",
    "precision",
    "batch_size",
    "data",
    "usd_per_million_images",
    "spot_usd_per_million_images",
    "epoch_hours",
    "epoch_usd",
    "spot_epoch_usd",
    "runs",
    "spread",
    "images_per_hour_min",
    "images_per_hour_max",
    "status",
    "verdict",
    "notes",
    "prices_catalog",
    "prices_as_of",
]


def render_csv(rows: list[dict]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({**row, "notes": "; ".join(row["notes"] + row["errors"])})
    return buffer.getvalue()


def render_json(rows: list[dict], catalog: Catalog, dataset_size: int, extrapolate: bool) -> str:
    return (
        json.dumps(
            {
                "catalog": catalog.describe(),
                "dataset_size": dataset_size,
                "extrapolate": extrapolate,
                "rows": rows,
            },
            indent=2,
        )
        + "\n"
    )


def render(
    rows: list[dict],
    catalog: Catalog,
    fmt: str,
    dataset_size: int = DEFAULT_DATASET_SIZE,
    extrapolate: bool = False,
) -> str:
    if fmt == "md":
        return render_markdown(rows, catalog, dataset_size) + "\n"
    if fmt == "csv":
        return render_csv(rows)
    return render_json(rows, catalog, dataset_size, extrapolate)
