"""Scaling efficiency: throughput at several process counts against one process, and cost per image.

    speedup(n)    = throughput(n) / throughput(base)
    efficiency(n) = speedup(n) / (n / base)               (1.0 = perfectly linear)
    $ / M images  = $ per hour / (images per hour / 1e6)

`base` is the smallest count measured (normally 1: one process, no DDP, as a person with one device
would train). Every figure comes from the runs' records.

Like with like: a count whose processes each had another number of compute threads than the base's (a
CPU run of 1 process × 2 threads against 2 processes × 1 thread) is not the same work split further, and
its efficiency says so instead of passing for scaling. A run on another device than the named instance's
accelerator (a CPU priced as p3.8xlarge) is not priced: its $ per image would be no instance's.
"""

from __future__ import annotations

from suite import limits, stats
from suite.inputs.errors import UserError
from suite.inputs.numbers import positive_int
from suite.run_record.parts import Metrics, rate_label
from suite.run_record.record import RunRecord

# A row gives its rate under the record's name for it (the JSON of `suite scale --json`).
RATE = Metrics.RATE

IMAGES_PER_MILLION = 1e6


def parse_counts(text: str) -> list[int]:
    """ "1,2,4,8" -> [1, 2, 4, 8] (sorted, without repeats)."""
    parts = [part.strip() for part in str(text).split(",") if part.strip()]
    if not parts:
        raise UserError(f"--nproc {text!r} names no process counts (for example 1,2,4,8)")
    counts = sorted({positive_int("--nproc", part) for part in parts})
    # Each count is a `suite run --nproc N` of its own, checked there too; refused here before the first runs.
    limits.check_processes(
        f"--nproc {counts[-1]}", counts[-1], limits.TRAINING_PROCESS_BYTES, "training process"
    )
    return counts


def parse_instances(text: str | None, counts: list[int]) -> dict[int, str]:
    """`p3.8xlarge` (one instance for every count) or `1=p3.2xlarge,4=p3.8xlarge` (one per count)."""
    if not text:
        return {}
    if "=" not in text:
        return dict.fromkeys(counts, text.strip())
    instances = {}
    for part in text.split(","):
        count, sep, name = part.partition("=")
        if not sep or not name.strip():
            raise UserError(
                f"--instance {text!r}: {part!r} is not COUNT=NAME (for example 1=p3.2xlarge,4=p3.8xlarge)"
            )
        count = positive_int("--instance count", count.strip())
        if count not in counts:
            raise UserError(
                f"--instance names {count} processes, which --nproc does not run "
                f"(accepted: {', '.join(map(str, counts))})"
            )
        instances[count] = name.strip()
    return instances


def hourly_price(instance: str, prices: str | None = None) -> tuple[float, float | None, str]:
    """(on-demand $/hour, spot $/hour or None, the catalog's name and date) of `instance`."""
    from suite.prices.catalog import find_instance

    found, catalog = find_instance(instance, prices)
    if found.on_demand_usd_per_hour is None:
        raise UserError(
            f"--instance {found.name} has no on-demand price in the {catalog.name} catalog ({found.no_on_demand}): "
            "name another instance, or give --usd-per-hour"
        )
    return found.on_demand_usd_per_hour, found.spot_usd_per_hour, f"{catalog.name}, {catalog.dated()}"


def _threads(record: RunRecord):
    return record.device.threads or (record.config or {}).get("threads")


def scaling_rows(
    records: dict[int, dict], prices: dict[int, tuple] | None = None, instances: dict[int, str] | None = None
) -> list[dict]:
    """`prices`: count -> (on-demand $/hour, spot $/hour or None, where the price came from);
    `instances`: count -> the instance name that price is of (checked against the run's device)."""
    # One row per process count, from each count's run record; failed runs stay in as such.
    prices = prices or {}
    typed = {n: RunRecord.of(r) for n, r in records.items()}
    ok = {n: r for n, r in typed.items() if r.ok and r.metrics.images_per_second}
    rows = []
    for count in sorted(records):
        row = _empty_row(count, typed[count])
        if count in ok:
            _measure(row, ok, count)
            mismatch = _device_mismatch(records[count], (instances or {}).get(count))
            if mismatch:
                row["notes"].append(f"not priced: {mismatch.split(':')[0]}")
            if count in prices and not mismatch:
                _price(row, *prices[count])
        rows.append(row)
    return rows


