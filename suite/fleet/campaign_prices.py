"""What a campaign will cost: each instance's $/hour, the managed-jobs controller, and the estimate table.

Prices come from SkyPilot's own catalog when it is on this machine (read offline from its CSV files by
suite/fleet/sky_catalog.py), because that is what SkyPilot itself prices and launches by: its optimizer
asks for the cheapest zone that offers the instance, so the estimate uses the cheapest quote and shows the
range. Without it, the suite's price catalog is used and says so, with its date.

Spot instances run as SkyPilot managed jobs, which need a controller VM of their own (sky/jobs/constants.py:
4+ vCPUs, 4 GiB per vCPU, on-demand). It lives as long as the longest job plus its idle autostop, and is
added to the estimate.
"""

from __future__ import annotations

from dataclasses import dataclass

from suite.fleet import sky_catalog
from suite.inputs.errors import UserError

# The suite catalog's row for the controller when SkyPilot's catalog is not on the machine, per cloud.
CONTROLLER_ROWS = {"aws": "m6i.xlarge"}
REGIONS_SHOWN = 3  # the table lists this many regions, then a count


@dataclass(frozen=True)
class Price:
    on_demand: float
    spot: float | None
    spot_range: tuple[float, float] | None
    regions: tuple[str, ...]
    spot_regions: tuple[str, ...]
    source: str
    from_sky: bool = False  # SkyPilot's catalog: `regions` are all that offer it, not the one priced


@dataclass(frozen=True)
class Controller:
    instance_type: str
    usd_per_hour: float | None  # None: not priced (no catalog on this machine has a row for it)
    hours: float
    cloud: str
    source: str

    @property
    def cost_usd(self) -> float:
        return self.hours * self.usd_per_hour if self.usd_per_hour else 0.0


def price(instance, catalog, region: str | tuple[str, ...] | None, where: str) -> Price:
    """The instance's prices: SkyPilot's catalog if it lists the instance, else the suite's catalog. REGION:
    the one it must run in, or the regions it may (a Gaudi task's host image's), or None: any."""
    quote = sky_catalog.quote(instance, region)
    if quote is None and region and (anywhere := sky_catalog.quote(instance)) is not None:
        asked = (
            f"region {region!r}"
            if isinstance(region, str)
            else f"its host image's regions ({', '.join(region)})"
        )
        raise UserError(
            f"{instance.name} is not offered in {asked} by SkyPilot's catalog ({where}; offered in: "
            f"{', '.join(anywhere.regions)})"
        )
    if quote is not None:
        return Price(
            on_demand=quote.on_demand[0],
            spot=quote.spot[0] if quote.spot else None,
            spot_range=quote.spot,
            regions=quote.regions,
            spot_regions=quote.spot_regions,
            source=quote.source,
            from_sky=True,
        )
    return Price(
        on_demand=instance.on_demand_usd_per_hour,
        spot=instance.spot_usd_per_hour,
        spot_range=None,
        regions=(instance.region,),
        spot_regions=(instance.region,) if instance.spot_usd_per_hour else (),
        source=_catalog_source(catalog, instance),
    )


def _catalog_source(catalog, instance) -> str:
    """The catalog's caption, and the row's own price date and source where they are not the catalog's."""
    own = catalog.price_dated(instance)
    return f"{catalog.name} ({catalog.currency}/hour), {own}" if own else catalog.caption()


def controller(targets, catalog) -> Controller | None:
    """The managed-jobs controller a campaign with spot instances starts, priced; None without spot."""
    spot = [t for t in targets if t.spot]
    if not spot:
        return None
    cloud = spot[0].cloud or spot[0].provider
    hours = max(t.hours for t in spot) + sky_catalog.CONTROLLER_IDLE_MINUTES / 60
    quoted = sky_catalog.controller_quote(cloud)
    if quoted is not None:
        name, rate, source = quoted
        return Controller(name, rate, hours, cloud, source)
    row = CONTROLLER_ROWS.get(cloud)
    if row in catalog.instances:
        instance = catalog.instances[row]
        return Controller(
            row, instance.on_demand_usd_per_hour, hours, cloud, _catalog_source(catalog, instance)
        )
    return Controller(
        "(not priced)",
        None,
        hours,
        cloud,
        f"SkyPilot's {cloud} catalog is not on this machine and the {catalog.name} catalog has no controller "
        f"row for {cloud}",
    )


def _money(value) -> str:
    return "-" if value is None else f"{value:,.3f}"


