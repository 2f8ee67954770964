"""The one reader of the YAML files the suite reads: sweep files, campaign files, price catalogs and
published figures. Strict where PyYAML's `safe_load` is lenient:

- one document, read by the bounded file reader (suite.inputs.files), at most MAX_BYTES;
- nesting at most MAX_DEPTH deep, and no aliases (`*name`): a recursive alias, or a few lines that expand
  into billions of nodes, cannot reach a constructor (checked on the parser's events, before any node is
  built, so no recursion runs past the bound);
- no tags (`!!python/object`, `!!binary`, `!custom`): the safe constructor would refuse some with a
  traceback, and none means anything here;
- a key given twice in one mapping is refused, naming both lines; so are two spellings of one key that
  differ only in `-` and `_` (`batch-size` and `batch_size`), which the suite reads as one;
- YAML 1.2's plain scalars, not YAML 1.1's surprises: `1:30` (sexagesimal, 90), `0x1F`, `1_000`, `.inf`,
  `.nan`, and `yes`/`no`/`on`/`off` are text, never a number or a bool. A field that wants a number reads
  the text through suite.inputs.numbers, which says why it is refused; a field that wants a switch takes only
  true or false. Dates (`2026-01-15`) stay dates, as the price catalogs write them.

Every problem is a UserError naming the file and the line.

The YAML 1.2 core schema's resolution rules: https://yaml.org/spec/1.2.2/#1032-tag-resolution
"""

from __future__ import annotations

import re

import yaml

from suite.inputs.errors import UserError

MAX_BYTES = 4 * 1024**2  # the shipped files are 10 KB; a larger one is not a file written by hand
MAX_DEPTH = 32  # the deepest file the suite reads nests 5 levels
MAX_SCALAR = 10_000  # characters in one value or key

# libyaml's parser where PyYAML was built with it (its wheels are): ten times faster than the pure-Python
# one on these files. Only its parser is used; nodes are built here, from its events.
_Parser = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Resolver(yaml.resolver.BaseResolver):
    """Plain scalars as YAML 1.2's core schema reads them (no `_` in numbers, no sexagesimal, no yes/no),
    with YAML 1.1's dates kept. A number longer than 40 characters stays text (suite.inputs.numbers refuses it)."""


_Resolver.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_Resolver.add_implicit_resolver(
    "tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""]
)
_Resolver.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^[-+]?[0-9]{1,30}$"), list("-+0123456789")
)
_Resolver.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^(?=.{1,40}$)[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$"),
    list("-+0123456789."),
)
_Resolver.add_implicit_resolver(
    "tag:yaml.org,2002:timestamp",
    re.compile(
        r"""^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?
        |[0-9][0-9][0-9][0-9] -[0-9][0-9]? -[0-9][0-9]?
        (?:[Tt]|[ \t]+)[0-9][0-9]?
        :[0-9][0-9] :[0-9][0-9] (?:\.[0-9]*)?
        (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$""",
        re.X,
    ),
    list("0123456789"),
)


class _Constructor(yaml.constructor.SafeConstructor):
    """The safe constructor; floats through float() on text the resolver has already held to plain
    decimal (SafeConstructor's own float reader strips `_` and reads `:` as base 60)."""

    def construct_yaml_float(self, node):
        return float(self.construct_scalar(node))


_Constructor.add_constructor("tag:yaml.org,2002:float", _Constructor.construct_yaml_float)


class Document:
    """A read YAML file: its root node (None if empty), with each node's line, and its values."""

    def __init__(self, path: str, name: str, root):
        self.path, self.name, self.root = path, name, root

    def where(self, node) -> str:
        return f"{self.path}, line {node.start_mark.line + 1}"

    def value(self, node):
        """The Python value of NODE (the whole document for the root)."""
        if node is None:
            return None
        try:
            return _Constructor().construct_document(node)
        except yaml.YAMLError as error:
            raise UserError(f"{self.name} is not valid YAML: {_one_line(error)}") from None
        except (ValueError, TypeError, OverflowError) as error:  # a date such as 2026-13-45
            raise UserError(f"{self.name}, line {node.start_mark.line + 1}: {error}") from None


def _one_line(error) -> str:
    return " ".join(str(error).split())


def key_spelling(key: str) -> str:
    """The one spelling of a key: `batch_size` and `batch-size` are one key."""
    return key.replace("_", "-")


