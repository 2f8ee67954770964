"""The `suite run` options that sweep, scale, batch-size and diagnose pass to their child runs: declared
once (suite/exploring/grid_options.py), each checked by `suite run`'s own parser as it is typed, and
kept as typed for the children."""

from __future__ import annotations

import pytest

from suite.cli import build_parser, main
from suite.launching import child
from suite.measurement import plan as planning


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["scale", "--nproc", "1", "--batch-size", "0"], "--batch-size must be a positive integer, got '0'"),
        (["scale", "--nproc", "1", "--warmup", "-1"], "--warmup must be"),
        (["scale", "--nproc", "1", "--model-override", "ngf"], "--model-override"),
        (["batch-size", "--max-memory", "lots"], "--max-memory must be a size such as 2GiB"),
        (["diagnose", "--data", "photos", "--workers", "many"], "--workers must be"),
        (["diagnose", "--data", "photos", "--batch-size", "0"], "--batch-size must be a positive integer"),
    ],
)
def test_a_passed_option_is_checked_as_suite_run_checks_it_before_any_child(
    argv, needle, tmp_path, capsys, monkeypatch
):
    def no_child(*args, **kwargs):
        raise AssertionError("a child run was started")

    monkeypatch.setattr(child, "spawn", no_child)
    monkeypatch.setattr(planning, "resolve_plan", no_child)
    assert main([*argv, "--backend", "cpu", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_passed_option_is_kept_as_typed():
    args = build_parser().parse_args(["batch-size", "--max-memory", "2GiB", "--precision", "bf16"])
    assert args.max_memory == "2GiB" and args.precision == "bf16"
    args = build_parser().parse_args(["scale", "--nproc", "2", "--warmup", "03"])
    assert args.warmup == "03" and args.backend == "auto" and args.workload == "dcgan64"
