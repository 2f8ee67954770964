"""A fleet campaign: one benchmark on several cloud instance types, and what renting them will cost.

A campaign file (YAML) names the workload once and the instance types to run it on:

    name: dcgan-cost              # cluster names start with it (letters, digits, '-')
    workload: dcgan64
    options: {batch-size: 64}     # `suite run` options, spelled as on its command line without dashes
    hours: 0.5                    # how long each instance is held (provisioning + install + run)
    spot: false                   # the default for every instance
    max_cost_usd: 40              # refuse a plan whose estimate is above this
    prices: skypilot-2025         # the price catalog (a shipped name or a YAML file)
    source: {git: https://github.com/you/suite, ref: main}   # or `local` (default): this checkout
    records: {bucket: s3://my-bucket/dcgan-cost}              # needed for spot instances
    instances:
      - p3.2xlarge
      - {type: dl1.24xlarge, spot: true, options: {nproc: 8}}

Every instance type must be in the price catalog: the estimate is hours x $/hour from that catalog
(on-demand, or spot for a spot instance), and an unknown name is refused with near matches.
Anything malformed is a UserError naming the key and its line.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from suite.errors import UserError

DEFAULT_HOURS = 1.0
TOP_KEYS = ("name", "workload", "options", "hours", "spot", "max_cost_usd", "prices", "source", "records")
INSTANCE_KEYS = ("type", "spot", "hours", "cloud", "region", "backend", "options")
# Options the campaign decides for every instance (they would break collection or pricing).
RESERVED_OPTIONS = ("out", "json", "instance", "prices", "workload", "backend", "help")
# The bucket schemes whose command-line tools can bring records home (see sky_tasks.SYNC_COMMANDS).
BUCKET_SCHEMES = ("s3", "gs")
# SkyPilot cluster names: a letter first, then letters, digits and '-' (kept short for cloud limits).
NAME_PATTERN = re.compile(r"^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$")


@dataclass
class Target:
    """One instance type of the campaign, with its price and how it is rented."""

    instance_type: str
    spot: bool
    hours: float
    usd_per_hour: float  # the rate this target is estimated at (spot or on-demand)
    on_demand_usd_per_hour: float
    spot_usd_per_hour: float | None
    accelerator: str
    accelerator_count: int
    cloud: str | None = None
    region: str | None = None
    backend: str | None = None  # None: from the catalog's accelerator (see sky_tasks.backend_for)
    options: dict[str, str] = field(default_factory=dict)  # merged: campaign options, then its own

    @property
    def cost_usd(self) -> float:
        return self.hours * self.usd_per_hour


@dataclass
class Campaign:
    name: str
    workload: str
    targets: list[Target]
    prices: str  # the catalog's shipped name or file path
    catalog_caption: str
    max_cost_usd: float | None = None
    git: str | None = None  # install from this repository (None: the local checkout as a workdir)
    ref: str | None = None
    bucket: str | None = None  # records go to this bucket (None: rsync from the cluster)
    source: str = "command line"

    @property
    def cost_usd(self) -> float:
        return sum(t.cost_usd for t in self.targets)


# -- reading a campaign file --------------------------------------------------------------------------


class _Reader:
    """YAML nodes with their line numbers, so every message can say where the bad value is."""

    def __init__(self, path: str):
        import yaml

        self.path = path
        try:
            with open(path) as handle:
                self.loader = yaml.SafeLoader(handle.read())
            self.root = self.loader.get_single_node()
        except OSError as error:
            raise UserError(f"cannot read campaign file {path!r}: {error.strerror or error}") from None
        except yaml.MarkedYAMLError as error:
            mark = error.problem_mark or error.context_mark
            line = f", line {mark.line + 1}" if mark else ""
            raise UserError(
                f"campaign file {path}{line} is not valid YAML: {error.problem or error}"
            ) from None

    def where(self, node) -> str:
        return f"{self.path}, line {node.start_mark.line + 1}"

    def value(self, node):
        return self.loader.construct_object(node, deep=True)

    def mapping(self, node, what: str, keys) -> dict:
        """{key: (key node, value node)} of a mapping, refusing keys not in `keys`."""
        import yaml

        if not isinstance(node, yaml.MappingNode):
            raise UserError(f"{what} must be a mapping ({self.where(node)})")
        found = {}
        for key_node, value_node in node.value:
            key = str(key_node.value)
            if key not in keys:
                raise UserError(
                    f"unknown key {key!r} in {what} ({self.where(key_node)}; accepted: {', '.join(keys)})"
                )
            found[key] = (key_node, value_node)
        return found


def _number(reader: _Reader, key: str, node, positive: bool = True) -> float:
    value = reader.value(node)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (positive and value <= 0):
        raise UserError(f"{key!r} must be a number above 0, got {value!r} ({reader.where(node)})")
    return float(value)


def _flag(reader: _Reader, key: str, node) -> bool:
    value = reader.value(node)
    if not isinstance(value, bool):
        raise UserError(f"{key!r} must be true or false, got {value!r} ({reader.where(node)})")
    return value


def _text(reader: _Reader, key: str, node) -> str:
    value = reader.value(node)
    if not isinstance(value, str) or not value.strip():
        raise UserError(f"{key!r} must be a non-empty text, got {value!r} ({reader.where(node)})")
    return value.strip()


def _options(reader: _Reader, key: str, node) -> dict[str, str]:
    import yaml

    if not isinstance(node, yaml.MappingNode):
        raise UserError(f"{key!r} must map `suite run` options to values ({reader.where(node)})")
    options = {}
    for option_node, value_node in node.value:
        name = str(option_node.value).replace("_", "-")
        value = reader.value(value_node)
        if isinstance(value, (dict, list)) or value is None:
            raise UserError(f"option {name!r} needs one value, got {value!r} ({reader.where(value_node)})")
        check_option(name, reader.where(option_node))
        options[name] = str(value).lower() if isinstance(value, bool) else str(value)
    return options


def check_option(name: str, where: str) -> None:
    if name in RESERVED_OPTIONS:
        raise UserError(f"option {name!r} ({where}) is set by the campaign itself")


def load(path: str) -> dict:
    """Parse a campaign file into plain settings (see `build`), each checked where it stands."""
    import yaml

    reader = _Reader(path)
    if reader.root is None:
        raise UserError(f"campaign file {path} is empty (it needs 'workload' and 'instances')")
    top = reader.mapping(reader.root, f"campaign file {path}", (*TOP_KEYS, "instances"))
    for required in ("workload", "instances"):
        if required not in top:
            raise UserError(f"campaign file {path} has no {required!r} (line 1 onwards)")
    settings: dict = {"source_file": path}
    for key, (_, node) in top.items():
        if key in ("hours", "max_cost_usd"):
            settings[key] = _number(reader, key, node)
        elif key == "spot":
            settings[key] = _flag(reader, key, node)
        elif key == "options":
            settings[key] = _options(reader, key, node)
        elif key in ("name", "workload", "prices"):
            settings[key] = _text(reader, key, node)
        elif key == "source":
            settings.update(_source(reader, node))
        elif key == "records":
            records = reader.mapping(node, "'records'", ("bucket",))
            if "bucket" in records:
                settings["bucket"] = _bucket(reader, records["bucket"][1])
    instances_node = top["instances"][1]
    if not isinstance(instances_node, yaml.SequenceNode) or not instances_node.value:
        raise UserError(f"'instances' must be a list of instance types ({reader.where(instances_node)})")
    settings["instances"] = [_instance(reader, node) for node in instances_node.value]
    settings["where"] = {
        entry["type"]: reader.where(node) for entry, node in zip(settings["instances"], instances_node.value)
    }
    return settings


def _source(reader: _Reader, node) -> dict:
    value = reader.value(node)
    if value == "local":
        return {}
    fields = reader.mapping(node, "'source' (`local`, or {git: URL, ref: REF})", ("git", "ref"))
    if "git" not in fields:
        raise UserError(f"'source' needs 'git: URL' or the word local ({reader.where(node)})")
    found = {"git": _text(reader, "git", fields["git"][1])}
    if "ref" in fields:
        found["ref"] = _text(reader, "ref", fields["ref"][1])
    return found


def _bucket(reader: _Reader, node) -> str:
    value = _text(reader, "bucket", node)
    check_bucket(value, reader.where(node))
    return value.rstrip("/")


def check_bucket(value: str, where: str) -> None:
    scheme = value.split("://", 1)[0] if "://" in value else ""
    if scheme not in BUCKET_SCHEMES or not value.split("://", 1)[1].strip("/"):
        raise UserError(
            f"bucket {value!r} ({where}) must be a URL of one of: "
            + ", ".join(f"{s}://BUCKET[/PREFIX]" for s in BUCKET_SCHEMES)
        )


def _instance(reader: _Reader, node) -> dict:
    import yaml

    if isinstance(node, yaml.ScalarNode):
        return {"type": _text(reader, "instances", node)}
    fields = reader.mapping(node, "an entry of 'instances'", INSTANCE_KEYS)
    if "type" not in fields:
        raise UserError(f"an entry of 'instances' has no 'type' ({reader.where(node)})")
    entry = {}
    for key, (_, value_node) in fields.items():
        if key == "spot":
            entry[key] = _flag(reader, key, value_node)
        elif key == "hours":
            entry[key] = _number(reader, key, value_node)
        elif key == "options":
            entry[key] = _options(reader, key, value_node)
        else:
            entry[key] = _text(reader, key, value_node)
    return entry


# -- building and pricing ------------------------------------------------------------------------------


def build(settings: dict) -> Campaign:
    """Check every instance against the price catalog and the budget cap; return the priced campaign."""
    from suite.reporting.pricing import load_catalog

    source = settings.get("source_file") or "command line"
    where = settings.get("where") or {}
    catalog = load_catalog(settings.get("prices"))
    name = settings.get("name") or (
        os.path.splitext(os.path.basename(source))[0] if settings.get("source_file") else "suite-fleet"
    )
    name = name.lower().replace("_", "-")
    if not NAME_PATTERN.match(name):
        raise UserError(
            f"campaign name {name!r} ({source}) must start with a letter and hold only letters, digits and "
            "'-' (at most 32): cluster names are made from it"
        )
    default_hours = settings.get("hours", DEFAULT_HOURS)
    targets, seen = [], set()
    for entry in settings["instances"]:
        instance_type = entry["type"]
        at = where.get(instance_type, source)
        if instance_type in seen:
            raise UserError(f"instance {instance_type!r} is listed twice ({at})")
        seen.add(instance_type)
        try:
            instance = catalog.get(instance_type)
        except UserError as error:
            raise UserError(f"{error} ({at})") from None
        spot = entry.get("spot", settings.get("spot", False))
        rate = instance.spot_usd_per_hour if spot else instance.on_demand_usd_per_hour
        if rate is None:
            raise UserError(
                f"{instance_type} has no spot price in the {catalog.name} catalog ({at}): "
                "run it on-demand (spot: false) or give a catalog with a spot quote"
            )
        targets.append(
            Target(
                instance_type=instance_type,
                spot=spot,
                hours=entry.get("hours", default_hours),
                usd_per_hour=rate,
                on_demand_usd_per_hour=instance.on_demand_usd_per_hour,
                spot_usd_per_hour=instance.spot_usd_per_hour,
                accelerator=instance.accelerator,
                accelerator_count=instance.accelerator_count,
                cloud=entry.get("cloud"),
                region=entry.get("region"),
                backend=entry.get("backend"),
                options={**settings.get("options", {}), **entry.get("options", {})},
            )
        )
    campaign = Campaign(
        name=name,
        workload=settings["workload"],
        targets=targets,
        prices=catalog.path if catalog.path and not _is_shipped(settings.get("prices")) else catalog.name,
        catalog_caption=catalog.caption(),
        max_cost_usd=settings.get("max_cost_usd"),
        git=settings.get("git"),
        ref=settings.get("ref"),
        bucket=settings.get("bucket"),
        source=source,
    )
    spot_without_bucket = [t.instance_type for t in targets if t.spot and not campaign.bucket]
    if spot_without_bucket:
        raise UserError(
            f"spot instances ({', '.join(spot_without_bucket)}) run as managed jobs whose clusters go away "
            f"by themselves: give a bucket for their records (records: {{bucket: s3://...}}) in {source}"
        )
    check_budget(campaign)
    return campaign


def _is_shipped(prices: str | None) -> bool:
    from suite.reporting.pricing import shipped_catalog_names

    return prices is None or prices in shipped_catalog_names()


def check_budget(campaign: Campaign) -> None:
    if campaign.max_cost_usd is not None and campaign.cost_usd > campaign.max_cost_usd:
        raise UserError(
            f"the campaign's estimate is ${campaign.cost_usd:,.2f}, above its max_cost_usd "
            f"${campaign.max_cost_usd:,.2f}: drop instances, shorten 'hours' or use spot ({campaign.source})"
        )


def from_inline(
    instances: list[str],
    workload: str,
    options: list[str],
    hours: float | None,
    spot: bool,
    max_cost_usd: float | None,
    prices: str | None,
    bucket: str | None,
    name: str | None,
) -> dict:
    """`--instances p3.2xlarge,dl1.24xlarge --workload dcgan64 --set batch-size=64` as settings."""
    settings: dict = {"workload": workload, "spot": spot, "options": {}}
    for text in options:
        option, sep, value = text.partition("=")
        option = option.strip().replace("_", "-")
        if not sep or not option:
            raise UserError(f"--set takes OPTION=VALUE (e.g. batch-size=64), got {text!r}")
        check_option(option, "--set")
        settings["options"][option] = value.strip()
    for key, value in (("hours", hours), ("max_cost_usd", max_cost_usd), ("prices", prices), ("name", name)):
        if value is not None:
            settings[key] = value
    if bucket:
        check_bucket(bucket, "--bucket")
        settings["bucket"] = bucket.rstrip("/")
    settings["instances"] = [{"type": t.strip()} for t in ",".join(instances).split(",") if t.strip()]
    if not settings["instances"]:
        raise UserError("no instances: give a campaign file or --instances TYPE[,TYPE...]")
    return settings


def estimate_table(campaign: Campaign) -> str:
    """Each instance's hours x $/hour, and the campaign's total, from the price catalog."""
    from tabulate import tabulate

    def money(value):
        return "-" if value is None else f"{value:,.3f}"

    rows = [
        [
            t.instance_type,
            t.accelerator if t.accelerator_count else "(cpu)",
            "spot" if t.spot else "on-demand",
            money(t.on_demand_usd_per_hour),
            money(t.spot_usd_per_hour),
            f"{t.hours:g}",
            f"{t.cost_usd:,.2f}",
        ]
        for t in campaign.targets
    ]
    table = tabulate(
        rows,
        headers=["instance", "accelerator", "rented", "on-demand $/h", "spot $/h", "hours", "estimate $"],
        disable_numparse=True,
        colalign=("left", "left", "left", "right", "right", "right", "right"),
    )
    on_demand = sum(t.hours * t.on_demand_usd_per_hour for t in campaign.targets)
    all_spot = [t.hours * t.spot_usd_per_hour for t in campaign.targets if t.spot_usd_per_hour is not None]
    lines = [table, "", f"estimated cost of the campaign: ${campaign.cost_usd:,.2f}"]
    lines.append(f"  all on-demand: ${on_demand:,.2f}")
    if len(all_spot) == len(campaign.targets):
        lines.append(f"  all spot:      ${sum(all_spot):,.2f}")
    if campaign.max_cost_usd is not None:
        lines.append(f"  budget (max_cost_usd): ${campaign.max_cost_usd:,.2f}")
    lines.append(campaign.catalog_caption)
    return "\n".join(lines)
