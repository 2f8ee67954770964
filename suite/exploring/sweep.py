"""`suite sweep`'s file: the grid and the fixed options whose every combination the grid engine
(`grid.py`) runs, each in a fresh process.

A sweep file (YAML) names options exactly as `suite run` spells them, without the dashes:

    fixed:                      # the same for every point
      backend: cpu
      workload: dcgan64
    grid:                       # every combination of these runs
      batch-size: [16, 32, 64]
      precision: [fp32, bf16]

Points whose configuration is already recorded in the out folder are not run again (resume). A point
that fails is recorded with its error and the sweep goes on.
"""

from __future__ import annotations

from suite.exploring.grid_options import Spec, check_option
from suite.inputs.errors import UserError

# -- reading a sweep -----------------------------------------------------------------------------------


def _where(spec_source: str, node) -> str:
    return f"{spec_source}, line {node.start_mark.line + 1}"


def _scalars(key: str, node, source: str) -> list[str]:
    """A scalar, a list of scalars, or (for repeatable KEY=VALUE options) a mapping -> values as text."""
    import yaml

    if isinstance(node, yaml.ScalarNode):
        return [node.value]
    if isinstance(node, yaml.SequenceNode) and all(isinstance(n, yaml.ScalarNode) for n in node.value):
        if not node.value:
            raise UserError(f"{key!r} has an empty list of values ({_where(source, node)})")
        return [n.value for n in node.value]
    if isinstance(node, yaml.MappingNode) and all(
        isinstance(k, yaml.ScalarNode) and isinstance(v, yaml.ScalarNode) for k, v in node.value
    ):
        return [f"{k.value}={v.value}" for k, v in node.value]
    raise UserError(f"{key!r} must be a value or a list of values ({_where(source, node)})")


def load_spec(path: str, options: dict) -> Spec:
    """Parse a sweep file; anything malformed is a UserError naming the key and its line. Read by the
    suite's one strict YAML reader (suite/inputs/yaml_file.py): each value is kept as written, as text."""
    import yaml

    from suite.inputs import yaml_file

    root = yaml_file.read(path, "sweep file").root
    spec = Spec(source=path)
    if root is None or not isinstance(root, yaml.MappingNode):
        raise UserError(f"sweep file {path} must be a mapping with a 'grid' (and optionally 'fixed') section")
    for key_node, value_node in root.value:
        section = key_node.value
        if section not in ("fixed", "grid"):
            raise UserError(
                f"unknown section {section!r} in {_where(path, key_node)} (accepted: fixed, grid)"
            )
        if not isinstance(value_node, yaml.MappingNode):
            raise UserError(
                f"section {section!r} must map option names to values ({_where(path, value_node)})"
            )
        target = spec.fixed if section == "fixed" else spec.grid
        for option_node, values_node in value_node.value:
            name = str(option_node.value).replace("_", "-")
            check_option(name, options, _where(path, option_node))
            spec.claim(str(option_node.value), name, options, f"{section}, {_where(path, option_node)}")
            target.setdefault(name, []).extend(_scalars(name, values_node, path))
    if not spec.grid:
        raise UserError(f"sweep file {path} has no 'grid' section: nothing to sweep")
    return spec
