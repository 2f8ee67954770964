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
import collections
import functools
import json
import math
import statistics
from dataclasses import dataclass
from datetime import date

from suite.inputs import errors, numbers, spreadsheet
from suite.inputs.errors import UserError
from suite.prices import catalog_yaml
from suite.prices.catalog import parse_catalog
from suite.prices.dates import parse_price_date

FORMATS = ("auto", "ec2instances", "skypilot")
ZONE_STATS = {"mean": statistics.fmean, "median": statistics.median, "min": min, "max": max}
EC2_SPOT_STATS = ("avg", "min", "max")


class Malformed(Exception):
    """One instance of a price list has a field of the wrong type or a junk value: the instance is skipped
    and named, never written with a made-up 0."""


def _price(text) -> float | None:
    """A price as the sources write it: a number or a string; empty, "N/A", 0, NaN, infinity or junk text
    -> None (no quote). Text Python alone reads as a number (`3_06` is 306 to float()) and a price outside
    suite.inputs.numbers' sane range for a price per hour are Malformed, as is any other type (a list, an
    object, true): never priced, never silently dropped."""
    if text is None:
        return None
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise Malformed(f"a price is a {type(text).__name__} ({_short(text)})")
    value = numbers.decimal(text)
    if value is None:
        if isinstance(text, str) and _finite_to_python(text):
            raise Malformed(f"a price is {_short(text)}, not a plain decimal number")
        return None
    if value <= 0:
        return None
    if not numbers.PRICE_PER_HOUR.holds(value):
        raise Malformed(
            f"a price of {_short(text)} is not {numbers.PRICE_PER_HOUR.what} "
            f"{numbers.PRICE_PER_HOUR.range_text()}"
        )
    return value


