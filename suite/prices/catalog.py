"""Price catalogs: what an instance costs per hour, on-demand and spot, and where that price came from.

A catalog is a YAML file (the shipped ones live in suite/prices/catalogs/): a name, its source, an as-of date, how
its spot prices were obtained, and per instance the provider, region, accelerator model, count and memory,
vCPUs, RAM and the two prices. Prices go stale, so every report prints the catalog's source and date.

A row whose price is older than the catalog's says so (`price_as_of`, and `price_source` naming one of the
catalog's `sources`); an instance the cloud no longer rents says when and on whose word (`retired`), and
is still priced, marked, so that old runs and the seed's table can be reproduced. An instance the
source gives no on-demand price for (one rented only through capacity blocks) is listed with
`on_demand_usd_per_hour: null` and why (`no_on_demand`): shown, never priced. A catalog kept for history
(`history`) says what it is kept for.

Validation is strict, because a silently misread price is a wrong answer: every field must be present, and
prices must be numbers (a spot price may be null: "no quote"). Errors name the instance and the field.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import os
from dataclasses import dataclass
from importlib import resources

from suite.inputs import errors, numbers, spreadsheet
from suite.inputs.errors import UserError
from suite.prices import dates
from suite.run_record.facts import other_device

# The newest shipped snapshot; the older ones stay available by name (`--prices seed-2022`): runs recorded
# against them are priced from them.
DEFAULT_CATALOG = "skypilot-2026"

CATALOG_FIELDS = ("name", "source", "as_of", "instances")
# field -> (kind, may be null)
INSTANCE_FIELDS = {
    "provider": (str, False),
    "region": (str, False),
    "accelerator": (str, False),
    "accelerator_count": (int, False),
    "accelerator_memory_gib": (float, False),
    "vcpus": (int, False),
    "ram_gib": (float, False),
    "on_demand_usd_per_hour": (float, True),  # null only with `no_on_demand` (why there is none)
    "spot_usd_per_hour": (float, True),
}


# Sanity bounds, far above any instance sold today (the largest cloud instances cost a few hundred dollars
# an hour and hold 8 to 16 accelerators): a value above them is a typo or a wrong unit, not a price.
UPPER_BOUNDS = {
    "accelerator_count": 1024,
    "accelerator_memory_gib": 65536,
    "vcpus": 65536,
    "ram_gib": 1048576,
    "on_demand_usd_per_hour": 10000,
    "spot_usd_per_hour": 10000,
}


@dataclass(frozen=True)
class Retirement:
    """The cloud no longer rents the instance: since when (None where no date was found) and who says so."""

    date: str | None
    source: str

    def text(self) -> str:
        """`RETIRED 2025-12-20: AWS notice ...`"""
        return f"RETIRED {self.date or '(date not found)'}: {self.source}"


@dataclass(frozen=True)
class Instance:
    name: str
    provider: str
    region: str
    accelerator: str
    accelerator_count: int
    accelerator_memory_gib: float
    vcpus: int
    ram_gib: float
    on_demand_usd_per_hour: float | None  # None only with `no_on_demand`
    spot_usd_per_hour: float | None
    note: str | None = None
    no_on_demand: str | None = None  # why the source gives no on-demand price (e.g. capacity blocks only)
    price_as_of: str | None = None  # this row's prices are older than the catalog's (price_date's form)
    price_source: str | None = None  # where this row's prices come from, when not the catalog's source
    retired: Retirement | None = None

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass
class Catalog:
    name: str
    source: str
    as_of: str  # ISO 8601 to the precision the source allows: 2025-06-01, 2025-06 or 2025 (price_date)
    instances: dict[str, Instance]
    currency: str = "USD"
    as_of_note: str | None = None  # what the date cannot say, e.g. "exact date unknown"
    spot_basis: str | None = None
    path: str | None = None
    warnings: list[str] = dataclasses.field(default_factory=list)  # odd but usable entries
    history: str | None = None  # a catalog kept for the past: what for (its prices are not today's)

    def get(self, name: str) -> Instance:
        if name in self.instances:
            return self.instances[name]
        raise unknown_instance(name, self.instances, f"the {self.name} price catalog")

    def dated(self, today=None) -> str:
        """ "as of 2022 (over 3 years old)": the date, its note and the prices' age."""
        said = [text for text in (self.as_of_note, dates.age(self.as_of, today)) if text]
        return f"as of {self.as_of}" + (f" ({'; '.join(said)})" if said else "")

    def caption(self, today=None) -> str:
        spot = f" Spot: {self.spot_basis}." if self.spot_basis else ""
        history = f" Kept as history: {self.history}." if self.history else ""
        return (
            f"Prices: {self.name} ({self.currency}/hour), {self.dated(today)}; source: {self.source}."
            f"{spot}{history}"
        )

    def price_dated(self, instance: Instance) -> str:
        """The instance's price date and source, where they are not the catalog's ("" otherwise)."""
        if not instance.price_as_of and not instance.price_source:
            return ""
        if not instance.price_as_of:  # a source of its own and no date: its source says what is known
            return f"price of {instance.name}: {instance.price_source}"
        return f"price of {instance.name} as of {instance.price_as_of}" + (
            f" ({instance.price_source})" if instance.price_source else ""
        )

    def describe(self) -> dict:
        return {
            "name": self.name,
            "source": self.source,
            "as_of": self.as_of,
            "as_of_note": self.as_of_note,
            "currency": self.currency,
            "spot_basis": self.spot_basis,
            "history": self.history,
            "path": self.path,
        }


