"""Price-catalog rows as SkyPilot names them, and SkyPilot's own catalog CSV read offline (no `sky` import)."""

from __future__ import annotations

import os

import pytest

from suite.cli import main
from suite.fleet import sky_catalog
from suite.prices.catalog import Instance, load_catalog, shipped_catalog_names

# SkyPilot's column names (sky/catalog/common.py); the order differs per cloud, so both orders are used.
AWS_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone"
GCP_HEADER = "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,AvailabilityZone,Price,SpotPrice"
AWS_ROWS = [
    "g6.xlarge,L4,1.0,4.0,16.0,,3.06,0.3707,us-east-1,use1-az1",
    "g6.xlarge,L4,1.0,4.0,16.0,,3.06,0.4000,us-east-1,use1-az2",
    "g6.xlarge,L4,1.0,4.0,16.0,,3.305,0.5100,eu-west-1,euw1-az1",
    "dl1.24xlarge,Gaudi HL-205,8.0,96.0,768.0,,13.10904,4.17,us-east-1,use1-az1",
    "dl1.24xlarge,Gaudi HL-205,8.0,96.0,768.0,,13.10904,4.19,us-west-2,usw2-az1",
    "g4dn.xlarge,T4,1.0,4.0,16.0,,0.526,0.2,us-east-1,use1-az1",
    "m6i.large,,,2.0,8.0,,0.096,0.03,us-east-1,use1-az1",
    "m6i.xlarge,,,4.0,16.0,,0.192,0.06,us-east-1,use1-az1",
    "c6i.xlarge,,,4.0,8.0,,0.17,0.05,us-east-1,use1-az1",
]
GCP_ROWS = [
    "n1-standard-8,8.0,30.0,,,,us-central1,us-central1-a,0.38,0.08",
    "n1-standard-8,8.0,30.0,,,,europe-west4,europe-west4-a,0.42,0.09",
    ",,,T4,1.0,,us-central1,us-central1-a,0.35,0.14",
    ",,,T4,2.0,,us-central1,us-central1-a,0.70,0.28",
    "n2-standard-4,4.0,16.0,,,,us-central1,us-central1-a,0.194,0.05",
]


def write_sky_catalog(root, cloud, header, rows, version="v8"):
    folder = root / ".sky" / "catalogs" / version / cloud
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vms.csv").write_text("\n".join([header, *rows]) + "\n")
    return folder / "vms.csv"


