"""A row is priced for the accelerators it used: 1 of a p5en.48xlarge's 8 H200s at $63.296 ÷ 8 an hour, or
as the catalog's instance with just that many (p5.4xlarge's one H100), with the whole instance's figure
beside it; a --per-device run over every accelerator, and an extrapolated one, priced as the whole
instance; published figures priced the same way; an instance without an on-demand price never priced."""

from __future__ import annotations

import csv
import io
import os

import pytest
import yaml
from conftest import ROOT
from test_per_device import CTX, copy_record
from test_report import make_record

from suite.cli import main
from suite.inputs.errors import UserError
from suite.launching import per_device
from suite.prices.catalog import load_catalog
from suite.reporting.published import figures
from suite.reporting.published.rows import published_row, with_published
from suite.reporting.render import render
from suite.rows.build import build_rows
from suite.rows.gather import load_records

TODAY = load_catalog()  # skypilot-2026
H200 = "NVIDIA H200"


def h200_run(rate=7_200_000, used=1, **fields):
    return make_record(rate, instance="p5en.48xlarge", device=H200, used=used, **fields)


def test_one_of_eight_h200s_is_priced_per_gpu_hour_with_the_whole_instance_beside_it():
    (row,) = build_rows([h200_run()], TODAY)
    assert (row["price_basis"], row["priced_as"]) == ("per accelerator", "p5en.48xlarge")
    assert row["usd_per_hour"] == pytest.approx(7.912) and row["usd_per_accelerator_hour"] == pytest.approx(
        7.912
    )
    assert row["images_per_usd"] == pytest.approx(7_200_000 / 7.912)
    assert row["spot_usd_per_hour"] == pytest.approx(17.337233 / 8)
    assert row["instance_usd_per_hour"] == 63.296
    assert row["instance_images_per_usd"] == pytest.approx(7_200_000 / 63.296)
    assert row["instance_spot_images_per_usd"] == pytest.approx(7_200_000 / 17.337233)
    assert any(n.startswith("priced per accelerator-hour: 1 of p5en.48xlarge's 8") for n in row["notes"])
    default = render([row], TODAY, "md")
    assert "| H200 ×1 | amp | 256 | 2,000 | 7.91 | 910,010 |" in default and " 1/8 " in default
    assert "priced for those N ($/h: the instance's ÷ M × N)" in default  # the mark's legend
    assert "fewer images per $" in default and "$/hour of the whole instance" not in default
    wide = render([row], TODAY, "md", wide=True)
    assert "| Images per $, whole instance |" in wide and "| 113,751 |" in wide and "H200 ×1 of 8" in wide
    (parsed,) = csv.DictReader(io.StringIO(render([row], TODAY, "csv")))
    assert parsed["price_basis"] == "per accelerator" and float(parsed["instance_usd_per_hour"]) == 63.296


def test_two_nodes_of_one_h200_each_pay_for_two_gpu_hours():
    record = h200_run()
    record["config"]["nnodes"] = 2
    (row,) = build_rows([record], TODAY)
    assert row["usd_per_hour"] == pytest.approx(2 * 7.912) and row["instance_usd_per_hour"] == 2 * 63.296
    assert "priced as 2 × p5en.48xlarge (one per node)" in row["notes"]


def test_an_aws_run_is_priced_as_an_instance_of_its_own_provider_never_as_another_clouds():
    # Lambda lists a 1 × H100 at $3.29 or $4.29; the run on a p5.48xlarge is priced as p5.4xlarge ($6.88).
    (row,) = build_rows(
        [make_record(7_200_000, instance="p5.48xlarge", device="NVIDIA H100 80GB HBM3", used=1)], TODAY
    )
    assert row["priced_as"] == "p5.4xlarge" and row["usd_per_hour"] == 6.88
    # p5.4xlarge has no us-east-1 spot quote: no spot for the row (the whole instance's is beside it)
    assert row["spot_images_per_usd"] is None and row["instance_spot_images_per_usd"] is not None
    assert any(
        "priced as p5.4xlarge ($6.88/h; spot: no us-east-1 zone quoted one)" in n for n in row["notes"]
    )


