"""Backend registry: name -> Backend class, and `auto` selection (hpu, then cuda, then cpu)."""

from __future__ import annotations

from suite.errors import UserError, one_of

from .base import DEVICE_OPTIONS, Backend, Schedule

_REGISTRY: dict[str, type[Backend]] = {}

# The order `auto` tries them in: the most specialised device first.
AUTO_ORDER = ("hpu", "cuda", "cpu")


def register_backend(cls: type[Backend]) -> type[Backend]:
    _REGISTRY[cls.name] = cls
    return cls


def _load() -> None:
    # Importing the modules registers them; they import vendor SDKs only when used.
    from . import cpu, cuda, hpu  # noqa: F401


def backend_names() -> list[str]:
    """Sorted: registration order depends on which module happened to be imported first."""
    _load()
    return sorted(_REGISTRY)


def backend_class(name: str) -> type[Backend]:
    _load()
    if name not in _REGISTRY:
        raise one_of("backend", name, ["auto", *backend_names()])
    return _REGISTRY[name]


def availability() -> dict[str, tuple[bool, str]]:
    _load()
    return {name: _REGISTRY[name].is_available() for name in backend_names()}


def resolve_backend_name(name: str) -> tuple[str, str]:
    """Return (backend name, why). `auto` picks the first available of AUTO_ORDER."""
    if name != "auto":
        cls = backend_class(name)
        ok, reason = cls.is_available()
        if not ok:
            raise UserError(f"backend {name!r} is not available: {reason}")
        return name, "asked for"
    skipped = []
    for candidate in AUTO_ORDER:
        ok, reason = backend_class(candidate).is_available()
        if ok:
            why = "first available of " + ", ".join(AUTO_ORDER)
            if skipped:
                why += " (" + "; ".join(skipped) + ")"
            return candidate, why
        skipped.append(f"{candidate}: {reason}")
    raise UserError("no backend is available: " + "; ".join(skipped))


def check_options(name: str, config) -> None:
    """Refuse an option the chosen backend would ignore (e.g. --tf32 on the cpu backend)."""
    import dataclasses

    defaults = {f.name: f.default for f in dataclasses.fields(config)}
    cls = backend_class(name)
    for field, flag in DEVICE_OPTIONS.items():
        if getattr(config, field) != defaults[field] and field not in cls.options:
            owners = [other for other in backend_names() if field in backend_class(other).options]
            raise UserError(
                f"{flag} does not apply to the {name} backend (it is an option of: {', '.join(owners)})"
            )


__all__ = [
    "AUTO_ORDER",
    "Backend",
    "Schedule",
    "availability",
    "backend_class",
    "backend_names",
    "check_options",
    "register_backend",
    "resolve_backend_name",
]
