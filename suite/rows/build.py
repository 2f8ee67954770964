"""Stage 3 of a report, rows: the runs of one configuration (one `row_key`) become one row: the median
of the runs' throughputs (each already the median of its timed windows), how many runs stand behind it
and their spread, the instance's prices, and notes that say what the row is and what differs from its
neighbours.

    images per $      = images/hour ÷ $/hour           ($/hour of the accelerators used: row_prices.py)
    $ per M images    = $/hour ÷ images/hour × 1,000,000
    epoch hours, $    = dataset size ÷ images/hour,  × $/hour

Failed and diverged runs are shown as such, never dropped. A run that used fewer accelerators than its
instance has is marked and priced for those it used, the whole instance's figure beside; it is scaled to
the whole instance only when asked (extrapolate), and then marked as extrapolated.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

from suite import stats
from suite.prices.catalog import Catalog
from suite.rows import host_match, labels, row_figures, row_prices, run_span, token_rows, warning_kinds
from suite.rows.gather import sub_runs_note
from suite.rows.identity import LOADER_FIELDS, SETTING_FIELDS, row_identity, row_key
from suite.rows.numerics_mark import standing as numerics_standing
from suite.rows.numerics_mark import standing_note
from suite.rows.row import Row
from suite.run_record.facts import (
    accelerators_used,
    data_path,
    images_per_hour,
    nodes,
    numerics_failed,
    per_device,
    profiled,
)

# The seed's data set: Mapillary Street Level Sequences, ~1.2 M JPEGs.
DEFAULT_DATASET_SIZE = 1_200_000
SYNTHETIC_NOTE = "synthetic data: a compute-only ceiling (upper bound), not real-data training"
# Runs of one row whose relative range passes both the floor and a multiple of their windows' own noise
# (cv, at least stats.WIDE_SPREAD_CV) are flagged: fresh processes on a busy host differ by tens of percent,
# a 10× gap is another machine or another load, not noise.
RATES_DISAGREE = 0.5
DISAGREE_TIMES_NOISE = 5


def build_rows(
    records: list[dict],
    catalog: Catalog,
    dataset_size: int = DEFAULT_DATASET_SIZE,
    extrapolate: bool = False,
    *,
    pool: tuple[str, ...] = (),
    price_as_if: bool = False,
    catalog_for=None,
) -> list[Row]:
    """One row per configuration (row_key). `catalog_for(record)` picks each record's catalog (default:
    `catalog` for all); `pool` names key fields to pool across; `price_as_if` prices runs made on another
    device than the instance's accelerator, marked hypothetical."""
    catalog_for = catalog_for or (lambda record: catalog)
    groups: dict[tuple, list[dict]] = {}
    for record in records:
        key = (row_key(record, pool), catalog_for(record).name)
        groups.setdefault(key, []).append(record)
    # A whole instance measured (--per-device) replaces extrapolation for its one-device twin.
    one_device = {_twin_key(g[0], pool): g for g in groups.values() if not per_device(g[0])}
    measured = {_twin_key(g[0], pool): per_device(g[0]) for g in groups.values() if per_device(g[0])}
    rows = []
    for group in groups.values():
        twin, catalog_of = _twin_key(group[0], pool), catalog_for(group[0])
        row = _row(group, catalog_of, dataset_size, extrapolate and twin not in measured, pool, price_as_if)
        token_rows.add_unit(row, group[0])  # one workload and shape a row: one unit, one sequence length
        if extrapolate and twin in measured and not per_device(group[0]):
            row["notes"].append(_measured_note(measured[twin], row["instance_accelerators"]))
        if per_device(group[0]) and twin in one_device:
            single = _row(one_device[twin], catalog_of, dataset_size, False, pool, price_as_if)
            row["measured_scaling"] = _measured_scaling(row, single)
        rows.append({name: stats.finite_or_none(value) for name, value in row.items()})  # no inf, no NaN
    _name_what_differs(rows, list(groups.values()), pool)
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