def _spot_cell(target) -> str:
    if target.price.spot_range and target.price.spot_range[0] != target.price.spot_range[1]:
        low, high = target.price.spot_range
        return f"{low:,.3f}–{high:,.3f}"
    return _money(target.spot_usd_per_hour)


def _regions_cell(target) -> str:
    regions = target.price.spot_regions if target.spot else target.price.regions
    if not regions:
        return "-"
    shown = ", ".join(regions[:REGIONS_SHOWN])
    shown += f" (+{len(regions) - REGIONS_SHOWN})" if len(regions) > REGIONS_SHOWN else ""
    return shown if target.price.from_sky else f"{shown}*"


def estimate_table(campaign) -> str:
    """Each instance's hours x $/hour, the controller, and the campaign's total, with every price's source."""
    lines = [_instances_table(campaign.targets), ""]
    if campaign.controller is not None:
        lines.append(_controller_line(campaign.controller))
    lines += _totals(campaign)
    lines += _sources(campaign)
    return "\n".join(lines)


def _instances_table(targets) -> str:
    from tabulate import tabulate

    rows = [
        [
            t.instance_type,
            t.accelerator if t.accelerator_count else "(cpu)",
            "spot" if t.spot else "on-demand",
            _money(t.on_demand_usd_per_hour),
            _spot_cell(t),
            f"{t.hours:g}",
            f"{t.cost_usd:,.2f}",
            _regions_cell(t),
        ]
        for t in targets
    ]
    return tabulate(
        rows,
        headers=[
            "instance",
            "accelerator",
            "rented",
            "on-demand $/h",
            "spot $/h",
            "hours",
            "estimate $",
            "regions offering it",
        ],  # fmt: skip
        disable_numparse=True,
        colalign=("left", "left", "left", "right", "right", "right", "right", "left"),
    )


def _controller_line(ctl: Controller) -> str:
    rate = f"${ctl.usd_per_hour:,.3f}/h" if ctl.usd_per_hour else "not priced"
    return (
        f"managed-jobs controller (spot runs as managed jobs): {ctl.instance_type} on {ctl.cloud}, on-demand "
        f"{rate} x {ctl.hours:.2f} h (longest job + {sky_catalog.CONTROLLER_IDLE_MINUTES} idle minutes) = "
        f"${ctl.cost_usd:,.2f}"
    )


def _totals(campaign) -> list[str]:
    """The estimate, what it would be all on-demand or all spot, the dearest zones' extra, the budget."""
    targets, ctl = campaign.targets, campaign.controller
    total = f"estimated cost of the campaign: ${campaign.cost_usd:,.2f}"
    if ctl is not None:
        total += f" (instances ${sum(t.cost_usd for t in targets):,.2f} + controller ${ctl.cost_usd:,.2f})"
        if ctl.usd_per_hour is None:
            total += "; the controller is not priced"
    on_demand = sum(t.hours * t.on_demand_usd_per_hour for t in targets)
    lines = [total, f"  all on-demand: ${on_demand:,.2f}"]
    all_spot = [t.hours * t.spot_usd_per_hour for t in targets if t.spot_usd_per_hour is not None]
    if len(all_spot) == len(targets):
        lines.append(
            f"  all spot:      ${sum(all_spot):,.2f} (the instances; managed jobs add the controller)"
        )
    dearest = [t.hours * t.price.spot_range[1] for t in targets if t.spot and t.price.spot_range]
    if dearest and len(dearest) == sum(t.spot for t in targets):
        low = sum(t.cost_usd for t in targets if t.spot)
        if sum(dearest) > low:
            lines.append(
                f"  spot, if every spot instance lands in its dearest zone: +${sum(dearest) - low:,.2f}"
            )
    if campaign.max_cost_usd is not None:
        lines.append(f"  budget (max_cost_usd): ${campaign.max_cost_usd:,.2f}")
    return lines


def _sources(campaign) -> list[str]:
    """Where each price came from (instances sharing a source on one line), and what a catalog's region
    mark means."""
    sources: dict[str, list[str]] = {}
    for t in campaign.targets:
        sources.setdefault(t.price.source, []).append(t.instance_type)
    if campaign.controller is not None:
        sources.setdefault(campaign.controller.source, []).append("controller")
    lines = [
        f"Prices of {', '.join(names)}: {source.removeprefix('Prices: ')}"
        for source, names in sources.items()
    ]
    if not all(t.price.from_sky for t in campaign.targets):
        lines.append(
            f"* the one region the price catalog prices; SkyPilot's own catalog ({sky_catalog.catalog_root()}/"
            "VERSION/CLOUD/vms.csv, downloaded by SkyPilot on first use) lists every region that offers it"
        )
    return lines
