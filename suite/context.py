"""The context of a run: the machine and software it ran on, for the record."""

from __future__ import annotations

import datetime
import os
import platform
import socket
import subprocess
import sys

import psutil

import suite


def git_commit() -> str | None:
    """The suite checkout's commit, if it is one (None for an installed wheel)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        out = subprocess.run(
            ["git", "-C", here, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = out.stdout.strip()
    return commit if out.returncode == 0 and commit else None


RUN_ID_VARIABLES = ("SUITE_RUN_ID", "SUITE_RUN_ID_OWNER")


def child_env(**extra: str) -> dict:
    """The environment for a child `python -m suite ...`: it imports this same suite, installed or not."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    # A run id is handed only to this process's own children, with this process as its owner; one this
    # process inherited is never passed on (a sweep's points would all overwrite one record).
    inherited = {k: v for k, v in os.environ.items() if k not in RUN_ID_VARIABLES}
    if "SUITE_RUN_ID" in extra:
        extra = {**extra, "SUITE_RUN_ID_OWNER": str(os.getpid())}
    return {
        **inherited,
        **extra,
        "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p),
    }


def utc_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def collect() -> dict:
    import torch
    import torchvision

    from suite.backends.cpu import cpu_model_name

    return {
        "host": socket.gethostname(),
        "cpu_model": cpu_model_name(),
        "cpu_cores_physical": psutil.cpu_count(logical=False),
        "cpu_cores_logical": psutil.cpu_count(logical=True),
        "ram_bytes": psutil.virtual_memory().total,
        "os": f"{platform.system()} {platform.release()}",
        "platform": platform.platform(),
        "python": platform.python_version(),
        "python_executable": sys.executable,
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "suite_version": suite.__version__,
        "git_commit": git_commit(),
        "utc_time": utc_now(),
    }
