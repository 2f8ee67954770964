"""Backend registry: name -> Backend class, and what the backends declare about themselves
(backends/declared.py: their options, their place in `auto` selection, their summary gauges). The rest
of the suite reads these and never names a device. Importing this package imports no torch: the Backend
classes are loaded when first asked for."""

from __future__ import annotations

import importlib

from suite.inputs.errors import UserError, one_of

from . import presence
from .declared import (
    DECLARED,
    Option,
    auto_order,
    declaration,
    device_options,
    gauges,
    owners,
    setting_fields,
)

_REGISTRY: dict = {}


def __getattr__(name: str):
    # Backend and Schedule import torch: only when asked for (see the docstring).
    if name in ("Backend", "Schedule"):
        from . import base

        return getattr(base, name)
    raise AttributeError(name)


def register_backend(cls):
    _REGISTRY[cls.name] = cls
    return cls


def _load(name: str) -> None:
    # Importing a backend's module registers it; it imports vendor SDKs only when used. Only the module of
    # the backend asked for: the cuda and hpu modules import torch, which a plan on a CPU-only machine
    # (a sweep's dry run, the line `suite run` prints before it starts) never needs.
    for entry in DECLARED:
        if entry.name == name:
            importlib.import_module(f"{__name__}.{entry.module}")


def backend_names() -> list[str]:
    """Sorted, as declared (backends/declared.py): nothing is imported."""
    return sorted(entry.name for entry in DECLARED)


def backend_class(name: str):
    _load(name)
    if name not in _REGISTRY:
        raise one_of("backend", name, ["auto", *backend_names()])
    return _REGISTRY[name]


def is_available(name: str) -> tuple[bool, str]:
    """(available, why): from files where they settle it (presence.py: no torch imported), else the backend's
    own check."""
    return presence.settled(name) or backend_class(name).is_available()


def availability() -> dict[str, tuple[bool, str]]:
    return {name: is_available(name) for name in backend_names()}


def resolve_backend_name(name: str) -> tuple[str, str]:
    """Return (backend name, why). `auto` picks the first available in `auto_order()`."""
    if name != "auto":
        backend_class(name)  # an unknown name is refused with the names there are
        ok, reason = is_available(name)
        if not ok:
            raise UserError(f"backend {name!r} is not available: {reason}")
        return name, "asked for"
    skipped = []
    order = auto_order()
    for candidate in order:
        ok, reason = is_available(candidate)
        if ok:
            why = "first available of " + ", ".join(order)
            if skipped:
                why += " (" + "; ".join(skipped) + ")"
            return candidate, why
        skipped.append(f"{candidate}: {reason}")
    raise UserError("no backend is available: " + "; ".join(skipped))


def check_options(name: str, spec) -> None:
    """Refuse an option the chosen backend would ignore (e.g. --tf32 on the cpu backend)."""
    from suite.spec import RunSpec

    given, defaults = spec.flat(), RunSpec().flat()
    entry = declaration(name)
    own = {option.field for option in entry.options} if entry else set()
    for field, option in device_options().items():
        if given[field] != defaults[field] and field not in own:
            raise UserError(
                f"{option.flag} does not apply to the {name} backend "
                f"(it is an option of: {', '.join(owners(field))})"
            )


__all__ = [
    "Backend",
    "Option",
    "Schedule",
    "auto_order",
    "availability",
    "backend_class",
    "backend_names",
    "check_options",
    "device_options",
    "gauges",
    "is_available",
    "register_backend",
    "resolve_backend_name",
    "setting_fields",
]
