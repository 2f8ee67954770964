"""A price list says each instance's price once, or the instance is named and left out: `suite prices
import` never ends in a traceback on a price it cannot take, never keeps the last of two quotes silently,
never averages a zone listed twice into a price no row quotes, and refuses a row out of line with its
header; SkyPilot's own catalog, read offline for a fleet's estimate, reads its prices by the same rule."""

from __future__ import annotations

import json

import pytest
import yaml

from suite.cli import main

HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone"
GOOD = "g5.xlarge,A10G,1.0,4.0,16.0,,1.006,0.4,us-east-1,use1-az1"


def _import(tmp_path, capsys, rows: list[str], header: str = HEADER, *options) -> tuple[int, dict, str]:
    """(exit status, the catalog's instances, stderr) of `suite prices import` of these rows."""
    source, out = tmp_path / "vms.csv", tmp_path / "catalog.yaml"
    source.write_text("\n".join([header, *rows]) + "\n")
    code = main(["prices", "import", str(source), "--out", str(out), *options])
    instances = yaml.safe_load(out.read_text())["instances"] if code == 0 else {}
    return code, instances, capsys.readouterr().err


@pytest.mark.parametrize(
    "price, spot, said",
    [
        ("1e300", "0.36", "a price of '1e300' is not a price in $ per hour from 0.0001 to 10,000"),
        ("0.8048", "1e300", "a price of '1e300'"),
        ("1e-300", "0.36", "a price of '1e-300'"),
        ("1_000", "0.36", "a price is '1_000', not a plain decimal number"),
        ("0.8048", "0.3_6", "a price is '0.3_6', not a plain decimal number"),
    ],
)
def test_a_skypilot_price_it_cannot_take_skips_the_instance_by_name(tmp_path, capsys, price, spot, said):
    rows = [
        GOOD,
        "g6.xlarge,L4,1.0,4.0,16.0,,0.8048,0.36,us-east-1,use1-az2",
        f"g6.xlarge,L4,1.0,4.0,16.0,,{price},{spot},us-east-1,use1-az1",
    ]
    code, instances, err = _import(tmp_path, capsys, rows)
    assert code == 0 and list(instances) == ["g5.xlarge"]
    assert "Traceback" not in err and f"1 instance(s) skipped, malformed: g6.xlarge: {said}" in err


@pytest.mark.parametrize(
    "rows, said",
    [
        (  # one instance type under two counts: the last kept its price
            [
                "g6.xlarge,L4,1.0,4.0,16.0,,0.8048,0.36,us-east-1,use1-az1",
                "g6.xlarge,L4,2.0,8.0,32.0,,1.9,0.5,us-east-1,use1-az2",
            ],
            "g6.xlarge: listed with 2 accelerators or counts (L4 × 1.0, L4 × 2.0)",
        ),
        (  # one zone twice: on-demand 0.8524, the median (so the mean) of two quotes, which no row says
            [
                "g6.xlarge,L4,1.0,4.0,16.0,,0.8048,0.36,us-east-1,use1-az1",
                "g6.xlarge,L4,1.0,4.0,16.0,,0.9,0.5,us-east-1,use1-az1",
            ],
            "g6.xlarge: zone use1-az1 is listed 2 times (on-demand 0.8048, 0.9)",
        ),
        (  # no zones in the file: a region listed twice is one zone listed twice
            [
                "g6.xlarge,L4,1.0,4.0,16.0,,0.8048,0.36,us-east-1,",
                "g6.xlarge,L4,1.0,4.0,16.0,,0.9,0.5,us-east-1,",
            ],
            "g6.xlarge: zone us-east-1 is listed 2 times",
        ),
    ],
)
def test_a_skypilot_instance_or_zone_listed_twice_is_named_never_averaged(tmp_path, capsys, rows, said):
    code, instances, err = _import(tmp_path, capsys, [GOOD, *rows])
    assert code == 0 and list(instances) == ["g5.xlarge"]
    assert f"1 instance(s) skipped, malformed: {said}" in err


def test_gcp_gpu_rows_that_differ_only_in_how_the_count_is_written_are_named(tmp_path, capsys):
    header = "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,AvailabilityZone,Price,SpotPrice"
    rows = [
        "n1-standard-8,8.0,30.0,,,,us-central1,us-central1-a,0.38,0.08",
        ",,,T4,1.0,,us-central1,us-central1-a,0.35,0.15",
        ",,,T4,1,,us-central1,us-central1-b,0.55,0.25",  # the same name, n1-standard-8+1xT4, priced apart
        ",,,T4,2.0,,us-central1,us-central1-a,0.70,0.28",
    ]
    code, instances, err = _import(tmp_path, capsys, rows, header, "--region", "us-central1")
    assert code == 0 and list(instances) == ["n1-standard-8+2xT4"]
    assert "n1-standard-8+1xT4: listed 2 times: none is taken" in err


def test_an_ec2instances_item_listed_twice_is_named_never_the_last_kept(tmp_path, capsys):
    def item(name, price):
        linux = {"ondemand": price}
        return {
            "instance_type": name,
            "vCPU": 4,
            "memory": 16,
            "GPU": 1,
            "GPU_model": "L4",
            "pricing": {"us-east-1": {"linux": linux}},
        }

    source, out = tmp_path / "instances.json", tmp_path / "catalog.yaml"
    source.write_text(
        json.dumps([item("g5.xlarge", "1.006"), item("g6.xlarge", "0.8048"), item("g6.xlarge", "0.9")])
    )
    assert main(["prices", "import", str(source), "--out", str(out)]) == 0
    assert list(yaml.safe_load(out.read_text())["instances"]) == ["g5.xlarge"]
    assert "g6.xlarge: listed 2 times: none is taken" in capsys.readouterr().err


