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
import statistics
import sys
from collections import Counter

from suite import run_record, stats
from suite.backends import declared
from suite.reporting.pricing import Catalog
from suite.run_record.facts import (
    accelerators_used,
    data_path,
    images_per_hour,
    nodes,
    numerics_failed,
    other_device,
    per_device,
    profiled,
)

# The seed's data set: Mapillary Street Level Sequences, ~1.2 M JPEGs.
DEFAULT_DATASET_SIZE = 1_200_000
FORMATS = ("md", "csv", "json")

# Records made by a command's own sub-runs (run_record.ORIGIN_ENV), left out of a report unless included:
# a sweep's points, a batch-size search's probes (some out of memory on purpose), diagnose's three runs.
SUB_RUN_ORIGINS = ("sweep", "batch-size", "diagnose", "scale")
INCLUDE_GROUPS = {"probes": ("batch-size", "diagnose"), "all": SUB_RUN_ORIGINS}


def include_origins(text: str | None) -> set[str]:
    """`--include sweep,probes` as the set of origins to report beside `suite run`'s own records."""
    from suite.errors import UserError

    chosen = {"run"}
    for name in filter(None, (part.strip() for part in (text or "").split(","))):
        if name in INCLUDE_GROUPS:
            chosen.update(INCLUDE_GROUPS[name])
        elif name in SUB_RUN_ORIGINS:
            chosen.add(name)
        else:
            known = ", ".join((*SUB_RUN_ORIGINS, *INCLUDE_GROUPS))
            raise UserError(f"--include {name!r} is not a kind of sub-run (known: {known})")
    return chosen


def origin(record: dict) -> str:
    """The command whose run made this record ("run" for `suite run` itself, and for older records)."""
    return str(record.get("origin") or ("sweep" if record.get("sweep_point") else "run"))


def load_records(
    paths: list[str], warn=None, include: set[str] | None = None, left_out: Counter | None = None
) -> list[tuple[str, dict]]:
    """Every readable run record under `paths`; anything else is skipped with a warning naming it.
    Records of sub-runs whose origin is not in `include` are counted in `left_out`, not returned."""
    warn = warn or (lambda message: print(f"suite: warning: {message}", file=sys.stderr))
    include = include if include is not None else {"run", *SUB_RUN_ORIGINS}
    loaded = []
    for path in run_record.iter_record_paths(paths):
        try:
            record = run_record.read_record(path)
        except run_record.OtherSuiteRecord:
            continue  # the suite's own non-run records (batch-size searches) share results folders
        except run_record.NotARecord as error:
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
        if origin(record) not in include:
            if left_out is not None:
                left_out[origin(record)] += 1
            continue
        loaded.append((path, record))
    return loaded


# Knobs beyond the table's columns that change a number (RunConfig fields; the loader's three are read
# from what actually ran, in record["data"]). Runs that differ in any of them are not one configuration.
# They are the suite's own, and every backend option declared as changing one.
SETTING_FIELDS = (
    "threads",
    *declared.setting_fields(),
    "nnodes",
    "model_overrides",
    "num_classes",
    "image_size",
    "per_device",
)
LOADER_FIELDS = ("workers", "pin_memory", "prefetch")

# -- what a row is ------------------------------------------------------------------------------------
#
# Two runs are one row only when nothing that can change their number differs. The key is built from the
# record by rule, not by picking fields: every field of the `context`, `device`, `data` and `workload`
# sections is in the key unless it is listed below with the reason it cannot change a rate, so a field a
# later version adds splits rows (the safe side) until someone says why it may not. From `config`, the
# fields in the key are the table's columns, SETTING_FIELDS and CONFIG_KEYED; every other RunConfig field is
# in CONFIG_NOT_KEYED with its reason (tests check that the two cover RunConfig).