# Identity fields the table shows in columns of its own, or in its Settings column (the loader's, where asked
# for: labels.settings; where not, a difference in one is a note).
_SHOWN = {
    "config.workload",
    "config.backend",
    "config.precision",
    "config.batch_size",
    "config.instance",
    "config.world_size",
    "config.accelerators_used",
    "device.name",
    "data.source",
    *(f"config.{name}" for name in SETTING_FIELDS),
}


# Of the data section, the notes name what tells two data sets apart (the rest is keyed, not noted).
_DATA_NOTED = {
    "data.path",
    "data.images",
    "data.source_image_size",
    "data.cache.source_fingerprint",
    *(f"data.{name}" for name in LOADER_FIELDS),
}


def _noted(name: str) -> bool:
    return not name.startswith("data.") or name in _DATA_NOTED


def _measured_note(copies: int, instance_devices: int | None) -> str:
    """What a --per-device twin measured: the whole instance only when it used every device."""
    if instance_devices is None:
        return f"not extrapolated: a --per-device row measured {copies} devices at once"
    if copies >= instance_devices:
        return "not extrapolated: the --per-device row measured the whole instance"
    return f"not extrapolated: a --per-device row measured {copies} of the instance's {instance_devices} devices at once"


def _look(row: Row) -> tuple:
    """What the table shows of a row: rows alike in all of it need a note to be told apart."""
    return (
        row["model_run"],
        row["instance"],
        row["backend"],
        row["device"],
        row["accelerators_used"],
        row["precision"],
        tuple(row["settings"]),
        row["batch_size"],
        row["data"],
    )


def _name_what_differs(rows: list[dict], groups: list[list[dict]], pool: tuple[str, ...]) -> None:
    """Rows that look alike in every column but are two configurations say, in words, what tells them
    apart (`torch 2.1.0, 64 logical CPUs`), so two rows that look alike are never a mystery; what differs
    between rows the table already tells apart (another workload's model, another precision) is no note."""
    identities = [row_identity(group[0]) for group in groups]
    alike: dict[tuple, list[int]] = {}
    for n, row in enumerate(rows):
        alike.setdefault(_look(row), []).append(n)
    for members in alike.values():
        fields = sorted({name for n in members for name in identities[n]} - _SHOWN - set(pool))
        differing = [name for name in fields if len({repr(identities[n].get(name)) for n in members}) > 1]
        for n in members:
            row, identity = rows[n], identities[n]
            row["differs_in"] = {name: identity.get(name) for name in differing}
            already = " ".join(row["notes"])
            said = [
                text
                for name in differing
                if identity.get(name) is not None and _noted(name)
                for text in [labels.field_words(name, identity[name])]
                if text not in already
            ]
            if said:
                row["notes"].append("told apart from the row(s) alike in every column by: " + ", ".join(said))


def _row(
    group: list[dict],
    catalog: Catalog,
    dataset_size: int,
    extrapolate: bool,
    pool: tuple[str, ...] = (),
    price_as_if: bool = False,
) -> Row:
    """One configuration's runs as one row: sort the runs, describe them, take the median, match the
    instance, scale to it if asked, price it."""
    runs = _sort_runs(group)
    row = _blank_row(group, runs, catalog)
    _describe(row, group, runs, pool)
    _beside_the_rate(row, group, runs)
    if not runs.ok:
        return row
    rate = _measure(row, runs.ok)
    instance = row_prices.match_instance(row, catalog, price_as_if)
    if instance is not None:
        rate = row_prices.scale_to_instance(row, instance, rate, extrapolate)
        row["notes"] += host_match.notes(runs.ok, instance, row["accelerators_used"])
    row["images_per_hour"] = rate
    row["epoch_hours"] = dataset_size / rate
    if instance is not None:
        row_prices.price(row, instance, nodes(group[0]), catalog=catalog)
        if per_device(group[0]) and row["price_basis"] == row_prices.WHOLE:
            row["notes"].append(
                f"priced as the whole {instance.name}: the --per-device run measured all of it"
            )
    return row


