"""A recorded fake of SkyPilot's client SDK (skypilot 0.14.1), for wiring tests of `suite fleet run`.

SkyPilot ships no local cloud, so the SDK calls are checked against this stand-in. It behaves like the
real client where `fleet run` depends on it (sky/client/sdk.py, sky/jobs/client/sdk.py):

- `launch`, `down`, `api_cancel`, `jobs.launch`, `jobs.cancel` return a request id (a str) at once; the
  result comes from `get(id)` / `stream_and_get(id)`, which re-raise the request's own exception
  (e.g. ResourcesUnavailableError), raise RequestCancelled for a cancelled request, and RuntimeError for
  an id the server never issued.
- `launch` -> (job id, handle); `jobs.launch` -> ([job id], handle).
- `tail_logs(cluster, job_id, follow)` and `jobs.tail_logs(job_id=..., follow=...)` block and return the
  job's exit code (0 success, 100 failed), streaming its log.
- `down` of a cluster that does not exist fails with ClusterDoesNotExist (a ValueError, as in SkyPilot).

Each parameter name here is one the real function takes; tests/test_fleet_run.py checks that against
the installed package when it is there. Every call is appended to `calls` as (name, args, kwargs).
"""

from __future__ import annotations

import itertools
import sys
import types

import yaml


class ClusterDoesNotExist(ValueError):
    pass


class ResourcesUnavailableError(Exception):
    pass


class RequestCancelled(Exception):
    pass


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

    scenario: cluster or job name -> {"launch_error": Exception, "exit_code": int,
    "interrupt": True (Ctrl-C while its log is followed)}."""

    def __init__(self, scenario=None):
        self.scenario = scenario or {}
        self.calls: list[tuple] = []
        self.clusters: set[str] = set()
        self.managed: dict[int, str] = {}  # job id -> name (running)
        self.requests: dict[str, dict] = {}
        self.cancelled: set[str] = set()
        self._ids = itertools.count(1)
        self._job_ids = itertools.count(1)

    def _request(self, name, result=None, error=None) -> str:
        request_id = f"{next(self._ids):08x}-fake-{name}"
        self.requests[request_id] = {"result": result, "error": error}
        return request_id

    # -- the module's functions --------------------------------------------------------------------

    def launch(
        self, task, cluster_name=None, retry_until_up=False, idle_minutes_to_autostop=None, down=False
    ):
        self.calls.append(
            (
                "launch",
                (task.name,),
                {
                    "cluster_name": cluster_name,
                    "down": down,
                    "idle_minutes_to_autostop": idle_minutes_to_autostop,
                },
            )
        )
        plan = self.scenario.get(cluster_name, {})
        if plan.get("launch_error"):
            return self._request("launch", error=plan["launch_error"])
        self.clusters.add(cluster_name)
        return self._request("launch", result=(1, f"handle:{cluster_name}"))

    def get(self, request_id):
        self.calls.append(("get", (request_id,), {}))
        return self._result(request_id)

    def stream_and_get(self, request_id=None, log_path=None, tail=None, follow=True, output_stream=None):
        self.calls.append(("stream_and_get", (request_id,), {}))
        print(f"(fake) streaming request {request_id}", file=output_stream or sys.stdout)
        return self._result(request_id)

    def _result(self, request_id):
        if request_id not in self.requests:
            raise RuntimeError(f"Failed to get request {request_id}: 404")
        if request_id in self.cancelled:
            raise RequestCancelled(f"request ({request_id}) is cancelled by another process.")
        entry = self.requests[request_id]
        if entry["error"] is not None:
            raise entry["error"]
        return entry["result"]

    def tail_logs(self, cluster_name, job_id, follow, tail=0, output_stream=None):
        self.calls.append(("tail_logs", (cluster_name, job_id), {"follow": follow}))
        if cluster_name not in self.clusters:
            raise ClusterDoesNotExist(f"Cluster {cluster_name!r} does not exist.")
        return self._follow(cluster_name)

    def _follow(self, name):
        plan = self.scenario.get(name, {})
        if plan.get("interrupt"):
            raise KeyboardInterrupt
        return plan.get("exit_code", 0)

    def down(self, cluster_name, purge=False):
        self.calls.append(("down", (cluster_name,), {}))
        if cluster_name not in self.clusters:
            return self._request(
                "down", error=ClusterDoesNotExist(f"Cluster {cluster_name!r} does not exist.")
            )
        self.clusters.discard(cluster_name)
        return self._request("down")

    def api_cancel(self, request_ids=None, all_users=False, silent=False):
        self.calls.append(("api_cancel", (list(request_ids or []),), {}))
        self.cancelled.update(request_ids or [])
        return self._request("api_cancel", result=list(request_ids or []))

    # -- sky.jobs ----------------------------------------------------------------------------------

    def jobs_launch(self, task, name=None):
        self.calls.append(("jobs.launch", (task.name,), {"name": name}))
        plan = self.scenario.get(name, {})
        if plan.get("launch_error"):
            return self._request("jobs.launch", error=plan["launch_error"])
        job_id = next(self._job_ids)
        self.managed[job_id] = name
        return self._request("jobs.launch", result=([job_id], None))

    def jobs_tail_logs(self, name=None, job_id=None, follow=True, controller=False, refresh=False, tail=None):
        self.calls.append(("jobs.tail_logs", (), {"job_id": job_id, "follow": follow}))
        if job_id not in self.managed:
            return 102  # JobExitCode.NOT_FOUND
        return self._follow(self.managed[job_id])

    def jobs_cancel(self, name=None, job_ids=None, all=False):  # noqa: A002 - the real parameter name
        self.calls.append(("jobs.cancel", (), {"name": name, "job_ids": job_ids}))
        for job_id in list(job_ids or []) + [j for j, n in self.managed.items() if n == name]:
            self.managed.pop(job_id, None)
        return self._request("jobs.cancel")

    def module(self) -> types.ModuleType:
        module = types.ModuleType("sky")
        module.__version__ = "0.14.1 (fake)"
        for name in ("launch", "get", "stream_and_get", "tail_logs", "down", "api_cancel"):
            setattr(module, name, getattr(self, name))
        module.Task = Task
        module.jobs = types.SimpleNamespace(
            launch=self.jobs_launch, tail_logs=self.jobs_tail_logs, cancel=self.jobs_cancel
        )
        module.exceptions = types.SimpleNamespace(
            ClusterDoesNotExist=ClusterDoesNotExist,
            ResourcesUnavailableError=ResourcesUnavailableError,
            RequestCancelled=RequestCancelled,
        )
        return module

    def names(self) -> list[str]:
        return [call[0] for call in self.calls]


def install(monkeypatch, scenario=None) -> FakeSky:
    """Put a fake `sky` in sys.modules (what `import sky` finds) and return its state."""
    fake = FakeSky(scenario)
    monkeypatch.setitem(sys.modules, "sky", fake.module())
    return fake