def read(path: str, what: str, name: str | None = None) -> Document:
    """Read and check a YAML file; errors name it as `WHAT PATH` ("campaign file c.yaml"), or as NAME."""
    from suite.inputs.files import NotAFile, read_text

    name = name or f"{what} {path}"
    try:
        text = read_text(path)
    except NotAFile as error:
        raise UserError(f"cannot read {name}: {error}") from None
    except UnicodeDecodeError as error:
        raise UserError(f"{name} is not UTF-8 text (byte {error.start}): save it as UTF-8") from None
    return parse(text, path, name)


def parse(text: str, path: str, name: str) -> Document:
    """Check TEXT (the contents of PATH) and build its nodes."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise UserError(f"{name} is larger than {MAX_BYTES // 1024**2} MiB: not a file written by hand")
    try:
        root = _compose(_Parser(text), name)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = f", line {mark.line + 1}" if mark else ""
        raise UserError(f"{name}{line} is not valid YAML: {error.problem or _one_line(error)}") from None
    except yaml.YAMLError as error:
        raise UserError(f"{name} cannot be read as YAML text: {_one_line(error)}") from None
    return Document(path, name, root)


def _compose(parser, name: str):
    """Nodes from the parser's events, without recursion: refuse aliases, tags, depth past MAX_DEPTH,
    long scalars, more than one document and duplicate keys as they come."""
    resolver = _Resolver()

    def refuse(event, problem: str):
        raise UserError(f"{name}, line {event.start_mark.line + 1}: {problem}")

    parser.get_event()  # StreamStart
    if parser.check_event(yaml.StreamEndEvent):
        return None
    parser.get_event()  # DocumentStart
    stack: list = []  # (node, children) of the open collections
    root = None
    while not parser.check_event(yaml.DocumentEndEvent):
        event = parser.get_event()
        if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            node, children = stack.pop()
            node.value = _pairs(children, name) if isinstance(node, yaml.MappingNode) else children
            node.end_mark = event.end_mark
            if not stack:
                root = node
            continue
        if isinstance(event, yaml.AliasEvent):
            refuse(event, f"aliases (*{event.anchor}) are not accepted: write the value out")
        tag = getattr(event, "tag", None)
        if tag is not None and tag != "!":  # `!` alone is a quoted scalar's non-specific tag
            refuse(event, f"tags ({tag}) are not accepted: write a plain value")
        if isinstance(event, yaml.ScalarEvent):
            if len(event.value) > MAX_SCALAR:
                refuse(event, f"a value of {len(event.value):,} characters (at most {MAX_SCALAR:,})")
            node = yaml.ScalarNode(
                resolver.resolve(yaml.ScalarNode, event.value, event.implicit),
                event.value,
                event.start_mark,
                event.end_mark,
                style=event.style,
            )
            if not stack:
                root = node
            else:
                stack[-1][1].append(node)
            continue
        if len(stack) >= MAX_DEPTH:
            refuse(event, f"nested more than {MAX_DEPTH} deep")
        kind = yaml.MappingNode if isinstance(event, yaml.MappingStartEvent) else yaml.SequenceNode
        tag = resolver.resolve(kind, None, event.implicit)
        node = kind(tag, [], event.start_mark, None, flow_style=event.flow_style)
        if stack:
            stack[-1][1].append(node)
        stack.append((node, []))
    parser.get_event()  # DocumentEnd
    if not parser.check_event(yaml.StreamEndEvent):
        event = parser.get_event()
        refuse(event, "a second document (after ---): give one")
    return root


def _pairs(children: list, name: str) -> list:
    """A mapping's [key, value, key, value, ...] as pairs; a key given twice (in either spelling of `-`
    and `_`) is refused. (`<<` is a plain key here: YAML 1.1's merge keys are not read.)"""
    pairs = list(zip(children[0::2], children[1::2]))
    seen: dict = {}
    for key_node, _ in pairs:
        line = key_node.start_mark.line + 1
        if not isinstance(key_node, yaml.ScalarNode):
            raise UserError(f"{name}, line {line}: a key must be a plain value, not a list or mapping")
        spelling = (key_node.tag, key_spelling(key_node.value))
        if spelling in seen:
            first_node = seen[spelling]
            first = first_node.start_mark.line + 1
            where = f"lines {first} and {line}" if first != line else f"line {line}"
            if first_node.value == key_node.value:
                problem = f"key {key_node.value!r} appears twice ({where})"
            else:
                problem = (
                    f"keys {first_node.value!r} and {key_node.value!r} are one key, given twice ({where})"
                )
            raise UserError(f"{name}: {problem}: give it once")
        seen[spelling] = key_node
    return pairs
