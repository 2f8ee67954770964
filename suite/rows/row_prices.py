"""Stage 3b of a report, a row's prices: the catalog's instance that prices it (only where the device it
was measured on is the instance's, unless priced as if), a run on part of an instance scaled to the whole
instance when asked, and the on-demand and spot figures of its rate. Measured rows and published figures
are priced by the same functions.

A row pays for the accelerators it used, not for the instance around them:

    $ per accelerator-hour = the instance's $/hour ÷ its accelerators, or, where the catalog has an
                             instance of the provider with just as many of the same accelerator (p5.4xlarge's
                             one H100 for a run on 1 of a p5.48xlarge's 8), that instance's $/hour ÷ them
    $/hour of the row      = $ per accelerator-hour × the accelerators it used (× nodes)
    images per $           = images/hour ÷ $/hour of the row

and beside it the whole instance's figure (`instance_images_per_usd`): what the row gives per $ if the
instance's other accelerators sit idle. A run that used every accelerator (a `--per-device` run over all of
them, or a seed-style whole-instance run), one scaled to the whole instance (`--extrapolate`) and an
instance without accelerators are priced as the whole instance.
"""

from __future__ import annotations

from suite.prices.catalog import Catalog
from suite.rows.cells import whole_number
from suite.run_record.facts import other_device

# How a row is priced (`price_basis`).
WHOLE = "whole instance"
SHARE = "per accelerator"
OF_THAT_SIZE = "instance of that size"
# The first words of a share's note: the default table's N/M mark says it (narrow.py leaves it out).
SHARE_NOTE = "priced per accelerator-hour: "
NO_ON_DEMAND = "has no on-demand price"  # the note of a row whose instance has none (answer.py names it)


def unpriced(accelerators_used: int) -> dict:
    """A row's pricing fields before a price is known: what the price counts (the accelerators used) and
    the rest empty."""
    return {
        "accelerators_priced": accelerators_used,
        "price_basis": None,
        "priced_as": None,
        "usd_per_accelerator_hour": None,
        "spot_usd_per_accelerator_hour": None,
        "instance_usd_per_hour": None,
        "instance_spot_usd_per_hour": None,
        "instance_images_per_usd": None,
        "instance_spot_images_per_usd": None,
    }


def match_instance(row: dict, catalog: Catalog, price_as_if: bool):
    """The catalog's instance that prices the row, or None (no instance named, not in the catalog, or
    measured on another device than its accelerator and not priced as if)."""
    instance = catalog.instances.get(row["instance"]) if row["instance"] else None
    if row["instance"] is None:
        row["notes"].append("no --instance recorded: no price")
    elif instance is None:
        row["notes"].append(f"{row['instance']} is not in the {catalog.name} catalog: no price")
    else:
        row["instance_accelerators"] = instance.accelerator_count
        row["region"] = instance.region
        mark_dated(row, instance, catalog)
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
    return instance


def mark_dated(row: dict, instance, catalog: Catalog) -> None:
    """A retired instance is marked on the row and in its notes (still priced: old runs and the seed's table
    are reproduced with it); a price older than the catalog's says its own date and source."""
    if instance.retired:
        row["retired"] = instance.retired.date or "date not found"
        row["notes"].append(
            f"RETIRED: {instance.name} is no longer rented ({row['retired']}; {instance.retired.source}); "
            "its price is kept for comparison"
        )
    if catalog.price_dated(instance):
        row["prices_as_of"] = instance.price_as_of or row["prices_as_of"]
        row["notes"].append(catalog.price_dated(instance))


def scale_to_instance(row: dict, instance, rate: float, extrapolate: bool) -> float:
    """A run on fewer accelerators than its instance has is scaled to the whole instance only when asked
    (and then marked as extrapolated, and priced as the whole instance)."""
    used = row["accelerators_used"]
    if extrapolate and row["device_matches_instance"] and 0 < used < instance.accelerator_count:
        factor = instance.accelerator_count / used
        rate *= factor
        row.update(
            extrapolated_factor=factor,
            accelerators_priced=instance.accelerator_count,
            images_per_hour_min=row["images_per_hour_min"] * factor,
            images_per_hour_max=row["images_per_hour_max"] * factor,
        )
        if row["median_ci_low"] is not None:
            row.update(
                median_ci_low=row["median_ci_low"] * factor, median_ci_high=row["median_ci_high"] * factor
            )
        row["notes"].append(
            f"EXTRAPOLATED ×{factor:g} from {used} of {instance.accelerator_count} "
            f"accelerators (assumes linear scaling; measured {whole_number(row['measured_images_per_hour'])} img/h)"
        )
    return rate