# The table's own columns, and what decides a price (a row is priced as one instance).
CONFIG_KEYED = (
    "workload",
    "backend",
    "precision",
    "batch_size",
    "world_size",
    "instance",
    "accelerators_used",
    "hpu_bf16_ops",
    "hpu_fp32_ops",
)
CONFIG_NOT_KEYED = {
    "seed": "the random seed changes the numbers drawn, not the work per image",
    "warmup_steps": "the measurement's schedule, not the configuration (its noise shows as within-run spread)",
    "steps_per_window": "the measurement's schedule, not the configuration",
    "windows": "the measurement's schedule, not the configuration",
    "data": "as typed; what ran is in the data section (path, images, sizes)",
    "workers": "as typed; what ran is data.workers",
    "pin_memory": "as typed; what ran is data.pin_memory",
    "prefetch": "as typed; what ran is data.prefetch",
    "prices": "the catalog a run was checked against prices it, it does not change its rate",
    "device_index": "which of identical devices ran it",
    "profile_dir": "a profiled run is shown apart, never pooled",
    "max_memory_bytes": "a ceiling that turns a run into an out-of-memory failure, not a rate",
    "nproc": "processes per node: world_size and nnodes hold what ran",
    "node_rank": "this node's rank, not the configuration",
    "rdzv_endpoint": "where ranks meet, not what they compute",
    "dist_timeout_s": "a bound on waiting, not on computing",
    "global_batch_size": "batch_size × world_size, both in the key",
    "check_numerics": "the check runs after the timed windows and changes no figure; its verdict is a column",
    "reference_backend": "where the numerics reference ran, after the timed windows",
}
# Per section: the fields that cannot change a rate, and why. Everything else in the section is keyed.
NOT_KEYED = {
    "context": {
        "host": "the machine's name: two machines alike are one configuration (the CPU model and cores are keyed)",
        "python_executable": "where Python is installed",
        "utc_time": "when it ran: what changes over time (versions, hardware) is keyed itself",
        "git_commit": "a checkout's commit; the suite's version is keyed",
        "ram_bytes": "memory size decides what fits, not the rate of what ran",
        "os": "the kernel seldom changes a training rate; devices and library versions are keyed",
        "platform": "the kernel seldom changes a training rate; devices and library versions are keyed",
    },
    "device": {
        "backend": "the backend is keyed from config",
        "index": "which of identical devices ran it",
        "peak_tflops": "a datasheet figure derived from the device name and precision",
        "peak_tflops_note": "where the datasheet figure came from",
        "optimizers": "which optimizer classes were built: follows from the backend and its settings",
        "execution_mode_source": "where the execution mode came from; the mode itself is keyed",
        "threads_reason": "why the thread count; the count itself is keyed",
        "cores": "which of the machine's cores the process may use; how many it computes on is keyed (threads)",
    },
    "data": {
        "rank": "this process's share, not the data set",
        "world_size": "keyed from config",
        "batches_per_epoch": "images ÷ batch, both keyed",
        "note": "a description",
        "cache.created_utc": "when the cache was made; its source and fingerprint are keyed",
    },
    "workload": {
        "description": "a description; the name is keyed from config",
        "name": "keyed from config",
    },
}
# Sections of a record that hold results, never identity.
RESULT_SECTIONS = (
    "schema",
    "schema_version",
    "run_id",
    "status",
    "error",
    "warnings",
    "metrics",
    "memory",
    "telemetry",
    "diagnosis",
    "ranks",
    "profile",
    "backend_choice",
    "kind",
    "origin",
    "sweep_point",
)


def _config_defaults() -> dict:
    from suite.config import RunConfig

    return {f.name: f.default for f in dataclasses.fields(RunConfig)}


def _normal_config(name: str, value, record: dict):
    """A config value as it ran, with defaults filled in, so that spelling a default or leaving it out
    gives one row (nnodes null and nnodes 1 are one node)."""
    if name == "threads":
        # What ran: the backend records the threads compute used (None: torch's default, the cores).
        ran = (record.get("device") or {}).get("threads")
        return ran if ran is not None else value
    if name == "nnodes":
        return int(value or 1)
    if name == "world_size":
        return int(value or 1)
    if name == "accelerators_used" and value is None:
        return accelerators_used(record)
    default = _config_defaults().get(name)
    if value in (None, {}) or value == default:
        return default if default not in (None, {}) else None
    return value


