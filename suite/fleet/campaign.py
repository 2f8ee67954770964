"""A fleet campaign: one benchmark on several cloud instance types, and what renting them will cost.

A campaign names the workload once and the instance types to run it on (the file format: see
campaign_file.py, which reads it, and docs/fleet.md; or inline: campaign_inline.py).

Every instance type must be in the price catalog: the estimate is hours x $/hour from that catalog
(on-demand, or spot for a spot instance), and an unknown name is refused with near matches.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from suite.inputs import numbers
from suite.inputs.errors import UserError
from suite.inputs.numbers import positive_int

DEFAULT_HOURS = 1.0
# Options the campaign decides for every instance (they would break collection or pricing).
RESERVED_OPTIONS = ("out", "json", "instance", "prices", "workload", "backend", "help")
# The bucket schemes whose command-line tools can bring records home (see sky_tasks.SYNC_COMMANDS).
BUCKET_SCHEMES = ("s3", "gs")
# Fields that end up in task files and `sky`/shell command lines: plain words only, no shell text.
PLAIN_FIELDS = {
    "cloud": re.compile(r"^[a-z][a-z0-9]{1,19}$"),
    "region": re.compile(r"^[a-z]{2,}(-[a-z0-9]+){1,4}$"),
    "ref": re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$"),
    "git": re.compile(r"^(https://|ssh://|git@)[A-Za-z0-9._~:/@+-]{3,300}$"),
}
BUCKET_PATTERN = re.compile(r"^[a-z][a-z0-9]*://[a-z0-9][a-z0-9._-]{0,62}(/[A-Za-z0-9._/-]*)?$")
# A container image reference (registry/path:tag, or @sha256:digest), as `docker pull` takes it.
IMAGE_PATTERN = re.compile(
    r"^[a-z0-9][a-z0-9._-]*(/[a-z0-9][a-z0-9._-]*)+(:[A-Za-z0-9._-]{1,128})?(@sha256:[0-9a-f]{64})?$"
)
# An EC2 image id: "ami-" and 8 or 17 hex digits.
AMI_PATTERN = re.compile(r"^ami-([0-9a-f]{8}|[0-9a-f]{17})$")
# How to find a Gaudi host image in a region (AWS's and Marketplace images whose name mentions Habana).
FIND_HABANA_AMI = (
    "aws ec2 describe-images --region REGION --owners amazon aws-marketplace "
    "--filters 'Name=name,Values=*Habana*' --query 'Images[].[ImageId,Name,CreationDate]' --output text"
)
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
    host_image: dict[str, str] | None = None  # {region: AMI id}: the VM image under a Gaudi container
    provider: str = "aws"  # the price catalog's cloud for this row
    price: object = None  # campaign_prices.Price: where the rates came from, the regions that offer it

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
    controller: object = None  # campaign_prices.Controller: the managed-jobs controller spot instances need
    habana_image: str | None = None  # the Gaudi tasks' container (None: sky_tasks.HABANA_IMAGE)

    @property
    def cost_usd(self) -> float:
        return sum(t.cost_usd for t in self.targets) + (self.controller.cost_usd if self.controller else 0.0)


# -- checks shared with the campaign file reader ------------------------------------------------------


def check_option(name: str, where: str) -> None:
    if name in RESERVED_OPTIONS:
        raise UserError(f"option {name!r} ({where}) is set by the campaign itself")


def check_bucket(value: str, where: str) -> None:
    scheme = value.split("://", 1)[0] if "://" in value else ""
    if scheme not in BUCKET_SCHEMES or not BUCKET_PATTERN.match(value):
        raise UserError(
            f"bucket {value!r} ({where}) must be a URL of one of: "
            + ", ".join(f"{s}://BUCKET[/PREFIX]" for s in BUCKET_SCHEMES)
        )


def check_amount(key: str, value, where: str, kind) -> float:
    """A number of KIND (suite.inputs.numbers: hours, dollars) within its sane range: NaN, inf, 1e308 and 1e-300
    are slips, not plans."""
    return numbers.number(f"{key!r} ({where})", value, kind)


def check_plain(key: str, value: str, where: str) -> str:
    if not PLAIN_FIELDS[key].match(value):
        raise UserError(
            f"{key!r} {value!r} ({where}) is not a plain {key} name (letters, digits and - . / only): it goes "
            "into task files and command lines"
        )
    return value


def check_host_image(value, region: str | None, where: str) -> dict[str, str]:
    """`host_image`: an AMI id (with the instance's `region`) or {REGION: AMI id}, as {region: AMI id}.
    An AMI id names an image in one region only, so every id comes with its region."""
    if isinstance(value, str):
        if region is None:
            raise UserError(
                f"host_image {value!r} ({where}) is an AMI id, which holds in one region only: give the "
                "instance's region (region: us-east-1) or write host_image as {REGION: AMI id, ...}"
            )
        value = {region: value}
    if not isinstance(value, dict) or not value:
        raise UserError(
            f"host_image ({where}) must be an AMI id (ami-...) or {{REGION: AMI id, ...}}, got {value!r}"
        )
    images = {}
    for key, ami in value.items():
        check_plain("region", str(key), where)
        if not isinstance(ami, str) or not AMI_PATTERN.match(ami.strip()):
            raise UserError(
                f"host_image for {key} ({where}) must be an AMI id (ami- and 8 or 17 hex digits), got {ami!r}"
            )
        images[str(key)] = ami.strip()
    if region is not None and region not in images:
        raise UserError(
            f"host_image ({where}) has no AMI for the instance's region {region} (it has {', '.join(images)})"
        )
    return images


def check_workload(name: str, where: str) -> None:
    """A registry name (or an installed one); torchvision:/timm:/module:factory are resolved on the machine."""
    if ":" in name:
        return
    from suite.workloads import installed_workload_names, workload_names

    known = workload_names() + sorted(installed_workload_names())
    if name not in known:
        raise UserError(
            f"unknown workload {name!r} ({where}; known: {', '.join(known)}, or torchvision:NAME, timm:NAME, "
            "module.path:factory)"
        )


def check_target(target: Target, where: str) -> None:
    """What the instance itself cannot do: a backend its hardware does not drive, more processes than
    accelerators."""
    from suite.fleet import sky_tasks

    if target.backend is not None:
        if target.backend not in sky_tasks.BACKEND_SETUP:
            raise UserError(
                f"unknown backend {target.backend!r} for {target.instance_type} ({where}; known: "
                f"{', '.join(sky_tasks.BACKEND_SETUP)})"
            )
        native = sky_tasks.backend_for(Target(**{**target.__dict__, "backend": None}))
        if target.backend not in (native, "cpu"):
            raise UserError(
                f"{target.instance_type} has {target.accelerator if target.accelerator_count else 'no accelerator'}: "
                f"backend {target.backend!r} cannot run there ({where}; use {native} or cpu)"
            )
    backend = sky_tasks.backend_for(target)
    if backend == "hpu" and (target.cloud or target.provider) != "aws":
        raise UserError(
            f"{target.instance_type} ({where}) runs on Gaudi on {target.cloud or target.provider!r}: the fleet's "
            "Gaudi task runs Habana's container on an AWS host image, so it launches Gaudi on AWS only"
        )
    if backend == "hpu" and target.host_image is None:
        # SkyPilot would start Habana's container on its default AWS image, which has no Habana driver nor
        # container runtime (docs/fleet.md, "Gaudi host image"): the run could not start.
        raise UserError(
            f"{target.instance_type} ({where}) runs on Gaudi and needs a host image: an AMI with Habana's "
            "driver, Docker and the habana runtime (habanalabs-container-runtime), per region; give "
            "--host-image REGION=AMI, or host_image: {us-east-1: ami-...} in the campaign file (for all its "
            "Gaudi instances, or in one instance's entry); find one with: "
            f"{FIND_HABANA_AMI} (see docs/fleet.md)"
        )
    if target.host_image is not None and backend != "hpu":
        raise UserError(
            f"host_image ({where}) is for Gaudi instances; {target.instance_type} runs the {backend} backend "
            "on SkyPilot's own image"
        )
    nproc = target.options.get("nproc")
    if nproc is not None and target.accelerator_count and (target.backend or "") != "cpu":
        count = positive_int("nproc", nproc)
        if count > target.accelerator_count:
            raise UserError(
                f"nproc {count} on {target.instance_type} ({where}), which has {target.accelerator_count} "
                f"accelerator(s): at most one process per accelerator"
            )


def check_current(instance, catalog, where: str) -> None:
    """A retired instance is priced in reports (old runs, the seed's table) but never launched."""
    if instance.retired is None:
        return
    # Current instances with as many accelerators, cheapest first.
    current = [
        i.name
        for i in sorted(catalog.instances.values(), key=lambda i: (i.on_demand_usd_per_hour or 0, i.name))
        if i.retired is None
        and i.on_demand_usd_per_hour is not None
        and i.provider == instance.provider
        and i.accelerator_count == instance.accelerator_count
    ][:4]
    raise UserError(
        f"instance {instance.name!r} ({where}) is retired and cannot be launched "
        f"({instance.retired.text()}); choose a current one"
        + (f", e.g. {', '.join(current)}" if current else "")
        + " (see `suite prices list`)"
    )


def check_launchable(instance, where: str) -> None:
    """The row must be something SkyPilot can launch: a machine type (GPUs attached as accelerators), and
    in SkyPilot's own catalog where that is on the machine."""
    from suite.fleet import sky_catalog

    problem = sky_catalog.shape_problem(instance)
    if problem:
        raise UserError(f"instance {instance.name!r} ({where}) cannot be launched by SkyPilot: {problem}")
    if sky_catalog.listed(instance) is False:
        raise UserError(
            f"instance {instance.name!r} ({where}) is not in SkyPilot's catalog "
            f"{sky_catalog.catalog_path(instance.provider)}: SkyPilot would refuse it"
        )


# -- building and pricing ------------------------------------------------------------------------------


def _given_at(settings: dict, key: str) -> str:
    """Where campaign-wide setting KEY was given, for an error: the campaign file and the key, or the
    inline option that sets it."""
    if settings.get("source_file"):
        return f"{settings['source_file']}, {key}"
    return "--" + key.replace("_", "-")


@dataclass(frozen=True)
class InstanceDefaults:
    """What the campaign gives each instance that does not say otherwise."""

    hours: float
    spot: bool
    options: dict
    host_image: dict | None  # {region: AMI id}, checked; for the Gaudi instances only
    host_image_where: str  # where the campaign's host image was given, for an error


def build(settings: dict) -> Campaign:
    """Check every instance against the price catalog and the budget cap; return the priced campaign."""
    from suite.fleet import campaign_prices, campaign_runs
    from suite.prices.catalog import load_catalog

    source = settings.get("source_file") or "command line"
    catalog = load_catalog(settings.get("prices"))
    name = _campaign_name(settings, source)
    check_workload(settings["workload"], source)
    hours = check_amount("hours", settings.get("hours", DEFAULT_HOURS), source, numbers.HOURS)
    _check_run_settings(settings, source)
    targets = _targets(settings, source, catalog, _instance_defaults(settings, hours))
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
        controller=campaign_prices.controller(targets, catalog),
        habana_image=settings.get("habana_image"),
    )
    _check_spot_records(campaign)
    campaign_runs.check_runs(campaign)  # what `suite run` would refuse, refused before anything is rented
    check_budget(campaign)
    return campaign


def _campaign_name(settings: dict, source: str) -> str:
    """The campaign's name (given, else the campaign file's), as cluster names can hold it."""
    name = settings.get("name") or (
        os.path.splitext(os.path.basename(source))[0] if settings.get("source_file") else "suite-fleet"
    )
    name = name.lower().replace("_", "-")
    if not NAME_PATTERN.match(name):
        raise UserError(
            f"campaign name {name!r} ({source}) must start with a letter and hold only letters, digits and "
            "'-' (at most 32): cluster names are made from it"
        )
    return name


def _check_run_settings(settings: dict, source: str) -> None:
    """How the campaign runs: its budget cap, the repository it installs, the Gaudi container."""
    if settings.get("max_cost_usd") is not None:
        check_amount("max_cost_usd", settings["max_cost_usd"], source, numbers.DOLLARS)
    for key in ("git", "ref"):
        if settings.get(key) is not None:
            check_plain(key, settings[key], source)
    habana_image = settings.get("habana_image")
    if habana_image is not None and not (isinstance(habana_image, str) and IMAGE_PATTERN.match(habana_image)):
        raise UserError(
            f"{_given_at(settings, 'habana_image')}: {habana_image!r} is not a container image reference (e.g. "
            "vault.habana.ai/gaudi-docker/1.21.0/ubuntu22.04/habanalabs/pytorch-installer-2.6.0:latest)"
        )


def _instance_defaults(settings: dict, hours: float) -> InstanceDefaults:
    image, given = settings.get("host_image"), _given_at(settings, "host_image")
    if image is not None:  # checked whether or not an instance needs it
        image = check_host_image(image, None, given)
    spot, options = settings.get("spot", False), settings.get("options", {})
    return InstanceDefaults(hours=hours, spot=spot, options=options, host_image=image, host_image_where=given)


def _targets(settings: dict, source: str, catalog, defaults: InstanceDefaults) -> list[Target]:
    """Every instance of the campaign, priced and checked, in the order given (each once)."""
    where = settings.get("where") or {}
    targets, seen = [], set()
    for entry in settings["instances"]:
        at = where.get(entry["type"], source)
        if entry["type"] in seen:
            raise UserError(f"instance {entry['type']!r} is listed twice ({at})")
        seen.add(entry["type"])
        targets.append(_target(entry, at, catalog, defaults))
        check_target(targets[-1], at)
    return targets


def _target(entry: dict, at: str, catalog, defaults: InstanceDefaults) -> Target:
    """One instance's entry as a Target: a current, launchable catalog row, priced where it may run."""
    from suite.fleet import campaign_prices, sky_tasks

    instance = _catalog_instance(entry["type"], catalog, at)
    for key in ("cloud", "region"):
        if entry.get(key) is not None:
            check_plain(key, entry[key], at)
    backend = sky_tasks.backend_of(
        entry.get("backend"), instance.accelerator, instance.accelerator_count, entry["type"]
    )
    host_image = _instance_host_image(entry, backend, at, defaults)
    hours = check_amount("hours", entry.get("hours", defaults.hours), at, numbers.HOURS)
    spot = entry.get("spot", defaults.spot)
    # SkyPilot launches a task with a host image only in the regions the image names: priced there.
    region = entry.get("region") or (tuple(host_image) if host_image else None)
    price = campaign_prices.price(instance, catalog, region, at)
    return Target(
        instance_type=entry["type"],
        spot=spot,
        hours=hours,
        usd_per_hour=_rate(price, spot, entry["type"], catalog, at),
        on_demand_usd_per_hour=price.on_demand,
        spot_usd_per_hour=price.spot,
        accelerator=instance.accelerator,
        accelerator_count=instance.accelerator_count,
        cloud=entry.get("cloud"),
        region=entry.get("region"),
        backend=entry.get("backend"),
        options={**defaults.options, **entry.get("options", {})},
        host_image=host_image,
        provider=instance.provider,
        price=price,
    )


def _catalog_instance(instance_type: str, catalog, at: str):
    """The catalog's row for INSTANCE_TYPE, refused unless it is current and SkyPilot can launch it."""
    try:
        instance = catalog.get(instance_type)
    except UserError as error:
        raise UserError(f"{error} ({at})") from None
    check_current(instance, catalog, at)
    if instance.on_demand_usd_per_hour is None:
        # A capacity block is bought ahead for fixed dates: nothing the fleet can launch, or estimate.
        raise UserError(
            f"instance {instance.name!r} ({at}) has no on-demand price ({instance.no_on_demand}): the fleet "
            "rents on demand or spot, so it cannot be launched or estimated (see `suite prices list`)"
        )
    check_launchable(instance, at)
    return instance


def _instance_host_image(entry: dict, backend: str, at: str, defaults: InstanceDefaults) -> dict | None:
    """The instance's own host image, else the campaign's on Gaudi; checked against its region."""
    host_image, given = entry.get("host_image"), at
    if host_image is None and defaults.host_image is not None and backend == "hpu":
        # The campaign's host image is its Gaudi instances' (the others run on SkyPilot's own image).
        host_image, given = defaults.host_image, defaults.host_image_where
    if host_image is not None:
        host_image = check_host_image(host_image, entry.get("region"), given)
    return host_image


def _rate(price, spot: bool, instance_type: str, catalog, at: str) -> float:
    """The $/hour the instance is estimated at: its spot quote for a spot instance, else on-demand."""
    rate = price.spot if spot else price.on_demand
    if rate is None:
        sky = price.source.startswith("SkyPilot catalog")
        quoted_in = "SkyPilot's catalog" if sky else f"the {catalog.name} catalog"
        raise UserError(
            f"{instance_type} has no spot price in {quoted_in} ({at}): "
            "run it on-demand (spot: false) or give a catalog with a spot quote"
        )
    return rate


def _check_spot_records(campaign: Campaign) -> None:
    """Spot instances run as managed jobs, whose clusters go away by themselves: records need a bucket."""
    spot_without_bucket = [t.instance_type for t in campaign.targets if t.spot and not campaign.bucket]
    if spot_without_bucket:
        raise UserError(
            f"spot instances ({', '.join(spot_without_bucket)}) run as managed jobs whose clusters go away "
            "by themselves: give a bucket for their records (records: {bucket: s3://...}) in "
            + campaign.source
        )


def _is_shipped(prices: str | None) -> bool:
    from suite.prices.catalog import shipped_catalog_names

    return prices is None or prices in shipped_catalog_names()


def check_budget(campaign: Campaign) -> None:
    if campaign.max_cost_usd is not None and campaign.cost_usd > campaign.max_cost_usd:
        raise UserError(
            f"the campaign's estimate is ${campaign.cost_usd:,.2f}, above its max_cost_usd "
            f"${campaign.max_cost_usd:,.2f}: drop instances, shorten 'hours' or use spot ({campaign.source})"
        )
