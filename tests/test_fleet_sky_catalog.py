"""Price-catalog rows as SkyPilot names them, and SkyPilot's own catalog CSV read offline (no `sky` import)."""

from __future__ import annotations

import os

import pytest

from suite.cli import main
from suite.reporting import sky_catalog
from suite.reporting.pricing import Instance, load_catalog, shipped_catalog_names

# SkyPilot's column names (sky/catalog/common.py); the order differs per cloud, so both orders are used.
AWS_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone"
GCP_HEADER = "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,AvailabilityZone,Price,SpotPrice"
AWS_ROWS = [
    "p3.2xlarge,V100,1.0,8.0,61.0,,3.06,0.3707,us-east-1,use1-az1",
    "p3.2xlarge,V100,1.0,8.0,61.0,,3.06,0.4000,us-east-1,use1-az2",
    "p3.2xlarge,V100,1.0,8.0,61.0,,3.305,0.5100,eu-west-1,euw1-az1",
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
    """A temporary SkyPilot runtime folder holding small AWS and GCP catalogs."""
    monkeypatch.setenv("SKY_RUNTIME_DIR", str(tmp_path / "home"))
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
    assert sky_catalog.sky_resources("p3.2xlarge") == {"instance_type": "p3.2xlarge"}


@pytest.mark.parametrize(
    "instance, problem",
    [
        (row("n1-standard-8", "gcp"), "attached to a VM"),
        (row("n1-standard-8+2xT4", "gcp", count=1), "attaches 2"),
        (row("p3_2xlarge"), "not a aws machine type"),
        (row("n1 standard 8+1xT4", "gcp"), "not a gcp machine type"),
    ],
)
def test_a_row_skypilot_cannot_launch_is_named(instance, problem):
    assert problem in (sky_catalog.shape_problem(instance) or "")


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
    if sky_catalog.listed(instance) is False:
        pytest.fail(
            f"{instance.name} is not in SkyPilot's catalog {sky_catalog.catalog_path(instance.provider)}"
        )


def test_listed_reads_skypilots_csv_by_column_name(sky_home):
    assert sky_catalog.listed(row("p3.2xlarge")) is True
    assert sky_catalog.listed(row("p3.2xlarg")) is False
    assert sky_catalog.listed(row("n1-standard-8+1xT4", "gcp")) is True
    assert sky_catalog.listed(row("n1-standard-8+1xV100", "gcp")) is False  # no V100 row in this catalog
    assert sky_catalog.listed(row("x", "azure")) is None  # that cloud's catalog is not on the machine


def test_the_newest_schema_version_is_read(sky_home):
    write_sky_catalog(
        sky_home, "aws", AWS_HEADER, ["p3.2xlarge,V100,1.0,8.0,61.0,,9.0,9.0,us-east-1,a"], "v7"
    )
    assert sky_catalog.quote(row("p3.2xlarge")).on_demand == (3.06, 3.305)


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
