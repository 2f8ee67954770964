"""An instance as SkyPilot sees it: the resources a task names for it, and SkyPilot's own price catalog.

Names. A price-catalog row is named for what is rented. On AWS that is the instance type itself
(`p3.2xlarge`). On GCP a GPU is rented apart from its host VM, so a row such as `n1-standard-8+1xT4`
(the name `suite prices import` gives it) is the VM `n1-standard-8` plus one `T4`: a SkyPilot task names it
as `instance_type: n1-standard-8` and `accelerators: T4:1` (https://docs.skypilot.co/en/latest/reference/yaml-spec.html).
`sky_resources` makes that split; `shape_problem` says what is wrong with a row SkyPilot could not launch.

Prices. SkyPilot ships no catalog in its wheel: it downloads one CSV per cloud on first use into
`${SKY_RUNTIME_DIR:-~}/.sky/catalogs/<schema version>/<cloud>/vms.csv` (sky/catalog/common.py,
sky/skylet/constants.py CATALOG_SCHEMA_VERSION = 'v8' in skypilot 0.14.1). These files are read here
directly, offline, with the csv module, when they are on the machine; nothing here imports `sky` or calls its
catalog functions, which may fetch. One row per availability zone, with the columns InstanceType,
AcceleratorName, AcceleratorCount, Price, SpotPrice, Region, AvailabilityZone (sky/catalog/common.py reads
them by these names; a GCP GPU row has an empty InstanceType and prices the GPUs alone).
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone

from suite.inputs import numbers, spreadsheet
from suite.inputs.errors import UserError

# `HOST+COUNTxACCELERATOR`: a GCP VM with GPUs attached (see suite/prices/importer.py).
ATTACHED = re.compile(r"^(?P<host>[^+]+)\+(?P<count>[1-9][0-9]*)x(?P<accelerator>[A-Za-z0-9-]+)$")
# What a machine type looks like on each cloud SkyPilot's catalog lists: AWS family.size (`g4dn.xlarge`),
# GCP series-kind-size (`n1-standard-8`, `a2-highgpu-1g`).
MACHINE_TYPE = {
    "aws": re.compile(r"^[a-z][a-z0-9-]*\.[a-z0-9-]+$"),
    "gcp": re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+){1,3}$"),
}
COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "SpotPrice", "Region")
CATALOG_FOLDER = os.path.join(".sky", "catalogs")

# SkyPilot's managed-jobs controller (sky/jobs/constants.py in skypilot 0.14.1): CONTROLLER_RESOURCES =
# {'cpus': '4+', 'memory': '4x', 'disk_size': 50}, and CONTROLLER_AUTOSTOP = {'idle_minutes': 10,
# 'down': False}. Without a cloud named, SkyPilot picks the cheapest instance of its default families
# (sky/catalog/aws_catalog.py and gcp_catalog.py _DEFAULT_INSTANCE_FAMILY) with at least 4 vCPUs and 4 GiB
# of memory per vCPU.
CONTROLLER_CPUS = 4
CONTROLLER_MEMORY_PER_CPU = 4
CONTROLLER_IDLE_MINUTES = 10
CONTROLLER_FAMILIES = {
    "aws": ("m6i.", "m6id.", "m7i.", "r6i.", "r6id.", "r7i.", "c6i.", "c6id.", "c7i."),
    "gcp": ("n2-standard-", "n2-highmem-", "n2-highcpu-", "n4-standard-"),
}


def sky_resources(name: str) -> dict:
    """The `resources` keys a SkyPilot task names for this price-catalog row."""
    attached = ATTACHED.match(name)
    if attached:
        return {
            "instance_type": attached["host"],
            "accelerators": f"{attached['accelerator']}:{attached['count']}",
        }
    return {"instance_type": name}


def shape_problem(instance) -> str | None:
    """Why SkyPilot could not launch this row as named (None: it could), from its name alone."""
    resources = sky_resources(instance.name)
    pattern = MACHINE_TYPE.get(instance.provider)
    if pattern is not None and not pattern.match(resources["instance_type"]):
        return f"{resources['instance_type']!r} is not a {instance.provider} machine type"
    if "accelerators" in resources:
        count = int(resources["accelerators"].rsplit(":", 1)[1])
        if count != instance.accelerator_count:
            return f"its name attaches {count} accelerator(s), its row says {instance.accelerator_count}"
    elif instance.provider == "gcp" and instance.accelerator_count and instance.name.startswith("n1-"):
        # N1 VMs have no GPUs of their own (A2, A3, G2 ... do): theirs are attached, and named so.
        return "a GPU on an N1 VM is attached to it: name the row VM+COUNTxGPU (e.g. n1-standard-8+1xT4)"
    return None


# -- SkyPilot's catalog, read offline ----------------------------------------------------------------


def catalog_root() -> str:
    """Where SkyPilot keeps its downloaded catalogs (sky/skylet/runtime_utils.py: SKY_RUNTIME_DIR, else ~)."""
    return os.path.join(os.path.expanduser(os.environ.get("SKY_RUNTIME_DIR") or "~"), CATALOG_FOLDER)


def catalog_path(cloud: str) -> str | None:
    """The newest schema version's vms.csv for this cloud, if SkyPilot has downloaded one."""
    root = catalog_root()
    try:
        versions = [v for v in os.listdir(root) if re.fullmatch(r"v[0-9]+", v)]
    except OSError:
        return None
    for version in sorted(versions, key=lambda v: int(v[1:]), reverse=True):
        path = os.path.join(root, version, cloud, "vms.csv")
        if os.path.isfile(path):
            return path
    return None


