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


def _load() -> None:
    from . import dcgan, resnet  # noqa: F401


def workload_names() -> list[str]:
    _load()
    return list(_REGISTRY)


def get_workload(name: str) -> Workload:
    _load()
    if name not in _REGISTRY:
        raise one_of("workload", name, list(_REGISTRY))
    return _REGISTRY[name]()


__all__ = ["Workload", "count_parameters", "get_workload", "register_workload", "workload_names"]