def unknown_instance(name: str, known, where: str) -> UserError:
    close = difflib.get_close_matches(name, list(known), n=4, cutoff=0.5)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    return UserError(
        f"unknown instance {errors.shown(name)}: {hint}(looked in {where}; see `suite prices list`)"
    )


def shipped_catalog_names() -> list[str]:
    folder = resources.files("suite.prices") / "catalogs"
    return sorted(entry.name[: -len(".yaml")] for entry in folder.iterdir() if entry.name.endswith(".yaml"))


def _text(value, where: str, field: str, nullable: bool = False) -> str | None:
    if value is None and nullable:
        return None
    if not isinstance(value, str) or not value.strip():
        raise UserError(f"{where}: {field} must be a non-empty text, got {value!r}")
    return value


def _number(value, kind, where: str, field: str, nullable: bool):
    if value is None:
        if nullable:
            return None
        raise UserError(f"{where}: {field} is missing a value (a number is required)")
    # bool is an int in Python; `true` is never a price or a count.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UserError(
            f"{where}: {field} must be a number, got {value!r}"
            + (
                (
                    " (quoted: write it without quotes)"
                    if numbers.decimal(value) is not None
                    else " (a plain decimal)"
                )
                if isinstance(value, str)
                else ""
            )
        )
    # `nan < 0` is false: NaN and infinity must be refused by name, or they reach every division.
    if not math.isfinite(value):
        raise UserError(f"{where}: {field} must be a finite number, got {value!r}")
    if value < 0:
        raise UserError(f"{where}: {field} must not be negative, got {value!r}")
    if field in UPPER_BOUNDS and value > UPPER_BOUNDS[field]:
        raise UserError(
            f"{where}: {field} is {value!r}, above {UPPER_BOUNDS[field]:g}, more than any instance has "
            "(a typo, or a price per month or per year?)"
        )
    if kind is int:
        if value != int(value):
            raise UserError(f"{where}: {field} must be a whole number, got {value!r}")
        return int(value)
    return float(value)


def parse_instance(name: str, entry, catalog_where: str, sources: dict[str, str] | None = None) -> Instance:
    where = f"{catalog_where}, instance {name!r}"
    spreadsheet.refuse_formula(name, where)
    sources = sources or {}
    if not isinstance(entry, dict):
        raise UserError(f"{where}: expected a mapping of fields, got {entry!r}")
    values = {}
    for field, (kind, nullable) in INSTANCE_FIELDS.items():
        if field not in entry:
            null = " (write `null` for no quote)" if nullable else ""
            raise UserError(f"{where}: field {field!r} is missing{null}")
        if kind is str:
            values[field] = _text(entry[field], where, field)
        else:
            values[field] = _number(entry[field], kind, where, field, nullable)
    no_on_demand = _no_on_demand(entry.get("no_on_demand"), values["on_demand_usd_per_hour"], where)
    # A price is at least suite.inputs.numbers' least price per hour: 0 or 1e-300 would make images per $ endless.
    least = numbers.PRICE_PER_HOUR.least
    if no_on_demand is None and values["on_demand_usd_per_hour"] < least:
        raise UserError(
            f"{where}: on_demand_usd_per_hour must be at least {least:g} (images per $ divide by it), "
            f"got {values['on_demand_usd_per_hour']!r}"
        )
    if values["spot_usd_per_hour"] is not None and values["spot_usd_per_hour"] < least:
        raise UserError(
            f"{where}: spot_usd_per_hour must be at least {least:g}, or null for no quote, "
            f"got {values['spot_usd_per_hour']!r}"
        )
    note = entry.get("note")
    return Instance(
        name=str(name),
        note=str(note) if note is not None else None,
        no_on_demand=no_on_demand,
        price_as_of=_row_date(entry.get("price_as_of"), where),
        price_source=_row_source(entry.get("price_source"), sources, where),
        retired=_retirement(entry.get("retired"), where),
        **values,
    )


