"""A Gaudi instance's task: Habana's container on a host AMI the campaign names (`host_image`).

SkyPilot left alone starts the container on its own AWS image, which carries no Habana driver and no
`habana` Docker runtime (docs/fleet.md, "Gaudi host image"), so `fleet plan` refuses a Gaudi instance
without a host AMI, and puts the one it is given next to the container in the task's `image_id`.
"""

from __future__ import annotations

import pytest

from suite.cli import main
from suite.fleet import campaign, campaign_file, sky_tasks

AMI_EAST = "ami-0123456789abcdef0"  # made-up ids of the right shape: nothing here reaches AWS
AMI_WEST = "ami-0123abcd"


def plan_file(tmp_path, capsys, instances: str, extra: str = ""):
    path = tmp_path / "gaudi.yaml"
    path.write_text(f"workload: dcgan64\nhours: 0.5\n{extra}instances:\n{instances}")
    code = main(["fleet", "plan", str(path), "--out", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    return code, out, err, str(path)


def gaudi_task(tmp_path, entry: str) -> dict:
    path = tmp_path / "one.yaml"
    path.write_text(f"workload: dcgan64\ninstances:\n  - {entry}\n")
    plan_ = campaign.build(campaign_file.load(str(path)))
    return sky_tasks.task(plan_, plan_.targets[0])


def test_a_gaudi_instance_without_a_host_image_is_refused_naming_the_key_and_how_to_find_one(
    tmp_path, capsys
):
    code, out, err, path = plan_file(tmp_path, capsys, "  - g6.xlarge\n  - dl1.24xlarge\n")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert err.startswith("suite: error: dl1.24xlarge") and f"{path}, line 5" in err
    assert "host_image: {us-east-1: ami-...}" in err and "--host-image REGION=AMI" in err
    assert "aws ec2 describe-images" in err and "Name=name,Values=*Habana*" in err
    assert not (tmp_path / "out" / "tasks").exists()  # nothing written, the g6 task neither


def test_inline_gaudi_plan_is_refused_the_same_way(tmp_path, capsys):
    code = main(
        ["fleet", "plan", "--instances", "dl1.24xlarge", "--workload", "dcgan64", "--out", str(tmp_path)]
    )
    err = capsys.readouterr().err
    assert code == 2 and "needs a host image" in err and "(command line)" in err


def test_inline_host_image_goes_to_the_gaudi_instances_only(tmp_path, capsys):
    argv = ["fleet", "plan", "--instances", "g6.xlarge,dl1.24xlarge,g4dn.xlarge", "--out", str(tmp_path)]
    assert main([*argv, "--host-image", f"us-east-1={AMI_EAST}"]) == 0, capsys.readouterr().err
    tasks = {path.name: path.read_text() for path in (tmp_path / "tasks").iterdir()}
    gaudi = [text for name, text in tasks.items() if "dl1" in name]
    assert (
        len(tasks) == 3
        and len(gaudi) == 1
        and AMI_EAST in gaudi[0]
        and "docker: vault.habana.ai/" in gaudi[0]
    )
    assert sum(AMI_EAST in text for text in tasks.values()) == 1  # the GPUs keep SkyPilot's own image
    assert main([*argv, "--host-image", "us-east-1"]) == 2
    assert "--host-image takes REGION=AMI" in capsys.readouterr().err
    assert main([*argv, "--host-image", "us-east-1=ami-nothex0"]) == 2
    assert "host_image for us-east-1 (--host-image) must be an AMI id" in capsys.readouterr().err


def test_a_campaign_wide_host_image_serves_gaudi_entries_that_name_none(tmp_path):
    path = tmp_path / "wide.yaml"
    path.write_text(
        f"workload: dcgan64\nhost_image: {{us-east-1: {AMI_EAST}}}\ninstances:\n  - g6.xlarge\n"
        f"  - dl1.24xlarge\n"
    )
    plan_ = campaign.build(campaign_file.load(str(path)))
    images = {target.instance_type: target.host_image for target in plan_.targets}
    assert images == {"g6.xlarge": None, "dl1.24xlarge": {"us-east-1": AMI_EAST}}


def test_the_container_runs_on_the_host_ami_of_each_region(tmp_path):
    spec = gaudi_task(
        tmp_path, f"{{type: dl1.24xlarge, host_image: {{us-east-1: {AMI_EAST}, us-west-2: {AMI_WEST}}}}}"
    )
    resources = spec["resources"]
    # SkyPilot 0.14.1 reads {REGION: AMI, docker: IMAGE} as the container on that VM image, and an AMI needs
    # the cloud named; the run options reach `docker run` on the host.
    assert resources["image_id"] == {
        "us-east-1": AMI_EAST,
        "us-west-2": AMI_WEST,
        "docker": sky_tasks.HABANA_IMAGE,
    }
    assert resources["infra"] == "aws"
    assert spec["config"]["docker"]["run_options"] == sky_tasks.HABANA_RUN_OPTIONS
    assert "--backend hpu" in spec["run"] and "--no-deps" in spec["setup"]


def test_an_ami_id_with_the_instance_region_pins_the_region(tmp_path):
    spec = gaudi_task(tmp_path, f"{{type: dl1.24xlarge, region: us-west-2, host_image: {AMI_WEST}}}")
    assert spec["resources"]["image_id"] == {"us-west-2": AMI_WEST, "docker": sky_tasks.HABANA_IMAGE}
    assert spec["resources"]["infra"] == "aws/us-west-2"


def test_gaudi_run_on_its_cpus_needs_no_host_image(tmp_path):
    spec = gaudi_task(tmp_path, "{type: dl1.24xlarge, backend: cpu}")
    assert "image_id" not in spec["resources"] and "config" not in spec and "--backend cpu" in spec["run"]


@pytest.mark.parametrize(
    "entry, message",
    [
        (f"{{type: dl1.24xlarge, host_image: {AMI_EAST}}}", "is an AMI id, which holds in one region only"),
        ("{type: dl1.24xlarge, host_image: {us-east-1: ami-xyz}}", "must be an AMI id (ami- and 8 or 17 hex"),
        ("{type: dl1.24xlarge, host_image: {us-east-1: 'ami-0123abcd; reboot'}}", "must be an AMI id"),
        ("{type: dl1.24xlarge, host_image: {'us-east-1; reboot': ami-0123abcd}}", "is not a plain region"),
        (
            "{type: dl1.24xlarge, host_image: [ami-0123abcd]}",
            "must be an AMI id (ami-...) or {REGION: AMI id",
        ),
        (
            f"{{type: dl1.24xlarge, region: us-west-2, host_image: {{us-east-1: {AMI_EAST}}}}}",
            "has no AMI for the instance's region us-west-2",
        ),
        (f"{{type: g6.xlarge, host_image: {{us-east-1: {AMI_EAST}}}}}", "host_image (" + "{path}"),
        (
            f"{{type: dl1.24xlarge, cloud: gcp, host_image: {{us-east-1: {AMI_EAST}}}}}",
            "runs on Gaudi on 'gcp'",
        ),
    ],
)
def test_bad_host_images_are_refused_with_one_line(tmp_path, capsys, entry, message):
    code, out, err, path = plan_file(tmp_path, capsys, f"  - {entry}\n")
    assert code == 2 and out == "", err
    assert message.replace("{path}", path) in err and f"{path}, line 4" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_gaudi_task_is_priced_in_its_host_images_regions_only(tmp_path, monkeypatch, capsys):
    from test_fleet_sky_catalog import AWS_HEADER, write_sky_catalog

    # SkyPilot keeps a task with an AMI to the regions its image_id names (sky/resources.py): the estimate
    # and the budget use those regions' prices, not the cheapest anywhere.
    monkeypatch.delenv("SKY_RUNTIME_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    rows = [
        "dl1.24xlarge,Gaudi HL-205,8.0,96.0,768.0,,13.10904,4.17,us-east-1,use1-az1",
        "dl1.24xlarge,Gaudi HL-205,8.0,96.0,768.0,,13.10904,9.19,us-west-2,usw2-az1",
    ]
    write_sky_catalog(tmp_path / "home", "aws", AWS_HEADER, rows)
    argv = [
        "fleet",
        "plan",
        "--instances",
        "dl1.24xlarge",
        "--spot",
        "--bucket",
        "s3://b/c",
        "--out",
        str(tmp_path),
    ]
    assert main([*argv, "--host-image", f"us-west-2={AMI_WEST}"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("dl1.24xlarge"))
    assert "9.190" in line and "4.170" not in line and "us-west-2" in line and "us-east-1" not in line
    assert main([*argv, "--host-image", f"eu-central-1={AMI_WEST}"]) == 2
    err = capsys.readouterr().err
    assert "not offered in its host image's regions (eu-central-1)" in err and "us-east-1" in err


def test_a_campaign_wide_host_image_is_checked_even_where_no_instance_needs_it(tmp_path, capsys):
    argv = ["fleet", "plan", "--instances", "g6.xlarge", "--out", str(tmp_path)]
    assert main([*argv, "--host-image", "us-east-1=garbage"]) == 2
    assert "must be an AMI id" in capsys.readouterr().err
    assert (
        main([*argv, "--host-image", f"us-east-1={AMI_EAST}", "--host-image", f"us-east-1={AMI_WEST}"]) == 2
    )
    assert "names region 'us-east-1' twice" in capsys.readouterr().err


def test_a_gaudi_row_of_another_cloud_is_refused_in_one_line(tmp_path, capsys):
    prices = tmp_path / "ibm.yaml"
    prices.write_text(
        "name: ibm-gaudi\nsource: a test's own row\nas_of: 2026-11-26\ninstances:\n"
        "  gx3d-160x1792x8gaudi3: {provider: ibm, region: us-east, accelerator: Intel Gaudi 3 128GB,\n"
        "    accelerator_count: 8, accelerator_memory_gib: 128, vcpus: 160, ram_gib: 1792,\n"
        "    on_demand_usd_per_hour: 60.0, spot_usd_per_hour: null}\n"
    )
    for extra in ([], ["--host-image", f"us-east-1={AMI_EAST}"]):
        code = main(
            ["fleet", "plan", "--instances", "gx3d-160x1792x8gaudi3", "--prices", str(prices), *extra,
             "--out", str(tmp_path / "out")]
        )  # fmt: skip
        err = capsys.readouterr().err
        assert code == 2 and "launches Gaudi on AWS only" in err and err.count("\n") == 1, err


def test_the_habana_container_can_be_the_release_of_the_amis_driver(tmp_path, capsys):
    older = "vault.habana.ai/gaudi-docker/1.18.0/ubuntu22.04/habanalabs/pytorch-installer-2.4.0:latest"
    argv = ["fleet", "plan", "--instances", "dl1.24xlarge", "--host-image", f"us-east-1={AMI_EAST}"]
    assert main([*argv, "--habana-image", older, "--out", str(tmp_path / "a")]) == 0, capsys.readouterr().err
    [task] = (tmp_path / "a" / "tasks").iterdir()
    assert f"docker: {older}" in task.read_text() and sky_tasks.HABANA_IMAGE not in task.read_text()
    assert main([*argv, "--habana-image", "not an image; reboot", "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert "--habana-image: 'not an image; reboot' is not a container image reference" in err
    path = tmp_path / "older.yaml"
    path.write_text(
        f"workload: dcgan64\nhabana_image: {older}\nhost_image: {{us-east-1: {AMI_EAST}}}\n"
        "instances:\n  - dl1.24xlarge\n"
    )
    plan_ = campaign.build(campaign_file.load(str(path)))
    assert sky_tasks.task(plan_, plan_.targets[0])["resources"]["image_id"]["docker"] == older
