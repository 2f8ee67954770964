"""A recorded fake of SkyPilot's client SDK (skypilot 0.14.1), for wiring tests of `suite fleet run`.

SkyPilot ships no local cloud, so the SDK calls are checked against this stand-in. It behaves like the
real client where `fleet run` depends on it (sky/client/sdk.py, sky/jobs/client/sdk.py, sky/exceptions.py
and sky/server/common.py of skypilot 0.14.1), and it fails where and as the real one fails:

- Errors are SkyPilot's own exception types: imported from the installed `sky.exceptions` when SkyPilot is
  there, else mirrored with the same names and bases (tests/test_fleet_run.py checks the mirror).
- `launch` / `jobs.launch` raise at the call itself what the real client raises before it has a request
  id: ApiServerConnectionError (a RuntimeError) when no API server answers, RuntimeError('Failed to
  upload files to API server.') when the workdir upload fails (scenario "call_error").
- The result comes from `get(id)` / `stream_and_get(id)`, which re-raise the request's own exception:
  before a cluster exists ("launch_error": ResourcesUnavailableError, InvalidCloudCredentials, ...), or
  after it is up, when the job cannot be submitted ("submit_error": CommandError; the cluster stays up
  and costs money until someone takes it down). RequestCancelled for a cancelled request, RuntimeError
  for an id the server never issued.
- `tail_logs` / `jobs.tail_logs` block while the job runs ("run_seconds", or "hang": until the cluster is
  taken down) and return its exit code (0 success, 100 failed); a cluster that is gone raises
  ClusterDoesNotExist, "tail_error" raises the given error (e.g. ClusterNotUpError).
- `status` raises "status_error" (e.g. ClusterStatusFetchingError) and otherwise lists live clusters.
- Autostop: a cluster launched with down=True and idle_minutes_to_autostop=N is deleted N minutes after
  its job ends; `autostop_seconds_per_minute` scales those minutes to test time.
- `down` of a cluster that does not exist fails with ClusterDoesNotExist (a ValueError, as in SkyPilot).

Every call is appended to `calls` as (name, args, kwargs); every cluster up and down (and why) to
`events`. Each parameter name here is one the real function takes; tests/test_fleet_run.py checks that.
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import os
import sys
import threading
import time
import types

import yaml

EXCEPTION_NAMES = (
    "ApiServerConnectionError",
    "ClusterDoesNotExist",
    "ClusterNotUpError",
    "ClusterStatusFetchingError",
    "CommandError",
    "InvalidCloudCredentials",
    "NoCloudAccessError",
    "RequestCancelled",
    "ResourcesUnavailableError",
    "StorageUploadError",
)


class _Mirror:
    """SkyPilot 0.14.1's exception classes (sky/exceptions.py), same names and bases, for machines
    without SkyPilot."""

    class ResourcesUnavailableError(Exception):
        pass

    class ClusterDoesNotExist(ValueError):
        pass

    class ClusterNotUpError(Exception):
        pass

    class ClusterStatusFetchingError(Exception):
        pass

    class SkyPilotExcludeArgsBaseException(Exception):
        pass

    class CommandFailureException(SkyPilotExcludeArgsBaseException):
        pass

    class CommandError(CommandFailureException):
        def __init__(self, returncode, command, error_msg, detailed_reason, failure=None):
            self.returncode = returncode
            super().__init__(f"Command {command} failed with return code {returncode}.\n{error_msg}")

    class InvalidCloudCredentials(Exception):
        pass

    class NoCloudAccessError(Exception):
        pass

    class RequestCancelled(Exception):
        pass

    class ApiServerConnectionError(RuntimeError):
        def __init__(self, server_url):
            super().__init__(f"Could not connect to SkyPilot API server at {server_url}.")

    class StorageError(Exception):
        pass

    class StorageUploadError(StorageError):
        pass


# Whatever imports sky in this process finds it offline and starts no API server: set as this module is
# imported, so every test after it sees the same environment.
for _key, _value in (
    ("SKYPILOT_DISABLE_LOCAL_API_SERVER", "1"),
    ("SKYPILOT_DISABLE_USAGE_COLLECTION", "1"),
    ("AWS_EC2_METADATA_DISABLED", "true"),
):
    os.environ.setdefault(_key, _value)


def _real_exceptions():
    if importlib.util.find_spec("sky") is None:
        return None
    from sky import exceptions  # only the exception module's import; it starts nothing

    return exceptions


@functools.cache
def sky_exceptions() -> types.SimpleNamespace:
    """SkyPilot's exception classes (the installed ones, else the mirror), looked up at first use: importing
    sky takes ~2 s, which a test process that runs no fleet test need not pay."""
    real = _real_exceptions()
    return types.SimpleNamespace(**{name: getattr(real or _Mirror, name) for name in EXCEPTION_NAMES})


def __getattr__(name: str):
    """fake_sky.ResourcesUnavailableError and the other exception names, as SkyPilot's module has them."""
    if name in EXCEPTION_NAMES:
        return getattr(sky_exceptions(), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def api_server_down() -> Exception:
    """What the real client raises at any call when no API server answers and none may be started."""
    return sky_exceptions().ApiServerConnectionError("http://127.0.0.1:46580")


def upload_failed() -> Exception:
    """sky/client/common.py upload_mounts_to_api_server, when every retry of the workdir upload fails."""
    return RuntimeError("Failed to upload files to API server.")


def submit_failed() -> Exception:
    return sky_exceptions().CommandError(
        255, "job submit", "Failed to submit job to the cluster.", "ssh: connection reset"
    )


class Task:
    def __init__(self, name=None, run=None, config=None):
        self.name, self.run, self.config = name, run, config or {}

    @staticmethod
    def from_yaml(yaml_path):
        with open(yaml_path) as handle:
            config = yaml.safe_load(handle)
        return Task(name=config.get("name"), run=config.get("run"), config=config)


class FakeSky:
    """The state behind the fake module: clusters, managed jobs, requests, and a scenario.

    scenario: cluster or job name -> {"call_error", "launch_error", "submit_error", "tail_error",
    "status_error": an exception; "exit_code": int; "run_seconds": float (how long the job runs);
    "hang": True (the job never ends); "interrupt": True (Ctrl-C while its log is followed)}."""

    POLL_S = 0.005

    def __init__(self, scenario=None, autostop_seconds_per_minute=60.0):
        self.scenario = scenario or {}
        self.autostop_seconds_per_minute = autostop_seconds_per_minute
        self.calls: list[tuple] = []
        self.events: list[tuple] = []  # ("up", name) / ("down", name, why), in order
        self.clusters: dict[str, dict] = {}  # name -> {"ends": time, "autostop_s": seconds or None}
        self.managed: dict[int, dict] = {}  # job id -> {"name", "ends"} (running)
        self.requests: dict[str, dict] = {}
        self.cancelled: set[str] = set()
        self._ids = itertools.count(1)
        self._job_ids = itertools.count(1)
        self._lock = threading.RLock()

    def _call(self, name, args=(), kwargs=None):
        with self._lock:
            self.calls.append((name, tuple(args), kwargs or {}))

    def _request(self, name, result=None, error=None) -> str:
        with self._lock:
            request_id = f"{next(self._ids):08x}-fake-{name}"
            self.requests[request_id] = {"result": result, "error": error}
        return request_id

    def _job_end(self, name) -> float:
        plan = self.scenario.get(name, {})
        return float("inf") if plan.get("hang") else time.monotonic() + plan.get("run_seconds", 0.0)

    def _remove(self, name, why) -> None:
        with self._lock:
            if self.clusters.pop(name, None) is not None:
                self.events.append(("down", name, why))

    def expire(self) -> None:
        """Autostop with down=True: a cluster whose job ended N (scaled) minutes ago is deleted."""
        now = time.monotonic()
        with self._lock:
            for name, cluster in list(self.clusters.items()):
                if cluster["autostop_s"] is not None and now >= cluster["ends"] + cluster["autostop_s"]:
                    self._remove(name, "autostop")

    def alive(self, name) -> bool:
        self.expire()
        return name in self.clusters

    # -- the module's functions --------------------------------------------------------------------

    def launch(
        self, task, cluster_name=None, retry_until_up=False, idle_minutes_to_autostop=None, down=False
    ):
        self._call(
            "launch",
            (task.name,),
            {
                "cluster_name": cluster_name,
                "down": down,
                "idle_minutes_to_autostop": idle_minutes_to_autostop,
            },
        )
        plan = self.scenario.get(cluster_name, {})
        if plan.get("call_error"):
            raise plan["call_error"]
        if plan.get("launch_error"):
            return self._request("launch", error=plan["launch_error"])
        autostop = None
        if down and idle_minutes_to_autostop is not None:
            autostop = idle_minutes_to_autostop * self.autostop_seconds_per_minute
        with self._lock:
            self.clusters[cluster_name] = {"ends": self._job_end(cluster_name), "autostop_s": autostop}
            self.events.append(("up", cluster_name))
        if plan.get("submit_error"):
            return self._request("launch", error=plan["submit_error"])
        return self._request("launch", result=(1, f"handle:{cluster_name}"))

    def get(self, request_id):
        self._call("get", (request_id,))
        return self._result(request_id)

    def stream_and_get(self, request_id=None, log_path=None, tail=None, follow=True, output_stream=None):
        self._call("stream_and_get", (request_id,))
        print(f"(fake) streaming request {request_id}", file=output_stream or sys.stdout)
        return self._result(request_id)

    def _result(self, request_id):
        with self._lock:
            if request_id not in self.requests:
                raise RuntimeError(f"Failed to get request {request_id}: 404")
            if request_id in self.cancelled:
                raise sky_exceptions().RequestCancelled(
                    f"request ({request_id}) is cancelled by another process."
                )
            entry = self.requests[request_id]
        if entry["error"] is not None:
            raise entry["error"]
        return entry["result"]

    def tail_logs(self, cluster_name, job_id, follow, tail=0, output_stream=None):
        self._call("tail_logs", (cluster_name, job_id), {"follow": follow})
        plan = self.scenario.get(cluster_name, {})
        if plan.get("interrupt"):
            raise KeyboardInterrupt
        if plan.get("tail_error"):
            raise plan["tail_error"]
        while True:
            with self._lock:
                cluster = self.clusters.get(cluster_name)
            if cluster is None:
                raise sky_exceptions().ClusterDoesNotExist(f"Cluster {cluster_name!r} does not exist.")
            if time.monotonic() >= cluster["ends"]:
                return plan.get("exit_code", 0)
            time.sleep(self.POLL_S)

    def status(self, cluster_names=None, refresh=None, all_users=False):
        self._call("status", (list(cluster_names or []),))
        for name in cluster_names or []:
            if self.scenario.get(name, {}).get("status_error"):
                return self._request("status", error=self.scenario[name]["status_error"])
        self.expire()
        with self._lock:
            live = [{"name": n} for n in self.clusters if not cluster_names or n in cluster_names]
        return self._request("status", result=live)

    def down(self, cluster_name, purge=False):
        self._call("down", (cluster_name,))
        self.expire()
        with self._lock:
            if cluster_name not in self.clusters:
                return self._request(
                    "down",
                    error=sky_exceptions().ClusterDoesNotExist(f"Cluster {cluster_name!r} does not exist."),
                )
            self._remove(cluster_name, "down")
        return self._request("down")

    def api_cancel(self, request_ids=None, all_users=False, silent=False):
        self._call("api_cancel", (list(request_ids or []),))
        with self._lock:
            self.cancelled.update(request_ids or [])
        return self._request("api_cancel", result=list(request_ids or []))

    # -- sky.jobs ----------------------------------------------------------------------------------

    def jobs_launch(self, task, name=None):
        self._call("jobs.launch", (task.name,), {"name": name})
        plan = self.scenario.get(name, {})
        if plan.get("call_error"):
            raise plan["call_error"]
        if plan.get("launch_error"):
            return self._request("jobs.launch", error=plan["launch_error"])
        with self._lock:
            job_id = next(self._job_ids)
            self.managed[job_id] = {"name": name, "ends": self._job_end(name)}
        return self._request("jobs.launch", result=([job_id], None))

    def jobs_tail_logs(
        self,
        name=None,
        job_id=None,
        follow=True,
        controller=False,
        refresh=False,
        tail=None,
        output_stream=None,
    ):
        self._call("jobs.tail_logs", (), {"job_id": job_id, "follow": follow})
        while True:
            with self._lock:
                job = self.managed.get(job_id)
            if job is None:
                return 103 if job_id is not None else 102  # JobExitCode.CANCELLED / NOT_FOUND
            plan = self.scenario.get(job["name"], {})
            if plan.get("interrupt"):
                raise KeyboardInterrupt
            if time.monotonic() >= job["ends"]:
                with self._lock:
                    self.managed.pop(job_id, None)
                return plan.get("exit_code", 0)
            time.sleep(self.POLL_S)

    def jobs_cancel(self, name=None, job_ids=None, all=False):  # noqa: A002 - the real parameter name
        self._call("jobs.cancel", (), {"name": name, "job_ids": job_ids})
        with self._lock:
            for job_id in list(job_ids or []) + [j for j, job in self.managed.items() if job["name"] == name]:
                self.managed.pop(job_id, None)
        return self._request("jobs.cancel")

    def module(self) -> types.ModuleType:
        module = types.ModuleType("sky")
        module.__version__ = "0.14.1 (fake)"
        for name in ("launch", "get", "stream_and_get", "tail_logs", "status", "down", "api_cancel"):
            setattr(module, name, getattr(self, name))
        module.Task = Task
        module.jobs = types.SimpleNamespace(
            launch=self.jobs_launch, tail_logs=self.jobs_tail_logs, cancel=self.jobs_cancel
        )
        module.exceptions = sky_exceptions()
        return module

    def names(self) -> list[str]:
        return [call[0] for call in self.calls]


def install(monkeypatch, scenario=None, **options) -> FakeSky:
    """Put a fake `sky` in sys.modules (what `import sky` finds) and return its state."""
    fake = FakeSky(scenario, **options)
    monkeypatch.setitem(sys.modules, "sky", fake.module())
    return fake
