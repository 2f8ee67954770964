"""`suite fleet run`: the campaign's task files through SkyPilot's Python API, records home, clusters down.

SkyPilot's SDK is asynchronous: every call (`sky.launch`, `sky.jobs.launch`, `sky.down`, ...) returns a
request id, and `sky.get(id)` / `sky.stream_and_get(id)` wait for its result
(https://docs.skypilot.co/en/latest/reference/async.html; sky/client/sdk.py in skypilot 0.14.1). All
instances are requested first (they provision in parallel) and each is then followed by its own thread, so
every instance is watched at once and its records are fetched the moment its job ends:

- on-demand: `sky.launch(task, cluster_name, down=True, idle_minutes_to_autostop=...)` -> (job id,
  handle); `sky.tail_logs(cluster, job id, follow=True)` returns the job's exit code; the records are
  copied home (rsync through the SSH alias SkyPilot writes, or from the bucket); `sky.down`. With
  `down=True` an idle cluster deletes itself AUTOSTOP_MINUTES after its job ends (a safety net for a
  cluster this process loses), so the copy must come first: waiting for instances in turn would lose the
  records of any that finished more than AUTOSTOP_MINUTES before its turn.
- spot: `sky.jobs.launch(task, name)` -> (job ids, handle), a managed job that SkyPilot relaunches when
  the instance is preempted; `sky.jobs.tail_logs(job_id=..., follow=True)`; records come from the bucket.

Each instance's SkyPilot output goes to OUT/logs/INSTANCE.log (several streams would interleave on one
terminal). The main thread holds the caps while they run: an instance still running at its deadline (its
planned hours plus DEADLINE_MARGIN of them) is stopped and recorded as timed out; when the running cost
of the fleet passes max_cost_usd, every instance still running is stopped and recorded as over budget.

Every other way out (Ctrl-C or SIGTERM, an error raised by SkyPilot's client such as no API server or a
failed upload, a bug) tears down every cluster and cancels every managed job this run started, unless
`keep` (then the `sky down` / `sky jobs cancel` commands are printed). An instance whose record is already
in the campaign folder is not launched again, so running the same command resumes a campaign.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from dataclasses import dataclass, field

from suite import run_record
from suite.fleet import fleet_ledger, sky_tasks
from suite.inputs import errors
from suite.inputs.errors import UserError

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
# An instance is stopped at its planned hours plus this share of them: a 10-minute plan at 12.5 minutes,
# a 2-hour plan at 2.5 hours (provisioning times vary, so the margin grows with the plan).
DEADLINE_MARGIN = 0.25
POLL_S = 1.0  # how often the caps are checked while instances run
RELEASE_WAIT_S = 120.0  # an abort waits this long at most for followers already taking clusters down
SAY_EVERY_S = 600.0  # how often a running fleet says where it is (on the caps' clock)


class FleetStopped(Exception):
    """The run stopped early on an error outside one instance's request; what it launched is torn down
    (or kept, with --keep). The message is one line for the person."""


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
        except run_record.OtherSuiteRecord:
            continue
        except (run_record.NotARecord, OSError) as error:
            # not ours to judge, but named: a planted FIFO or device is skipped, never waited on
            errors.warn(f"skipped {path}: {error}")
            continue
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
    resolved: bool = False  # the launch request has returned (its cluster or job exists, or never will)
    started: float | None = None  # clock time of the request: the instance may be billed from here
    ended: float | None = None
    deadline: float = float("inf")
    # requested -> collecting -> releasing (its follower takes it down) -> done; or stopped (caps or abort)
    phase: str = "requested"
    stop_reason: str | None = None
    outcome: str | None = None
    fatal: BaseException | None = None  # a Ctrl-C that reached the follower thread
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def managed(self) -> bool:
        return self.target.spot

    def cost_usd(self, now: float) -> float:
        if self.started is None:
            return 0.0
        return max(0.0, (self.ended or now) - self.started) / 3600 * self.target.usd_per_hour


def run_tool(command: list[str]):
    """Run a copy tool (rsync, aws, gsutil); its output goes to the terminal."""
    return subprocess.run(command, check=False)


def deadline_seconds(hours: float) -> float:
    return hours * 3600 * (1 + DEADLINE_MARGIN)


def now() -> float:
    """The clock the caps are held by (seconds; tests run it faster)."""
    return time.monotonic()


def error_line(error: BaseException) -> str:
    """`Type: first line of the message` (SkyPilot's messages run to many lines)."""
    text = str(error).strip()
    return type(error).__name__ + (f": {text.splitlines()[0]}" if text else "")


class Fleet:
    """The launches of one run, followed at once, under the campaign's time and cost caps."""

    def __init__(self, campaign, out_dir, sky, run, log, keep, clock, poll_s):
        self.campaign, self.out_dir, self.sky, self.run, self.log = campaign, out_dir, sky, run, log
        self.keep, self.clock, self.poll_s = keep, clock, poll_s
        self.launches: list[Launch] = []
        self.changed = threading.Event()  # set by a follower thread when its instance is done
        self.said_at: float | None = None  # when the fleet last said where it is
        self.logs_dir = os.path.join(out_dir, "logs")

    # -- requesting ------------------------------------------------------------------------------

    def request(self, launch: Launch) -> None:
        task = self.sky.Task.from_yaml(launch.path)
        self.launches.append(launch)  # before the request: a Ctrl-C inside it may leave a cluster behind
        launch.started = self.clock()
        launch.deadline = launch.started + deadline_seconds(launch.target.hours)
        if launch.managed:
            launch.request_id = self.sky.jobs.launch(task, name=launch.cluster)
        else:
            launch.request_id = self.sky.launch(
                task, cluster_name=launch.cluster, down=True, idle_minutes_to_autostop=AUTOSTOP_MINUTES
            )
        kind = "managed spot job" if launch.managed else "cluster"
        self.log(
            f"{launch.target.instance_type}: {kind} {launch.cluster} requested (request {launch.request_id})"
        )
        threading.Thread(target=self.follow, args=(launch,), daemon=True, name=launch.cluster).start()

    # -- one instance, in its own thread -----------------------------------------------------------

    def follow(self, launch: Launch) -> None:
        os.makedirs(self.logs_dir, exist_ok=True)
        with open(os.path.join(self.logs_dir, f"{launch.target.instance_type}.log"), "a") as stream:
            try:
                outcome = self.wait_for_job(launch, stream)
            except Exception as error:  # SkyPilot's own types (no capacity, quota, submit failed, ...)
                outcome = f"failed: {error_line(error)}"
            except BaseException as error:  # a Ctrl-C delivered here: the main thread stops the fleet
                launch.fatal = error
                self.changed.set()
                return
        with launch.lock:
            launch.resolved = True
            if launch.stop_reason:
                return  # the caps stopped it meanwhile; that record stands
            launch.phase = "collecting"
        launch.ended = self.clock()
        self.log(f"{launch.target.instance_type}: {outcome}")
        collect(self.campaign, launch.target, self.out_dir, self.run, self.log)
        name = launch.target.instance_type
        if name in recorded_instances(self.out_dir):
            outcome = "recorded" if outcome == "ran" else f"recorded ({outcome})"
        elif outcome == "ran":
            outcome = "ran, but no record came back"
        if not outcome.startswith("recorded") and not fleet_ledger.has_records(self.out_dir, launch.target):
            self.record_stop(launch, "failed", outcome)  # the launch failed, or nothing came home
        if not launch.managed:
            if self.keep and not outcome.startswith("recorded"):
                self.log(f"{launch.cluster}: kept (--keep); end it with `sky down -y {launch.cluster}`")
            elif self.take_release(launch):
                down(self.sky, launch.cluster, self.log)
        launch.outcome = outcome
        launch.phase = "done"
        self.changed.set()

    @staticmethod
    def take_release(launch: Launch) -> bool:
        """The follower takes its own cluster down, unless an abort took the launch over while it was
        collecting: one `down` per cluster, from whichever thread owns it."""
        with launch.lock:
            if launch.stop_reason:
                return False
            launch.phase = "releasing"
            return True

    def wait_for_job(self, launch: Launch, stream) -> str:
        job, _handle = self.sky.stream_and_get(launch.request_id, output_stream=stream)
        launch.resolved = True
        if launch.managed:
            launch.job_id = job[0] if job else None
            exit_code = self.sky.jobs.tail_logs(job_id=launch.job_id, follow=True, output_stream=stream)
        else:
            launch.job_id = job
            exit_code = self.sky.tail_logs(launch.cluster, job, follow=True, output_stream=stream)
        return "ran" if exit_code == 0 else f"run failed (exit code {exit_code})"

    # -- the caps, in the main thread ---------------------------------------------------------------

    def wait(self) -> None:
        budget = self.campaign.max_cost_usd
        while True:
            self.changed.clear()
            for launch in self.launches:
                if launch.fatal is not None:
                    raise launch.fatal
            if all(launch.phase in ("done", "stopped") for launch in self.launches):
                return
            running = [launch for launch in self.launches if launch.phase == "requested"]
            now = self.clock()
            for launch in running:
                if now >= launch.deadline:
                    self.stop(
                        launch,
                        "timeout",
                        f"still running {(now - launch.started) / 60:.1f} min after its request; the plan "
                        f"gave it {launch.target.hours:g} h plus {DEADLINE_MARGIN:.0%}",
                    )
            spent = self.spent_usd(now)
            if budget is not None and spent > budget:
                for launch in running:
                    self.stop(
                        launch,
                        "over-budget",
                        f"the fleet had cost ${spent:,.2f}, above its max_cost_usd ${budget:,.2f}",
                    )
            if self.said_at is None:
                self.said_at = now
            elif now - self.said_at >= SAY_EVERY_S:  # where the fleet is, now and then
                self.said_at = now
                self.log(fleet_ledger.progress_line(self.launches, now, spent))
            self.changed.wait(self.poll_s)

    def spent_usd(self, now: float) -> float:
        """Hours held x $/hour of every instance, and of the managed-jobs controller from the first managed
        job's request (it stays up while any job runs)."""
        spent = sum(launch.cost_usd(now) for launch in self.launches)
        managed = [
            launch.started for launch in self.launches if launch.managed and launch.started is not None
        ]
        controller = self.campaign.controller
        if managed and controller is not None and controller.usd_per_hour:
            spent += max(0.0, now - min(managed)) / 3600 * controller.usd_per_hour
        return spent

    def stop(self, launch: Launch, reason: str, why: str) -> None:
        """Take one running instance down (unless --keep) and record why: its measurement never came."""
        with launch.lock:
            if launch.phase != "requested":
                return  # its job ended meanwhile: its own records are on their way
            launch.phase, launch.stop_reason = "stopped", reason
        launch.ended = self.clock()
        self.log(f"{launch.target.instance_type}: {reason}: {why}")
        self.release([launch])
        self.record_stop(launch, reason, why)
        launch.outcome = f"{reason} ({why})"

    def record_stop(self, launch: Launch, reason: str, why: str) -> None:
        """The record of an instance that ends without a figure, with what it cost."""
        end = launch.ended or self.clock()
        held = max(0.0, end - (launch.started or end)) / 3600
        fleet_ledger.write_stop_record(
            self.campaign, launch.target, self.out_dir, reason, why, launch.cost_usd(end), held
        )

    def release(self, launches: list[Launch]) -> None:
        if self.keep:
            for command in keep_commands(launches):
                self.log(f"kept (--keep); end it with `{command}`")
        else:
            teardown(self.sky, launches, self.log)

    def abort(self, why: str) -> int:
        """Every launch still holding resources: stop it (or keep it). Returns how many."""
        live = []
        for launch in self.launches:
            with launch.lock:
                if launch.phase in ("requested", "collecting"):
                    launch.phase, launch.stop_reason = "stopped", why
                    live.append(launch)
        if live:
            self.log(
                f"{why}: {'keeping' if self.keep else 'tearing down'} {len(live)} launch(es) this run started"
            )
            self.release(live)
        # A follower already taking its own cluster down finishes before the process may end (followers
        # are daemon threads: exiting under them could cut a `down` short).
        deadline = time.monotonic() + RELEASE_WAIT_S  # the real clock: a test's fake one may stand still
        while any(launch.phase == "releasing" for launch in self.launches) and time.monotonic() < deadline:
            self.changed.wait(self.poll_s)
            self.changed.clear()
        if live:
            for launch in live:
                launch.ended = launch.ended or self.clock()
                launch.outcome = f"torn-down ({why})"
                if not fleet_ledger.has_records(self.out_dir, launch.target):
                    self.record_stop(launch, "torn-down", why)
        return len(live)


def run_campaign(campaign, task_paths, out_dir: str, sky, log=print, keep=False) -> dict[str, str]:
    """Launch every instance not yet recorded, follow them all, collect, tear down. Returns instance ->
    outcome. Raises KeyboardInterrupt or FleetStopped after releasing what it launched.

    The tools, the clock and the polling interval are this module's `run_tool`, `now` and `POLL_S`, read
    at the call (tests replace them there)."""
    fleet = Fleet(campaign, out_dir, sky, run_tool, log, keep, now, POLL_S)
    outcomes: dict[str, str] = {}
    recorded = recorded_instances(out_dir)
    pending = []
    for target, path in zip(campaign.targets, task_paths):
        if target.instance_type in recorded:
            log(f"{target.instance_type}: recorded in {out_dir}, not launched again")
            outcomes[target.instance_type] = "recorded"
        else:
            pending.append(Launch(target, path, sky_tasks.cluster_name(campaign, target)))
    try:
        for launch in pending:
            fleet.request(launch)
        fleet.wait()
    except KeyboardInterrupt:
        fleet.abort("interrupted")
        raise
    except Exception as error:
        count = fleet.abort(f"stopped by {type(error).__name__}")
        released = f"kept {count} launch(es) (--keep)" if keep else f"tore down {count} launch(es)"
        raise FleetStopped(f"{error_line(error)} ({released})") from error
    finally:
        # What was rented and what it cost, for `suite fleet report`, however the run ended; a ledger
        # that cannot be written is said, never raised over the run's own ending.
        try:
            fleet_ledger.write_ledger(campaign, out_dir, fleet.launches, fleet.clock())
        except (UserError, OSError) as error:
            log(f"the fleet's cost ledger could not be written: {error}")
    for launch in pending:
        outcomes[launch.target.instance_type] = launch.outcome or "unknown"
    return outcomes


def keep_commands(launches: list[Launch]) -> list[str]:
    commands = []
    clusters = [launch.cluster for launch in launches if not launch.managed]
    if clusters:
        commands.append(f"sky down -y {' '.join(clusters)}")
    commands += [f"sky jobs cancel -y -n {launch.cluster}" for launch in launches if launch.managed]
    return commands


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
        log(f"{cluster}: could not be taken down ({error_line(error)}); run `sky down -y {cluster}`")


def teardown(sky, launches: list[Launch], log) -> None:
    """Cancel what is still being requested, then take down every cluster and cancel every managed job."""
    waiting = [launch.request_id for launch in launches if launch.request_id and not launch.resolved]
    if waiting:
        try:
            sky.get(sky.api_cancel(waiting))
        except Exception as error:
            log(f"cancelling requests {', '.join(waiting)} failed: {error_line(error)}")
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
                    f"{launch.cluster}: could not be cancelled ({error_line(error)}); "
                    f"run `sky jobs cancel -y -n {launch.cluster}`"
                )
        else:
            down(sky, launch.cluster, log)