def test_a_per_device_run_over_every_accelerator_is_priced_as_the_measured_whole_instance():
    copies = [(copy_record(100.0 + i, i, instance="p5en.48xlarge"), {}, 1000.0) for i in range(8)]
    for record, _, _ in copies:
        record["device"]["name"] = H200
    (row,) = build_rows([per_device.combine({}, copies, CTX)], TODAY)
    assert row["accelerators_used"] == 8 and row["price_basis"] == "whole instance"
    assert row["usd_per_hour"] == 63.296 and row["images_per_usd"] == row["instance_images_per_usd"]
    assert "priced as the whole p5en.48xlarge: the --per-device run measured all of it" in row["notes"]
    # two copies of eight measured two of its GPUs: priced for those two
    (two,) = build_rows([per_device.combine({}, copies[:2], CTX)], TODAY)
    assert two["price_basis"] == "per accelerator" and two["usd_per_hour"] == pytest.approx(2 * 7.912)
    assert not any("measured all of it" in n for n in two["notes"])


def test_an_extrapolated_row_counts_and_prices_the_whole_instance():
    (row,) = build_rows([h200_run()], TODAY, extrapolate=True)
    assert row["accelerators_priced"] == 8 and row["accelerators_used"] == 1
    assert row["usd_per_hour"] == 63.296 and row["images_per_usd"] == pytest.approx(8 * 7_200_000 / 63.296)
    text = render([row], TODAY, "md")
    assert "| H200 ×8 |" in text and "H200 ×1" not in text
    from suite.reporting.answer import describe

    assert "H200 ×8" in describe(row, 1)


def test_published_figures_are_priced_per_accelerator_the_same_way():
    by_id = {f.id: f for f in figures.load_shipped()}
    # One A100 80GB: no 1-GPU instance of it, so an eighth of p4de.24xlarge (it was unpriced before).
    one = published_row(by_id["nvidia-rn50-a100-80gb-x1-amp"], TODAY, 1_200_000)
    assert (one["instance"], one["price_basis"]) == ("p4de.24xlarge", "per accelerator")
    assert one["usd_per_hour"] == pytest.approx(27.44705 / 8)
    assert one["instance_images_per_usd"] == pytest.approx(2470 * 3600 / 27.44705)
    # As many as an instance holds: that instance, whole, as before.
    eight = published_row(by_id["nvidia-rn50-a100-80gb-x8-amp"], TODAY, 1_200_000)
    assert (eight["price_basis"], eight["usd_per_hour"]) == ("whole instance", 27.44705)
    # A real instance of that size beats a share: one V100 is GCP's n1-standard-8+1xV100, not 1/8 of p3.16xlarge.
    v100 = published_row(by_id["nvidia-rn50-v100-16gb-x1-amp"], TODAY, 1_200_000)
    assert v100["instance"] == "n1-standard-8+1xV100" and v100["usd_per_hour"] == 2.86


def test_the_committed_h200_records_price_every_row_per_gpu_hour_and_the_v100_dearer_per_image():
    # as `suite report results/gpu` reads them: the runs, not diagnose's sub-runs
    records = [r for _, r in load_records([os.path.join(ROOT, "results", "gpu")], include={"run"})]
    rows = build_rows(records, TODAY)
    priced = [r for r in rows if r["images_per_usd"] is not None]
    assert len(priced) == 11 and all(
        r["accelerators_used"] == 1 and r["instance_accelerators"] == 8 for r in priced
    )
    assert {round(r["usd_per_hour"], 3) for r in priced} == {7.912}
    rows = with_published(rows, figures.load_shipped(), TODAY, 1_200_000)
    h200 = [r for r in rows if r["model_run"] == "dcgan64" and not r["published"] and r["images_per_usd"]]
    (v100,) = [r for r in rows if r["model_run"] == "dcgan64" and r["published"] and r["images_per_usd"]]
    # the seed's V100 (p3.2xlarge, $3.06/h) gives fewer images per $ than every H200 row at $7.912 a GPU-hour
    assert v100["device"] == "NVIDIA V100" and all(r["images_per_usd"] > v100["images_per_usd"] for r in h200)


# -- an instance without an on-demand price ----------------------------------------------------------------


