"""Price catalogs: the shipped ones, validation of a user's file, instance look-up, and the importers."""

from __future__ import annotations

import json

import pytest
import yaml
from conftest import T4_INSTANCE

from suite.cli import main
from suite.inputs.errors import UserError
from suite.measurement.plan import resolve_run_instance
from suite.prices.catalog import (
    DEFAULT_CATALOG,
    find_instance,
    load_catalog,
    shipped_catalog_names,
)
from suite.prices.importer import ImportRequest, import_file
from suite.spec import RunSpec


def test_shipped_catalogs_load_with_source_and_date():
    assert {"seed-2022", "skypilot-2025", "skypilot-2026"} <= set(shipped_catalog_names())
    assert DEFAULT_CATALOG in shipped_catalog_names()
    for name in shipped_catalog_names():
        catalog = load_catalog(name)
        assert catalog.source and catalog.as_of and catalog.instances
        assert catalog.name in catalog.caption() and catalog.as_of in catalog.caption()


def test_seed_catalog_keeps_the_seeds_printed_prices_and_labels_its_spot_as_assumed():
    seed = load_catalog("seed-2022")
    printed = {
        "p2.8xlarge": (7.20, 2.16),
        "p3.2xlarge": (3.06, 0.92),
        "p3.8xlarge": (12.24, 3.67),
        "dl1.24xlarge": (13.11, 3.93),
        "p2.xlarge": (0.90, 0.27),
        "g3.8xlarge": (2.28, None),
    }
    for name, (on_demand, spot) in printed.items():
        assert (seed.get(name).on_demand_usd_per_hour, seed.get(name).spot_usd_per_hour) == (on_demand, spot)
    assert "assumed 0.30 × on-demand" in seed.caption()
    assert seed.get("p3.8xlarge").accelerator_count == 4


def test_later_snapshot_has_observed_spot_and_gcp_vm_plus_gpu_rows():
    later = load_catalog("skypilot-2025")
    assert later.get("p3.2xlarge").spot_usd_per_hour == 0.668
    assert later.get("dl1.24xlarge").note == "spot quoted in one zone only"
    assert later.get("n1-standard-8+1xV100").on_demand_usd_per_hour == 2.86
    assert later.get("dl2q.24xlarge").region == "us-west-2"


def test_the_default_catalog_prices_todays_h100_h200_a100_and_dl1():
    today = load_catalog()
    assert today.name == DEFAULT_CATALOG == "skypilot-2026" and today.history is None
    # AWS cut P4/P5 on-demand prices in June 2025: the 2025 snapshot's $98.32 and $32.7726 are gone.
    h100, h200 = today.get("p5.48xlarge"), today.get("p5en.48xlarge")
    assert (h100.accelerator, h100.accelerator_count, h100.on_demand_usd_per_hour) == (
        "NVIDIA H100 80GB",
        8,
        55.04,
    )
    assert (h200.accelerator, h200.accelerator_count, h200.on_demand_usd_per_hour) == (
        "NVIDIA H200 141GB",
        8,
        63.296,
    )
    assert today.get("p4d.24xlarge").on_demand_usd_per_hour == 21.957642
    assert today.get("p4de.24xlarge").accelerator == "NVIDIA A100 80GB"
    for name in ("p5.48xlarge", "p5en.48xlarge", "p4d.24xlarge", "g6e.xlarge", "g6.xlarge", "dl1.24xlarge"):
        current = today.get(name)
        assert current.retired is None and current.price_as_of is None  # the catalog's own date and source
        assert current.spot_usd_per_hour < current.on_demand_usd_per_hour
    assert load_catalog("skypilot-2025").get("p5.48xlarge").on_demand_usd_per_hour == 98.32