def _finite_to_python(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def _short(value) -> str:
    return errors.shown(value, 40)


def _hardware(value, field: str, whole: bool, required: bool) -> float | int:
    """A hardware figure (count, vCPUs, GiB): a number or numeric text, finite and >= 0 (> 0 if REQUIRED),
    whole if WHOLE. Absent (None or empty text) is 0 where the field may be absent; anything else that is
    not such a number is Malformed, naming the field, never silently 0."""
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise Malformed(f"{field} is missing")
        return 0
    number = numbers.decimal(value)  # plain decimal only: float() reads "1_6" as 16
    good = number is not None and math.isfinite(number) and number >= 0 and (number > 0 or not required)
    if not good or (whole and number != int(number)):
        wanted = "a whole number" if whole else "a number"
        raise Malformed(f"{field} is {_short(value)}, not {wanted}{' above 0' if required else ' >= 0'}")
    return int(number) if whole else number


def _mapping(value, where: str) -> dict:
    """An object the format nests (pricing, pricing[region], pricing[region][os]); absent is empty."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Malformed(f"{where} is a {type(value).__name__} ({_short(value)}), not an object")
    return value


def _name(value) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Malformed(f"instance_type is {_short(value)}, not a name")
    return value


# The columns of a SkyPilot vms.csv the import reads (AvailabilityZone: each row is one zone's quote); any
# other column is said to be ignored, never dropped without a word.
SKYPILOT_COLUMNS = (
    "InstanceType",
    "AcceleratorName",
    "AcceleratorCount",
    "vCPUs",
    "MemoryGiB",
    "GpuInfo",
    "Price",
    "SpotPrice",
    "Region",
    "AvailabilityZone",
)


def warn_unknown_columns(path: str, header, known) -> None:
    """One warning naming the columns of HEADER the import does not read (the first ten, each cut short)."""
    unknown = [column for column in header or () if column not in known]
    if unknown:
        names = ", ".join(errors.shown(column, 40) for column in unknown[:10])
        more = f" and {len(unknown) - 10:,} more" if len(unknown) > 10 else ""
        errors.warn(f"{path}: {len(unknown):,} column(s) ignored, not read by the import: {names}{more}")


def warn_malformed(path: str, malformed: list[str]) -> None:
    """One warning naming the skipped instances (the first ten) and why."""
    if malformed:
        shown = "; ".join(malformed[:10]) + (
            f"; and {len(malformed) - 10} more" if len(malformed) > 10 else ""
        )
        errors.warn(f"{path}: {len(malformed)} instance(s) skipped, malformed: {shown}")


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
    named, unpriced, malformed = [], 0, []
    for number, item in enumerate(data):
        try:
            priced = _ec2_instance(item, region, spot_stat, include_cpu_only, os_name)
        except Malformed as error:
            malformed.append(f"{_label(item.get('instance_type'), number)}: {error}")
            continue
        if priced is None:
            continue
        name, entry = priced
        if entry is None:
            unpriced += 1
        else:
            named.append((name, entry))
    return _named_once(named, malformed), unpriced, malformed


def _label(name, number: int) -> str:
    return name if isinstance(name, str) and name.strip() else f"item {number}"


def _ec2_instance(item: dict, region: str, spot_stat: str, include_cpu_only: bool, os_name: str):
    """(name, catalog entry) for one instances.json item; (name, None) if it has no price here; None if it
    is not wanted (no accelerator). Malformed if a field has the wrong type or a junk value."""
    name = _name(item.get("instance_type"))
    gpus = _hardware(item.get("GPU"), "GPU", whole=True, required=False)
    if gpus == 0 and not include_cpu_only:
        return None
    pricing = _mapping(item.get("pricing"), "pricing")
    in_region = _mapping(pricing.get(region), f"pricing[{region!r}]")
    prices = _mapping(in_region.get(os_name), f"pricing[{region!r}][{os_name!r}]")
    on_demand = _price(prices.get("ondemand"))
    model = item.get("GPU_model")
    if model is not None and not isinstance(model, str):
        raise Malformed(f"GPU_model is {_short(model)}, not a name")
    entry = {
        "provider": "aws",
        "region": region,
        "accelerator": model or ("unknown (not named by the source)" if gpus else "none"),
        "accelerator_count": gpus,
        "accelerator_memory_gib": float(_hardware(item.get("GPU_memory"), "GPU_memory", False, False)),
        "vcpus": _hardware(item.get("vCPU"), "vCPU", whole=True, required=True),
        "ram_gib": float(_hardware(item.get("memory"), "memory", whole=False, required=True)),
        "on_demand_usd_per_hour": on_demand,
        "spot_usd_per_hour": _price(prices.get(f"spot_{spot_stat}")),
    }
    if on_demand is None:
        return name, None
    if gpus and not model:
        entry["note"] = "accelerator model not given by ec2instances.info: fill it in"
    return name, entry


@functools.lru_cache(maxsize=1024)  # one text per GPU model and count, parsed once: literal_eval is slow
def _gpu_memory_gib(info: str) -> float:
    """SkyPilot's GpuInfo is a Python-literal dict: {'Gpus': [...], 'TotalGpuMemoryInMiB': 16384}."""
    try:
        parsed = ast.literal_eval(info) if info else {}
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return 0.0  # not the dict form (some rows name the GPU there): the memory is not given
    if not isinstance(parsed, dict):
        return 0.0
    return _hardware(parsed.get("TotalGpuMemoryInMiB"), "GpuInfo TotalGpuMemoryInMiB", False, False) / 1024


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
    in_region = _skypilot_rows_in(rows, region)
    provider = "gcp" if any(not r["InstanceType"] for r in rows) else "aws"
    named, unpriced, malformed = [], 0, []
    hosts, gpus = {}, []  # GCP: host VMs by name, and GPU rows to be priced on one of them
    for (itype, accel, count_text), group in _by_instance(in_region).items():
        try:
            _check_listed_once(group)
            on_demand, spot, note = _combine_zones(group, zone_stat)
        except Malformed as error:
            malformed.append(f"{itype or accel or 'a row'}: {error}")
            continue
        if on_demand is None:
            unpriced += 1
            marked = _without_on_demand(group[0], itype, accel, count_text, provider, region)
            if marked is not None:
                named.append((itype, marked))
            continue
        try:
            accel, count, hardware = _skypilot_hardware(group[0], itype, accel, count_text)
        except Malformed as error:
            malformed.append(str(error))
            continue
        entry = {
            "provider": provider,
            "region": region,
            "accelerator": accel or "none",
            "accelerator_count": count,
            **hardware,
            "on_demand_usd_per_hour": on_demand,
            "spot_usd_per_hour": spot,
        }
        if note:
            entry["note"] = note
        if not itype:
            if not accel.lower().startswith("tpu"):
                gpus.append(entry)
            continue
        if not accel:
            hosts[itype] = entry
        if count or include_cpu_only:
            named.append((itype, entry))
    named += [_on_host(gpu, hosts.get(gcp_host), gcp_host, region) for gpu in gpus]
    return _named_once(named, malformed), unpriced, malformed


def _named_once(named: list[tuple[str, dict]], malformed: list[str]) -> dict:
    """{name: entry} of the instances the list names once. One it names twice or more (two items of an
    instances.json, or GPU rows whose counts differ only in how they are written) is skipped and named in
    MALFORMED: two quotes for one instance are a question, not an answer, and taking the last would hide
    the other; the catalog reader refuses the same in a YAML file."""
    times = collections.Counter(name for name, _ in named)
    malformed += [f"{name}: listed {n} times: none is taken" for name, n in times.items() if n > 1]
    return {name: entry for name, entry in named if times[name] == 1}


def _check_listed_once(group: list[dict]) -> None:
    """Malformed if one instance's rows name it with two accelerators or counts, or list one zone twice:
    on-demand is the zones' median and spot their mean, so a zone quoted twice (or two instances under one
    name) would be averaged into a price no row quotes."""
    shapes = {_shape(r) for r in group}
    if len(shapes) > 1:
        listed = ", ".join(f"{accel or 'none'} × {count or '?'}" for accel, count in sorted(shapes))
        raise Malformed(f"listed with {len(shapes)} accelerators or counts ({listed})")
    zones = collections.Counter(_zone(r) for r in group)
    twice = next((zone for zone, n in zones.items() if n > 1), None)
    if twice is not None:
        prices = ", ".join(r.get("Price") or "none" for r in group if _zone(r) == twice)
        raise Malformed(f"zone {twice} is listed {zones[twice]} times (on-demand {prices})")


def _zone(row: dict) -> str:
    """A row's zone; its region where the file has no zones (one row per region)."""
    return row.get("AvailabilityZone") or row.get("Region")


def _without_on_demand(first: dict, itype: str, accel: str, count_text: str, provider: str, region: str):
    """An instance with accelerators that the region lists without an on-demand price (p5e.48xlarge, rented
    through capacity blocks): a catalog row saying so, never priced; None for any other unpriced row."""
    try:
        accel, count, hardware = _skypilot_hardware(first, itype, accel, count_text)
    except Malformed:
        return None
    if not itype or not count:
        return None
    return {
        "provider": provider,
        "region": region,
        "accelerator": accel,
        "accelerator_count": count,
        **hardware,
        "on_demand_usd_per_hour": None,
        "no_on_demand": f"the SkyPilot vms.csv lists it in {region} without an on-demand price",
        "spot_usd_per_hour": None,
    }


def _skypilot_rows_in(rows: list[dict], region: str) -> list[dict]:
    """The rows of REGION, once the file is known to be a vms.csv; naming the regions it has if none."""
    needed = set(SKYPILOT_COLUMNS) - {"GpuInfo", "AvailabilityZone"}  # each zone's GPU memory may be absent
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
    return in_region


def _shape(row: dict) -> tuple[str, str]:
    """(accelerator, count) as a row writes them."""
    return row.get("AcceleratorName") or "", row.get("AcceleratorCount") or ""


def _by_instance(rows: list[dict]) -> dict[tuple, list[dict]]:
    """The zones' rows of each instance, in the file's order: all the rows of an instance type, or (GCP)
    the GPU rows of one accelerator and count; keyed by (instance type, accelerator, count) of the first."""
    groups: dict[str | tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault(row["InstanceType"] or _shape(row), []).append(row)
    return {(group[0]["InstanceType"], *_shape(group[0])): group for group in groups.values()}


def _skypilot_hardware(first: dict, itype: str, accel: str, count_text: str) -> tuple[str, int, dict]:
    """(accelerator, count, the host's figures) of one instance from its first zone's row: CPU-ONLY is
    no accelerator. Malformed, naming the instance, for junk figures or a fraction of a device."""
    try:
        count = _hardware(count_text, "AcceleratorCount", whole=False, required=False)
        hardware = {
            "accelerator_memory_gib": _gpu_memory_gib(first.get("GpuInfo", "")),
            # GPU-only rows (GCP, empty InstanceType) carry no host: their host VM's figures are used
            "vcpus": _hardware(first["vCPUs"], "vCPUs", whole=True, required=bool(itype)),
            "ram_gib": float(_hardware(first["MemoryGiB"], "MemoryGiB", whole=False, required=bool(itype))),
        }
    except Malformed as error:
        raise Malformed(f"{itype or accel or 'a row'}: {error}") from None
    if count != int(count):  # a fraction of a GPU (some clouds sell one) is no count of devices
        raise Malformed(f"{itype or accel}: AcceleratorCount {count_text!r} is not a whole number")
    if accel.upper() == "CPU-ONLY":
        return "", 0, hardware
    return accel, int(count), hardware


def _on_host(gpu: dict, host: dict | None, gcp_host: str, region: str) -> tuple[str, dict]:
    """(name, entry) of a GCP GPU row priced as one instance with its host VM: "VM + GPUs"."""
    if host is None:
        raise UserError(
            f"GPU rows need a host VM to be priced with; {gcp_host!r} has no price in "
            f"{region!r} (choose one with --gcp-host)"
        )
    spot = (
        host["spot_usd_per_hour"] + gpu["spot_usd_per_hour"]
        if host["spot_usd_per_hour"] and gpu["spot_usd_per_hour"]
        else None
    )
    return f"{gcp_host}+{gpu['accelerator_count']}x{gpu['accelerator']}", {
        **gpu,
        "vcpus": host["vcpus"],
        "ram_gib": host["ram_gib"],
        "on_demand_usd_per_hour": round(host["on_demand_usd_per_hour"] + gpu["on_demand_usd_per_hour"], 6),
        "spot_usd_per_hour": round(spot, 6) if spot else None,
        "note": f"{gcp_host} VM + GPUs priced apart" + (f"; GPU {gpu['note']}" if gpu.get("note") else ""),
    }


@dataclass(frozen=True)
class ImportRequest:
    """What a price list is imported as: its format (or auto), the region taken, the catalog's name, the
    spot statistic (ec2instances.info) or the zones' (SkyPilot), the GCP host VM, whether instances without
    accelerators are kept, and the list's own date (None: today, and the catalog says so)."""

    fmt: str = "auto"
    region: str = "us-east-1"
    name: str | None = None
    spot_stat: str = "avg"
    zone_stat: str = "mean"
    gcp_host: str = "n1-standard-8"
    include_cpu_only: bool = False
    as_of: str | None = None


def import_file(path: str, request: ImportRequest = ImportRequest()) -> tuple[dict, int]:
    """Read `path` and return (catalog as a dict ready for YAML, number of instances with no price)."""
    as_of = request.as_of
    if as_of is not None:  # checked before the file is read: a typo costs nothing
        as_of = parse_price_date(as_of, "--as-of")
    if request.fmt not in FORMATS:
        raise UserError(f"unknown import format {request.fmt!r} (accepted: {', '.join(FORMATS)})")
    text = _read_price_list(path)
    fmt = detect_format(path, text[:200]) if request.fmt == "auto" else request.fmt
    read = _read_ec2instances if fmt == "ec2instances" else _read_skypilot
    instances, unpriced, malformed, source, spot_basis = read(path, text, request)
    warn_malformed(path, malformed)
    if not instances:
        raise UserError(
            f"{path!r}: no priced instances in {request.region!r}"
            + ("" if request.include_cpu_only else " with accelerators (add --all for CPU-only ones)")
        )
    catalog = {
        "name": request.name or f"imported-{date.today().isoformat()}",
        "source": source,
        "as_of": as_of or date.today().isoformat(),
        **({} if as_of else {"as_of_note": "the import date; the list's own date may be older (--as-of)"}),
        "currency": "USD",
        "spot_basis": spot_basis,
        "instances": dict(sorted(instances.items())),
    }
    parsed = parse_catalog(catalog, f"imported catalog from {path!r}")  # what we write must load back
    for warning in parsed.warnings:
        errors.warn(warning)
    return catalog, unpriced


def _read_price_list(path: str) -> str:
    """The file's text, by the bounded reader; one line naming the file if it is not UTF-8 or no file."""
    from suite.inputs.files import PRICE_LIST_LIMIT, read_user_file

    return read_user_file(path, "price list", PRICE_LIST_LIMIT)


class _KeyTwice(Exception):
    """A JSON object names one key twice."""


def _one_value_each(pairs: list[tuple]) -> dict:
    """A JSON object, or _KeyTwice when it names a key twice: json.loads would keep the last value (the
    last of two prices for one region) without a word."""
    data = dict(pairs)
    if len(data) != len(pairs):
        seen: set = set()
        raise _KeyTwice(next(key for key, _ in pairs if key in seen or seen.add(key)))
    return data


def _read_ec2instances(path: str, text: str, request: ImportRequest) -> tuple:
    """(instances, unpriced, malformed, source, spot basis) of an ec2instances.info instances.json."""
    try:
        data = json.loads(text, object_pairs_hook=_one_value_each)
    except _KeyTwice as error:
        raise UserError(
            f"{path!r}: an object gives the key {errors.shown(error.args[0], 40)} twice (two values for "
            "one field, as two prices for one region: which is meant?)"
        ) from None
    except json.JSONDecodeError as error:
        raise UserError(f"{path!r} is not valid JSON ({error.msg} at line {error.lineno})") from None
    except RecursionError:  # the parser recurses per level: thousands of [[[[ exhaust the stack
        raise UserError(f"{path!r} is nested too deeply to be a price list") from None
    except ValueError as error:  # an integer longer than sys.get_int_max_str_digits()
        raise UserError(f"{path!r} is not a price list ({str(error).split(';')[0]})") from None
    spot_stat = request.spot_stat
    instances, unpriced, malformed = from_ec2instances(
        data, request.region, spot_stat, request.include_cpu_only
    )
    source = f"ec2instances.info instances.json ({path}), Linux prices, spot = spot_{spot_stat}"
    return instances, unpriced, malformed, source, f"ec2instances.info spot_{spot_stat}"


def _read_skypilot(path: str, text: str, request: ImportRequest) -> tuple:
    """(instances, unpriced, malformed, source, spot basis) of a SkyPilot catalog vms.csv."""
    header, rows = spreadsheet.read(text, path)
    warn_unknown_columns(path, header, SKYPILOT_COLUMNS)
    instances, unpriced, malformed = from_skypilot(
        rows, request.region, request.zone_stat, request.gcp_host, request.include_cpu_only
    )
    spot_basis = f"{request.zone_stat} of the per-availability-zone spot quotes in {request.region}"
    return instances, unpriced, malformed, f"SkyPilot catalog vms.csv ({path})", spot_basis


def to_yaml(catalog: dict) -> str:
    """The catalog as YAML, or a UserError when the text is larger than a catalog file may be
    (suite/inputs/yaml_file.py reads at most 4 MiB): a file `--prices` would refuse is never written."""
    from suite.inputs.yaml_file import MAX_BYTES

    text = catalog_yaml.text(catalog)
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_BYTES:
        raise UserError(
            f"the catalog of {len(catalog['instances']):,} instances would be {size / 1024**2:.1f} MiB, larger "
            f"than the {MAX_BYTES // 1024**2} MiB a price catalog file may be: nothing written (import one "
            "region's instances; --all adds those without accelerators)"
        )
    return text
