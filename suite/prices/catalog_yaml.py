"""A price catalog as YAML text: exactly what `yaml.safe_dump(catalog, sort_keys=False, allow_unicode=True,
width=120)` writes, in a time that no longer grows with every scalar of every instance.

PyYAML's emitter is pure Python and weighs each scalar (its style, its tag, where a line may break): about
0.7 ms of CPU for one instance's eleven fields, so `suite prices import` of a list of 200,000 rows spent
minutes writing the catalog. An instance's lines depend only on what they hold, never on the lines
around them, so each (field, value) line is emitted by PyYAML once, in the same place of a small document
(same indent, same width), and reused; a price, a number no two instances share, is written as PyYAML
writes a float (`repr`, lower case, `.0` before an exponent); an instance name PyYAML writes plain (letters,
digits and `._+-`, read back as text) is written so directly. Anything else goes through PyYAML itself.
tests/test_reliability_price_import_speed.py holds the text equal to safe_dump's.
"""

from __future__ import annotations

import functools
import math
import re

import yaml

OPTIONS = {"sort_keys": False, "allow_unicode": True, "width": 120}
# A name PyYAML writes as a plain simple key, if its resolver reads it back as text (not 1_0, 2026-01-01).
_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,100}")
_RESOLVER = yaml.resolver.Resolver()
_STR = "tag:yaml.org,2002:str"
# The small document one instance's field is emitted in: the field sits where it sits in a catalog.
_FIELD_AT = "i:\n  n:\n"


def dump(data) -> str:
    return yaml.safe_dump(data, **OPTIONS)


def text(catalog: dict) -> str:
    """CATALOG (a mapping whose last key is `instances`, each a mapping of fields) as YAML."""
    instances = catalog.get("instances")
    if list(catalog)[-1:] != ["instances"] or not _instance_by_instance(instances):
        return dump(catalog)
    head = {key: value for key, value in catalog.items() if key != "instances"}
    parts = [dump(head)] if head else []
    parts.append("instances:\n")
    for name, entry in instances.items():
        key = _key(name)
        if key is None:  # a complex key (`? NAME`, then `: ` before its first field): PyYAML writes it all
            parts.append(dump({"instances": {name: entry}})[len("instances:\n") :])
            continue
        parts.append(key)
        parts.extend(_field(field, value) for field, value in entry.items())
    return "".join(parts)


def _instance_by_instance(instances) -> bool:
    """Whether INSTANCES is what `text` writes itself: a non-empty mapping of non-empty mappings with text
    keys (an empty one is written `{}` on its key's line)."""
    return (
        isinstance(instances, dict)
        and bool(instances)
        and all(isinstance(entry, dict) and entry for entry in instances.values())
        and all(isinstance(field, str) for entry in instances.values() for field in entry)
    )


def _key(name) -> str | None:
    """An instance's key line, `  NAME:` as PyYAML writes it (quoted if it must be); None for a name it
    writes as a complex key (empty, over 128 characters, or over more than one line)."""
    if isinstance(name, str) and _PLAIN_NAME.fullmatch(name):
        if _RESOLVER.resolve(yaml.ScalarNode, name, (True, False)) == _STR:
            return f"  {name}:\n"
    emitted = dump({"instances": {name: {"x": 0}}})[len("instances:\n") :]
    return None if emitted.startswith("  ?") else emitted[: -len("    x: 0\n")]


def _field(field: str, value) -> str:
    if type(value) is int or (type(value) is float and math.isfinite(value)):  # not a bool
        return _prefix(field) + _number(value) + "\n"
    if value is None or isinstance(value, (str, bool, int, float)):
        return _line(field, value)
    return dump({"i": {"n": {field: value}}})[len(_FIELD_AT) :]


@functools.lru_cache(maxsize=4096, typed=True)  # typed: True, 1 and 1.0 are three lines
def _line(field: str, value) -> str:
    """The lines PyYAML writes for FIELD: VALUE inside an instance (a long text may take several)."""
    return dump({"i": {"n": {field: value}}})[len(_FIELD_AT) :]


@functools.lru_cache(maxsize=256)
def _prefix(field: str) -> str:
    """`    FIELD: ` as PyYAML writes the key before a number."""
    return _line(field, 0)[: -len("0\n")]


def _number(value: int | float) -> str:
    """A finite int or float as PyYAML's SafeRepresenter writes it (represent_int, represent_float)."""
    if isinstance(value, int):
        return str(value)
    written = repr(value).lower()
    return written.replace("e", ".0e", 1) if "." not in written and "e" in written else written