@pytest.fixture
def sky_home(tmp_path, monkeypatch):
    """A temporary HOME holding small AWS and GCP catalogs where SkyPilot keeps them (~/.sky/catalogs)."""
    monkeypatch.delenv("SKY_RUNTIME_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    write_sky_catalog(tmp_path / "home", "aws", AWS_HEADER, AWS_ROWS)
    write_sky_catalog(tmp_path / "home", "gcp", GCP_HEADER, GCP_ROWS)
    return tmp_path / "home"


def row(name, provider="aws", count=1):
    return Instance(name, provider, "r", "NVIDIA T4", count, 16, 8, 30, 1.0, 0.5)


def test_gcp_rows_name_the_vm_and_its_gpus_apart():
    assert sky_catalog.sky_resources("n1-standard-8+1xT4") == {
        "instance_type": "n1-standard-8",
        "accelerators": "T4:1",
    }
    assert sky_catalog.sky_resources("n1-standard-4+2xV100") == {
        "instance_type": "n1-standard-4",
        "accelerators": "V100:2",
    }
    assert sky_catalog.sky_resources("g6.xlarge") == {"instance_type": "g6.xlarge"}


@pytest.mark.parametrize(
    "instance, problem",
    [
        (row("n1-standard-8", "gcp"), "attached to it"),
        (row("n1-standard-8+2xT4", "gcp", count=1), "attaches 2"),
        (row("g6_xlarge"), "not a aws machine type"),
        (row("n1 standard 8+1xT4", "gcp"), "not a gcp machine type"),
    ],
)
def test_a_row_skypilot_cannot_launch_is_named(instance, problem):
    assert problem in (sky_catalog.shape_problem(instance) or "")


def test_a_gcp_vm_with_its_own_gpus_is_a_machine_type():
    assert sky_catalog.shape_problem(row("a2-highgpu-1g", "gcp")) is None


def shipped_rows():
    for catalog in shipped_catalog_names():
        for instance in load_catalog(catalog).instances.values():
            yield pytest.param(instance, id=f"{catalog}:{instance.name}")


@pytest.mark.parametrize("instance", list(shipped_rows()))
def test_every_shipped_row_is_something_skypilot_can_launch(instance, monkeypatch):
    """Against SkyPilot's own catalog where it is on this machine (the real ~/.sky, not the tests' empty
    one), else against the shape SkyPilot expects: a machine type, with GPUs as `accelerators`."""
    assert sky_catalog.shape_problem(instance) is None
    monkeypatch.setenv("SKY_RUNTIME_DIR", os.path.expanduser("~"))
    # A retired row is kept to price old runs and is never launched: SkyPilot may well have dropped it.
    if instance.retired is None and sky_catalog.listed(instance) is False:
        pytest.fail(
            f"{instance.name} is not in SkyPilot's catalog {sky_catalog.catalog_path(instance.provider)}"
        )


def test_listed_reads_skypilots_csv_by_column_name(sky_home):
    assert sky_catalog.listed(row("g6.xlarge")) is True
    assert sky_catalog.listed(row("g6.xlarg")) is False
    assert sky_catalog.listed(row("n1-standard-8+1xT4", "gcp")) is True
    assert sky_catalog.listed(row("n1-standard-8+1xV100", "gcp")) is False  # no V100 row in this catalog
    assert sky_catalog.listed(row("x", "azure")) is None  # that cloud's catalog is not on the machine


def test_the_newest_schema_version_is_read(sky_home):
    write_sky_catalog(sky_home, "aws", AWS_HEADER, ["g6.xlarge,L4,1.0,4.0,16.0,,9.0,9.0,us-east-1,a"], "v7")
    assert sky_catalog.quote(row("g6.xlarge")).on_demand == (3.06, 3.305)


def test_fleet_plan_task_names_instance_type_and_accelerators(tmp_path, capsys):
    code = main(
        [
            "fleet",
            "plan",
            "--instances",
            "n1-standard-8+1xT4",
            "--out",
            str(tmp_path / "out"),
            "--hours",
            "0.5",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "instance_type: n1-standard-8\n" in out and "accelerators: T4:1\n" in out
    assert "--instance n1-standard-8+1xT4" in out  # the report still prices the catalog's row


def test_fleet_plan_refuses_a_row_skypilots_catalog_does_not_list(sky_home, tmp_path, capsys):
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        "name: mine\nsource: test\nas_of: '2026'\ninstances:\n"
        "  n1-standard-8+1xV100: {provider: gcp, region: us-central1, accelerator: NVIDIA V100, accelerator_count: 1, "
        "accelerator_memory_gib: 16, vcpus: 8, ram_gib: 30, on_demand_usd_per_hour: 2.86, spot_usd_per_hour: 1}\n"
    )
    argv = ["fleet", "plan", "--instances", "n1-standard-8+1xV100", "--prices", str(prices)]
    assert main([*argv, "--out", str(tmp_path / "out")]) == 2
    assert "is not in SkyPilot's catalog" in capsys.readouterr().err


def plan_out(tmp_path, capsys, *argv):
    code = main(["fleet", "plan", *argv, "--out", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out[out.index("instance ") :]  # the estimate


def test_spot_is_priced_from_skypilots_catalog_with_its_range_regions_and_source(sky_home, tmp_path, capsys):
    campaign = tmp_path / "spot.yaml"
    campaign.write_text(
        "workload: dcgan64\nhours: 1\nspot: true\nrecords: {bucket: s3://b/c}\ninstances:\n  - g6.xlarge\n"
        "  - {type: dl1.24xlarge, host_image: {us-east-1: ami-0123456789abcdef0, us-west-2: ami-0123456789abcdef1}}\n"
        "  - n1-standard-8+1xT4\n"
    )
    out = plan_out(tmp_path, capsys, str(campaign))
    lines = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    # The cheapest zone (what SkyPilot's optimizer asks for) is the estimate; the range is shown.
    assert "0.371–0.510" in lines["g6.xlarge"] and "us-east-1, eu-west-1" in lines["g6.xlarge"]
    assert "4.170–4.190" in lines["dl1.24xlarge"] and "us-east-1, us-west-2" in lines["dl1.24xlarge"]
    assert "3.060" in lines["g6.xlarge"] and "13.109" in lines["dl1.24xlarge"]
    # GCP: the VM and its GPU priced apart and added, in the zones that offer both.
    assert "0.730" in lines["n1-standard-8+1xT4"] and "0.220" in lines["n1-standard-8+1xT4"]
    # The controller: the cheapest default-family VM with 4+ vCPUs and 4 GiB per vCPU, on-demand.
    assert "controller (spot runs as managed jobs): m6i.xlarge on aws, on-demand $0.192/h x 1.17 h" in out
    instances = 0.3707 + 4.17 + 0.22
    controller = (1 + 10 / 60) * 0.192
    assert f"estimated cost of the campaign: ${instances + controller:,.2f}" in out
    assert f"(instances ${instances:,.2f} + controller ${controller:,.2f})" in out
    # In their dearest zones: g6.xlarge 0.51, dl1.24xlarge 4.19 (the T4 VM is offered in one zone only).
    assert f"dearest zone: +${(0.51 - 0.3707) + (4.19 - 4.17):,.2f}" in out
    aws = sky_home / ".sky" / "catalogs" / "v8" / "aws" / "vms.csv"
    assert f"SkyPilot catalog {aws} (file date " in out and "*" not in out


def test_without_skypilots_catalog_the_suite_catalog_prices_it_and_says_so(tmp_path, capsys):
    out = plan_out(tmp_path, capsys, "--instances", "g6.xlarge", "--spot", "--bucket", "s3://b/c")
    assert "0.379" in out and "us-east-1*" in out
    assert "skypilot-2026 (USD/hour), as of 2026-07" in out
    assert "m6i.xlarge on aws, on-demand $0.192/h" in out
    assert "SkyPilot's own catalog" in out


def test_the_controller_on_gcp_comes_from_its_catalog(sky_home, tmp_path, capsys):
    out = plan_out(tmp_path, capsys, "--instances", "n1-standard-8+1xT4", "--spot", "--bucket", "gs://b/c")
    assert "n2-standard-4 on gcp, on-demand $0.194/h" in out


def test_on_demand_only_has_no_controller(sky_home, tmp_path, capsys):
    out = plan_out(tmp_path, capsys, "--instances", "g6.xlarge", "--hours", "2")
    assert "managed-jobs controller" not in out and "estimated cost of the campaign: $6.12\n" in out


def test_a_region_that_does_not_offer_it_is_refused_naming_those_that_do(sky_home, tmp_path, capsys):
    campaign = tmp_path / "c.yaml"
    campaign.write_text("workload: dcgan64\ninstances:\n  - {type: dl1.24xlarge, region: eu-west-1}\n")
    assert main(["fleet", "plan", str(campaign), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "not offered in region 'eu-west-1'" in err and "us-east-1, us-west-2" in err


def test_skypilot_runtime_dir_moves_the_catalog(tmp_path, monkeypatch):
    monkeypatch.setenv("SKY_RUNTIME_DIR", str(tmp_path / "runtime"))
    write_sky_catalog(tmp_path / "runtime", "aws", AWS_HEADER, AWS_ROWS)
    assert sky_catalog.quote(row("dl1.24xlarge")).spot == (4.17, 4.19)


def test_a_damaged_catalog_is_not_read(sky_home):
    (sky_home / ".sky" / "catalogs" / "v8" / "aws" / "vms.csv").write_text("not,a,catalog\n1,2,3\n")
    assert sky_catalog.quote(row("g6.xlarge")) is None and sky_catalog.listed(row("g6.xlarge")) is None


def test_the_running_cost_meter_counts_the_controller_while_managed_jobs_run(tmp_path):
    from suite.fleet import campaign, campaign_inline, campaign_prices, sky_driver

    plan = campaign.build(
        campaign_inline.from_inline(
            campaign_inline.InlineCampaign(
                ["g6.xlarge"], "dcgan64", [], 1.0, True, None, None, "s3://b/c", "meter"
            )
        )
    )
    assert isinstance(plan.controller, campaign_prices.Controller)
    fleet = sky_driver.Fleet(plan, str(tmp_path), None, None, print, False, None, 1.0)
    launch = sky_driver.Launch(plan.targets[0], "task.yaml", "meter-g6-xlarge", started=0.0)
    fleet.launches.append(launch)
    # One hour in: the spot instance's hour and the controller's.
    expected = plan.targets[0].usd_per_hour + plan.controller.usd_per_hour
    assert fleet.spent_usd(3600.0) == pytest.approx(expected)
