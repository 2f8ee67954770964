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
import time

import pytest
from conftest import TINY_RUN
from fakes import sky as fake_sky

from suite.cli import main
from suite.fleet import sky_driver


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
hours: {hours}
{budget}
{records}
instances:
  - g6.xlarge
  - g5.xlarge
{spot}
"""


def campaign_file(tmp_path, bucket=True, spot=True, hours=0.5, max_cost_usd=None):
    path = tmp_path / "camp.yaml"
    path.write_text(
        CAMPAIGN.format(
            hours=hours,
            budget=f"max_cost_usd: {max_cost_usd}" if max_cost_usd else "",
            records="records: {bucket: s3://bkt/camp}" if bucket else "",
            spot="  - {type: dl1.24xlarge, spot: true, host_image: {us-east-1: ami-0123456789abcdef0}}"
            if spot
            else "",
        )
    )
    return str(path)


class Copier:
    """Stands in for rsync / `aws s3 sync`: copies a record for each instance whose job succeeded. rsync
    reaches the cluster itself, so it finds nothing once the cluster is gone (taken down or autostopped)."""

    def __init__(self, fake, template):
        self.fake, self.template, self.commands = fake, template, []

    def __call__(self, command):
        self.commands.append(command)
        destination = command[-1].rstrip("/")
        instance = os.path.basename(destination)
        cluster = "camp-" + instance.replace(".", "-")
        plan = self.fake.scenario.get(cluster, {})
        if command[0] == "rsync" and not self.fake.alive(cluster):
            return subprocess.CompletedProcess(command, 255)  # ssh: Could not resolve hostname
        failed = any(plan.get(key) for key in ("launch_error", "submit_error", "interrupt", "hang"))
        if not failed and plan.get("exit_code", 0) == 0:
            record = json.loads(json.dumps(self.template))
            record["run_id"] = f"{record['run_id']}-{instance}"
            record["config"]["instance"] = instance
            os.makedirs(destination, exist_ok=True)
            with open(os.path.join(destination, f"{record['run_id']}.json"), "w") as handle:
                json.dump(record, handle)
        return subprocess.CompletedProcess(command, 0)


def run_fleet(monkeypatch, tmp_path, template, scenario=None, argv=(), fake_options=None, **campaign):
    fake = fake_sky.install(monkeypatch, scenario, **(fake_options or {}))
    copier = Copier(fake, template)
    monkeypatch.setattr(sky_driver, "run_tool", copier)
    out = tmp_path / "out"
    code = main(["fleet", "run", campaign_file(tmp_path, **campaign), "--out", str(out), *argv])
    return code, fake, copier, out


def calls_for(fake, cluster):
    return [c[0] for c in fake.calls if cluster in c[1] or cluster in c[2].values()]


def fast_clock(monkeypatch, seconds_per_hour=0.4):
    """The caps' clock runs an hour in `seconds_per_hour` real seconds (SkyPilot's fake runs in real time)."""
    start = time.monotonic()
    monkeypatch.setattr(sky_driver, "POLL_S", 0.01)
    monkeypatch.setattr(sky_driver, "now", lambda: (time.monotonic() - start) * 3600 / seconds_per_hour)


def records_of(out, instance):
    folder = out / instance
    return [json.loads((folder / n).read_text()) for n in os.listdir(folder) if n.endswith(".json")]


def fleet_statuses(report: str) -> dict[str, str]:
    """Instance -> `Fleet status` cell of a fleet report's markdown table."""
    lines = [line for line in report.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]
    return {row[header.index("Instance")]: row[header.index("Fleet status")] for row in cells}