def test_the_default_catalog_has_the_single_gpu_instances_a_buyer_rents():
    today = load_catalog()
    one, eight = today.get("p5.4xlarge"), today.get("p5.48xlarge")
    # one H100 of p5.48xlarge's kind, at its eighth of the price (AWS prices a family by its size)
    assert (one.accelerator, one.accelerator_count, one.provider) == (eight.accelerator, 1, eight.provider)
    assert (
        one.on_demand_usd_per_hour == 6.88 == eight.on_demand_usd_per_hour / 8
        and one.spot_usd_per_hour is None
    )
    # a GPU cloud's single-GPU rows, with their own source and no date the copy read could give
    lambda_rows = {n: i for n, i in today.instances.items() if i.provider == "lambda"}
    assert {"gpu_1x_h100_sxm5", "gpu_1x_h100_pcie", "gpu_1x_a100_sxm4", "gpu_1x_b200_sxm6"} <= set(
        lambda_rows
    )
    for instance in lambda_rows.values():
        assert instance.accelerator_count == 1 and instance.spot_usd_per_hour is None
        assert instance.price_as_of is None and "lambda/vms.csv at commit 0f40703" in instance.price_source
    assert today.price_dated(lambda_rows["gpu_1x_h100_sxm5"]).startswith(
        "price of gpu_1x_h100_sxm5: Lambda's"
    )
    assert lambda_rows["gpu_1x_h100_sxm5"].on_demand_usd_per_hour == 4.29


def test_retired_instances_stay_priced_and_say_when_and_on_whose_word():
    today, seed = load_catalog(), load_catalog("seed-2022")
    p3 = today.get("p3.2xlarge")
    assert p3.on_demand_usd_per_hour == 3.06 and p3.retired.date == "2025-12-20"
    assert p3.retired.text().startswith("RETIRED 2025-12-20: AWS notice to migrate off P3")
    assert p3.price_as_of == "2025" and "skypilot-2025" in p3.price_source
    # The seed's catalog is history: its p2, g3 and p3 rows price (its table is reproduced), marked.
    assert seed.history and "Kept as history" in seed.caption()
    retired = {name for name, instance in seed.instances.items() if instance.retired}
    assert retired == {
        "p2.xlarge",
        "p2.8xlarge",
        "g3.8xlarge",
        "g3.16xlarge",
        "p3.2xlarge",
        "p3.8xlarge",
        "p3.16xlarge",
    }
    assert seed.get("p2.8xlarge").retired.date is None  # no date found: said, not guessed
    assert seed.get("g3.8xlarge").retired.date == "2025-10-31"
    assert seed.get("p3dn.24xlarge").retired is None and seed.get("dl1.24xlarge").retired is None
    assert load_catalog("skypilot-2025").history


@pytest.mark.parametrize(
    "fields, said",
    [
        ({"retired": "2025-12-20"}, "retired must be a mapping of date"),
        ({"retired": {"date": "2025-12-20"}}, "retired must be a mapping of date"),
        ({"retired": {"date": "Dec 2025", "source": "AWS"}}, "retired date must be a date"),
        ({"retired": {"date": "2025-12-20", "source": ""}}, "retired source must be a non-empty text"),
        ({"price_as_of": "last year"}, "price_as_of must be a date"),
        ({"price_source": "elsewhere"}, "price_source 'elsewhere' is not one of the catalog's sources (none"),
    ],
)
def test_a_bad_retired_or_row_date_is_refused_naming_the_instance(tmp_path, capsys, fields, said):
    path = write_catalog(tmp_path, fields)
    assert main(["prices", "list", path]) == 2
    err = capsys.readouterr().err
    assert said in err and "instance 'g4dn.xlarge'" in err and err.count("\n") == 1


def test_a_row_may_name_its_own_dated_source(tmp_path):
    path = write_catalog(tmp_path, {"price_as_of": "2025-03", "price_source": "old"})
    text = open(path).read().replace("instances:", "sources: {old: an older price list}\ninstances:")
    open(path, "w").write(text)
    row = load_catalog(path).get("g4dn.xlarge")
    assert (row.price_as_of, row.price_source) == ("2025-03", "an older price list")
    assert load_catalog(path).price_dated(row) == "price of g4dn.xlarge as of 2025-03 (an older price list)"