def _no_on_demand(value, on_demand: float | None, where: str) -> str | None:
    """Why the instance has no on-demand price: required with `on_demand_usd_per_hour: null` (a price left
    out is a question, never a silent gap), refused beside a price."""
    if on_demand is None and value is None:
        raise UserError(
            f"{where}: on_demand_usd_per_hour is missing a value (a number is required; an instance the "
            "source gives no on-demand price for says why in `no_on_demand: TEXT`)"
        )
    if value is None:
        return None
    if on_demand is not None:
        raise UserError(
            f"{where}: no_on_demand is given beside on_demand_usd_per_hour {on_demand:g}: keep one"
        )
    return _text(value, where, "no_on_demand")


def _row_date(value, where: str) -> str | None:
    return None if value is None else dates.parse_price_date(value, f"{where}: price_as_of")


def _row_source(value, sources: dict[str, str], where: str) -> str | None:
    """`price_source: KEY` names one of the catalog's `sources`; the row keeps the source's text."""
    if value is None:
        return None
    if not isinstance(value, str) or value not in sources:
        known = ", ".join(sources) or "none: add a `sources:` mapping to the catalog"
        raise UserError(f"{where}: price_source {value!r} is not one of the catalog's sources ({known})")
    return sources[value]


def _retirement(value, where: str) -> Retirement | None:
    """`retired: {date: YYYY-MM-DD | YYYY-MM | YYYY | null, source: TEXT}`."""
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {"date", "source"}:
        raise UserError(
            f"{where}: retired must be a mapping of date (YYYY-MM-DD, YYYY-MM, YYYY, or null where no date "
            f"was found) and source (who says so), got {value!r}"
        )
    date = value["date"]
    return Retirement(
        date=None if date is None else dates.parse_price_date(date, f"{where}: retired date"),
        source=_text(value["source"], where, "retired source"),
    )


def _sources(value, where: str) -> dict[str, str]:
    """The catalog's `sources: {KEY: TEXT}`, which rows name in `price_source`."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not value:
        raise UserError(f"{where}: sources must map a short name to a source's description, got {value!r}")
    return {str(key): _text(text, where, f"sources[{key!r}]") for key, text in value.items()}


def parse_catalog(data, where: str, path: str | None = None) -> Catalog:
    if not isinstance(data, dict):
        raise UserError(f"{where}: not a price catalog (expected a mapping with {', '.join(CATALOG_FIELDS)})")
    for field in CATALOG_FIELDS:
        if data.get(field) in (None, ""):
            raise UserError(
                f"{where}: field {field!r} is missing (a catalog needs {', '.join(CATALOG_FIELDS)})"
            )
    if not isinstance(data["instances"], dict) or not data["instances"]:
        raise UserError(f"{where}: 'instances' must map instance names to their fields")
    sources = _sources(data.get("sources"), where)
    instances = {
        str(name): parse_instance(str(name), entry, where, sources)
        for name, entry in data["instances"].items()
    }
    as_of, as_of_note = data["as_of"], _text(data.get("as_of_note"), where, "as_of_note", nullable=True)
    warnings = []
    if as_of_note is None and (split := dates.split_date_and_words(as_of)):
        # A catalog written before as_of was a date still loads, read the way it was meant.
        as_of, as_of_note = split
        warnings.append(
            f"{where}: as_of {data['as_of']!r} read as as_of {as_of!r} and as_of_note {as_of_note!r} "
            "(write them so in the file to silence this)"
        )
    warnings += [
        f"{where}, instance {i.name!r}: spot_usd_per_hour {i.spot_usd_per_hour:g} is above "
        f"on_demand_usd_per_hour {i.on_demand_usd_per_hour:g} (spot is normally the cheaper; check the source)"
        for i in instances.values()
        if i.spot_usd_per_hour is not None
        and i.on_demand_usd_per_hour is not None
        and i.spot_usd_per_hour > i.on_demand_usd_per_hour
    ]
    return Catalog(
        warnings=warnings,
        name=str(data["name"]),
        source=str(data["source"]),
        as_of=dates.parse_price_date(as_of, f"{where}: as_of"),
        as_of_note=as_of_note,
        instances=instances,
        currency=str(data.get("currency", "USD")),
        spot_basis=data.get("spot_basis"),
        path=path,
        history=_text(data.get("history"), where, "history", nullable=True),
    )


def _read_yaml(path: str, where: str):
    """The file's data, read by the suite's one strict YAML reader (suite/inputs/yaml_file.py): a key given twice
    is refused (two prices for one instance is a question, not an answer), and so are aliases, tags and
    YAML 1.1's sexagesimal and `_` numbers (read as text, which the field checks then refuse)."""
    from suite.inputs import yaml_file

    document = yaml_file.read(path, where, name=where)
    return document.value(document.root)


