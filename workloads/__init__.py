"""Workload registry, filled by the `@register_workload` decorator (names are CLI values)."""

from __future__ import annotations

from collections.abc import Callable

from suite.errors import one_of

from .base import Workload, count_parameters

_REGISTRY: dict[str, Callable[[], Workload]] = {}


def register_workload(factory: Callable[[], Workload]) -> Callable[[], Workload]:
    workload = factory()
    _REGISTRY[workload.name] = factory
    return factory


# Families in the order they are listed; within a family, the order its module registers them.
FAMILIES = ("suite.workloads.dcgan", "suite.workloads.resnet")


def _load() -> None:
    from . import dcgan, resnet  # noqa: F401


def workload_names() -> list[str]:
    """In a fixed order, whichever module happened to be imported first."""
    _load()

    def family(name: str) -> int:
        module = _REGISTRY[name].__module__
        return FAMILIES.index(module) if module in FAMILIES else len(FAMILIES)

    names = list(_REGISTRY)
    return sorted(names, key=lambda name: (family(name), names.index(name)))


def get_workload(name: str) -> Workload:
    _load()
    if name not in _REGISTRY:
        raise one_of("workload", name, workload_names())
    return _REGISTRY[name]()


__all__ = ["Workload", "count_parameters", "get_workload", "register_workload", "workload_names"]