def _hashable(value):
    if isinstance(value, dict):
        return tuple(sorted((str(k), _hashable(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    return value


def row_identity(record: dict) -> dict:
    """Everything in a record that can change its number, as {"section.field": value}, defaults
    normalised. Two runs with the same identity are repeats of one configuration."""
    config = record.get("config") or {}
    identity = {}
    for name in dict.fromkeys((*CONFIG_KEYED, *SETTING_FIELDS)):
        if name not in CONFIG_NOT_KEYED:  # the reasons win: a setting that cannot change a rate is not keyed
            identity[f"config.{name}"] = _normal_config(name, config.get(name), record)
    identity["data.source"] = data_path(record)  # a record without a data section: what was asked for
    for section, not_keyed in NOT_KEYED.items():
        for name, value in sorted((record.get(section) or {}).items()):
            if name in not_keyed:
                continue
            if isinstance(value, dict):  # one level down (data.cache.source_fingerprint), same rule
                for sub, inner in sorted(value.items()):
                    if f"{name}.{sub}" not in not_keyed:
                        identity[f"{section}.{name}.{sub}"] = inner
            else:
                identity[f"{section}.{name}"] = value
    return identity


def row_key(record: dict, pool: tuple[str, ...] = ()) -> tuple:
    """What makes two runs the same configuration (one row). `pool` names identity fields
    ("context.torch") to pool across: runs that differ only there share a row, and the row says so."""
    return tuple((name, _hashable(value)) for name, value in row_identity(record).items() if name not in pool)


def pool_fields(names: list[str], records: list[dict]) -> tuple[str, ...]:
    """`--pool` names, full ("context.torch") or short ("torch"), as identity fields; unknown ones refused."""
    from suite.errors import UserError

    known = sorted({name for record in records for name in row_identity(record)})
    chosen = []
    for name in names:
        matches = [k for k in known if k == name or k.split(".", 1)[1] == name]
        if not matches:
            raise UserError(f"--pool {name!r} is not a field of the row key (known: {', '.join(known)})")
        chosen += matches
    return tuple(dict.fromkeys(chosen))


def settings(record: dict) -> tuple[str, ...]:
    """The non-default knobs of a run, as `name=value` (e.g. `workers=4`, `channels_last=True`)."""
    defaults = _config_defaults()
    config, data = record["config"], record.get("data") or {}
    found = []
    for name in SETTING_FIELDS:
        value = _normal_config(name, config.get(name), record)
        if name == "threads":
            if config.get("threads") is not None:  # asked for: say so (torch's default is not a setting)
                found.append(f"threads={value}")
        elif name == "nnodes":
            if value != 1:
                found.append(f"nnodes={value}")
        elif value not in (defaults.get(name), None, {}):
            found.append(f"{name}={value}")
    found += [f"{name}={data[name]}" for name in LOADER_FIELDS if data.get(name) is not None]
    return tuple(found)


group_key = row_key  # the name earlier code used


def _window_cv(record: dict) -> float | None:
    metrics = record.get("metrics") or {}
    if metrics.get("images_per_second_cv") is not None:
        return float(metrics["images_per_second_cv"])
    return stats.cv(metrics.get("window_images_per_second") or [])


def repriced(
    records: list[dict], candidates: list, price_as_if: bool = False
) -> tuple[list[dict], list[str]]:
    """`suite report --instance A,B`: each record priced again as if it ran on each candidate instance
    (an Instance), without re-running. Only candidates whose accelerator is the run's device (or any, with
    price_as_if), with at least the accelerators the run used. Returns the copies and what was left out."""
    copies, left_out = [], []
    for record in records:
        device = (record.get("device") or {}).get("name")
        matched = False
        for instance in candidates:
            if other_device(device, instance.accelerator) and not price_as_if:
                continue
            if accelerators_used(record) > instance.accelerator_count:
                continue
            matched = True
            copies.append({**record, "config": {**record["config"], "instance": instance.name}})
        if not matched:
            left_out.append(str(record.get("run_id")))
    return copies, left_out


def build_rows(
    records: list[dict],
    catalog: Catalog,
    dataset_size: int = DEFAULT_DATASET_SIZE,
    extrapolate: bool = False,
    *,
    pool: tuple[str, ...] = (),
    price_as_if: bool = False,
    catalog_for=None,
) -> list[dict]:
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
    measured = {_twin_key(g[0], pool) for g in groups.values() if per_device(g[0])}
    rows = []
    for group in groups.values():
        twin, catalog_of = _twin_key(group[0], pool), catalog_for(group[0])
        row = _row(group, catalog_of, dataset_size, extrapolate and twin not in measured, pool, price_as_if)
        if extrapolate and twin in measured and not per_device(group[0]):
            row["notes"].append("not extrapolated: the --per-device row measured the whole instance")
        if per_device(group[0]) and twin in one_device:
            single = _row(one_device[twin], catalog_of, dataset_size, False, pool, price_as_if)
            row["measured_scaling"] = _measured_scaling(row, single)
        rows.append(row)
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


# Identity fields the table shows in columns of its own, or names in "settings: ...".
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
    *(f"data.{name}" for name in LOADER_FIELDS),
}


# Of the data section, the notes name what tells two data sets apart (the rest is keyed, not noted).
_DATA_NOTED = {"data.path", "data.images", "data.source_image_size", "data.cache.source_fingerprint"}


def _noted(name: str) -> bool:
    return not name.startswith("data.") or name in _DATA_NOTED


def _note_value(value) -> str:
    text = str(value)
    return text[:12] + "…" if len(text) > 40 and " " not in text else text  # a fingerprint, shortened


def _name_what_differs(rows: list[dict], groups: list[list[dict]], pool: tuple[str, ...]) -> None:
    """A row whose key differs from another row's only in fields the table has no column for says which
    (e.g. `context.cpu_cores_logical=64`), so two rows that look alike are never a mystery."""
    identities = [row_identity(group[0]) for group in groups]
    fields = sorted({name for identity in identities for name in identity} - _SHOWN - set(pool))
    differing = [name for name in fields if len({repr(i.get(name)) for i in identities}) > 1]
    for row, identity in zip(rows, identities):
        row["differs_in"] = {name: identity.get(name) for name in differing}
        already = " ".join(row["notes"])
        shown = [
            text
            for name in differing
            if identity.get(name) is not None and _noted(name)
            for text in [f"{name.rsplit('.', 1)[1]}={_note_value(identity[name])}"]
            if text not in already
        ]
        if shown:
            row["notes"].append(", ".join(shown))


def _row(
    group: list[dict],
    catalog: Catalog,
    dataset_size: int,
    extrapolate: bool,
    pool: tuple[str, ...] = (),
    price_as_if: bool = False,
) -> dict:
    first = group[0]
    config, device = first["config"], first.get("device") or {}
    ok = [
        r
        for r in group
        if r.get("status") == "ok" and images_per_hour(r) and not profiled(r) and not numerics_failed(r)
    ]
    failed = [r for r in group if not any(r is o for o in ok)]
    # an "ok" record without a throughput is damaged, a profiled one perturbed: counted apart, never in the median
    not_ok = Counter(
        ("profiled" if profiled(r) else "numerics failed" if numerics_failed(r) else "no throughput")
        if r.get("status") == "ok"
        else (r.get("status") or "error")
        for r in failed
    )
    traced = [r for r in group if r.get("status") == "ok" and profiled(r) and images_per_hour(r)]
    used = accelerators_used(first)
    warnings = [f"{r.get('run_id')}: {w}" for r in group for w in (r.get("warnings") or [])]
    cvs = [cv for r in ok for cv in [_window_cv(r)] if cv is not None]
    row = {
        "model_run": config.get("workload"),
        "instance": config.get("instance"),
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
        "run_ids": [str(r.get("run_id")) for r in group],
        "runs_not_ok": dict(not_ok),
        "spread": None,
        "window_cv_max": max(cvs) if cvs else None,
        "warnings": warnings,
        "images_per_hour_min": None,
        "images_per_hour_max": None,
        "measured_images_per_hour": None,
        "profiled_images_per_hour": statistics.median(images_per_hour(r) for r in traced) if traced else None,
        "status": "ok" if ok else ("profiled" if traced and len(traced) == len(group) else _worst(not_ok)),
        "extrapolated_factor": None,
        "measured_scaling": None,
        "device_matches_instance": None,
        "hypothetical": False,
        # Synthetic data: one batch reused on the device, no loader and no copy: what training on real
        # data can at best reach, not what it reaches.
        "upper_bound": data_path(first) == "synthetic",
        "pooled": {},
        "verdict": _verdict(group),
        "numerics": " / ".join(sorted({str(n["verdict"]) for r in group if (n := r.get("numerics"))}))
        or None,
        "errors": sorted({_error_text(r) for r in failed if r.get("status") != "ok" or numerics_failed(r)}),
        "notes": [],
        "prices_catalog": catalog.name,
        "prices_as_of": catalog.as_of,
        "prices_as_of_note": catalog.as_of_note,
    }
    if settings(first):
        row["notes"].append("settings: " + ", ".join(settings(first)))
    if per_device(first):
        row["notes"].append(f"MEASURED on {per_device(first)} devices at once (one copy each, rates summed)")
    for name in pool:
        values = sorted({repr(row_identity(r).get(name)) for r in group})
        if len(values) > 1:
            row["pooled"][name] = values
            row["notes"].append(f"pooled across {name.split('.', 1)[1]}: {', '.join(values)}")
    if row["upper_bound"]:
        row["notes"].append("synthetic data: a compute-only ceiling (upper bound), not real-data training")
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
        measured_images_per_hour=rate,
        spread=stats.relative_range(rates) if len(rates) > 1 else None,
    )

    instance = catalog.instances.get(row["instance"]) if row["instance"] else None
    if row["instance"] is None:
        row["notes"].append("no --instance recorded: no price")
    elif instance is None:
        row["notes"].append(f"{row['instance']} is not in the {catalog.name} catalog: no price")
    else:
        row["instance_accelerators"] = instance.accelerator_count
        row["region"] = instance.region
        matches = not other_device(row["device"], instance.accelerator)
        row["device_matches_instance"] = matches
        if not matches and not price_as_if:
            row["notes"].append(
                f"measured on {row['device']}, not on the instance's {instance.accelerator}: not priced "
                "(--price-as-if prices it hypothetically)"
            )
            instance = None
        elif not matches:
            row["hypothetical"] = True
            row["notes"].append(
                f"HYPOTHETICAL: measured on {row['device']}, priced as if on the instance's "
                f"{instance.accelerator}"
            )
    if instance is not None:
        if 0 < used < instance.accelerator_count:
            if extrapolate and row["device_matches_instance"]:
                factor = instance.accelerator_count / used
                rate *= factor
                row.update(
                    extrapolated_factor=factor,
                    images_per_hour_min=row["images_per_hour_min"] * factor,
                    images_per_hour_max=row["images_per_hour_max"] * factor,
                )
                row["notes"].append(
                    f"EXTRAPOLATED ×{factor:g} from {used} of {instance.accelerator_count} "
                    f"accelerators (assumes linear scaling; measured {_int(row['measured_images_per_hour'])} img/h)"
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
        if row["status"] == "profiled":
            return f"{_int(row['profiled_images_per_hour'])} (profiled: perturbed, not priced)"
        return {
            "diverged": "DIVERGED",
            "oom": "FAILED (out of memory)",
            "numerics failed": "NUMERICS FAILED (not ranked)",
        }.get(row["status"], "FAILED")
    text = _int(row["images_per_hour"])
    if row["extrapolated_factor"]:
        text += (
            f" (extrapolated ×{row['extrapolated_factor']:g} from {_int(row['measured_images_per_hour'])})"
        )
    if row["hypothetical"]:
        text += " (hypothetical: another device)"
    return text + (" ⚠" if row["warnings"] else "")


def _spread_cell(row: dict) -> str:
    """Across runs (max − min) ÷ median; within a run, the worst run's window cv when it is wide."""
    from suite.stats import WIDE_SPREAD_CV

    parts = [] if row["spread"] is None else [f"{row['spread']:.1%}"]
    if row["window_cv_max"] is not None and row["window_cv_max"] > WIDE_SPREAD_CV:
        parts.append(f"windows cv {row['window_cv_max']:.0%} ⚠")
    return "; ".join(parts) or "—"


def _device_cell(row: dict) -> str:
    return f"{row['device'] or '?'} ×{row['accelerators_used']}"


# Columns by key: (seed's name, exact name with unit, in the narrow default table).
def _spot_assumed(catalog) -> bool:
    basis = str(getattr(catalog, "spot_basis", "") or "")
    return "assumed" in basis or "not an observed" in basis


COLUMNS = [
    ("model_run", "Model Run", "Model", True, lambda r: r["model_run"]),
    ("instance", "Instance", "Instance", True, lambda r: r["instance"] or "—"),
    ("region", None, "Region", True, lambda r: r.get("region") or "—"),
    ("images_per_hour", "Average Throughput (Imgs/Hr)", "Median throughput (img/h)", True, _throughput_cell),
    ("usd_per_hour", "Rate ($)", "On-demand ($/h)", True, lambda r: _money(r["usd_per_hour"])),
    ("images_per_usd", "Throughput / $", "Images per $", True, lambda r: _int(r["images_per_usd"])),
    ("spot_usd_per_hour", "Spot Rate ($)", "Spot ($/h)", True, lambda r: _money(r["spot_usd_per_hour"])),
    (
        "spot_images_per_usd",
        "Spot Throughput / $",
        "Spot images per $",
        True,
        lambda r: _int(r["spot_images_per_usd"]),
    ),
    ("backend", "Backend", "Backend", False, lambda r: r["backend"]),
    ("device", "Device", "Device", True, _device_cell),
    ("precision", "Precision", "Precision", True, lambda r: r["precision"]),
    ("batch_size", "Batch", "Batch", True, lambda r: r["batch_size"]),
    (
        "data",
        "Data",
        "Data",
        True,
        lambda r: f"{r['data']} (compute-only ceiling)" if r["upper_bound"] else r["data"],
    ),
    (
        "usd_per_million_images",
        "$ / M imgs",
        "$ per M images",
        False,
        lambda r: _dollars(r["usd_per_million_images"]),
    ),
    (
        "spot_usd_per_million_images",
        "Spot $ / M imgs",
        "Spot $ per M images",
        False,
        lambda r: _dollars(r["spot_usd_per_million_images"]),
    ),
    ("epoch_hours", "Epoch (h)", "Epoch (h)", False, lambda r: _float(r["epoch_hours"])),
    ("epoch_usd", "Epoch ($)", "Epoch ($)", False, lambda r: _dollars(r["epoch_usd"])),
    ("spot_epoch_usd", "Spot Epoch ($)", "Spot epoch ($)", False, lambda r: _dollars(r["spot_epoch_usd"])),
    ("runs", "Runs", "Runs", True, lambda r: r["runs"]),
    ("spread", "Spread", "Spread", True, _spread_cell),
]
COLUMN_STYLES = ("exact", "seed")
VERDICT_COLUMN = ("Bottleneck", lambda r: r["verdict"] or "—")
NUMERICS_COLUMN = ("Numerics", lambda r: r["numerics"] or "—")
NOTES_COLUMN = ("Notes", lambda r: "; ".join(r["notes"] + r["errors"]) or "")
_LEFT = {"model_run", "instance", "region", "backend", "device", "precision", "data"}


SCALING_COLUMN = (
    "Measured scaling",
    lambda r: "—" if r["measured_scaling"] is None else f"{r['measured_scaling']:.0%}",
)


def _columns(rows: list[dict], style: str = "exact", wide: bool = False, catalogs=()) -> list:
    """(header, cell, left-aligned) per column. `seed`: the seed's Table 2.1 names (and no region column);
    `exact`: names that say what a cell is, with units. Narrow unless `wide`."""
    assumed = any(_spot_assumed(c) for c in _catalog_list(catalogs)) if catalogs else False
    chosen = []
    for key, seed_name, exact_name, narrow, cell in COLUMNS:
        name = seed_name if style == "seed" else exact_name
        if name is None or not (wide or narrow or style == "seed"):
            continue
        if assumed and key.startswith("spot") and style != "seed":
            name += " (assumed)"  # the catalog's spot is not an observed price: said in the header
        chosen.append((name, cell, key in _LEFT))
    if any(r.get("measured_scaling") is not None for r in rows):  # once a per-device row has its twin
        chosen.append((*SCALING_COLUMN, False))
    if any(r["verdict"] for r in rows):  # only once some record carries a diagnosis
        chosen.append((*VERDICT_COLUMN, True))
    if any(r["numerics"] for r in rows):  # only once some record carries a numerics check
        chosen.append((*NUMERICS_COLUMN, True))
    return chosen + [(*NOTES_COLUMN, True)]


def _escape(cell) -> str:
    return str(cell).replace("|", "\\|").replace("\n", " ")


def render_markdown(
    rows: list[dict], catalogs, dataset_size: int, style: str = "exact", wide: bool = False
) -> str:
    columns = _columns(rows, style, wide, catalogs)
    lines = [
        "| # | " + " | ".join(name for name, _, _ in columns) + " |",
        "|---:|" + "|".join("---" if left else "---:" for _, _, left in columns) + "|",
    ]
    lines += [
        f"| {n} | " + " | ".join(_escape(cell(row)) for _, cell, _ in columns) + " |"
        for n, row in enumerate(rows, 1)
    ]
    lines += ["", footer(catalogs, dataset_size), "", *traces(rows)]
    return "\n".join(lines).rstrip("\n")


def traces(rows: list[dict]) -> list[str]:
    """The runs behind each row (by run id), and every warning those runs recorded."""
    lines = ["Runs behind each row:", ""]
    lines += [f"- #{n}: {', '.join(row['run_ids'])}" for n, row in enumerate(rows, 1)]
    warned = [(n, row) for n, row in enumerate(rows, 1) if row["warnings"]]
    if warned:
        lines += ["", "⚠ Warnings recorded by the runs:", ""]
        lines += [f"- #{n} {warning}" for n, row in warned for warning in row["warnings"]]
    return lines


def _catalog_list(catalogs) -> list:
    return list(catalogs) if isinstance(catalogs, (list, tuple)) else [catalogs]


def footer(catalogs, dataset_size: int) -> str:
    captions = "\n\n".join(catalog.caption() for catalog in _catalog_list(catalogs))
    return (
        f"{captions}\n\n"
        "Spot: interruptible capacity, reclaimable at short notice; its price varies by hour and zone.\n\n"
        f"Throughput: median over runs of each run's median timed window; Spread: (max − min) ÷ median "
        f"across runs, and a run's window cv (stdev ÷ mean) when over 5%. Images per $ = images/hour ÷ "
        f"$/hour of the whole instance. Epoch: {dataset_size:,} images. A run on another device than the "
        "instance's accelerator is priced only with --price-as-if, marked hypothetical; synthetic data "
        "rows are compute-only ceilings."
    )


CSV_FIELDS = [
    "model_run",
    "instance",
    "region",
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
    "device_matches_instance",
    "hypothetical",
    "upper_bound",
    "extrapolated_factor",
    "measured_scaling",
    "measured_images_per_hour",
    "profiled_images_per_hour",
    "precision",
    "batch_size",
    "data",
    "usd_per_million_images",
    "spot_usd_per_million_images",
    "epoch_hours",
    "epoch_usd",
    "spot_epoch_usd",
    "runs",
    "run_ids",
    "spread",
    "window_cv_max",
    "images_per_hour_min",
    "images_per_hour_max",
    "status",
    "verdict",
    "warnings",
    "numerics",
    "notes",
    "prices_catalog",
    "prices_as_of",
    "prices_as_of_note",
]


def render_csv(rows: list[dict]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(
            {
                **row,
                "notes": "; ".join(row["notes"] + row["errors"]),
                "run_ids": " ".join(row["run_ids"]),
                "warnings": " | ".join(row["warnings"]),
            }
        )
    return buffer.getvalue()


def render_json(rows: list[dict], catalogs, dataset_size: int, extrapolate: bool) -> str:
    catalogs = _catalog_list(catalogs)
    return (
        json.dumps(
            {
                "catalog": catalogs[0].describe(),
                "catalogs": [catalog.describe() for catalog in catalogs],
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
    catalog,
    fmt: str,
    dataset_size: int = DEFAULT_DATASET_SIZE,
    extrapolate: bool = False,
    columns: str = "exact",
    wide: bool = False,
) -> str:
    if fmt == "md":
        return render_markdown(rows, catalog, dataset_size, columns, wide) + "\n"
    if fmt == "csv":
        return render_csv(rows)
    return render_json(rows, catalog, dataset_size, extrapolate)