@functools.lru_cache(maxsize=8)
def _read(path: str, mtime: float) -> tuple[dict, ...]:
    from suite.inputs.files import PRICE_LIST_LIMIT, NotAFile, read_text

    try:  # bounded, regular files only: the catalog folder is the user's, like a results folder
        text = read_text(path, PRICE_LIST_LIMIT)
    except (NotAFile, UnicodeDecodeError):
        return ()  # as a damaged catalog: absent, and the suite's own prices are used
    try:  # a row out of line with the header (SkyPilot's pandas reader refuses one too): damaged
        header, rows = spreadsheet.read(text, path)
    except UserError:
        return ()
    if not set(COLUMNS) <= set(header):
        return ()
    return tuple(rows)


def catalog_rows(cloud: str) -> tuple[str, tuple[dict, ...]] | None:
    """(path, rows) of SkyPilot's catalog for this cloud, or None when it is not on the machine (or is not
    a catalog SkyPilot would read: a damaged file is treated as absent, and the suite's own prices are used)."""
    path = catalog_path(cloud)
    if path is None:
        return None
    try:
        rows = _read(path, os.path.getmtime(path))
    except (OSError, UnicodeDecodeError):
        return None
    return (path, rows) if rows else None


def _price(text) -> float | None:
    """A zone's quote: a plain decimal in suite.inputs.numbers' range for a price per hour, as the price
    import reads one; anything else (empty, 0, `1e300`, `3_06`, which float() reads as 306) is no quote."""
    value = numbers.decimal(text)
    return value if value is not None and numbers.PRICE_PER_HOUR.holds(value) else None


def _count_matches(text, count: int) -> bool:
    value = numbers.decimal(text)
    return value is not None and abs(value - count) < 0.01


@dataclass(frozen=True)
class Quote:
    """One instance's prices in SkyPilot's catalog, over the zones it may be launched in."""

    on_demand: tuple[float, float]  # (cheapest, dearest) $/hour
    spot: tuple[float, float] | None  # None: no zone quotes spot
    regions: tuple[str, ...]  # regions that offer it on-demand, the cheapest first
    spot_regions: tuple[str, ...]  # regions that quote spot for it, the cheapest first
    source: str  # the CSV's path and date

    @property
    def zones(self) -> int:
        return len(self.regions)


def _quotes(rows) -> dict[tuple[str, str], list[tuple]]:
    """{(region, zone): [(price, spot price), ...]}: every row's quote. A zone listed twice keeps both
    quotes (the range then spans them), never the last alone."""
    zones: dict[tuple[str, str], list[tuple]] = {}
    for row in rows:
        zone = (row["Region"], row.get("AvailabilityZone") or row["Region"])
        zones.setdefault(zone, []).append((_price(row["Price"]), _price(row["SpotPrice"])))
    return zones