@pytest.mark.parametrize(
    "pricing, key",
    [
        (
            '{"us-east-1": {"linux": {"ondemand": "0.8048"}}, "us-east-1": {"linux": {"ondemand": "0.9"}}}',
            "us-east-1",
        ),
        ('{"us-east-1": {"linux": {"ondemand": "0.8048", "ondemand": "0.9"}}}', "ondemand"),
    ],
)
def test_an_ec2instances_key_given_twice_is_one_line_never_the_last_kept(tmp_path, capsys, pricing, key):
    item = (
        '{"instance_type": "g6.xlarge", "vCPU": 4, "memory": 16, "GPU": 1, "GPU_model": "L4", "pricing": %s}'
    )
    source = tmp_path / "instances.json"
    source.write_text(f"[{item % pricing}]")  # json.loads kept the last: 0.9
    assert main(["prices", "import", str(source)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"an object gives the key {key!r} twice" in err


@pytest.mark.parametrize(
    "row, given",
    [
        ("g6.xlarge,L4,1.0,4.0,16.0,,0.8048,0.36,us-east-1,use1-az1,9.99", 11),  # the extra was dropped
        ("g6.xlarge,L4,1.0,4.0,16.0,,0.8048,0.36,us-east-1", 9),  # the zone was None
    ],
)
def test_a_price_list_row_out_of_line_with_its_header_is_one_line(tmp_path, capsys, row, given):
    code, _, err = _import(tmp_path, capsys, [GOOD, row])
    assert code == 2 and err.count("\n") == 1
    assert f"line 3: {given} value(s) for the header's 10 columns" in err
    assert not (tmp_path / "catalog.yaml").exists()


# -- SkyPilot's own catalog, read offline for a fleet's estimate -------------------------------------------


def _sky(monkeypatch, tmp_path, rows, name="g6.xlarge", cloud="aws"):
    from suite.prices.catalog import Instance

    folder = tmp_path / "runtime" / ".sky" / "catalogs" / "v8" / cloud
    folder.mkdir(parents=True)
    (folder / "vms.csv").write_text("\n".join([HEADER, *rows]) + "\n")
    monkeypatch.setenv("SKY_RUNTIME_DIR", str(tmp_path / "runtime"))
    return Instance(name, cloud, "us-east-1", "NVIDIA L4", 1, 24, 4, 16, 1.0, 0.5)


def test_skypilots_catalog_keeps_both_quotes_of_a_zone_listed_twice(monkeypatch, tmp_path):
    from suite.fleet import sky_catalog

    rows = [
        "g6.xlarge,L4,1.0,4.0,16.0,,0.8048,0.36,us-east-1,use1-az1",
        "g6.xlarge,L4,1.0,4.0,16.0,,0.7,0.5,us-east-1,use1-az1",
    ]
    quote = sky_catalog.quote(_sky(monkeypatch, tmp_path, rows))
    assert quote.on_demand == (0.7, 0.8048) and quote.spot == (0.36, 0.5)  # the last alone said 0.7 … 0.7


@pytest.mark.parametrize("junk", ["3_06", "1e300", "1e-300", "1e5"])
def test_skypilots_catalog_takes_no_price_float_alone_reads(monkeypatch, tmp_path, junk):
    from suite.fleet import sky_catalog

    rows = [
        f"g6.xlarge,L4,1.0,4.0,16.0,,{junk},{junk},us-east-1,use1-az1",
        "g6.xlarge,L4,1.0,4.0,16.0,,0.8048,0.36,us-east-1,use1-az2",
    ]
    quote = sky_catalog.quote(_sky(monkeypatch, tmp_path, rows))
    assert quote.on_demand == (0.8048, 0.8048) and quote.spot == (0.36, 0.36)  # `3_06` was $306 an hour


def test_skypilots_catalog_with_a_row_out_of_line_is_read_as_damaged(monkeypatch, tmp_path):
    from suite.fleet import sky_catalog

    rows = [
        "n1-standard-8,,,8.0,30.0,,0.38,0.08,us-east-1,us-east1-b",
        ",T4,1.0,,,,0.35,0.15,us-east-1,us-east1-b",
        '""',  # a row of one empty value: its AcceleratorName was None, and .lower() a traceback
    ]
    t4 = _sky(monkeypatch, tmp_path, rows, "n1-standard-8+1xT4", "gcp")
    assert sky_catalog.quote(t4) is None  # damaged, so absent: the suite's own catalog prices it


def test_a_catalog_larger_than_a_catalog_file_may_be_is_never_written(tmp_path, capsys, monkeypatch):
    from suite.inputs import yaml_file

    rows = [f"x{n}.xlarge,L4,1.0,4.0,16.0,,0.8,0.3,us-east-1,use1-az1" for n in range(20)]
    monkeypatch.setattr(yaml_file, "MAX_BYTES", 2048)  # 20 instances: about 5 KB; 4 MiB is some 14,000
    code, _, err = _import(tmp_path, capsys, rows)
    assert code == 2 and err.count("\n") == 1 and not (tmp_path / "catalog.yaml").exists()
    assert (
        "the catalog of 20 instances would be" in err and "larger than the" in err
    )  # `--prices` would refuse it
    assert "a price catalog file may be: nothing written" in err
