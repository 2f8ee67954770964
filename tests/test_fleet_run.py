"""`suite fleet run` wiring tests: its calls into SkyPilot's SDK, against the recorded fake in tests/fakes/sky.py.

No real cloud instance is launched here (SkyPilot ships no local cloud); the fake answers like the SDK:
request ids, get/stream_and_get, exit codes from tail_logs, and the errors it raises.
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import TINY_RUN
from fakes import sky as fake_sky

from suite.cli import main
from suite.orchestration import sky_driver


@pytest.fixture(autouse=True)
def no_sky_network(monkeypatch):
    monkeypatch.setenv("SKYPILOT_DISABLE_LOCAL_API_SERVER", "1")
    monkeypatch.setenv("SKYPILOT_DISABLE_USAGE_COLLECTION", "1")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.fixture(scope="module")
def template_record(tmp_path_factory):
    """One real record of a tiny CPU run: what a cluster would write, re-labelled per instance."""
    out = tmp_path_factory.mktemp("template")
    assert main([*TINY_RUN, "--out", str(out), "--json"]) == 0
    (path,) = [p for p in os.listdir(out) if p.endswith(".json")]
    with open(out / path) as handle:
        return json.load(handle)


CAMPAIGN = """\
name: camp
workload: dcgan64
hours: 0.5
{records}
instances:
  - p3.2xlarge
  - g5.xlarge
{spot}
"""


def campaign_file(tmp_path, bucket=True, spot=True):
    path = tmp_path / "camp.yaml"
    path.write_text(
        CAMPAIGN.format(
            records="records: {bucket: s3://bkt/camp}" if bucket else "",
            spot="  - {type: dl1.24xlarge, spot: true}" if spot else "",
        )
    )
    return str(path)


class Copier:
    """Stands in for rsync / `aws s3 sync`: copies a record for each instance whose job succeeded."""

    def __init__(self, fake, template):
        self.fake, self.template, self.commands = fake, template, []

    def __call__(self, command):
        self.commands.append(command)
        destination = command[-1].rstrip("/")
        instance = os.path.basename(destination)
        plan = self.fake.scenario.get("camp-" + instance.replace(".", "-"), {})
        if not plan.get("launch_error") and plan.get("exit_code", 0) == 0 and not plan.get("interrupt"):
            record = json.loads(json.dumps(self.template))
            record["run_id"] = f"{record['run_id']}-{instance}"
            record["config"]["instance"] = instance
            os.makedirs(destination, exist_ok=True)
            with open(os.path.join(destination, f"{record['run_id']}.json"), "w") as handle:
                json.dump(record, handle)
        return subprocess.CompletedProcess(command, 0)


def run_fleet(monkeypatch, tmp_path, template, scenario=None, **campaign):
    fake = fake_sky.install(monkeypatch, scenario)
    copier = Copier(fake, template)
    monkeypatch.setattr(sky_driver, "run_tool", copier)
    out = tmp_path / "out"
    code = main(["fleet", "run", campaign_file(tmp_path, **campaign), "--out", str(out)])
    return code, fake, copier, out


def test_fleet_run_wiring_launches_all_then_waits_collects_and_downs(
    monkeypatch, tmp_path, capsys, template_record
):
    code, fake, copier, out = run_fleet(monkeypatch, tmp_path, template_record)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    names = fake.names()
    # All three requested before any is waited on: they provision in parallel.
    assert names[:3] == ["launch", "launch", "jobs.launch"]
    assert names.index("stream_and_get") == 3
    launches = [c for c in fake.calls if c[0] == "launch"]
    assert [c[2]["cluster_name"] for c in launches] == ["camp-p3-2xlarge", "camp-g5-xlarge"]
    assert all(c[2]["down"] is True and c[2]["idle_minutes_to_autostop"] for c in launches)
    assert [c[2]["name"] for c in fake.calls if c[0] == "jobs.launch"] == ["camp-dl1-24xlarge"]
    # Waited through the request ids, then the job's log (exit code).
    assert sum(1 for n in names if n == "stream_and_get") == 3
    assert [c[1] for c in fake.calls if c[0] == "tail_logs"] == [
        ("camp-p3-2xlarge", 1),
        ("camp-g5-xlarge", 1),
    ]
    assert [c[2]["job_id"] for c in fake.calls if c[0] == "jobs.tail_logs"] == [1]
    # On-demand clusters go down (and the down request is waited on); the managed job needs no down.
    assert [c[1][0] for c in fake.calls if c[0] == "down"] == ["camp-p3-2xlarge", "camp-g5-xlarge"]
    assert fake.clusters == set()
    assert copier.commands[0] == ["aws", "s3", "sync", "s3://bkt/camp/p3.2xlarge", str(out / "p3.2xlarge")]
    # Ends with the campaign's report: one row per instance.
    for instance in ("p3.2xlarge", "g5.xlarge", "dl1.24xlarge"):
        assert instance in captured.out
    assert "api_cancel" not in names and "jobs.cancel" not in names


def test_fleet_run_wiring_rsyncs_records_from_the_cluster_without_a_bucket(
    monkeypatch, tmp_path, capsys, template_record
):
    code, fake, copier, out = run_fleet(monkeypatch, tmp_path, template_record, bucket=False, spot=False)
    assert code == 0, capsys.readouterr().err
    assert copier.commands[0] == [
        "rsync",
        "-a",
        "camp-p3-2xlarge:~/sky_workdir/suite-records/p3.2xlarge/",
        str(out / "p3.2xlarge") + "/",
    ]
    # The copy happens before the cluster goes down.
    down_at = [i for i, c in enumerate(fake.calls) if c[0] == "down"]
    assert len(down_at) == 2 and fake.clusters == set()


def test_fleet_run_wiring_resume_does_not_relaunch_recorded_instances(
    monkeypatch, tmp_path, capsys, template_record
):
    out = tmp_path / "out" / "earlier"
    out.mkdir(parents=True)
    for instance, status in (("p3.2xlarge", "ok"), ("g5.xlarge", "error")):
        record = json.loads(json.dumps(template_record))
        record["run_id"] += instance
        record["config"]["instance"], record["status"] = instance, status
        (out / f"{instance}.json").write_text(json.dumps(record))
    code, fake, copier, _ = run_fleet(monkeypatch, tmp_path, template_record)
    err = capsys.readouterr().err
    assert code == 0, err
    assert "p3.2xlarge: recorded in" in err and "not launched again" in err
    # The failed g5 run is tried again; the recorded p3 is not.
    assert [c[2]["cluster_name"] for c in fake.calls if c[0] == "launch"] == ["camp-g5-xlarge"]
    assert len(copier.commands) == 2


def test_fleet_run_wiring_ctrl_c_tears_down_everything_it_started(
    monkeypatch, tmp_path, capsys, template_record
):
    scenario = {"camp-p3-2xlarge": {"interrupt": True}}
    code, fake, _, _ = run_fleet(monkeypatch, tmp_path, template_record, scenario)
    err = capsys.readouterr().err
    assert code == 130
    names = fake.names()
    interrupted_at = names.index("tail_logs")
    after = fake.calls[interrupted_at + 1 :]
    # The launches not yet waited on are cancelled, then every cluster goes down and the job is cancelled.
    cancels = [c for c in after if c[0] == "api_cancel"]
    assert len(cancels) == 1 and len(cancels[0][1][0]) == 2
    assert sorted(c[1][0] for c in after if c[0] == "down") == ["camp-g5-xlarge", "camp-p3-2xlarge"]
    assert [c[2]["name"] for c in after if c[0] == "jobs.cancel"] == ["camp-dl1-24xlarge"]
    assert fake.clusters == set() and fake.managed == {}
    assert "interrupted: tearing down 3 launch(es)" in err


def test_fleet_run_wiring_one_failed_launch_does_not_stop_the_others(
    monkeypatch, tmp_path, capsys, template_record
):
    scenario = {
        "camp-g5-xlarge": {"launch_error": fake_sky.ResourcesUnavailableError("no capacity in us-east-1")},
        "camp-dl1-24xlarge": {"exit_code": 100},
    }
    code, fake, copier, out = run_fleet(monkeypatch, tmp_path, template_record, scenario)
    captured = capsys.readouterr()
    assert code == 1
    assert "g5.xlarge: failed: ResourcesUnavailableError: no capacity in us-east-1" in captured.err
    assert "dl1.24xlarge: run failed (exit code 100)" in captured.err
    # The failed cluster's down finds no cluster (ClusterDoesNotExist) and says nothing about it.
    assert "could not be taken down" not in captured.err
    assert os.listdir(out / "p3.2xlarge") and not os.listdir(out / "g5.xlarge")
    assert "p3.2xlarge" in captured.out  # the report of what did come back
    shutil.rmtree(out / "tasks")


def test_fake_sky_matches_the_real_sdk_signatures():
    """Every parameter the fake takes is one the installed SkyPilot's function takes (names and order of use)."""
    for key, value in sky_driver.SKY_ENV.items():
        os.environ.setdefault(key, value)
    sky = pytest.importorskip("sky", reason="SkyPilot is not installed (the `cloud` extra); CI installs it")
    fake = fake_sky.FakeSky().module()
    pairs = [
        (getattr(sky, n), getattr(fake, n))
        for n in ("launch", "get", "stream_and_get", "tail_logs", "down", "api_cancel")
    ]
    pairs += [(getattr(sky.jobs, n), getattr(fake.jobs, n)) for n in ("launch", "tail_logs", "cancel")]
    for real, ours in pairs:
        real_params = inspect.signature(real).parameters
        for name in inspect.signature(ours).parameters:
            assert name in real_params, f"{real.__qualname__} has no parameter {name!r}"
    for name in ("ClusterDoesNotExist", "ResourcesUnavailableError", "RequestCancelled"):
        assert hasattr(sky.exceptions, name)
    assert issubclass(sky.exceptions.ClusterDoesNotExist, ValueError)
    assert callable(sky.Task.from_yaml)


def test_fleet_run_wiring_ctrl_c_while_launching_still_tears_down(
    monkeypatch, tmp_path, capsys, template_record
):
    """A Ctrl-C inside the second launch request: the first cluster and the half-requested one go down."""
    fake = fake_sky.install(monkeypatch)
    real_launch = fake.launch

    def launch(task, **kwargs):
        if kwargs["cluster_name"] == "camp-g5-xlarge":
            fake.clusters.add("camp-g5-xlarge")  # the server had started on it
            raise KeyboardInterrupt
        return real_launch(task, **kwargs)

    monkeypatch.setattr(sys.modules["sky"], "launch", launch)
    monkeypatch.setattr(sky_driver, "run_tool", Copier(fake, template_record))
    code = main(["fleet", "run", campaign_file(tmp_path), "--out", str(tmp_path / "out")])
    assert code == 130
    assert sorted(c[1][0] for c in fake.calls if c[0] == "down") == ["camp-g5-xlarge", "camp-p3-2xlarge"]
    assert fake.clusters == set()
    assert "jobs.launch" not in fake.names()
    capsys.readouterr()
