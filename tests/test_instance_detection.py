"""A run on a cloud machine that says which instance it is (AWS Nitro: the DMI product name) is priced from
its first run without --instance, and its record says where the name came from; a machine that says
nothing (GCP, a laptop) is left unpriced, and `suite report` says in one line how to price it. The
machine's files are a fake root folder (SUITE_SYSFS_ROOT, read only by tests)."""

from __future__ import annotations

import csv
import io

import pytest
from conftest import TINY_RUN, only_record

from suite import context
from suite.cli import main
from suite.measurement.plan import resolve_plan
from suite.run_record import check_record
from suite.spec import RunSpec


def fake_machine(root, vendor: str | None, product: str | None):
    folder = root / context.DMI_FOLDER
    folder.mkdir(parents=True)
    if vendor is not None:
        (folder / "sys_vendor").write_text(vendor + "\n")
    if product is not None:
        (folder / "product_name").write_text(product + "\n")
    return root


@pytest.fixture
def machine(tmp_path, monkeypatch):
    def make(vendor, product):
        root = fake_machine(tmp_path / "root", vendor, product)
        monkeypatch.setenv(context.SYSFS_ROOT_VARIABLE, str(root))
        return root

    return make


def test_an_aws_nitro_machine_names_its_instance_type_and_where_it_said_so(tmp_path):
    root = fake_machine(tmp_path, "Amazon EC2", "p5.48xlarge")
    assert context.detected_instance(str(root)) == {
        "instance": "p5.48xlarge",
        "vendor": "Amazon EC2",
        "file": "/sys/devices/virtual/dmi/id/product_name",
    }


@pytest.mark.parametrize(
    "vendor, product",
    [
        ("Google", "Google Compute Engine"),  # GCP: no machine type in DMI
        ("Microsoft Corporation", "Virtual Machine"),
        ("Xen", "HVM domU"),  # an EC2 instance before Nitro
        ("Amazon EC2", "To be filled by O.E.M."),
        ("Amazon EC2", None),
        (None, None),
        ("LENOVO", "20XW0055GE"),
    ],
)
def test_a_machine_that_does_not_name_an_instance_type_says_nothing(tmp_path, vendor, product):
    assert context.detected_instance(str(fake_machine(tmp_path, vendor, product))) is None


def test_without_a_fake_root_the_real_files_are_read(monkeypatch):
    monkeypatch.delenv(context.SYSFS_ROOT_VARIABLE, raising=False)
    detected = context.detected_instance()
    assert detected is None or detected["file"] == "/sys/devices/virtual/dmi/id/product_name"


def plan(**fields):
    values = {"backend": "cpu", "workload": "dcgan64", "batch_size": 2, **fields}
    return resolve_plan(RunSpec().replace(**values)).spec.cost


def test_a_run_is_priced_as_the_instance_the_machine_names(machine):
    machine("Amazon EC2", "m6i.xlarge")
    cost = plan()
    assert cost.instance == "m6i.xlarge" and cost.prices and cost.accelerators_used == 1


def test_the_persons_instance_wins_over_the_machines(machine):
    machine("Amazon EC2", "m6i.xlarge")
    assert plan(instance="g5.xlarge").instance == "g5.xlarge"


def test_a_host_only_run_on_an_accelerator_instance_is_not_priced_as_it(machine):
    machine("Amazon EC2", "p5.48xlarge")  # a CPU run does not use what a p5 is rented for
    assert plan().instance is None


def test_an_instance_no_catalog_lists_leaves_the_run_unpriced_not_refused(machine):
    machine("Amazon EC2", "x9zq.huge")
    assert plan().instance is None


def test_a_machine_that_says_nothing_leaves_the_run_unpriced(machine):
    machine("Google", "Google Compute Engine")
    assert plan().instance is None


def test_the_record_says_where_the_instance_came_from_and_the_report_prices_it(machine, tmp_path, capsys):
    machine("Amazon EC2", "m6i.xlarge")
    assert main([*TINY_RUN, "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert "suite: priced as m6i.xlarge, the instance this machine's DMI product name names" in err
    record = only_record(tmp_path / "out")
    check_record(record)  # the schema checks the new field
    assert record["config"]["instance"] == "m6i.xlarge"
    assert record["context"]["instance_source"] == {
        "instance": "m6i.xlarge",
        "vendor": "Amazon EC2",
        "file": "/sys/devices/virtual/dmi/id/product_name",
    }
    assert main(["report", str(tmp_path / "out"), "--format", "csv"]) == 0
    out, err = capsys.readouterr()
    row = next(csv.DictReader(io.StringIO(out)))
    assert row["instance"] == "m6i.xlarge" and float(row["usd_per_hour"]) > 0
    assert "--instance" not in err  # priced: nothing to say about how to price it


def test_a_report_without_an_instance_says_in_one_line_how_to_price(machine, tmp_path, capsys):
    machine("Google", "Google Compute Engine")
    assert main([*TINY_RUN, "--out", str(tmp_path / "out")]) == 0
    assert only_record(tmp_path / "out")["context"]["instance_source"] is None
    capsys.readouterr()
    assert main(["report", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err.splitlines()
    [line] = [line for line in err if "no prices" in line]
    assert "1 row(s) have no instance, so no prices" in line
    assert "suite run --instance NAME" in line and "suite report --instance NAME" in line
    assert "--price-as-if" in line


def test_a_record_whose_instance_source_is_not_text_is_refused_on_read():
    from suite.run_record import BadRecord, new_record

    context_ = {"utc_time": "2026-01-01T00:00:00Z", "instance_source": {"instance": 5}}
    record = new_record("r", context_, {"workload": "dcgan64", "backend": "cpu", "batch_size": 2})
    record["status"] = "ok"
    with pytest.raises(BadRecord, match="context.instance_source.instance"):
        check_record(record)
