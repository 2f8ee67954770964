"""A RunSpec as JSON, part by part (`suite run --spec FILE`, and what a parent hands a child run): written
with `to_json`, read strictly with `from_json`, where every key must be a field and every value of its
field's type, so that a typo is an error naming it rather than a default silently measured."""

from __future__ import annotations

import dataclasses
import json

from suite.inputs.errors import UserError, shown
from suite.spec.run_spec import RunSpec

# A field's annotation (as written in suite/spec/*.py) -> the JSON types it accepts.
_ACCEPTED = {
    "str": (str,),
    "int": (int,),
    "bool": (bool,),
    "float": (int, float),
    "dict": (dict,),
}


def to_json(spec: RunSpec) -> str:
    return json.dumps(dataclasses.asdict(spec), sort_keys=False)


def from_json(text: str, source: str = "--spec") -> RunSpec:
    """The RunSpec TEXT holds; SOURCE names it in an error (one line: where, and what is wrong)."""
    try:
        data = json.loads(text, object_pairs_hook=_once_each)
    except _GivenTwice as twice:
        raise UserError(f"{source}: {twice} is given twice in one object (accepted: each key once)") from None
    except RecursionError:
        raise UserError(f"{source}: not JSON (nested too deeply)") from None
    except ValueError as error:  # not JSON, or an integer of more digits than Python reads
        raise UserError(f"{source}: not JSON ({str(error).split(';')[0]})") from None
    return _read(RunSpec, data, source, "")


class _GivenTwice(Exception):
    """A key given twice in one JSON object: a parser keeps the last silently."""


def _once_each(pairs: list) -> dict:
    seen = set()
    for key, _ in pairs:
        if key in seen:
            raise _GivenTwice(shown(key))
        seen.add(key)
    return dict(pairs)


def _read(cls, data, source: str, where: str):
    if not isinstance(data, dict):
        raise UserError(f"{source}: {where or 'the spec'} must be a JSON object, got {shown(data)}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        place = where or "the spec"
        raise UserError(
            f"{source}: unknown field {shown(unknown[0])} in {place} (known: {', '.join(fields)})"
        )
    values = {}
    for name, value in data.items():
        path = f"{where}.{name}" if where else name
        kind = fields[name].type
        if dataclasses.is_dataclass(_PARTS.get(kind)):
            values[name] = _read(_PARTS[kind], value, source, path)
        else:
            values[name] = _checked(kind, value, source, path)
    return cls(**values)


def _checked(kind: str, value, source: str, path: str):
    """VALUE if it is of the annotated KIND ("int | None", "bool", ...)."""
    names = [name.strip() for name in kind.split("|")]
    if value is None and "None" in names:
        return value
    accepted = tuple(t for name in names for t in _ACCEPTED.get(name, ()))
    if isinstance(value, bool) and bool not in accepted:  # JSON's true is not a count
        accepted = ()
    if not isinstance(value, accepted):
        raise UserError(f"{source}: {path} must be {' or '.join(names)}, got {shown(value)}")
    return value


def _parts() -> dict:
    return {
        f.type: f.default_factory
        for f in dataclasses.fields(RunSpec)
        if dataclasses.is_dataclass(f.default_factory)
    }


_PARTS = _parts()
