"""Checks of a run's inputs that belong to planning: every one of them used to surface only once the run had
started, as a failed run with an error record. Here they are bad input: one line, exit 2, no record."""

from __future__ import annotations

import os
import warnings

from suite.inputs import numbers
from suite.inputs.errors import UserError


def check_threads(threads) -> None:
    """More host threads than 4 per logical core cannot run (the CPU backend refuses it at set-up)."""
    import psutil

    cores = psutil.cpu_count(logical=True) or 1
    if threads is not None and threads > cores * 4:
        raise UserError(
            f"--threads {threads} is far more than this machine's {cores} logical cores "
            f"(accepted: 1 to {cores * 4})"
        )


def check_profile_dir(path) -> None:
    """The trace folder must be a folder, or creatable: not a file, not under a file."""
    if not path:
        return
    if os.path.exists(path) and not os.path.isdir(path):
        raise UserError(f"--profile {path!r} is a file; give a folder for the traces")
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise UserError(f"--profile {path!r} cannot be created: {parent!r} is a file")


def check_timeout(option: str, seconds) -> None:
    """A timeout is a positive, finite number of seconds, at most a week (suite.inputs.numbers.SECONDS)."""
    if seconds is None:
        return
    numbers.number(option, seconds, numbers.SECONDS)


def check_model_builds(workload) -> None:
    """Build the (overridden) model on the meta device: shapes only, no memory, no time. Overrides that
    make a negative, fractional or empty layer are refused here instead of failing the run."""
    try:
        with warnings.catch_warnings():
            # torch warns as it builds a zero-sized layer; the refusal below says it in the one line
            warnings.filterwarnings("ignore", message="Initializing zero-element tensors is a no-op")
            modules = workload.build_modules("meta")
    except Exception as error:  # noqa: BLE001 - whatever the constructor raised, it is the overrides' fault
        raise UserError(
            f"--model-override: {workload.name} cannot be built with these overrides "
            f"({type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''})"
        ) from None
    for part, module in modules.items():
        empty = [name for name, p in module.named_parameters() if p.numel() == 0]
        if empty:
            raise UserError(
                f"--model-override: {workload.name}'s {part} would have empty layers ({empty[0]}); "
                "sizes must be positive"
            )


def check_plan(spec, workload) -> None:
    """Everything above, for one planned run."""
    check_threads(spec.threads)
    check_profile_dir(spec.checks.profile_dir)
    check_timeout("--dist-timeout", spec.launch.dist_timeout_s)
    if spec.workload.model_overrides:
        check_model_builds(workload)