@functools.cache
def _shipped_catalog(choice: str) -> Catalog:
    """A shipped catalog, parsed once a process: the files ship with the package and do not change under
    it, and parsing the largest (strict YAML, every field checked) took 19 ms here, which a report or a
    plan that looks several instances up paid each time."""
    entry = resources.files("suite.prices") / "catalogs" / f"{choice}.yaml"
    with resources.as_file(entry) as path:
        return parse_catalog(
            _read_yaml(str(path), f"price catalog {choice!r}"), f"price catalog {choice!r}", str(entry)
        )


def load_catalog(name_or_path: str | None = None) -> Catalog:
    """A shipped catalog by name, or a user's YAML file by path."""
    choice = name_or_path or DEFAULT_CATALOG
    shipped = shipped_catalog_names()
    if choice in shipped:
        catalog = _shipped_catalog(choice)
        # a copy of what may change, so that no caller's edit reaches the next caller's catalog
        return dataclasses.replace(
            catalog, instances=dict(catalog.instances), warnings=list(catalog.warnings)
        )
    if os.path.lexists(choice) or choice.endswith((".yaml", ".yml")):
        if os.path.isdir(choice):
            raise UserError(
                f"price catalog {choice!r} is a folder: give a catalog YAML file or a shipped name"
            )
        if not os.path.lexists(choice):  # a FIFO, device or link loop is named by the reader, with why
            raise UserError(
                f"price catalog file {choice!r} does not exist (shipped catalogs: {', '.join(shipped)})"
            )
        catalog = parse_catalog(_read_yaml(choice, f"price catalog file {choice!r}"), choice, choice)
        for warning in catalog.warnings:
            errors.warn(warning)
        return catalog
    raise UserError(
        f"unknown price catalog {choice!r} (shipped: {', '.join(shipped)}; or a path to a YAML file)"
    )


def find_instance(name: str, prices: str | None = None) -> tuple[Instance, Catalog]:
    """The instance in the catalog asked for; with none asked for, in any shipped catalog (newest first),
    so an instance only the seed priced (e.g. g3.8xlarge) can still be named on `suite run`."""
    if prices:
        catalog = load_catalog(prices)
        return catalog.get(name), catalog
    catalogs = [load_catalog(DEFAULT_CATALOG)] + [
        load_catalog(n) for n in shipped_catalog_names() if n != DEFAULT_CATALOG
    ]
    for catalog in catalogs:
        if name in catalog.instances:
            return catalog.instances[name], catalog
    known = sorted({n for catalog in catalogs for n in catalog.instances})
    raise unknown_instance(name, known, "the shipped price catalogs; give your own with --prices FILE")


def device_mismatch_warning(record: dict) -> str | None:
    """A run named an instance whose accelerator is not the device it ran on (a CPU run given
    `--instance p5.48xlarge`): its rate says nothing about that instance, and reports will not price it
    unless asked (`suite report --price-as-if`)."""
    config, device = record.get("config") or {}, record.get("device") or {}
    if not config.get("instance") or not device.get("name"):
        return None
    try:
        instance, _ = find_instance(config["instance"], config.get("prices"))
    except UserError:
        return None
    if not other_device(device["name"], instance.accelerator):
        return None
    return (
        f"--instance {instance.name} has {instance.accelerator}, but this ran on {device['name']}: "
        "its rate is not that instance's, and reports price it only with --price-as-if (hypothetical)"
    )