@dataclasses.dataclass
class _Runs:
    """A group's runs by what the median may use: `ok` (measured, unperturbed), `failed` (the rest),
    `not_ok` (the rest counted by why) and `traced` (profiled runs with a throughput)."""

    ok: list[dict]
    failed: list[dict]
    not_ok: Counter
    traced: list[dict]
    marked: bool = False  # the configuration stands under a failed numerics check
    numerics_note: str | None = None  # a reduced precision no check passed: it says so


def _sort_runs(group: list[dict]) -> _Runs:
    # A configuration whose latest numerics check failed stays failed until a later check passes: an
    # unchecked run of it afterwards is no evidence that the precision now trains the same model.
    found = numerics_standing(group)
    marked = found["verdict"] == "fail"
    ok = [
        r
        for r in group
        if r.get("status") == "ok"
        and images_per_hour(r)
        and not profiled(r)
        and not numerics_failed(r)
        and not marked
    ]
    counted = {id(r) for r in ok}
    failed = [r for r in group if id(r) not in counted]
    # an "ok" record without a throughput is damaged, a profiled one perturbed: counted apart, never in the median
    not_ok = Counter(
        (
            "profiled"
            if profiled(r)
            else "numerics failed"
            if numerics_failed(r) or marked
            else "no throughput"
        )
        if r.get("status") == "ok"
        else (r.get("status") or "error")
        for r in failed
    )
    traced = [r for r in group if r.get("status") == "ok" and profiled(r) and images_per_hour(r)]
    return _Runs(ok, failed, not_ok, traced, marked, None if marked else standing_note(group, found))


def _blank_row(group: list[dict], runs: _Runs, catalog: Catalog) -> Row:
    """Every field of a row, filled from the group's first record and its runs; prices still empty."""
    first = group[0]
    config, device = first["config"], first.get("device") or {}
    return {
        "model_run": _model_label(config),
        "instance": config.get("instance"),
        "retired": None,  # the instance's retirement date ("date not found" where none was), if retired
        "region": None,
        "images_per_hour": None,
        "usd_per_hour": None,
        "images_per_usd": None,
        "spot_usd_per_hour": None,
        "spot_images_per_usd": None,
        "backend": config.get("backend"),
        "device": device.get("name"),
        "device_count": device.get("count"),
        "world_size": config.get("world_size", 1),
        "accelerators_used": accelerators_used(first),
        "instance_accelerators": None,
        **row_prices.unpriced(accelerators_used(first)),
        "precision": labels.precision(config),
        **_setting_fields(group),
        "batch_size": config.get("batch_size"),
        "data": data_path(first),
        "usd_per_million_images": None,
        "spot_usd_per_million_images": None,
        "epoch_hours": None,
        "epoch_usd": None,
        "spot_epoch_usd": None,
        **_run_fields(group, runs),
        "extrapolated_factor": None,
        "measured_scaling": None,
        "device_matches_instance": None,
        "hypothetical": False,
        # Synthetic data: one batch reused on the device, no loader and no copy: what training on real
        # data can at best reach, not what it reaches.
        "upper_bound": data_path(first) == "synthetic",
        "pooled": {},
        "verdict": _verdict(group),
        "numerics": " / ".join(sorted({str(n.get("verdict")) for r in group if (n := r.get("numerics"))}))
        or None,
        "errors": sorted(
            {_error_text(r) for r in runs.failed if r.get("status") != "ok" or numerics_failed(r)}
        ),
        "notes": [],
        "prices_catalog": catalog.name,
        "prices_as_of": catalog.as_of,
        "prices_as_of_note": catalog.as_of_note,
    }