def test_fleet_run_wiring_launches_all_follows_each_collects_and_downs(
    monkeypatch, tmp_path, capsys, template_record
):
    code, fake, copier, out = run_fleet(monkeypatch, tmp_path, template_record)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    launches = [c for c in fake.calls if c[0] == "launch"]
    assert [c[2]["cluster_name"] for c in launches] == ["camp-g6-xlarge", "camp-g5-xlarge"]
    assert all(c[2]["down"] is True and c[2]["idle_minutes_to_autostop"] for c in launches)
    assert [c[2]["name"] for c in fake.calls if c[0] == "jobs.launch"] == ["camp-dl1-24xlarge"]
    # Each instance: its request waited on, then its job's log (exit code).
    assert sum(1 for n in fake.names() if n == "stream_and_get") == 3
    assert sorted(c[1] for c in fake.calls if c[0] == "tail_logs") == [
        ("camp-g5-xlarge", 1),
        ("camp-g6-xlarge", 1),
    ]
    assert [c[2]["job_id"] for c in fake.calls if c[0] == "jobs.tail_logs"] == [1]
    # On-demand clusters go down (and the down request is waited on); the managed job needs no down.
    assert sorted(c[1][0] for c in fake.calls if c[0] == "down") == ["camp-g5-xlarge", "camp-g6-xlarge"]
    assert fake.clusters == {}
    assert ["aws", "s3", "sync", "s3://bkt/camp/g6.xlarge", str(out / "g6.xlarge")] in copier.commands
    # SkyPilot's output for each instance goes to its own log file, not interleaved on the terminal.
    assert sorted(os.listdir(out / "logs")) == ["dl1.24xlarge.log", "g5.xlarge.log", "g6.xlarge.log"]
    # Ends with the campaign's report: one row per instance.
    for instance in ("g6.xlarge", "g5.xlarge", "dl1.24xlarge"):
        assert instance in captured.out
    assert "api_cancel" not in fake.names() and "jobs.cancel" not in fake.names()


def test_fleet_run_wiring_rsyncs_records_from_the_cluster_before_it_goes_down(
    monkeypatch, tmp_path, capsys, template_record
):
    code, fake, copier, out = run_fleet(monkeypatch, tmp_path, template_record, bucket=False, spot=False)
    assert code == 0, capsys.readouterr().err
    assert [
        "rsync",
        "-a",
        "camp-g6-xlarge:~/sky_workdir/suite-records/g6.xlarge/",
        str(out / "g6.xlarge") + "/",
    ] in copier.commands
    assert len(records_of(out, "g6.xlarge")) == 1 and len(records_of(out, "g5.xlarge")) == 1
    assert [e[2] for e in fake.events if e[0] == "down"] == ["down", "down"]


def test_fleet_run_wiring_autostopped_cluster_loses_no_record(monkeypatch, tmp_path, capsys, template_record):
    """g5 finishes at once and autostop deletes it 10 (fake) minutes = 0.3 s later; g6 runs 1.5 s. Waiting
    for the clusters in turn would rsync g5 after it is gone; following them at once fetches it in time."""
    scenario = {"camp-g6-xlarge": {"run_seconds": 1.5}}
    code, fake, _, out = run_fleet(
        monkeypatch,
        tmp_path,
        template_record,
        scenario,
        fake_options={"autostop_seconds_per_minute": 0.03},
        bucket=False,
        spot=False,
    )
    err = capsys.readouterr().err
    assert code == 0, err
    assert len(records_of(out, "g5.xlarge")) == 1 and len(records_of(out, "g6.xlarge")) == 1
    assert ("down", "camp-g5-xlarge", "autostop") not in fake.events


def test_fleet_run_wiring_resume_does_not_relaunch_recorded_instances(
    monkeypatch, tmp_path, capsys, template_record
):
    out = tmp_path / "out" / "earlier"
    out.mkdir(parents=True)
    for instance, status in (("g6.xlarge", "ok"), ("g5.xlarge", "error")):
        record = json.loads(json.dumps(template_record))
        record["run_id"] += instance
        record["config"]["instance"], record["status"] = instance, status
        (out / f"{instance}.json").write_text(json.dumps(record))
    code, fake, copier, _ = run_fleet(monkeypatch, tmp_path, template_record)
    err = capsys.readouterr().err
    assert code == 0, err
    assert "g6.xlarge: recorded in" in err and "not launched again" in err
    # The failed g5 run is tried again; the recorded g6 is not.
    assert [c[2]["cluster_name"] for c in fake.calls if c[0] == "launch"] == ["camp-g5-xlarge"]
    assert len(copier.commands) == 2