def test_an_instance_without_an_on_demand_price_is_listed_marked_and_never_priced(capsys):
    p5e = TODAY.get("p5e.48xlarge")
    assert p5e.on_demand_usd_per_hour is None and "Capacity Blocks" in p5e.no_on_demand
    (row,) = build_rows([make_record(7_200_000, instance="p5e.48xlarge", device=H200, used=8)], TODAY)
    assert (
        row["usd_per_hour"] is None and row["images_per_usd"] is None and row["spot_images_per_usd"] is None
    )
    assert any(n.startswith("p5e.48xlarge has no on-demand price (") for n in row["notes"])
    from suite.reporting.answer import answer

    (item,) = answer([row], None)["workloads"]
    assert "Cheapest: no row is priced — p5e.48xlarge has no on-demand price" in " ".join(item["sentences"])
    assert main(["prices", "list"]) == 0
    out = capsys.readouterr().out
    p5e_line = next(line for line in out.splitlines() if line.startswith("| p5e.48xlarge "))
    assert "NO ON-DEMAND PRICE" in p5e_line and "| —  " in p5e_line
    assert any(line.startswith("| p5.4xlarge ") and "| 6.88 " in line for line in out.splitlines())


def write_catalog(tmp_path, entry: dict) -> str:
    instance = {
        "provider": "aws",
        "region": "us-east-2",
        "accelerator": "NVIDIA H200 141GB",
        "accelerator_count": 8,
        "accelerator_memory_gib": 1128,
        "vcpus": 192,
        "ram_gib": 2048,
        "spot_usd_per_hour": None,
        **entry,
    }
    path = tmp_path / "mine.yaml"
    catalog = {"name": "mine", "source": "test", "as_of": "2026-07", "instances": {"p5e.48xlarge": instance}}
    path.write_text(yaml.safe_dump(catalog))
    return str(path)


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"on_demand_usd_per_hour": None}, "on_demand_usd_per_hour is missing a value"),
        (
            {"on_demand_usd_per_hour": 63.296, "no_on_demand": "capacity blocks"},
            "no_on_demand is given beside",
        ),
        ({"on_demand_usd_per_hour": None, "no_on_demand": ""}, "no_on_demand must be a non-empty text"),
    ],
)
def test_a_missing_on_demand_price_must_say_why_and_only_then(tmp_path, entry, message):
    with pytest.raises(UserError, match=message):
        load_catalog(write_catalog(tmp_path, entry))
    fine = load_catalog(
        write_catalog(tmp_path, {"on_demand_usd_per_hour": None, "no_on_demand": "capacity blocks"})
    )
    assert fine.get("p5e.48xlarge").no_on_demand == "capacity blocks"


def test_scale_and_the_fleet_refuse_an_instance_without_an_on_demand_price(tmp_path, capsys):
    from suite.reporting.scale import hourly_price

    with pytest.raises(UserError, match="p5e.48xlarge has no on-demand price"):
        hourly_price("p5e.48xlarge")
    code = main(["fleet", "plan", "--instances", "p5e.48xlarge", "--workload", "dcgan64"])
    err = capsys.readouterr().err
    assert code == 2 and "has no on-demand price" in err and "Traceback" not in err


def test_import_writes_an_unpriced_accelerator_instance_marked_not_dropped(tmp_path):
    from suite.prices.importer import ImportRequest, import_file

    gpu = "\"{'Gpus': [{'Name': 'H200', 'Manufacturer': 'NVIDIA', 'Count': 8}], 'TotalGpuMemoryInMiB': 1155072}\""
    path = tmp_path / "vms.csv"
    path.write_text(
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone\n"
        f"p5e.48xlarge,H200,8.0,192.0,2048.0,{gpu},,18.7359,us-east-2,use2-az3\n"
        f"p5en.48xlarge,H200,8.0,192.0,2048.0,{gpu},63.296,22.937,us-east-2,use2-az1\n"
    )
    catalog, unpriced = import_file(str(path), ImportRequest(region="us-east-2", as_of="2026-07"))
    assert unpriced == 1
    marked = catalog["instances"]["p5e.48xlarge"]
    assert marked["on_demand_usd_per_hour"] is None and "without an on-demand price" in marked["no_on_demand"]
    assert catalog["instances"]["p5en.48xlarge"]["on_demand_usd_per_hour"] == 63.296