def _setting_fields(group: list[dict]) -> dict:
    """The row's non-default settings in words (its Settings column) and the flags that give its rate."""
    found = labels.settings(group)
    return {"settings": labels.shown(found), "setting_flags": labels.flags(found)}


def _run_fields(group: list[dict], runs: _Runs) -> dict:
    """A row's fields about its runs, in the row's order: how many and which, their warnings and window
    spread, the profiled rate, the status; the median and its interval still empty."""
    ok, not_ok, traced = runs.ok, runs.not_ok, runs.traced
    cvs = [cv for r in ok for cv in [_window_cv(r)] if cv is not None]
    warnings = [f"{r.get('run_id')}: {w}" for r in group for w in (r.get("warnings") or [])]
    return {
        "runs": len(ok),
        "run_ids": [str(r.get("run_id")) for r in group],
        "runs_not_ok": dict(not_ok),
        "spread": None,
        "window_cv_max": max(cvs) if cvs else None,
        "warnings": warnings,
        "rate_warnings": warning_kinds.touching_rate(warnings),  # only these earn the rate its ⚠
        "other_warnings": warning_kinds.by_figure(warnings),
        "images_per_hour_min": None,
        "images_per_hour_max": None,
        "median_ci_low": None,  # the median's distribution-free 95% interval (None: too few runs)
        "median_ci_high": None,
        "median_ci_coverage": None,
        "rates_disagree": False,
        "measured_images_per_hour": None,
        "profiled_images_per_hour": stats.median(images_per_hour(r) for r in traced) if traced else None,
        "status": "ok" if ok else ("profiled" if traced and len(traced) == len(group) else _worst(not_ok)),
    }


def _describe(row: Row, group: list[dict], runs: _Runs, pool: tuple[str, ...]) -> None:
    """The notes that say what the row is: copies per device, what it pools across, a compute-only
    ceiling, and the runs left out of the median (its settings have a column: labels.py)."""
    first = group[0]
    if sub_runs := sub_runs_note(group):  # shown only where asked for, or where the folder holds nothing else
        row["notes"].append(sub_runs)
    if per_device(first):
        row["notes"].append(f"MEASURED on {per_device(first)} devices at once (one copy each, rates summed)")
    for name in pool:
        values = sorted({repr(row_identity(r).get(name)) for r in group})
        if len(values) > 1:
            row["pooled"][name] = values
            row["notes"].append(f"pooled across {name.split('.', 1)[1]}: {', '.join(values)}")
    if row["upper_bound"]:
        row["notes"].append(SYNTHETIC_NOTE)
    if runs.marked:  # read once, in _sort_runs: it consults the numerics ledger
        unchecked = sum(1 for r in group if not (r.get("numerics") or {}).get("verdict"))
        row["notes"].append(
            f"its latest numerics check FAILED: no run counts until a later check passes ({unchecked} unchecked "
            "run(s) left out with it)"
        )
    elif runs.numerics_note:
        row["notes"].append(runs.numerics_note)
    if runs.not_ok:
        row["notes"].append(
            ", ".join(f"{n} {status}" for status, n in sorted(runs.not_ok.items()))
            + (" run(s) not in the median" if runs.ok else "")
        )


def _beside_the_rate(row: Row, group: list[dict], runs: _Runs) -> None:
    """The row's figures beside its rate (MFU, energy, power, memory, first step), the days, commits and
    hosts of the runs it pools, and the notes these need."""
    found, memory_note = row_figures.figures(runs.ok)
    spans = run_span.spans(runs.ok or group)
    row.update(found)
    row.update(spans)
    derived = row_figures.derived_mfu_note(runs.ok)
    row["notes"] += [note for note in (run_span.note(spans), memory_note, derived) if note]