def test_fleet_run_wiring_ctrl_c_tears_down_everything_it_started(
    monkeypatch, tmp_path, capsys, template_record
):
    scenario = {
        "camp-g6-xlarge": {"interrupt": True},
        "camp-g5-xlarge": {"run_seconds": 3600},
        "camp-dl1-24xlarge": {"run_seconds": 3600},
    }
    began = time.monotonic()
    code, fake, _, _ = run_fleet(monkeypatch, tmp_path, template_record, scenario)
    err = capsys.readouterr().err
    assert code == 130
    # It did not wait for the running jobs (an hour each): a second or so, however busy the host.
    assert time.monotonic() - began < 1200
    assert sorted(c[1][0] for c in fake.calls if c[0] == "down") == ["camp-g5-xlarge", "camp-g6-xlarge"]
    assert [c[0] for c in fake.calls].count("jobs.cancel") == 1  # by id, or by name if not yet known
    assert fake.clusters == {} and fake.managed == {}
    assert "interrupted: tearing down 3 launch(es)" in err
    assert main(["fleet", "report", str(tmp_path / "out")]) == 0
    assert set(fleet_statuses(capsys.readouterr().out).values()) == {"torn down"}


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
    assert os.listdir(out / "g6.xlarge")
    # The instance that never came up has a record saying so (no figure, no cost), so the report shows it.
    (failed,) = records_of(out, "g5.xlarge")
    assert (
        failed["error"]["type"] == "FleetFailed" and "ResourcesUnavailableError" in failed["error"]["message"]
    )
    statuses = fleet_statuses(captured.out)
    assert statuses == {"g6.xlarge": "measured", "g5.xlarge": "failed", "dl1.24xlarge": "failed"}
    # The same table later, from the folder alone.
    assert main(["fleet", "report", str(out)]) == 0
    assert fleet_statuses(capsys.readouterr().out) == statuses
    shutil.rmtree(out / "tasks")


def test_fleet_run_wiring_failed_job_submission_takes_its_cluster_down(
    monkeypatch, tmp_path, capsys, template_record
):
    """The cluster came up, then the job could not be submitted (CommandError): it is billed until downed."""
    scenario = {"camp-g5-xlarge": {"submit_error": fake_sky.submit_failed()}}
    code, fake, _, out = run_fleet(monkeypatch, tmp_path, template_record, scenario)
    err = capsys.readouterr().err
    assert code == 1
    assert "g5.xlarge: failed: CommandError: Command job submit failed with return code 255." in err
    assert ("down", "camp-g5-xlarge", "down") in fake.events and fake.clusters == {}


@pytest.mark.parametrize(
    "error", [fake_sky.api_server_down, fake_sky.upload_failed], ids=["no-api-server", "upload-failed"]
)
def test_fleet_run_wiring_client_error_at_a_launch_tears_down_the_others(
    monkeypatch, tmp_path, capsys, template_record, error
):
    """SkyPilot's client raises before it has a request id (no API server, the workdir upload fails): the
    run stops with one line, exit 1, and the cluster already launched for g6 goes down."""
    scenario = {"camp-g6-xlarge": {"run_seconds": 30}, "camp-g5-xlarge": {"call_error": error()}}
    code, fake, _, _ = run_fleet(monkeypatch, tmp_path, template_record, scenario)
    err = capsys.readouterr().err
    assert code == 1
    (line,) = [line for line in err.splitlines() if line.startswith("fleet: stopped:")]
    assert type(error()).__name__ in line and "tore down 2 launch(es)" in line
    assert "Traceback" not in err
    assert ("down", "camp-g6-xlarge", "down") in fake.events and fake.clusters == {}
    assert "jobs.launch" not in fake.names()