def of_that_size(instance, accelerators: int, catalog: Catalog):
    """The catalog's instance of INSTANCE's provider with ACCELERATORS of its accelerator and an on-demand
    price (the one in its region first, then the cheapest), or None. A retired one only stands in for a
    retired instance."""
    candidates = [
        i
        for i in catalog.instances.values()
        if i.provider == instance.provider
        and i.accelerator_count == accelerators
        and i.accelerator.lower() == instance.accelerator.lower()
        and i.on_demand_usd_per_hour is not None
        and (i.retired is None or instance.retired is not None)
    ]
    return min(
        candidates,
        key=lambda i: (i.region != instance.region, i.on_demand_usd_per_hour, i.name),
        default=None,
    )


def price(row: dict, instance, count: int = 1, catalog: Catalog | None = None) -> None:
    """On-demand and spot prices of the row's rate for the accelerators it used (see the module's
    docstring), over `count` instances (one per node), and the whole instances' figures beside them.
    `catalog`: where an instance of that size is looked for (None: the instance's share only)."""
    if instance.on_demand_usd_per_hour is None:
        row["notes"].append(f"{instance.name} {NO_ON_DEMAND} ({instance.no_on_demand}): not priced")
        return
    rate = row["images_per_hour"]
    if count > 1:  # a multi-node run rents one instance per node
        row["notes"].append(f"priced as {count} × {instance.name} (one per node)")
    on_demand, spot = _basis(row, instance, catalog)
    if instance.note and row["price_basis"] != OF_THAT_SIZE:  # how its spot was quoted (the smaller's: below)
        row["notes"].append(instance.note)
    on_demand, spot = on_demand * count, spot * count if spot is not None else None
    whole_spot = instance.spot_usd_per_hour * count if instance.spot_usd_per_hour is not None else None
    row.update(
        usd_per_hour=on_demand,
        images_per_usd=rate / on_demand,
        usd_per_million_images=on_demand / rate * 1e6,
        epoch_usd=row["epoch_hours"] * on_demand,
        instance_usd_per_hour=instance.on_demand_usd_per_hour * count,
        instance_images_per_usd=rate / (instance.on_demand_usd_per_hour * count),
        instance_spot_usd_per_hour=whole_spot,
        instance_spot_images_per_usd=rate / whole_spot if whole_spot is not None else None,
    )
    if spot is not None:
        row.update(
            spot_usd_per_hour=spot,
            spot_images_per_usd=rate / spot,
            spot_usd_per_million_images=spot / rate * 1e6,
            spot_epoch_usd=row["epoch_hours"] * spot,
        )


def _basis(row: dict, instance, catalog: Catalog | None) -> tuple[float, float | None]:
    """(on-demand $/hour, spot $/hour or None) of one node's accelerators the row counts, with the row's
    basis fields set and, where it is not the whole instance, a note saying which price it is."""
    used, total = row["accelerators_priced"], instance.accelerator_count
    whole = (instance.on_demand_usd_per_hour, instance.spot_usd_per_hour)
    row.update(price_basis=WHOLE, priced_as=instance.name)
    if total:
        row["usd_per_accelerator_hour"] = instance.on_demand_usd_per_hour / total
        if instance.spot_usd_per_hour is not None:
            row["spot_usd_per_accelerator_hour"] = instance.spot_usd_per_hour / total
    if not total or used >= total:
        return whole
    # Multiplied before divided: $63.296 × 1 ÷ 8 is 7.912 to the last digit.
    share = tuple(None if p is None else p * used / total for p in whole)
    idle = (
        f"if the other {total - used} sit idle, the whole instance gives {total / used:g}× fewer images per $"
    )
    smaller = of_that_size(instance, used, catalog) if catalog is not None else None
    named = f"the {catalog.name} catalog" if catalog is not None else "the catalog"
    if smaller is None:
        row["price_basis"] = SHARE
        row["notes"].append(
            f"{SHARE_NOTE}{used} of {instance.name}'s {total} accelerators, ${instance.on_demand_usd_per_hour:g}/h "
            f"× {used} ÷ {total} = ${share[0]:.4g}/h (no {used}-accelerator {instance.accelerator} instance in "
            f"{named}); {idle}"
        )
        return share
    # One basis a row: the smaller instance's spot quote, or none (the whole instance's is beside it).
    row.update(price_basis=OF_THAT_SIZE, priced_as=smaller.name, spot_usd_per_accelerator_hour=None)
    row["usd_per_accelerator_hour"] = smaller.on_demand_usd_per_hour / smaller.accelerator_count
    if smaller.spot_usd_per_hour is not None:
        row["spot_usd_per_accelerator_hour"] = smaller.spot_usd_per_hour / smaller.accelerator_count
    quoted = f"; {smaller.note}" if smaller.note else ""
    row["notes"].append(
        f"priced as {smaller.name} (${smaller.on_demand_usd_per_hour:g}/h{quoted}), {named}'s instance "
        f"with {used} {smaller.accelerator}, for {used} of {instance.name}'s {total} accelerators (its share "
        f"would be ${share[0]:.4g}/h); {idle}"
    )
    return smaller.on_demand_usd_per_hour, smaller.spot_usd_per_hour