def test_prices_list_shows_h200_todays_h100_price_and_marks_p3_retired(capsys):
    assert main(["prices", "list"]) == 0
    out = capsys.readouterr().out
    lines = {line.split("|")[1].strip(): line for line in out.splitlines() if line.startswith("| ")}
    assert "NVIDIA H200 141GB" in lines["p5en.48xlarge"] and "63.296" in lines["p5en.48xlarge"]
    assert "| 55.04 " in lines["p5.48xlarge"] and "| 2026-07 " in lines["p5.48xlarge"]
    assert "RETIRED 2025-12-20" in lines["p3.2xlarge"] and "| 2025 [1] " in lines["p3.2xlarge"]
    assert "[1] carried from the skypilot-2025 snapshot" in out
    assert "Prices: skypilot-2026 (USD/hour), as of 2026-07" in out and "commit 00148f2" in out
    assert (
        "skypilot-2026 (default)" in out and "seed-2022 (history)" in out and "skypilot-2025 (history)" in out
    )


def write_catalog(tmp_path, instance_fields: dict, name="mine.yaml") -> str:
    entry = dict(T4_INSTANCE)
    entry.update(instance_fields)
    entry = {k: v for k, v in entry.items() if v != "DROP"}
    path = tmp_path / name
    path.write_text(
        yaml.safe_dump(
            {"name": "mine", "source": "my notes", "as_of": "2025-01-01", "instances": {"g4dn.xlarge": entry}}
        )
    )
    return str(path)


@pytest.mark.parametrize(
    "fields, expected",
    [
        ({"on_demand_usd_per_hour": "DROP"}, "'g4dn.xlarge': field 'on_demand_usd_per_hour' is missing"),
        ({"spot_usd_per_hour": "DROP"}, "'g4dn.xlarge': field 'spot_usd_per_hour' is missing"),
        (
            {"on_demand_usd_per_hour": "cheap"},
            "'g4dn.xlarge': on_demand_usd_per_hour must be a number, got 'cheap'",
        ),
        (
            {"spot_usd_per_hour": "0.19"},
            "'g4dn.xlarge': spot_usd_per_hour must be a number, got '0.19' (quoted",
        ),
        ({"on_demand_usd_per_hour": None}, "'g4dn.xlarge': on_demand_usd_per_hour is missing a value"),
        ({"on_demand_usd_per_hour": True}, "on_demand_usd_per_hour must be a number, got True"),
        ({"on_demand_usd_per_hour": 0}, "on_demand_usd_per_hour must be at least 0.0001"),
        ({"accelerator_count": 1.5}, "accelerator_count must be a whole number, got 1.5"),
    ],
)
def test_a_bad_price_names_the_instance_and_the_field(tmp_path, fields, expected):
    path = write_catalog(tmp_path, fields)
    with pytest.raises(UserError, match=None) as error:
        load_catalog(path)
    assert expected in str(error.value)


