"""The campaign's estimate table, line for line, from hand-made prices (no catalog read, no SkyPilot)."""

from __future__ import annotations

import pytest

from suite.fleet import campaign_prices, sky_catalog
from suite.fleet.campaign import Campaign, Target
from suite.fleet.campaign_prices import Controller, Price

SKY = "SkyPilot catalog aws/vms.csv (2026-11-20)"
SEED = "Prices: seed-2022 (USD/hour), 2022-06-01"


def target(name, *, spot=False, hours=1.0, accelerator="L4", count=1, price: Price) -> Target:
    return Target(
        instance_type=name,
        spot=spot,
        hours=hours,
        usd_per_hour=price.spot if spot else price.on_demand,
        on_demand_usd_per_hour=price.on_demand,
        spot_usd_per_hour=price.spot,
        accelerator=accelerator,
        accelerator_count=count,
        price=price,
    )


def plan(targets, controller=None, max_cost_usd=None) -> Campaign:
    return Campaign(
        name="pin",
        workload="dcgan64",
        targets=targets,
        prices="seed-2022",
        catalog_caption="seed-2022",
        max_cost_usd=max_cost_usd,
        controller=controller,
    )


@pytest.fixture(autouse=True)
def sky_root(monkeypatch):
    monkeypatch.setattr(sky_catalog, "catalog_root", lambda: "/home/u/.sky/catalogs")


def test_sky_prices_with_spot_ranges_a_controller_and_a_budget():
    regions = ("us-east-1", "us-east-2", "us-west-2", "eu-west-1", "eu-central-1")
    on_demand = Price(0.8048, 0.3707, (0.3707, 0.51), regions, regions[:2], SKY, from_sky=True)
    spot = Price(13.11, 4.17, (4.17, 4.19), regions[:1], regions[:1], SKY, from_sky=True)
    table = campaign_prices.estimate_table(
        plan(
            [
                target("g6.xlarge", hours=2.0, price=on_demand),
                target("dl1.24xlarge", spot=True, accelerator="Gaudi", count=8, price=spot),
            ],
            controller=Controller("m6i.xlarge", 0.192, 1 + 10 / 60, "aws", SKY),
            max_cost_usd=40.0,
        )
    )
    assert table == PINNED_SKY


def test_catalog_prices_on_demand_a_cpu_instance_and_no_spot_quote():
    gpu = Price(1.006, None, None, ("us-east-1",), (), SEED)
    cpu = Price(0.192, 0.08, None, ("us-east-1",), ("us-east-1",), "Prices: seed-2022 (USD/hour)")
    table = campaign_prices.estimate_table(
        plan(
            [
                target("g5.xlarge", hours=0.5, accelerator="A10G", price=gpu),
                target("m6i.xlarge", count=0, price=cpu),
            ]
        )
    )
    assert table == PINNED_CATALOG


def test_an_unpriced_controller_is_said_to_be():
    spot = Price(0.8048, 0.3707, None, ("us-east-1",), ("us-east-1",), SEED)
    table = campaign_prices.estimate_table(
        plan(
            [target("g6.xlarge", spot=True, price=spot)],
            controller=Controller("(not priced)", None, 1 + 10 / 60, "gcp", "no controller row for gcp"),
        )
    )
    assert table == PINNED_UNPRICED_CONTROLLER


PINNED_SKY = "\n".join(
    (
        "instance      accelerator    rented       on-demand $/h     spot $/h    hours    estimate $  regions offering it",
        "------------  -------------  ---------  ---------------  -----------  -------  ------------  ------------------------------------",
        "g6.xlarge     L4             on-demand            0.805  0.371–0.510        2          1.61  us-east-1, us-east-2, us-west-2 (+2)",
        "dl1.24xlarge  Gaudi          spot                13.110  4.170–4.190        1          4.17  us-east-1",
        "",
        "managed-jobs controller (spot runs as managed jobs): m6i.xlarge on aws, on-demand $0.192/h x 1.17 h (longest job + 10 idle minutes) = $0.22",
        "estimated cost of the campaign: $6.00 (instances $5.78 + controller $0.22)",
        "  all on-demand: $14.72",
        "  all spot:      $4.91 (the instances; managed jobs add the controller)",
        "  spot, if every spot instance lands in its dearest zone: +$0.02",
        "  budget (max_cost_usd): $40.00",
        "Prices of g6.xlarge, dl1.24xlarge, controller: SkyPilot catalog aws/vms.csv (2026-11-20)",
    )
)
PINNED_CATALOG = "\n".join(
    (
        "instance    accelerator    rented       on-demand $/h    spot $/h    hours    estimate $  regions offering it",
        "----------  -------------  ---------  ---------------  ----------  -------  ------------  ---------------------",
        "g5.xlarge   A10G           on-demand            1.006           -      0.5          0.50  us-east-1*",
        "m6i.xlarge  (cpu)          on-demand            0.192       0.080        1          0.19  us-east-1*",
        "",
        "estimated cost of the campaign: $0.70",
        "  all on-demand: $0.70",
        "Prices of g5.xlarge: seed-2022 (USD/hour), 2022-06-01",
        "Prices of m6i.xlarge: seed-2022 (USD/hour)",
        "* the one region the price catalog prices; SkyPilot's own catalog (/home/u/.sky/catalogs/VERSION/CLOUD/vms.csv, downloaded by SkyPilot on first use) lists every region that offers it",
    )
)
PINNED_UNPRICED_CONTROLLER = "\n".join(
    (
        "instance    accelerator    rented      on-demand $/h    spot $/h    hours    estimate $  regions offering it",
        "----------  -------------  --------  ---------------  ----------  -------  ------------  ---------------------",
        "g6.xlarge   L4             spot                0.805       0.371        1          0.37  us-east-1*",
        "",
        "managed-jobs controller (spot runs as managed jobs): (not priced) on gcp, on-demand not priced x 1.17 h (longest job + 10 idle minutes) = $0.00",
        "estimated cost of the campaign: $0.37 (instances $0.37 + controller $0.00); the controller is not priced",
        "  all on-demand: $0.80",
        "  all spot:      $0.37 (the instances; managed jobs add the controller)",
        "Prices of g6.xlarge: seed-2022 (USD/hour), 2022-06-01",
        "Prices of controller: no controller row for gcp",
        "* the one region the price catalog prices; SkyPilot's own catalog (/home/u/.sky/catalogs/VERSION/CLOUD/vms.csv, downloaded by SkyPilot on first use) lists every region that offers it",
    )
)
