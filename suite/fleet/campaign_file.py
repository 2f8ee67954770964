"""Reading a campaign file: YAML nodes with their line numbers, so every message names the key and line.

The format (see suite/fleet/campaign.py and docs/fleet.md):

    name: dcgan-cost              # cluster names start with it (letters, digits, '-')
    workload: dcgan64
    options: {batch-size: 64}     # `suite run` options, spelled as on its command line without dashes
    hours: 0.5                    # how long each instance is held (provisioning + install + run)
    spot: false                   # the default for every instance
    max_cost_usd: 40              # refuse a plan whose estimate is above this
    prices: skypilot-2026         # the price catalog (a shipped name or a YAML file)
    source: {git: https://github.com/you/suite, ref: main}   # or `local` (default): this checkout
    records: {bucket: s3://my-bucket/dcgan-cost}              # needed for spot instances
    instances:
      - g6e.xlarge                # a retired instance (p3.2xlarge) is refused
      - {type: dl1.24xlarge, spot: true, options: {nproc: 8},
         host_image: {us-east-1: ami-...}}      # Gaudi: a host AMI with Habana's driver (docs/fleet.md)

`load` returns plain settings; `campaign.build` prices and checks them.
"""

from __future__ import annotations

from suite.fleet.campaign import check_bucket, check_option
from suite.inputs import numbers
from suite.inputs.errors import UserError

TOP_KEYS = (
    "name", "workload", "options", "hours", "spot", "max_cost_usd", "prices", "source", "records", "host_image",
    "habana_image",
)  # fmt: skip
INSTANCE_KEYS = ("type", "spot", "hours", "cloud", "region", "backend", "options", "host_image")


class _Reader:
    """YAML nodes with their line numbers, so every message can say where the bad value is; read by the
    suite's one strict YAML reader (suite/inputs/yaml_file.py: duplicate keys, aliases, tags and YAML 1.1's
    sexagesimal numbers and yes/no refused or read as text)."""

    def __init__(self, path: str):
        from suite.inputs import yaml_file

        self.path = path
        self.document = yaml_file.read(path, "campaign file")
        self.root = self.document.root

    def where(self, node) -> str:
        return f"{self.path}, line {node.start_mark.line + 1}"

    def value(self, node):
        return self.document.value(node)

    def mapping(self, node, what: str, keys) -> dict:
        """{key: (key node, value node)} of a mapping, refusing keys not in `keys`."""
        import yaml

        if not isinstance(node, yaml.MappingNode):
            raise UserError(f"{what} must be a mapping ({self.where(node)})")
        found = {}
        for key_node, value_node in node.value:
            key = str(key_node.value)
            if key not in keys:
                raise UserError(
                    f"unknown key {key!r} in {what} ({self.where(key_node)}; accepted: {', '.join(keys)})"
                )
            found[key] = (key_node, value_node)
        return found


# The kind of quantity each number of the file is (suite.inputs.numbers): its sane range.
NUMBER_KINDS = {"hours": numbers.HOURS, "max_cost_usd": numbers.DOLLARS}


def _number(reader: _Reader, key: str, node) -> float:
    return numbers.number(f"{key!r} ({reader.where(node)})", reader.value(node), NUMBER_KINDS[key])


def _flag(reader: _Reader, key: str, node) -> bool:
    value = reader.value(node)
    if not isinstance(value, bool):
        raise UserError(f"{key!r} must be true or false, got {value!r} ({reader.where(node)})")
    return value


def _text(reader: _Reader, key: str, node) -> str:
    value = reader.value(node)
    if not isinstance(value, str) or not value.strip():
        raise UserError(f"{key!r} must be a non-empty text, got {value!r} ({reader.where(node)})")
    return value.strip()


def _options(reader: _Reader, key: str, node) -> dict[str, str]:
    import yaml

    if not isinstance(node, yaml.MappingNode):
        raise UserError(f"{key!r} must map `suite run` options to values ({reader.where(node)})")
    options = {}
    for option_node, value_node in node.value:
        name = str(option_node.value).replace("_", "-")
        value = reader.value(value_node)
        if isinstance(value, (dict, list)) or value is None:
            raise UserError(f"option {name!r} needs one value, got {value!r} ({reader.where(value_node)})")
        check_option(name, reader.where(option_node))
        options[name] = str(value).lower() if isinstance(value, bool) else str(value)
    return options


def load(path: str) -> dict:
    """Parse a campaign file into plain settings (see `build`), each checked where it stands."""
    import yaml

    reader = _Reader(path)
    if reader.root is None:
        raise UserError(f"campaign file {path} is empty (it needs 'workload' and 'instances')")
    top = reader.mapping(reader.root, f"campaign file {path}", (*TOP_KEYS, "instances"))
    for required in ("workload", "instances"):
        if required not in top:
            raise UserError(f"campaign file {path} has no {required!r} (line 1 onwards)")
    settings: dict = {"source_file": path}
    for key, (_, node) in top.items():
        if key in ("hours", "max_cost_usd"):
            settings[key] = _number(reader, key, node)
        elif key == "spot":
            settings[key] = _flag(reader, key, node)
        elif key == "options":
            settings[key] = _options(reader, key, node)
        elif key in ("name", "workload", "prices", "habana_image"):
            settings[key] = _text(reader, key, node)
        elif key == "source":
            settings.update(_source(reader, node))
        elif key == "host_image":  # the Gaudi instances' host AMI, unless one names its own
            settings[key] = reader.value(node)
        elif key == "records":
            records = reader.mapping(node, "'records'", ("bucket",))
            if "bucket" in records:
                settings["bucket"] = _bucket(reader, records["bucket"][1])
    instances_node = top["instances"][1]
    if not isinstance(instances_node, yaml.SequenceNode) or not instances_node.value:
        raise UserError(f"'instances' must be a list of instance types ({reader.where(instances_node)})")
    settings["instances"] = [_instance(reader, node) for node in instances_node.value]
    settings["where"] = {
        entry["type"]: reader.where(node) for entry, node in zip(settings["instances"], instances_node.value)
    }
    return settings


def _source(reader: _Reader, node) -> dict:
    value = reader.value(node)
    if value == "local":
        return {}
    fields = reader.mapping(node, "'source' (`local`, or {git: URL, ref: REF})", ("git", "ref"))
    if "git" not in fields:
        raise UserError(f"'source' needs 'git: URL' or the word local ({reader.where(node)})")
    found = {"git": _text(reader, "git", fields["git"][1])}
    if "ref" in fields:
        found["ref"] = _text(reader, "ref", fields["ref"][1])
    return found


def _bucket(reader: _Reader, node) -> str:
    value = _text(reader, "bucket", node)
    check_bucket(value, reader.where(node))
    return value.rstrip("/")


def _instance(reader: _Reader, node) -> dict:
    import yaml

    if isinstance(node, yaml.ScalarNode):
        return {"type": _text(reader, "instances", node)}
    fields = reader.mapping(node, "an entry of 'instances'", INSTANCE_KEYS)
    if "type" not in fields:
        raise UserError(f"an entry of 'instances' has no 'type' ({reader.where(node)})")
    entry = {}
    for key, (_, value_node) in fields.items():
        if key == "spot":
            entry[key] = _flag(reader, key, value_node)
        elif key == "hours":
            entry[key] = _number(reader, key, value_node)
        elif key == "options":
            entry[key] = _options(reader, key, value_node)
        elif key == "host_image":
            # An AMI id, or {REGION: AMI id}: checked with the instance's region in campaign.build.
            entry[key] = reader.value(value_node)
        else:
            entry[key] = _text(reader, key, value_node)
    return entry