def test_a_bad_catalog_file_is_one_clear_error_on_the_command_line(tmp_path, capsys):
    path = write_catalog(tmp_path, {"on_demand_usd_per_hour": "n/a"})
    assert main(["prices", "list", path]) == 2
    err = capsys.readouterr().err
    assert err.startswith("suite: error: ") and "'g4dn.xlarge'" in err and "on_demand_usd_per_hour" in err
    assert main(["prices", "list", "nosuch-catalog"]) == 2
    assert (
        "unknown price catalog 'nosuch-catalog' (shipped: seed-2022, skypilot-2025" in capsys.readouterr().err
    )
    assert main(["prices", "list", str(tmp_path / "missing.yaml")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_a_null_spot_means_no_quote(tmp_path):
    catalog = load_catalog(write_catalog(tmp_path, {"spot_usd_per_hour": None}))
    assert catalog.get("g4dn.xlarge").spot_usd_per_hour is None


def test_unknown_instance_suggests_near_matches():
    with pytest.raises(UserError) as error:
        find_instance("p5.48xlrge")
    assert "unknown instance 'p5.48xlrge': did you mean p5.48xlarge" in str(error.value)
    with pytest.raises(UserError) as error:
        load_catalog("seed-2022").get("g5.xlarge")  # only in the later snapshot
    assert "did you mean" in str(error.value) and "seed-2022" in str(error.value)
    # a name only the seed priced is still accepted on `suite run`
    assert find_instance("g3.8xlarge")[1].name == "seed-2022"


def test_run_with_an_unknown_instance_fails_before_measuring(tmp_path, capsys):
    from suite.cli import main

    out = tmp_path / "results"
    assert main(["run", "--instance", "p5.48xlrge", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("suite: error: unknown instance 'p5.48xlrge': did you mean p5.48xlarge")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()  # nothing measured, nothing written


def test_run_records_the_instance_and_accelerators_used_per_process():
    cost = resolve_run_instance(RunSpec().replace(instance="p5.48xlarge")).cost
    assert (cost.instance, cost.accelerators_used, cost.prices) == ("p5.48xlarge", 1, DEFAULT_CATALOG)

    assert resolve_run_instance(RunSpec().replace(instance="p5.48xlarge"), 8).cost.accelerators_used == 8
    with pytest.raises(UserError, match="uses 4 accelerators but g6.xlarge has 1"):
        resolve_run_instance(RunSpec().replace(instance="g6.xlarge"), 4)
    # Two nodes of eight: each instance is used whole.
    two_nodes = resolve_run_instance(RunSpec().replace(instance="p5en.48xlarge", nnodes=2), 16)
    assert two_nodes.cost.accelerators_used == 8
    assert resolve_run_instance(RunSpec()).cost.instance is None


# -- importers -------------------------------------------------------------------------------------------

EC2 = [
    {
        "instance_type": "g6.xlarge",
        "vCPU": 4,
        "memory": 16.0,
        "GPU": 1,
        "GPU_model": "NVIDIA L4",
        "GPU_memory": 24,
        "pricing": {
            "us-east-1": {
                "linux": {
                    "ondemand": "0.8048",
                    "spot_min": "0.349",
                    "spot_max": "0.4011",
                    "spot_avg": "0.3786",
                }
            }
        },
    },
    {
        "instance_type": "dl1.24xlarge",
        "vCPU": 96,
        "memory": 768.0,
        "GPU": 8,
        "GPU_model": None,
        "GPU_memory": 0,
        "pricing": {"us-east-1": {"linux": {"ondemand": "13.10904", "spot_avg": "N/A"}}},
    },
    {
        "instance_type": "m5.large",
        "vCPU": 2,
        "memory": 8.0,
        "GPU": 0,
        "GPU_model": None,
        "GPU_memory": 0,
        "pricing": {"us-east-1": {"linux": {"ondemand": "0.096", "spot_avg": "0.03"}}},
    },
    {
        "instance_type": "p4de.24xlarge",
        "vCPU": 96,
        "memory": 1152.0,
        "GPU": 8,
        "GPU_model": "NVIDIA A100",
        "GPU_memory": 640,
        "pricing": {"us-west-2": {"linux": {"ondemand": "40.96"}}},
    },
]


def test_ec2instances_import_parses_string_prices(tmp_path):
    path = tmp_path / "instances.json"
    path.write_text(json.dumps(EC2))
    catalog, unpriced = import_file(str(path), ImportRequest(region="us-east-1", name="ec2"))
    assert set(catalog["instances"]) == {"g6.xlarge", "dl1.24xlarge"}  # m5: no GPU; p4de: not in region
    assert unpriced == 1
    g6 = catalog["instances"]["g6.xlarge"]
    assert (g6["on_demand_usd_per_hour"], g6["spot_usd_per_hour"], g6["accelerator_count"]) == (
        0.8048,
        0.3786,
        1,
    )
    dl1 = catalog["instances"]["dl1.24xlarge"]
    assert dl1["spot_usd_per_hour"] is None and "not given" in dl1["note"]
    catalog, _ = import_file(
        str(path), ImportRequest(region="us-east-1", spot_stat="min", include_cpu_only=True)
    )
    assert catalog["instances"]["g6.xlarge"]["spot_usd_per_hour"] == 0.349
    assert catalog["instances"]["m5.large"]["accelerator_count"] == 0


AWS_CSV = """InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone
g6.xlarge,L4,1.0,4.0,16.0,"{'Gpus': [{'Name': 'L4', 'Manufacturer': 'NVIDIA', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 24576}}], 'TotalGpuMemoryInMiB': 24576}",0.8048,0.36,us-east-1,use1-az1
g6.xlarge,L4,1.0,4.0,16.0,"{'Gpus': [{'Name': 'L4', 'Manufacturer': 'NVIDIA', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 24576}}], 'TotalGpuMemoryInMiB': 24576}",0.8048,0.35,us-east-1,use1-az2
g6.xlarge,L4,1.0,4.0,16.0,"{'Gpus': [{'Name': 'L4', 'Manufacturer': 'NVIDIA', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 24576}}], 'TotalGpuMemoryInMiB': 24576}",0.8048,0.40,us-east-1,use1-az4
g6.xlarge,L4,1.0,4.0,16.0,"{'TotalGpuMemoryInMiB': 24576}",1.0216,0.39,eu-west-1,euw1-az1
m5.large,CPU-ONLY,0.0,2.0,8.0,,0.096,0.0288,us-east-1,use1-az1
"""

GCP_CSV = """InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,AvailabilityZone,Price,SpotPrice
n1-standard-8,8.0,30.0,,,,us-central1,us-central1-a,0.38,0.08
n1-standard-8,8.0,30.0,,,,us-central1,us-central1-b,0.38,0.08
,,,T4,1.0,,us-central1,us-central1-a,0.35,0.15
,,,T4,1.0,,us-central1,us-central1-b,0.35,0.17
"""


def test_skypilot_import_combines_zones_median_on_demand_mean_spot(tmp_path):
    path = tmp_path / "vms.csv"
    path.write_text(AWS_CSV)
    catalog, _ = import_file(str(path), ImportRequest(region="us-east-1"))
    assert list(catalog["instances"]) == ["g6.xlarge"]  # m5.large has no accelerator
    g6 = catalog["instances"]["g6.xlarge"]
    assert g6["on_demand_usd_per_hour"] == 0.8048
    assert g6["spot_usd_per_hour"] == pytest.approx((0.36 + 0.35 + 0.40) / 3)
    assert g6["accelerator_memory_gib"] == 24 and g6["note"] == "spot: mean of 3 zone quotes (0.35 … 0.4)"
    catalog, _ = import_file(str(path), ImportRequest(region="us-east-1", zone_stat="min"))
    assert catalog["instances"]["g6.xlarge"]["spot_usd_per_hour"] == 0.35
    with pytest.raises(UserError, match="no rows for region 'mars-1' .*eu-west-1, us-east-1"):
        import_file(str(path), ImportRequest(region="mars-1"))


def test_skypilot_gcp_gpu_rows_are_priced_with_their_host_vm(tmp_path):
    path = tmp_path / "gcp.csv"
    path.write_text(GCP_CSV)
    catalog, _ = import_file(str(path), ImportRequest(region="us-central1"))
    t4 = catalog["instances"]["n1-standard-8+1xT4"]
    assert t4["provider"] == "gcp" and t4["on_demand_usd_per_hour"] == pytest.approx(0.73)
    assert t4["spot_usd_per_hour"] == pytest.approx(0.08 + 0.16) and t4["vcpus"] == 8
    with pytest.raises(UserError, match="--gcp-host"):
        import_file(str(path), ImportRequest(region="us-central1", gcp_host="n2-standard-4"))


def test_prices_import_command_writes_a_catalog_that_loads_back(tmp_path, capsys):
    src, out = tmp_path / "vms.csv", tmp_path / "fresh.yaml"
    src.write_text(AWS_CSV)
    assert main(["prices", "import", str(src), "--name", "fresh", "--out", str(out)]) == 0
    assert "1 instances imported" in capsys.readouterr().err
    catalog = load_catalog(str(out))
    assert catalog.name == "fresh" and catalog.get("g6.xlarge").on_demand_usd_per_hour == 0.8048
    assert main(["prices", "list", str(out)]) == 0
    assert "g6.xlarge" in capsys.readouterr().out


def test_prices_import_bad_input_is_one_line(tmp_path, capsys):
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    assert main(["prices", "import", str(junk)]) == 2
    assert "is not valid JSON" in capsys.readouterr().err
    src = tmp_path / "vms.csv"
    src.write_text(AWS_CSV)
    assert main(["prices", "import", str(src), "--zones", "mode"]) == 2
    assert "unknown zone statistic 'mode' (accepted: mean, median, min, max)" in capsys.readouterr().err
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    assert main(["prices", "import", str(other)]) == 2
    assert "not a SkyPilot vms.csv" in capsys.readouterr().err
