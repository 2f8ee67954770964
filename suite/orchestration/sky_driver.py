"""`suite fleet run`: the campaign's task files through SkyPilot's Python API, records home, clusters down.

SkyPilot's SDK is asynchronous: every call (`sky.launch`, `sky.jobs.launch`, `sky.down`, ...) returns a
request id at once, and `sky.get(id)` / `sky.stream_and_get(id)` wait for its result
(https://docs.skypilot.co/en/latest/reference/async.html; sky/client/sdk.py in skypilot 0.14.1). So all
instances are launched first (they provision in parallel), then each is waited on in turn:

- on-demand: `sky.launch(task, cluster_name, down=True, idle_minutes_to_autostop=...)` -> (job id,
  handle); `sky.tail_logs(cluster, job id, follow=True)` streams the run and returns its exit code; the
  records are copied home (rsync through the SSH alias SkyPilot writes, or from the bucket); `sky.down`.
  `down=True` with autostop is a safety net: a cluster this process loses track of still goes away.
- spot: `sky.jobs.launch(task, name)` -> (job ids, handle), a managed job that SkyPilot relaunches when
  the instance is preempted; `sky.jobs.tail_logs(job_id=..., follow=True)`; records come from the bucket.

Ctrl-C cancels the pending requests, tears down every cluster and cancels every managed job this run
started, then re-raises. An instance whose record is already in the campaign folder is not launched
again, so running the same command resumes a campaign.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from suite import run_record
from suite.errors import UserError
from suite.orchestration import sky_tasks

# Set before `import sky`: no usage reports, no AWS metadata probe (169.254.169.254) from the `aws` CLI
# SkyPilot runs for identities, and no API server started behind the user's back (it is about 1 GiB in
# several processes): run `sky api start` once, or `sky api login` to a shared one.
SKY_ENV = {
    "SKYPILOT_DISABLE_LOCAL_API_SERVER": "1",
    "SKYPILOT_DISABLE_USAGE_COLLECTION": "1",
    "AWS_EC2_METADATA_DISABLED": "true",
}
INSTALL_HINT = (
    "`suite fleet run` needs SkyPilot: pip install 'suite[cloud]' (then `sky check` and `sky api start`)"
)
AUTOSTOP_MINUTES = 10  # an idle cluster goes down by itself after this, even if this process died
DONE_STATUSES = ("ok", "diverged", "oom")  # outcomes a second run would only repeat


def import_sky():
    for key, value in SKY_ENV.items():
        os.environ.setdefault(key, value)
    try:
        import sky
    except ImportError:
        raise UserError(INSTALL_HINT) from None
    return sky


def recorded_instances(folder: str) -> set[str]:
    """Instance types that already have a finished record in the campaign folder."""
    found = set()
    if not os.path.isdir(folder):
        return found
    for path in run_record.iter_record_paths([folder]):
        try:
            record = run_record.read_record(path)
        except (run_record.NotARecord, OSError, ValueError):
            continue  # other files in the folder are not ours to judge
        instance = (record.get("config") or {}).get("instance")
        if instance and record.get("status") in DONE_STATUSES:
            found.add(instance)
    return found


@dataclass
class Launch:
    target: object
    path: str
    cluster: str
    request_id: str | None = None
    job_id: int | None = None
    resolved: bool = False  # the launch request has returned (its cluster or job exists)

    @property
    def managed(self) -> bool:
        return self.target.spot


def run_tool(command: list[str]):
    """Run a copy tool (rsync, aws, gsutil); its output goes to the terminal."""
    return subprocess.run(command, check=False)


def run_campaign(campaign, task_paths, out_dir: str, sky, run=None, log=print) -> dict[str, str]:
    """Launch every instance not yet recorded, wait, collect, tear down. Returns instance -> outcome."""
    run = run or run_tool
    outcomes: dict[str, str] = {}
    recorded = recorded_instances(out_dir)
    pending = []
    for target, path in zip(campaign.targets, task_paths):
        if target.instance_type in recorded:
            log(f"{target.instance_type}: recorded in {out_dir}, not launched again")
            outcomes[target.instance_type] = "recorded"
        else:
            pending.append(Launch(target, path, sky_tasks.cluster_name(campaign, target)))
    live: list[Launch] = []  # launches that may hold cloud resources
    try:
        for launch in pending:
            task = sky.Task.from_yaml(launch.path)
            live.append(launch)  # before the request: a Ctrl-C inside it may leave a cluster behind
            if launch.managed:
                launch.request_id = sky.jobs.launch(task, name=launch.cluster)
            else:
                launch.request_id = sky.launch(
                    task, cluster_name=launch.cluster, down=True, idle_minutes_to_autostop=AUTOSTOP_MINUTES
                )
            kind = "managed spot job" if launch.managed else "cluster"
            log(
                f"{launch.target.instance_type}: {kind} {launch.cluster} requested (request {launch.request_id})"
            )
        for launch in pending:
            outcomes[launch.target.instance_type] = finish(sky, launch, campaign, out_dir, run, log)
            live.remove(launch)
    except KeyboardInterrupt:
        log(f"interrupted: tearing down {len(live)} launch(es) this run started")
        teardown(sky, live, log)
        raise
    return outcomes


def finish(sky, launch: Launch, campaign, out_dir: str, run, log) -> str:
    """Wait for one instance's run, bring its records home, and (on-demand) take its cluster down."""
    name = launch.target.instance_type
    try:
        job, _handle = sky.stream_and_get(launch.request_id)  # provisioning and setup, streamed
        launch.resolved = True
        if launch.managed:
            launch.job_id = job[0] if job else None
            exit_code = sky.jobs.tail_logs(job_id=launch.job_id, follow=True)
        else:
            launch.job_id = job
            exit_code = sky.tail_logs(launch.cluster, job, follow=True)
        outcome = "ran" if exit_code == 0 else f"run failed (exit code {exit_code})"
    except Exception as error:  # SkyPilot raises its own types (no capacity, quota, ...): one instance fails
        launch.resolved = True
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else ""
        outcome = f"failed: {type(error).__name__}" + (f": {first_line}" if first_line else "")
    log(f"{name}: {outcome}")
    collect(campaign, launch.target, out_dir, run, log)
    if not launch.managed:
        down(sky, launch.cluster, log)
    if name in recorded_instances(out_dir):
        return "recorded" if outcome == "ran" else f"recorded ({outcome})"
    return outcome if outcome != "ran" else "ran, but no record came back"


