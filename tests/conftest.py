"""Shared test helpers: tiny versions of the real registry entries, so the suite stays fast on 2 cores."""

from __future__ import annotations

import glob
import json
import os

import pytest

# The repository's root: child `suite` processes run from here.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def records(folder) -> dict[str, dict]:
    """Every JSON file in FOLDER by file name, read as a record."""
    found = {}
    for path in glob.glob(os.path.join(str(folder), "*.json")):
        with open(path) as handle:
            found[os.path.basename(path)] = json.load(handle)
    return found


def only_record(folder) -> dict:
    """The one record in FOLDER (a test that expects exactly one)."""
    found = records(folder)
    assert len(found) == 1, sorted(found)
    return next(iter(found.values()))


# Architecture overrides that shrink each family but keep its structure (same layers, same code paths).
TINY = {
    "dcgan64": {"ngf": 8, "ndf": 8},
    "dcgan64-safe": {"ngf": 8, "ndf": 8, "nz": 16},
    "dcgan128-safe": {"ngf": 4, "ndf": 4, "nz": 16},
    "dcgan128": {"ngf": 4, "ndf": 4, "nz": 16},
    "resnet50": {"image_size": 32},
    "resnet50-inat": {"image_size": 32},
    "resnet18-cifar": {"image_size": 32},
}


# `suite sweep` / `batch-size` options that make every point a one-window tiny dcgan64 run on the CPU.
TINY_SWEEP_SET = [
    "--set",
    "backend=cpu",
    "--set",
    "workload=dcgan64",
    "--set",
    "model-override=ngf=4",
    "--set",
    "model-override=ndf=4",
    "--set",
    "warmup=1",
    "--set",
    "steps=1",
    "--set",
    "windows=1",
]


def tiny_config(workload: str = "dcgan64", **fields):
    from suite.config import RunConfig

    values = {
        "backend": "cpu",
        "workload": workload,
        "batch_size": 2,
        "warmup_steps": 1,
        "steps_per_window": 2,
        "windows": 2,
        "model_overrides": dict(TINY[workload]),
    }
    values.update(fields)
    return RunConfig(**values)


@pytest.fixture
def tiny():
    return tiny_config


@pytest.fixture
def fake_gpu(monkeypatch, tmp_path):
    """The CUDA backend's queries answered by fakes (torch.cuda on the CPU, a recording pynvml)."""
    from fakes import pynvml as fake_nvml
    from fakes.torch_cuda import patch_cuda

    monkeypatch.setenv("SUITE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    fake_nvml.install(monkeypatch)
    return patch_cuda(monkeypatch)
