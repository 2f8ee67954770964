"""The task files `suite fleet plan` writes, loaded by the real SkyPilot parser (the `cloud` extra).

Runs SkyPilot in a child process with its own HOME and the network refused (socket name lookups raise),
so loading a task provably contacts nothing: no API server, no catalog download, no cloud.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest
from conftest import SAFETY_NET_S

from suite.cli import main
from suite.fleet import sky_driver

pytestmark = [
    pytest.mark.cloud,
    pytest.mark.skipif(
        importlib.util.find_spec("sky") is None,
        reason="SkyPilot is not installed (pip install -e '.[cloud]'); CI installs it and runs these",
    ),
]

PRICES = """\
name: mixed
source: test
as_of: '2026'
instances:
  m5.xlarge: {provider: aws, region: us-east-1, accelerator: none, accelerator_count: 0, accelerator_memory_gib: 0, vcpus: 4, ram_gib: 16, on_demand_usd_per_hour: 0.192, spot_usd_per_hour: 0.08}
  p3.2xlarge: {provider: aws, region: us-east-1, accelerator: NVIDIA V100, accelerator_count: 1, accelerator_memory_gib: 16, vcpus: 8, ram_gib: 61, on_demand_usd_per_hour: 3.06, spot_usd_per_hour: 0.9}
  n1-standard-8+1xT4: {provider: gcp, region: us-central1, accelerator: NVIDIA T4, accelerator_count: 1, accelerator_memory_gib: 16, vcpus: 8, ram_gib: 30, on_demand_usd_per_hour: 0.73, spot_usd_per_hour: 0.236}
  dl1.24xlarge: {provider: aws, region: us-east-1, accelerator: Habana Gaudi HL-205, accelerator_count: 8, accelerator_memory_gib: 256, vcpus: 96, ram_gib: 768, on_demand_usd_per_hour: 13.1, spot_usd_per_hour: 2}
"""

CAMPAIGN = """\
name: {name}
workload: dcgan64
prices: {prices}
spot: {spot}
options: {{batch-size: 32, windows: 3}}
{records}
instances:
  - m5.xlarge
  - {{type: p3.2xlarge, region: us-east-1}}
  - {{type: dl1.24xlarge, options: {{nproc: 8}}, host_image: {{us-east-1: ami-0123456789abcdef0, us-west-2: ami-0123abcd}}}}
  - n1-standard-8+1xT4
"""

LOAD = """
import json, os, socket, sys

def refused(*args, **kwargs):
    raise OSError("network refused in this test: " + repr(args[:1]))

socket.getaddrinfo = refused
socket.create_connection = refused
import sky

loaded = []
for path in sys.argv[1:]:
    task = sky.Task.from_yaml(path)
    task.validate_name()
    task.validate_run()
    (resources,) = list(task.resources)
    loaded.append({"name": task.name, "instance_type": resources.instance_type,
                   # With a cloud named (the Gaudi task: aws), reading accelerators downloads SkyPilot's catalog.
                   "accelerators": None if resources.cloud else resources.accelerators,
                   "use_spot": resources.use_spot, "image_id": resources.image_id,
                   "docker_image": resources.extract_docker_image(),
                   "cloud": type(resources.cloud).__name__ if resources.cloud else None,
                   "docker_run_options": resources.cluster_config_overrides.get("docker", {}).get("run_options"),
                   "run": task.run, "setup": task.setup,
                   "mounts": sorted(list(task.file_mounts or {}) + list(task.storage_mounts or {}))})
print(json.dumps(loaded))
"""


def plan_tasks(tmp_path, spot: bool) -> list[str]:
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES)
    name = "spot" if spot else "ondemand"
    campaign = tmp_path / f"{name}.yaml"
    campaign.write_text(
        CAMPAIGN.format(
            name=name,
            prices=prices,
            spot=str(spot).lower(),
            records="records: {bucket: s3://suite-test-bucket/runs}" if spot else "",
        )
    )
    tasks = tmp_path / f"{name}-tasks"
    assert main(["fleet", "plan", str(campaign), "--out", str(tmp_path / name), "--tasks", str(tasks)]) == 0
    return sorted(str(tasks / entry) for entry in os.listdir(tasks))


@pytest.mark.slow  # a fresh Python with its own HOME imports SkyPilot to run its own YAML parser
@pytest.mark.parametrize("spot", [False, True], ids=["on-demand", "spot"])
def test_generated_tasks_load_with_skypilots_own_parser(tmp_path, capsys, spot):
    paths = plan_tasks(tmp_path, spot)
    capsys.readouterr()
    # A fake `aws` first on PATH: SkyPilot runs the `aws` CLI for identities (and a sky.Resources naming
    # AWS does in its repr), which probes the cloud's metadata address. Loading the tasks must not run it.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    marker = tmp_path / "aws-was-run"
    (bin_dir / "aws").write_text(f'#!/bin/sh\necho "$@" >> {marker}\nexit 1\n')
    (bin_dir / "aws").chmod(0o755)
    env = {
        **os.environ,
        **sky_driver.SKY_ENV,
        "HOME": str(tmp_path / "home"),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
    }
    done = subprocess.run(
        [sys.executable, "-c", LOAD, *paths], capture_output=True, text=True, env=env, timeout=SAFETY_NET_S
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert not marker.exists(), f"the aws CLI was run: {marker.read_text()}"
    loaded = {task["instance_type"]: task for task in json.loads(done.stdout.strip().splitlines()[-1])}
    # A GCP row is its VM plus attached GPUs: SkyPilot reads the machine type and the accelerators apart.
    assert set(loaded) == {"m5.xlarge", "p3.2xlarge", "dl1.24xlarge", "n1-standard-8"}
    assert loaded["n1-standard-8"]["accelerators"] == {"T4": 1}
    assert "--instance n1-standard-8+1xT4" in loaded["n1-standard-8"]["run"]
    for instance, task in loaded.items():
        assert task["use_spot"] is spot
        if instance != "n1-standard-8":
            assert f"--instance {instance}" in task["run"]
    # Gaudi: SkyPilot reads the host AMI per region and Habana's container apart (sky/resources.py), on AWS.
    gaudi = loaded["dl1.24xlarge"]
    assert gaudi["image_id"] == {"us-east-1": "ami-0123456789abcdef0", "us-west-2": "ami-0123abcd"}
    assert gaudi["docker_image"].startswith("vault.habana.ai/gaudi-docker/") and gaudi["cloud"] == "AWS"
    assert "--runtime=habana" in gaudi["docker_run_options"]
    for instance in ("m5.xlarge", "p3.2xlarge", "n1-standard-8"):
        assert loaded[instance]["image_id"] is None and loaded[instance]["docker_image"] is None
    assert "--no-deps" in loaded["dl1.24xlarge"]["setup"] and "--nproc 8" in loaded["dl1.24xlarge"]["run"]
    assert "'.[cuda]'" in loaded["p3.2xlarge"]["setup"]
    assert "--backend cpu" in loaded["m5.xlarge"]["run"]
    # The catalog file travels with every task; with a bucket, so does the records mount.
    expected = {"/tmp/suite-prices.yaml"} | ({"/suite-records"} if spot else set())
    assert set(loaded["m5.xlarge"]["mounts"]) == expected