def collect(campaign, target, out_dir: str, run, log) -> None:
    destination = os.path.join(out_dir, target.instance_type)
    os.makedirs(destination, exist_ok=True)
    if campaign.bucket:
        command = sky_tasks.sync_command(f"{campaign.bucket}/{target.instance_type}", destination)
    else:
        command = sky_tasks.rsync_command(campaign, target, out_dir)
    try:
        done = run(command)
        failed = done.returncode != 0
    except OSError as error:  # the tool is not installed
        failed, done = True, error
    if failed:
        log(f"{target.instance_type}: copying records home failed ({' '.join(command)}): {done}")


def down(sky, cluster: str, log) -> None:
    try:
        sky.get(sky.down(cluster))
        log(f"{cluster}: down")
    except sky.exceptions.ClusterDoesNotExist:
        pass  # it went down by itself (launched with down=True), or never came up
    except Exception as error:
        log(f"{cluster}: could not be taken down ({type(error).__name__}: {error}); run `sky down {cluster}`")


def teardown(sky, launches: list[Launch], log) -> None:
    """Cancel what is still being requested, then take down every cluster and cancel every managed job."""
    waiting = [launch.request_id for launch in launches if launch.request_id and not launch.resolved]
    if waiting:
        try:
            sky.get(sky.api_cancel(waiting))
        except Exception as error:
            log(f"cancelling requests {', '.join(waiting)} failed: {error}")
    for launch in launches:
        if launch.managed:
            try:
                if launch.job_id is not None:
                    sky.get(sky.jobs.cancel(job_ids=[launch.job_id]))
                else:
                    sky.get(sky.jobs.cancel(name=launch.cluster))
                log(f"{launch.cluster}: managed job cancelled")
            except Exception as error:
                log(
                    f"{launch.cluster}: could not be cancelled ({error}); run `sky jobs cancel -n {launch.cluster}`"
                )
        else:
            down(sky, launch.cluster, log)
