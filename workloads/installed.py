"""Workloads that installed packages add: the `suite.workloads` entry-point group, read from their metadata
with nothing imported (neither the package nor torch)."""

from __future__ import annotations

ENTRY_POINT_GROUP = "suite.workloads"


def entry_points() -> dict[str, str]:
    """Installed packages' workloads: name -> `module:callable`."""
    from importlib.metadata import entry_points as installed

    return {ep.name: ep.value for ep in installed(group=ENTRY_POINT_GROUP)}
