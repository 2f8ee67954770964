"""Turn a public machine-readable price list into a suite price catalog, so prices can be refreshed.

Two formats:

- ec2instances.info `instances.json`: a list of instances with `instance_type`, `vCPU`, `memory`, `GPU`,
  `GPU_model`, `GPU_memory` and `pricing[region][os]` = {"ondemand", "spot_min", "spot_max", "spot_avg"}.
  Prices there are strings ("3.06"). Spot: the statistic asked for (`spot_avg` by default).
- SkyPilot catalog `vms.csv` (github.com/skypilot-org/skypilot-catalog): one row per availability zone.
  Zones of one region are combined: on-demand is the median of the zones' prices (they normally agree), spot
  is the mean of the zones' spot quotes (or median/min/max when asked), and the note says how many zones
  quoted and their range. On GCP a GPU row (empty InstanceType) prices the GPUs alone: it is added to the
  host VM named by `gcp_host` to price "VM + GPUs" as one instance.
"""

from __future__ import annotations

import ast
import csv
import json
import math
import statistics
import sys
from datetime import date

import yaml

from suite.errors import UserError
from suite.reporting.price_date import parse_price_date
from suite.reporting.pricing import parse_catalog

FORMATS = ("auto", "ec2instances", "skypilot")
ZONE_STATS = {"mean": statistics.fmean, "median": statistics.median, "min": min, "max": max}
EC2_SPOT_STATS = ("avg", "min", "max")


def _price(text) -> float | None:
    """A price as the sources write it: a number or a string; empty, "N/A", 0, NaN, infinity or junk ->
    None (float() reads "inf" and "nan", which are no price)."""
    try:
        value = float(str(text).strip())
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) and value > 0 else None


def detect_format(path: str, head: str) -> str:
    if path.endswith(".json") or head.lstrip().startswith(("[", "{")):
        return "ec2instances"
    if path.endswith(".csv") or head.startswith("InstanceType"):
        return "skypilot"
    raise UserError(f"{path!r}: cannot tell its format (give --format ec2instances or skypilot)")


def from_ec2instances(
    data, region: str, spot_stat: str = "avg", include_cpu_only: bool = False, os_name: str = "linux"
) -> tuple[dict, int]:
    if spot_stat not in EC2_SPOT_STATS:
        raise UserError(f"unknown spot statistic {spot_stat!r} (accepted: {', '.join(EC2_SPOT_STATS)})")
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise UserError("not an ec2instances.info instances.json (expected a list of instance objects)")
    instances, unpriced = {}, 0
    for item in data:
        name = item.get("instance_type")
        gpus = int(_price(item.get("GPU")) or 0)
        if not name or (gpus == 0 and not include_cpu_only):
            continue
        prices = ((item.get("pricing") or {}).get(region) or {}).get(os_name) or {}
        on_demand = _price(prices.get("ondemand"))
        if on_demand is None:
            unpriced += 1
            continue
        model = item.get("GPU_model")
        entry = {
            "provider": "aws",
            "region": region,
            "accelerator": model or ("unknown (not named by the source)" if gpus else "none"),
            "accelerator_count": gpus,
            "accelerator_memory_gib": float(_price(item.get("GPU_memory")) or 0),
            "vcpus": int(_price(item.get("vCPU")) or 0),
            "ram_gib": float(_price(item.get("memory")) or 0),
            "on_demand_usd_per_hour": on_demand,
            "spot_usd_per_hour": _price(prices.get(f"spot_{spot_stat}")),
        }
        if gpus and not model:
            entry["note"] = "accelerator model not given by ec2instances.info: fill it in"
        instances[name] = entry
    return instances, unpriced


def _gpu_memory_gib(info: str) -> float:
    """SkyPilot's GpuInfo is a Python-literal dict: {'Gpus': [...], 'TotalGpuMemoryInMiB': 16384}."""
    try:
        parsed = ast.literal_eval(info) if info else {}
        return float(parsed.get("TotalGpuMemoryInMiB", 0)) / 1024
    except (ValueError, SyntaxError, AttributeError, TypeError):
        return 0.0


def _combine_zones(rows: list[dict], zone_stat: str) -> tuple[float | None, float | None, str | None]:
    on_demand = [p for p in (_price(r.get("Price")) for r in rows) if p is not None]
    spot = [p for p in (_price(r.get("SpotPrice")) for r in rows) if p is not None]
    if not on_demand:
        return None, None, None
    note = None
    if len(spot) == 1:
        note = "spot quoted in one zone only"
    elif spot:
        note = f"spot: {zone_stat} of {len(spot)} zone quotes ({min(spot):g} … {max(spot):g})"
    # A mean of cents is not a price to sixteen digits (0.7399999999999999): sub-cent precision is kept.
    spot_price = round(ZONE_STATS[zone_stat](spot), 6) if spot else None
    return round(statistics.median(on_demand), 6), spot_price, note