def _sum(a: float | None, b: float | None) -> float | None:
    return a + b if a and b else None


def _per_zone(rows, instance_type: str, accelerator: tuple[str, int] | None, region):
    """{(region, zone): [(price, spot price), ...]} for the VM, plus its attached GPUs (GCP prices them
    apart: each VM quote of a zone with each GPU quote of it). REGION: one region, several, or None (all)."""
    regions = None if region is None else {region} if isinstance(region, str) else set(region)
    vm = _quotes(
        row
        for row in rows
        if row["InstanceType"] == instance_type and (regions is None or row["Region"] in regions)
    )
    if accelerator is None:
        return vm
    name, count = accelerator
    gpus = _quotes(
        row
        for row in rows
        if not row["InstanceType"]
        and row["AcceleratorName"].lower() == name.lower()
        and _count_matches(row["AcceleratorCount"], count)
    )
    return {
        zone: [(_sum(p, gp), _sum(s, gs)) for p, s in vm[zone] for gp, gs in gpus[zone]]
        for zone in vm.keys() & gpus.keys()
    }


def _cheapest_first(zones: dict, which: int) -> tuple[str, ...]:
    """The regions with a price (0: on-demand, 1: spot), the cheapest first."""
    best: dict[str, float] = {}
    for (region, _zone), quotes in zones.items():
        for prices in quotes:
            if prices[which]:
                best[region] = min(prices[which], best.get(region, prices[which]))
    return tuple(sorted(best, key=lambda region: (best[region], region)))


def file_date(path: str) -> str:
    stamp = datetime.fromtimestamp(os.path.getmtime(path), tz=timezone.utc)
    return stamp.strftime("%Y-%m-%d")


def quote(instance, region: str | tuple[str, ...] | None = None) -> Quote | None:
    """SkyPilot's prices for this price-catalog row, or None when its cloud's catalog is not on the machine
    or does not list it (in that region, or any of those regions)."""
    found = catalog_rows(instance.provider)
    if found is None:
        return None
    path, rows = found
    resources = sky_resources(instance.name)
    accelerator = None
    if "accelerators" in resources:
        name, count = resources["accelerators"].rsplit(":", 1)
        accelerator = (name, int(count))
    zones = _per_zone(rows, resources["instance_type"], accelerator, region)
    on_demand = [price for quotes in zones.values() for price, _ in quotes if price]
    if not on_demand:
        return None
    spot = [spot for quotes in zones.values() for _, spot in quotes if spot]
    return Quote(
        on_demand=(min(on_demand), max(on_demand)),
        spot=(min(spot), max(spot)) if spot else None,
        regions=_cheapest_first(zones, 0),
        spot_regions=_cheapest_first(zones, 1),
        source=f"SkyPilot catalog {path} (file date {file_date(path)})",
    )


def listed(instance) -> bool | None:
    """Whether SkyPilot's catalog lists this row (None: that cloud's catalog is not on the machine)."""
    found = catalog_rows(instance.provider)
    if found is None:
        return None
    return quote(instance) is not None


def controller_quote(cloud: str) -> tuple[str, float, str] | None:
    """(instance type, cheapest on-demand $/hour, source) of the managed-jobs controller SkyPilot would
    start on this cloud, from its own catalog; None when that catalog is not on the machine."""
    found = catalog_rows(cloud)
    families = CONTROLLER_FAMILIES.get(cloud)
    if found is None or families is None:
        return None
    path, rows = found
    best = None
    for row in rows:
        if not row["InstanceType"].startswith(families):
            continue
        price = _price(row["Price"])
        cpus, memory = numbers.decimal(row.get("vCPUs")) or 0, numbers.decimal(row.get("MemoryGiB")) or 0
        if price and cpus >= CONTROLLER_CPUS and memory >= CONTROLLER_MEMORY_PER_CPU * cpus:
            if best is None or price < best[1]:
                best = (row["InstanceType"], price)
    if best is None:
        return None
    return best[0], best[1], f"SkyPilot catalog {path} (file date {file_date(path)})"
