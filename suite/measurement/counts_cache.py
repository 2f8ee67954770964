"""The suite's cache of counts that depend only on a workload's definition and the torch release: FLOPs per
image (flops.py) and parameter counts (`suite list`). One JSON file per kind in the cache folder
($SUITE_CACHE_DIR, else $XDG_CACHE_HOME/suite or ~/.cache/suite), keyed by the workload's full definition
and torch's installed version, read from its package metadata so that a cached listing imports no torch.
"""

from __future__ import annotations

import json
import os

from suite import atomic


def cache_folder() -> str:
    return os.environ.get("SUITE_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "suite"
    )


def cache_path(kind: str) -> str:
    return os.path.join(cache_folder(), f"{kind}.json")


def torch_version() -> str:
    """The installed torch's version, without importing it where its package metadata says it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("torch")
    except PackageNotFoundError:  # a torch built from source and put on the path by hand
        import torch

        return torch.__version__


def key(workload) -> str:
    return f"{workload!r} torch={torch_version()}"


def read(kind: str) -> dict:
    from suite.inputs.files import read_text

    try:
        data = json.loads(read_text(cache_path(kind)))  # regular and bounded: a planted FIFO never blocks
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError, RecursionError):  # ValueError: not a file, not UTF-8, not JSON
        return {}


def write(kind: str, key_: str, value) -> None:
    path = cache_path(kind)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        data = read(kind)
        data[key_] = value
        atomic.write_atomic(path, json.dumps(data, indent=1))
    except OSError:
        pass  # a read-only home only costs a recount next time
