"""Small parsers for option values: memory sizes (`2GiB`) and model overrides (`ngf=8`)."""

from __future__ import annotations

import re

from suite.inputs import numbers
from suite.inputs.errors import UserError

# The figure before the unit: `1e400` would be infinity bytes; 10**15 of any unit is more than any disk.
_SIZE_FIGURE = numbers.Kind("a size such as 2GiB, 512MiB or 1.5GB", 0.0, 1e15)

_UNITS = {
    "": 1,
    "b": 1,
    "k": 1000,
    "kb": 1000,
    "m": 1000**2,
    "mb": 1000**2,
    "g": 1000**3,
    "gb": 1000**3,
    "t": 1000**4,
    "tb": 1000**4,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "tib": 1024**4,
}


def parse_byte_size(name: str, text) -> int:
    """`2GiB`, `512MiB`, `1.5GB`, `1000000` -> bytes; anything else is a UserError naming the option."""
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*", str(text))
    unit = match.group(2).lower() if match else None
    if not match or unit not in _UNITS:
        raise UserError(f"{name} must be a size such as 2GiB, 512MiB or 1.5GB, got {text!r}")
    size = int(numbers.number(name, match.group(1), _SIZE_FIGURE) * _UNITS[unit])
    if size < 1:
        raise UserError(f"{name} must be larger than zero, got {text!r}")
    return size


def parse_scalar(text: str, name: str = "--model-override"):
    """`8` -> 8, `0.5` -> 0.5, `true` -> True, anything else stays a string (suite.inputs.numbers.scalar: `1_0`,
    `inf` and `nan` are refused, not read as 10 or as infinity)."""
    return numbers.scalar(name, text)


def parse_override(name: str, text: str) -> tuple[str, object]:
    key, sep, value = str(text).partition("=")
    if not sep or not key.strip() or not value.strip():
        raise UserError(f"{name} takes KEY=VALUE (e.g. ngf=8), got {text!r}")
    return key.strip(), parse_scalar(value, f"{name} {key.strip()}")
