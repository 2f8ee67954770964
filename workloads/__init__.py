"""Workload registry, filled by the `@register_workload` decorator (names are CLI values).

Beyond the registry, `get_workload` takes the named kinds of `named.py`: `torchvision:NAME`, `timm:NAME`,
`hf:CONFIG`, `module.path:factory` and the names installed packages declare in the `suite.workloads`
entry-point group, so every command that takes a workload name takes them all.
"""

from __future__ import annotations

from collections.abc import Callable

from suite.inputs.errors import one_of

from .base import Workload, count_parameters

_REGISTRY: dict[str, Callable[[], Workload]] = {}


def register_workload(factory: Callable[[], Workload]) -> Callable[[], Workload]:
    workload = factory()
    _REGISTRY[workload.name] = factory
    return factory


# Families in the order they are listed; within a family, the order its module registers them.
FAMILIES = ("suite.workloads.dcgan", "suite.workloads.resnet", "suite.workloads.gpt")


def _load() -> None:
    from . import dcgan, gpt, resnet  # noqa: F401


def workload_names() -> list[str]:
    """In a fixed order, whichever module happened to be imported first."""
    _load()

    def family(name: str) -> int:
        module = _REGISTRY[name].__module__
        return FAMILIES.index(module) if module in FAMILIES else len(FAMILIES)

    names = list(_REGISTRY)
    return sorted(names, key=lambda name: (family(name), names.index(name)))


def installed_workload_names() -> dict[str, str]:
    """Workloads installed packages add (entry-point group `suite.workloads`): name -> module:callable."""
    from . import installed

    return {name: path for name, path in installed.entry_points().items() if name not in _REGISTRY}


def get_workload(name: str, num_classes: int | None = None, image_size: int | None = None) -> Workload:
    """A registry name, `torchvision:NAME`, `timm:NAME`, `module.path:factory` or an installed name,
    with --num-classes / --image-size applied (refused where the architecture fixes them)."""
    _load()
    if name in _REGISTRY:
        return _REGISTRY[name]().with_shape(num_classes=num_classes, image_size=image_size)
    from .named import resolve

    workload = resolve(name, num_classes, image_size)
    if workload is None:
        raise one_of("workload", name, workload_names() + sorted(installed_workload_names()))
    return workload


__all__ = [
    "Workload",
    "count_parameters",
    "get_workload",
    "installed_workload_names",
    "register_workload",
    "workload_names",
]