def _measure(row: Row, ok: list[dict]) -> float:
    """The row's rate: the median of its runs' rates; their range, spread and the median's 95% interval
    beside it, and a mark where the runs disagree beyond their own noise."""
    rates = [images_per_hour(r) for r in ok]
    rate = stats.median(rates)  # overflow-safe: rates may be any finite number
    row.update(
        images_per_hour_min=min(rates),
        images_per_hour_max=max(rates),
        measured_images_per_hour=rate,
        spread=stats.relative_range(rates) if len(rates) > 1 else None,
    )
    interval = stats.median_interval(rates)
    if interval is None:
        row["notes"].append(
            f"{len(rates)} run(s): too few for a 95% interval of the median ({stats.MIN_RUNS_FOR_INTERVAL} needed; "
            "add runs with `suite run --repeat N`)"
        )
    else:
        row.update(median_ci_low=interval[0], median_ci_high=interval[1], median_ci_coverage=interval[2])
    _flag_disagreeing(row, ok, rates)
    return rate


def _flag_disagreeing(row: Row, ok: list[dict], rates: list[float]) -> None:
    """Runs of one configuration whose rates differ far beyond their own windows' noise are not repeats of
    one measurement (another host's load, a throttled clock, a changed machine): the row says so, with
    the hosts, rather than hide the difference in a median."""
    if len(rates) < 2 or row["spread"] is None:
        return
    window_noise = max(row["window_cv_max"] or 0.0, stats.WIDE_SPREAD_CV)
    if row["spread"] <= max(RATES_DISAGREE, DISAGREE_TIMES_NOISE * window_noise):
        return
    row["rates_disagree"] = True
    hosts = sorted({str((r.get("context") or {}).get("host")) for r in ok})
    row["notes"].append(
        f"RATES DISAGREE: runs range ×{stats.quotient_text(max(rates), min(rates))} (spread {row['spread']:.0%}, beyond their "
        f"windows' noise) on host(s) {', '.join(hosts)}: check that they measured one thing"
    )


def _twin_key(record: dict, pool: tuple[str, ...] = ()) -> tuple:
    # The same configuration on one device: the copies, the accelerators used and the device count
    # (a pinned copy sees one device) left out of the key.
    return row_key(
        {
            **record,
            "config": {**record["config"], "per_device": None, "accelerators_used": None},
            "device": {**(record.get("device") or {}), "count": None},
        },
        pool,
    )


def _measured_scaling(row: dict, single: dict) -> float | None:
    """Measured ÷ extrapolated: the copies' summed rate ÷ (the one-device rate × copies)."""
    if row["images_per_hour"] is None or not single["images_per_hour"]:
        return None
    return row["images_per_hour"] / (single["images_per_hour"] * row["accelerators_used"])


def _worst(statuses: Counter) -> str:
    for status in ("error", "oom", "diverged"):
        if statuses.get(status):
            return status
    return next(iter(statuses), "error")


def _error_text(record: dict) -> str:
    if record.get("status") == "ok" and numerics_failed(record):
        return f"numerics failed: {record['numerics'].get('reason') or 'see the record'}"
    error = record.get("error") or {}
    return f"{record.get('status')}: {error.get('message', '')}".strip(": ")


def _verdict(group: list[dict]) -> str | None:
    verdicts = sorted({str(v) for r in group if (v := (r.get("diagnosis") or {}).get("verdict"))})
    return " / ".join(verdicts) or None


def _model_label(config: dict) -> str | None:
    """The workload's name, and its overrides where it was changed: a modified model is not the stock one."""
    overrides = config.get("model_overrides") or {}
    if not overrides:
        return config.get("workload")
    return (
        f"{config.get('workload')} (modified: {', '.join(f'{k}={v}' for k, v in sorted(overrides.items()))})"
    )


def _window_cv(record: dict) -> float | None:
    metrics = record.get("metrics") or {}
    if metrics.get("images_per_second_cv") is not None:
        return float(metrics["images_per_second_cv"])
    return stats.cv(metrics.get("window_images_per_second") or [])