def from_skypilot(
    rows: list[dict],
    region: str,
    zone_stat: str = "mean",
    gcp_host: str = "n1-standard-8",
    include_cpu_only: bool = False,
) -> tuple[dict, int]:
    if zone_stat not in ZONE_STATS:
        raise UserError(f"unknown zone statistic {zone_stat!r} (accepted: {', '.join(ZONE_STATS)})")
    needed = {
        "InstanceType",
        "AcceleratorName",
        "AcceleratorCount",
        "vCPUs",
        "MemoryGiB",
        "Price",
        "SpotPrice",
        "Region",
    }
    if not rows or not needed <= set(rows[0]):
        raise UserError(f"not a SkyPilot vms.csv (needs the columns {', '.join(sorted(needed))})")
    in_region = [r for r in rows if r.get("Region") == region]
    if not in_region:
        regions = sorted({r.get("Region") for r in rows if r.get("Region")})
        raise UserError(
            f"no rows for region {region!r} (the file has: {', '.join(regions[:12])}"
            + (", ..." if len(regions) > 12 else "")
            + ")"
        )
    provider = "gcp" if any(not r["InstanceType"] for r in rows) else "aws"
    groups: dict[tuple, list[dict]] = {}
    for row in in_region:
        key = (row["InstanceType"], row.get("AcceleratorName") or "", row.get("AcceleratorCount") or "")
        groups.setdefault(key, []).append(row)

    instances, unpriced = {}, 0
    vms = {}  # GCP host VMs, for pricing GPU rows
    for (itype, accel, count_text), group in groups.items():
        on_demand, spot, note = _combine_zones(group, zone_stat)
        if on_demand is None:
            unpriced += 1
            continue
        count = int(_price(count_text) or 0)
        if accel.upper() == "CPU-ONLY":
            accel, count = "", 0
        first = group[0]
        entry = {
            "provider": provider,
            "region": region,
            "accelerator": accel or "none",
            "accelerator_count": count,
            "accelerator_memory_gib": _gpu_memory_gib(first.get("GpuInfo", "")),
            "vcpus": int(_price(first["vCPUs"]) or 0),
            "ram_gib": float(_price(first["MemoryGiB"]) or 0),
            "on_demand_usd_per_hour": on_demand,
            "spot_usd_per_hour": spot,
        }
        if note:
            entry["note"] = note
        if not itype:
            if not accel.lower().startswith("tpu"):
                vms.setdefault("__gpus__", []).append(entry)
            continue
        if not accel:
            vms[itype] = entry
        if count or include_cpu_only:
            instances[itype] = entry
    for gpu in vms.get("__gpus__", []):
        host = vms.get(gcp_host)
        if host is None:
            raise UserError(
                f"GPU rows need a host VM to be priced with; {gcp_host!r} has no price in "
                f"{region!r} (choose one with --gcp-host)"
            )
        name = f"{gcp_host}+{gpu['accelerator_count']}x{gpu['accelerator']}"
        spot = (
            host["spot_usd_per_hour"] + gpu["spot_usd_per_hour"]
            if host["spot_usd_per_hour"] and gpu["spot_usd_per_hour"]
            else None
        )
        instances[name] = {
            **gpu,
            "vcpus": host["vcpus"],
            "ram_gib": host["ram_gib"],
            "on_demand_usd_per_hour": round(
                host["on_demand_usd_per_hour"] + gpu["on_demand_usd_per_hour"], 6
            ),
            "spot_usd_per_hour": round(spot, 6) if spot else None,
            "note": f"{gcp_host} VM + GPUs priced apart"
            + (f"; GPU {gpu['note']}" if gpu.get("note") else ""),
        }
    return instances, unpriced


def import_file(
    path: str,
    fmt: str = "auto",
    region: str = "us-east-1",
    name: str | None = None,
    spot_stat: str = "avg",
    zone_stat: str = "mean",
    gcp_host: str = "n1-standard-8",
    include_cpu_only: bool = False,
    as_of: str | None = None,
) -> tuple[dict, int]:
    """Read `path` and return (catalog as a dict ready for YAML, number of instances with no price).
    AS_OF is the price list's own date; without it the catalog is dated today and says so."""
    if as_of is not None:  # checked before the file is read: a typo costs nothing
        as_of = parse_price_date(as_of, "--as-of")
    if fmt not in FORMATS:
        raise UserError(f"unknown import format {fmt!r} (accepted: {', '.join(FORMATS)})")
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            text = handle.read()
    except UnicodeDecodeError as error:
        raise UserError(f"{path!r} is not UTF-8 text (byte {error.start}: {error.reason})") from None
    except OSError as error:
        raise UserError(f"{path!r} cannot be read: {error.strerror or error}") from None
    if fmt == "auto":
        fmt = detect_format(path, text[:200])
    if fmt == "ec2instances":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise UserError(f"{path!r} is not valid JSON ({error.msg} at line {error.lineno})") from None
        instances, unpriced = from_ec2instances(data, region, spot_stat, include_cpu_only)
        source = f"ec2instances.info instances.json ({path}), Linux prices, spot = spot_{spot_stat}"
        spot_basis = f"ec2instances.info spot_{spot_stat}"
    else:
        instances, unpriced = from_skypilot(
            list(csv.DictReader(text.splitlines())), region, zone_stat, gcp_host, include_cpu_only
        )
        source = f"SkyPilot catalog vms.csv ({path})"
        spot_basis = f"{zone_stat} of the per-availability-zone spot quotes in {region}"
    if not instances:
        raise UserError(
            f"{path!r}: no priced instances in {region!r}"
            + ("" if include_cpu_only else " with accelerators (add --all for CPU-only ones)")
        )
    catalog = {
        "name": name or f"imported-{date.today().isoformat()}",
        "source": source,
        "as_of": as_of or date.today().isoformat(),
        **({} if as_of else {"as_of_note": "the import date; the list's own date may be older (--as-of)"}),
        "currency": "USD",
        "spot_basis": spot_basis,
        "instances": dict(sorted(instances.items())),
    }
    parsed = parse_catalog(catalog, f"imported catalog from {path!r}")  # what we write must load back
    for warning in parsed.warnings:
        print(f"suite: warning: {warning}", file=sys.stderr)
    return catalog, unpriced


def to_yaml(catalog: dict) -> str:
    return yaml.safe_dump(catalog, sort_keys=False, allow_unicode=True, width=120)