def test_fleet_run_wiring_keep_leaves_clusters_and_prints_the_down_command(
    monkeypatch, tmp_path, capsys, template_record
):
    scenario = {
        "camp-g6-xlarge": {"run_seconds": 30},
        "camp-g5-xlarge": {"call_error": fake_sky.upload_failed()},
    }
    code, fake, _, _ = run_fleet(monkeypatch, tmp_path, template_record, scenario, argv=["--keep"])
    err = capsys.readouterr().err
    assert code == 1
    assert "sky down -y camp-g6-xlarge camp-g5-xlarge" in err
    assert "down" not in fake.names() and "camp-g6-xlarge" in fake.clusters


def test_fleet_run_wiring_hung_run_is_stopped_at_its_deadline(monkeypatch, tmp_path, capsys, template_record):
    """g6 hangs: stopped at 1 h + 25% of (fast) clock time, its cluster down, a FleetTimeout record written,
    while g5 and the spot job finish and are recorded."""
    fast_clock(monkeypatch)
    scenario = {"camp-g6-xlarge": {"hang": True}}
    code, fake, _, out = run_fleet(monkeypatch, tmp_path, template_record, scenario, hours=1)
    captured = capsys.readouterr()
    assert code == 1
    assert ("down", "camp-g6-xlarge", "down") in fake.events and fake.clusters == {}
    (record,) = records_of(out, "g6.xlarge")
    assert record["status"] == "error" and record["error"]["type"] == "FleetTimeout"
    assert "g6.xlarge: timeout: still running 7" in captured.err  # 75 min: 1 h + 25%
    assert len(records_of(out, "g5.xlarge")) == 1 and len(records_of(out, "dl1.24xlarge")) == 1
    assert fleet_statuses(captured.out) == {
        "g6.xlarge": "timed out",
        "g5.xlarge": "measured",
        "dl1.24xlarge": "measured",
    }
    # What the timeout cost: 1.25 h held at g6.xlarge's on-demand rate (the fast clock's polls add a little).
    assert record["fleet"]["held_hours"] == pytest.approx(1.25, abs=0.05)
    ledger = json.loads((out / "fleet-ledger.json").read_text())
    (attempt,) = ledger["instances"]["g6.xlarge"]["attempts"]
    assert attempt["cost_usd"] == pytest.approx(1.25 * 0.8048, rel=0.05)
    assert ledger["controller"]["instance_type"] == "m6i.xlarge"  # the spot job's controller, costed too
    assert "+ managed-jobs controller m6i.xlarge $" in captured.out


def test_fleet_run_wiring_running_cost_over_budget_stops_what_still_runs(
    monkeypatch, tmp_path, capsys, template_record
):
    """Both clusters hang; their running cost passes max_cost_usd (the estimate) at 1 h, before their
    deadline at 1.25 h: both are stopped and recorded as over budget."""
    fast_clock(monkeypatch)
    scenario = {"camp-g6-xlarge": {"hang": True}, "camp-g5-xlarge": {"hang": True}}
    code, fake, _, out = run_fleet(
        monkeypatch, tmp_path, template_record, scenario, hours=1, spot=False, max_cost_usd=1.85
    )
    err = capsys.readouterr().err
    assert code == 1, err
    for instance in ("g6.xlarge", "g5.xlarge"):
        (record,) = records_of(out, instance)
        assert record["error"]["type"] == "FleetOverBudget"
    assert "above its max_cost_usd $1.85" in err and fake.clusters == {}


