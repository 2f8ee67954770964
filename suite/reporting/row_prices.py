"""Stage 3b of a report, a row's prices: the catalog's instance that prices it (only where the device it
was measured on is the instance's, unless priced as if), a run on part of an instance marked (or scaled to
the whole instance when asked), and the on-demand and spot figures of its rate. Measured rows and published
figures are priced by the same functions.
"""

from __future__ import annotations

from suite.reporting.cells import whole_number
from suite.reporting.pricing import Catalog
from suite.run_record.facts import other_device


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
    """A run on fewer accelerators than its instance has: marked, and scaled to the whole instance only
    when asked (and then marked as extrapolated)."""
    used = row["accelerators_used"]
    if 0 < used < instance.accelerator_count:
        if extrapolate and row["device_matches_instance"]:
            factor = instance.accelerator_count / used
            rate *= factor
            row.update(
                extrapolated_factor=factor,
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
        else:
            row["notes"].append(part_note(used, instance.accelerator_count))
    if instance.note:
        row["notes"].append(instance.note)
    return rate


def part_note(used: int, count: int) -> str:
    return f"used {used} of {count} accelerators (priced as the whole instance)"


def price(row: dict, instance, count: int = 1) -> None:
    """On-demand and spot prices of the row's rate, for `count` instances (one per node)."""
    rate = row["images_per_hour"]
    # A multi-node run rents one instance per node.
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
