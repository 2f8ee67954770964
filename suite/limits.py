"""Bounded resources: estimate what a command will take before it takes it, and refuse past a bound.

Each check states its estimate and its bound; one override, the environment variable SUITE_ALLOW_LARGE=1,
lets a person who knows better go ahead (a disk that will grow, a machine with more than it reports).
"""

from __future__ import annotations

import os
import shutil

from suite.errors import UserError

OVERRIDE_ENV = "SUITE_ALLOW_LARGE"


def human(count: float) -> str:
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(value) < 1024 or unit == "PiB":
            return f"{value:,.0f} {unit}" if unit == "B" else f"{value:,.1f} {unit}"
        value /= 1024
    return f"{value:,.1f} PiB"


def overridden() -> bool:
    return os.environ.get(OVERRIDE_ENV) == "1"


def refuse_above(what: str, estimate: float, bound: float, why: str, show=human) -> None:
    """UserError when `estimate` exceeds `bound`, naming both and the override."""
    if estimate > bound and not overridden():
        raise UserError(
            f"{what} would take about {show(estimate)}, more than {show(bound)} ({why}); "
            f"set {OVERRIDE_ENV}=1 to go ahead anyway"
        )


def free_disk_bytes(path: str) -> int | None:
    """Free bytes on the file system that holds `path` (or its nearest existing parent)."""
    folder = os.path.abspath(path)
    while not os.path.exists(folder) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def available_memory_bytes() -> int:
    import psutil

    return int(psutil.virtual_memory().available)


def cores() -> int:
    return os.cpu_count() or 1