@pytest.mark.cloud
def test_fake_sky_matches_the_real_sdk_signatures():
    """Every parameter the fake takes is one the installed SkyPilot's function takes (names and order of use)."""
    for key, value in sky_driver.SKY_ENV.items():
        os.environ.setdefault(key, value)
    sky = pytest.importorskip("sky", reason="SkyPilot is not installed (the `cloud` extra); CI installs it")
    fake = fake_sky.FakeSky().module()
    pairs = [
        (getattr(sky, n), getattr(fake, n))
        for n in ("launch", "get", "stream_and_get", "tail_logs", "status", "down", "api_cancel")
    ]
    pairs += [(getattr(sky.jobs, n), getattr(fake.jobs, n)) for n in ("launch", "tail_logs", "cancel")]
    for real, ours in pairs:
        real_params = inspect.signature(real).parameters
        for name in inspect.signature(ours).parameters:
            assert name in real_params, f"{real.__qualname__} has no parameter {name!r}"
    # The fake raises SkyPilot's own exception classes; its mirror (for machines without SkyPilot) has
    # their names and bases.
    for name in fake_sky.EXCEPTION_NAMES:
        real = getattr(sky.exceptions, name)
        assert getattr(fake.exceptions, name) is real
        mirror = getattr(fake_sky._Mirror, name)
        assert [c.__name__ for c in mirror.__mro__] == [c.__name__ for c in real.__mro__], name
    assert callable(sky.Task.from_yaml)


def test_fleet_run_wiring_ctrl_c_while_launching_still_tears_down(
    monkeypatch, tmp_path, capsys, template_record
):
    """A Ctrl-C inside the second launch request: the first cluster and the half-requested one go down."""
    fake = fake_sky.install(monkeypatch)
    real_launch = fake.launch

    def launch(task, **kwargs):
        if kwargs["cluster_name"] == "camp-g5-xlarge":
            fake.clusters["camp-g5-xlarge"] = {"ends": float("inf"), "autostop_s": None}  # the server began
            raise KeyboardInterrupt
        return real_launch(task, **kwargs)

    monkeypatch.setattr(sys.modules["sky"], "launch", launch)
    monkeypatch.setattr(sky_driver, "run_tool", Copier(fake, template_record))
    code = main(["fleet", "run", campaign_file(tmp_path), "--out", str(tmp_path / "out")])
    assert code == 130
    assert sorted(c[1][0] for c in fake.calls if c[0] == "down") == ["camp-g5-xlarge", "camp-g6-xlarge"]
    assert fake.clusters == {}
    assert "jobs.launch" not in fake.names()
    capsys.readouterr()


def test_fleet_run_wiring_ctrl_c_while_an_instance_collects_takes_it_down_once(
    monkeypatch, tmp_path, capsys, template_record
):
    """The first instance's job has ended and its follower is fetching records when Ctrl-C lands: the abort
    takes that cluster over and downs it, and the follower must not down it a second time."""
    import threading

    fake = fake_sky.install(monkeypatch)
    real_launch, real_down, copier = fake.launch, fake.down, Copier(fake, template_record)
    collecting, downed = threading.Event(), threading.Event()

    def slow_copy(command):
        collecting.set()
        downed.wait(10)  # still fetching while the abort tears its cluster down
        return copier(command)

    def launch(task, **kwargs):
        if kwargs["cluster_name"] == "camp-g5-xlarge":
            assert collecting.wait(10)
            raise KeyboardInterrupt
        return real_launch(task, **kwargs)

    def down(cluster_name, purge=False):
        try:
            return real_down(cluster_name, purge)
        finally:
            downed.set()

    monkeypatch.setattr(sys.modules["sky"], "launch", launch)
    monkeypatch.setattr(sys.modules["sky"], "down", down)
    monkeypatch.setattr(sky_driver, "run_tool", slow_copy)
    earlier = set(threading.enumerate())  # other tests' followers in this process are not this run's
    assert main(["fleet", "run", campaign_file(tmp_path), "--out", str(tmp_path / "out")]) == 130
    # The follower finishes after the abort (its copy was still running): a second down, were it to come,
    # comes before its thread ends.
    for follower in [t for t in threading.enumerate() if t.name.startswith("camp-") and t not in earlier]:
        follower.join(30)
        assert not follower.is_alive()
    assert sorted(c[1][0] for c in fake.calls if c[0] == "down") == ["camp-g5-xlarge", "camp-g6-xlarge"]
    assert fake.clusters == {}
    capsys.readouterr()