def _empty_row(count: int, record: RunRecord) -> dict:
    """A count's row as its record gives it, the measured and priced figures still empty."""
    config = record.config or {}
    return {
        "nproc": count,
        "world_size": config.get("world_size", count),
        "global_batch_size": config.get("global_batch_size"),
        "status": record.status,
        "error": record.error.message if record.error else None,
        "run_id": record.run_id,
        RATE: None,
        "images_per_second_stdev": None,
        "speedup": None,
        "efficiency": None,
        "usd_per_hour": None,
        "usd_per_million_images": None,
        "spot_usd_per_hour": None,
        "spot_usd_per_million_images": None,
        "instance": None,
        "price_source": None,
        "threads_per_process": _threads(record),
        "unit": record.metrics.unit_name,  # what the table counts: images, or a language model's tokens
        "units_per_sample": record.metrics.per_sample,
        "notes": [],
    }


def _measure(row: dict, ok: dict[int, RunRecord], count: int) -> None:
    """Throughput, speedup and efficiency against the smallest count measured, noting threads that differ."""
    base_count = min(ok)
    metrics = ok[count].metrics
    row[RATE] = metrics.images_per_second
    row["images_per_second_stdev"] = metrics.images_per_second_stdev
    row["speedup"] = metrics.images_per_second / ok[base_count].metrics.images_per_second
    row["efficiency"] = row["speedup"] / (count / base_count)
    base_threads = _threads(ok[base_count])
    if row["threads_per_process"] != base_threads:
        row["notes"].append(
            f"not like with like: {row['threads_per_process']} thread(s) per process here, "
            f"{base_threads} at {base_count} process(es)"
        )


def _device_mismatch(record: dict, named: str | None) -> str | None:
    """Why the run cannot be priced as the NAMED instance (another device), or None."""
    from suite.prices.catalog import device_mismatch_warning

    if not named:
        return None
    return device_mismatch_warning({**record, "config": {**record.get("config", {}), "instance": named}})


def _price(row: dict, usd_per_hour: float, spot_usd_per_hour: float | None, source: str) -> None:
    """$ per hour and per million images, on demand and (where quoted) on spot."""
    millions_per_hour = row[RATE] * stats.SECONDS_PER_HOUR / IMAGES_PER_MILLION
    row["usd_per_hour"], row["price_source"] = usd_per_hour, source
    row["usd_per_million_images"] = usd_per_hour / millions_per_hour
    if spot_usd_per_hour is not None:
        row["spot_usd_per_hour"] = spot_usd_per_hour
        row["spot_usd_per_million_images"] = spot_usd_per_hour / millions_per_hour


def _unit(rows: list[dict]) -> tuple[str, float]:
    """What the table counts and how many of it one sample is: a measured row's (one workload's rows)."""
    measured = next((row for row in rows if row[RATE] is not None), rows[0] if rows else {})
    return measured.get("unit", "images"), measured.get("units_per_sample", 1)


def render(rows: list[dict], instances: dict[int, str] | None = None) -> str:
    instances = instances or {}
    unit, per_sample = _unit(rows)  # a language model's table in tokens: its samples × their tokens
    show_cost = any(row["usd_per_million_images"] is not None for row in rows)
    base = next((row["nproc"] for row in rows if row["speedup"] is not None), None)
    headers = [
        "processes",
        "global batch",
        f"{rate_label(unit)} (median ± σ)",
        f"speedup vs {base}",
        "efficiency",
    ]
    show_spot = any(row["spot_usd_per_million_images"] is not None for row in rows)
    if show_cost:
        headers += ["instance", "$/hour", f"$ / M {unit}"] + ([f"spot $ / M {unit}"] if show_spot else [])
    table = []
    for row in rows:
        if row[RATE] is None:
            cells = [
                str(row["nproc"]),
                str(row["global_batch_size"] or "?"),
                f"{row['status']}: {row['error'] or ''}"[:60],
                "—",
                "—",
            ]
        else:
            cells = [
                str(row["nproc"]),
                str(row["global_batch_size"]),
                f"{row[RATE] * per_sample:,.1f} ± {(row['images_per_second_stdev'] or 0) * per_sample:,.1f}",
                f"{row['speedup']:.2f}×",
                f"{row['efficiency']:.0%}"
                + (" (threads differ)" if any("like with like" in n for n in row["notes"]) else ""),
            ]
        if show_cost:
            cost = row["usd_per_million_images"]
            cells += [
                instances.get(row["nproc"], ""),
                f"{row['usd_per_hour']:.3f}" if row["usd_per_hour"] is not None else "—",
                f"{cost / per_sample:,.2f}" if cost is not None else "—",
            ]
            if show_spot:
                spot = row["spot_usd_per_million_images"]
                cells.append(f"{spot / per_sample:,.2f}" if spot is not None else "—")
        table.append(cells)
    from tabulate import tabulate

    lines = [tabulate(table, headers=headers, disable_numparse=True, colalign=("right",) * len(headers))]
    lines += [f"{row['nproc']} process(es): {note}" for row in rows for note in row["notes"]]
    sources = sorted({row["price_source"] for row in rows if row["price_source"]})
    if sources:
        lines.append(f"prices: {'; '.join(sources)}")
    return "\n".join(lines)