def test_fleet_report_from_a_folder_without_a_ledger_says_what_it_knows(tmp_path, capsys, template_record):
    """Records copied from elsewhere: a measured one (its cost unknown) and a stopped one (its record says)."""
    out = tmp_path / "fleet"
    measured = json.loads(json.dumps(template_record))
    measured["config"]["instance"] = "g5.xlarge"
    (out / "g5.xlarge").mkdir(parents=True)
    (out / "g5.xlarge" / "a.json").write_text(json.dumps(measured))
    stopped = json.loads(json.dumps(template_record))
    stopped.update(status="error", error={"type": "FleetOverBudget", "message": "over-budget: ..."})
    stopped["config"]["instance"] = "g6.xlarge"
    stopped["run_id"] += "-b"
    stopped["fleet"] = {"status": "over budget", "cost_usd": 2.5, "held_hours": 0.8}
    (out / "g6.xlarge").mkdir()
    (out / "g6.xlarge" / "b.json").write_text(json.dumps(stopped))
    assert main(["fleet", "report", str(out)]) == 0
    report = capsys.readouterr().out
    assert fleet_statuses(report) == {"g5.xlarge": "measured", "g6.xlarge": "over budget"}
    assert "| 2.50 |" in report and "Cost: $2.50 (instances $2.50)" in report
    assert main(["fleet", "report", str(out), "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("fleet_status,fleet_hours,fleet_cost_usd") and len(lines) == 3
    assert main(["fleet", "report", str(out), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert {r["instance"]: r["fleet_cost_usd"] for r in rows} == {"g5.xlarge": None, "g6.xlarge": 2.5}


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--format", "html"], "--format 'html' is not one of: md, csv, json"),
        (["--out", "x"], "--out goes with a campaign file"),
    ],
)
def test_fleet_report_refuses_bad_options_in_one_line(tmp_path, capsys, argv, message):
    (tmp_path / "fleet").mkdir()
    assert main(["fleet", "report", str(tmp_path / "fleet"), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_fleet_report_of_a_missing_folder_is_one_line(tmp_path, capsys):
    assert main(["fleet", "report", str(tmp_path / "nowhere")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_fleet_report_of_a_campaign_file_finds_its_folder(monkeypatch, tmp_path, capsys, template_record):
    code, _, _, out = run_fleet(monkeypatch, tmp_path, template_record)
    assert code == 0
    capsys.readouterr()
    assert main(["fleet", "report", str(tmp_path / "camp.yaml"), "--out", str(out)]) == 0
    assert set(fleet_statuses(capsys.readouterr().out).values()) == {"measured"}


def test_fleet_run_an_unwritable_ledger_is_said_and_the_run_ends_as_it_would(
    monkeypatch, tmp_path, capsys, template_record
):
    from suite.fleet import fleet_ledger

    def refuse(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fleet_ledger, "write_ledger", refuse)
    code, _, _, out = run_fleet(monkeypatch, tmp_path, template_record)
    err = capsys.readouterr().err
    assert code == 0 and "cost ledger could not be written" in err
    assert records_of(out, "g6.xlarge")


def test_a_fleet_stop_record_that_cannot_be_written_goes_to_the_fallback(
    monkeypatch, tmp_path, capsys, template_record
):
    from suite import run_record

    monkeypatch.setenv(run_record.FALLBACK_ENV, str(tmp_path / "fallback"))
    fast_clock(monkeypatch)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "g6.xlarge").write_text("")  # the instance's folder cannot be made: ENOTDIR
    scenario = {"camp-g6-xlarge": {"hang": True}}  # stopped at its deadline: a stop record to write
    code, fake, _, _ = run_fleet(monkeypatch, tmp_path, template_record, scenario, hours=1)
    err = capsys.readouterr().err
    assert code == run_record.EXIT_RECORD_NOT_WRITTEN, err
    assert "Traceback" not in err and str(tmp_path / "fallback") in err
    (kept,) = [json.loads(p.read_text()) for p in (tmp_path / "fallback").glob("*.json")]
    assert kept["error"]["type"] == "FleetTimeout" and fake.clusters == {}  # and nothing left running
