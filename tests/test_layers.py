"""The import layers of docs/architecture.md hold in the code: no import goes up a level or sideways, no
two modules import each other (directly or round a circle), and every place has a level.

The table is read from docs/architecture.md itself, so the picture a reader sees is the rule the test
applies. Imports are read with `ast` (nothing is imported), lazy ones inside functions included, and a
relative import (`from . import hf`, `from ..base import X`) is read as the module it names.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from conftest import ROOT

DOC = Path(ROOT) / "docs" / "architecture.md"
# backends/ and workloads/ install as suite.backends and suite.workloads (pyproject's package-dir).
SOURCE_FOLDERS = {"suite": "suite", "backends": "suite.backends", "workloads": "suite.workloads"}


def layer_table(text: str) -> tuple[dict[str, int], set[str], set[tuple[str, str]]]:
    """From the doc's "## Layers" section: {place: level}, the places whose modules never import each
    other, and the allowed exceptions as (importer module, imported place)."""
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    levels, closed, exceptions = {}, set(), set()
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        names = re.findall(r"`([\w.]+)`", cells[1]) if len(cells) == 3 else []
        if cells[0].isdigit():
            for name in names:
                levels[name] = int(cells[0])
                if cells[2].startswith("never"):
                    closed.add(name)
        elif len(cells) == 3 and cells[0].startswith("`"):
            exceptions.add((cells[0].strip("`"), cells[1].strip("`")))
    return levels, closed, exceptions


def module_files(root: Path, folders: dict[str, str] = SOURCE_FOLDERS) -> dict[str, Path]:
    """{dotted module name: file} for every module of the installed package."""
    found = {}
    for folder, package in folders.items():
        for path in (root / folder).rglob("*.py"):
            parts = list(path.relative_to(root / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([package, *parts])] = path
    return found


def imports_of(source: str, modules: set[str], package: str = "") -> set[str]:
    """The suite modules a source imports, each by its most specific name (`from suite import stats` is
    suite.stats; `from suite.run_record.schema import X` is suite.run_record.schema). PACKAGE is the one
    its relative imports start from: `from . import hf` in suite.workloads.named is suite.workloads.hf."""
    named = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = absolute(node.module, node.level, package)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                named.add(full if full in modules else base)
    return {name for name in named if name in modules}


def absolute(module: str | None, level: int, package: str) -> str:
    """An import's module by its whole name: `from ..base import X` (MODULE base, LEVEL 2) in PACKAGE
    suite.workloads.sub is suite.workloads.base; an absolute import (LEVEL 0) is MODULE itself."""
    if level == 0:
        return module or ""
    parts = package.split(".")[: len(package.split(".")) - (level - 1)]
    return ".".join([*parts, module] if module else parts)


def import_graph(root: Path, folders: dict[str, str] = SOURCE_FOLDERS) -> dict[str, set[str]]:
    files = module_files(root, folders)
    return {
        module: imports_of(path.read_text(encoding="utf-8"), set(files), package_of(module, path)) - {module}
        for module, path in files.items()
    }


def package_of(module: str, path: Path) -> str:
    """The package a module's relative imports start from: a package's __init__ is its own."""
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def place_of(module: str, levels: dict[str, int]) -> str | None:
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in levels:
            return ".".join(parts[:n])
    return None


def wrong_way(graph, levels, closed, exceptions) -> list[str]:
    """Every import that goes up a level, sideways to another place on the same level, or between two
    modules of a place whose modules never import each other."""
    found = []
    for module, imported in sorted(graph.items()):
        here = place_of(module, levels)
        for target in sorted(imported):
            there = place_of(target, levels)
            if target == "suite" or (module, there) in exceptions:
                continue
            if here is None or there is None:
                found.append(
                    f"{module} -> {target}: {'importer' if here is None else 'imported'} has no level"
                )
            elif here == there:
                if here in closed and module != here and target != here:
                    found.append(f"{module} -> {target}: modules of {here} never import each other")
            elif levels[there] >= levels[here]:
                found.append(f"{module} (level {levels[here]}) -> {target} (level {levels[there]})")
    return found


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Groups of modules that import each other, directly or round a circle (Tarjan's strongly connected
    components). A package's __init__ importing its own modules, which import it back, is Python's way to
    expose a package's names, not a circle of ideas: edges from a module to its own package are left out."""
    edges = {m: {t for t in ts if not m.startswith(t + ".")} for m, ts in graph.items()}
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_every_import_goes_down_the_layers_of_the_architecture_doc():
    levels, closed, exceptions = layer_table(DOC.read_text(encoding="utf-8"))
    assert levels and "suite.commands" in closed, "docs/architecture.md lost its layer table"
    problems = wrong_way(import_graph(Path(ROOT)), levels, closed, exceptions)
    assert not problems, "imports against docs/architecture.md's layers:\n" + "\n".join(problems)


def test_no_two_modules_import_each_other():
    found = circles(import_graph(Path(ROOT)))
    assert not found, "import circles: " + "; ".join(" <-> ".join(group) for group in found)


def test_every_place_has_a_level_and_every_exception_is_still_needed():
    levels, _, exceptions = layer_table(DOC.read_text(encoding="utf-8"))
    graph = import_graph(Path(ROOT))
    unplaced = sorted(m for m in graph if m != "suite" and place_of(m, levels) is None)
    assert not unplaced, f"modules in no place of docs/architecture.md's layer table: {unplaced}"
    used = {(m, place_of(t, levels)) for m, ts in graph.items() for t in ts}
    assert exceptions <= used, f"exceptions no import needs any more: {sorted(exceptions - used)}"


def test_the_package_docstring_places_each_package_on_the_doc_s_level():
    """suite/__init__.py's table of places says the levels docs/architecture.md's table says."""
    levels, _, _ = layer_table(DOC.read_text(encoding="utf-8"))
    told = {}
    for line in (
        (Path(ROOT) / "suite" / "__init__.py").read_text(encoding="utf-8").split('"""')[1].splitlines()
    ):
        if match := re.match(r"\s+(\d+)\s+((?:suite\.\w+(?:, )?)+)", line):
            told.update(dict.fromkeys(match.group(2).split(", "), int(match.group(1))))
    assert told == levels


# The checks themselves, on a made-up graph: each finds what it must.


def test_the_checks_find_an_upward_import_a_sideways_one_and_a_circle():
    levels = {"suite.commands": 2, "suite.reporting": 1, "suite.measurement": 1, "suite.stats": 0}
    graph = {
        "suite.stats": {"suite.reporting.rows"},  # up
        "suite.reporting.rows": {"suite.measurement.runner", "suite.stats"},  # sideways, then down
        "suite.measurement.runner": {"suite.stats"},
        "suite.commands.report": {"suite.commands.run", "suite.reporting.rows"},  # a sibling command
        "suite.commands.run": set(),
    }
    found = wrong_way(graph, levels, {"suite.commands"}, set())
    assert found == [
        "suite.commands.report -> suite.commands.run: modules of suite.commands never import each other",
        "suite.reporting.rows (level 1) -> suite.measurement.runner (level 1)",
        "suite.stats (level 0) -> suite.reporting.rows (level 1)",
    ]
    assert wrong_way(graph, levels, {"suite.commands"}, {("suite.stats", "suite.reporting")})[-1].startswith(
        "suite.reporting.rows"
    )
    assert circles(graph) == [["suite.measurement.runner", "suite.reporting.rows", "suite.stats"]]
    assert (
        circles(
            {"suite.run_record": {"suite.run_record.read"}, "suite.run_record.read": {"suite.run_record"}}
        )
        == []
    )


def test_the_table_is_read_from_the_doc_as_written():
    text = "## Layers\n\n| level | places | within |\n| --- | --- | --- |\n| 1 | `a.b`, `a.c` | never: x |\n"
    text += (
        "| 0 | `a.d` | free |\n\n| importer | imports | why |\n| --- | --- | --- |\n| `a.d.e` | `a.b` | y |\n"
    )
    text += "\n## Next\n| 5 | `z` | free |\n"
    assert layer_table(text) == ({"a.b": 1, "a.c": 1, "a.d": 0}, {"a.b", "a.c"}, {("a.d.e", "a.b")})


def test_a_relative_import_is_read_as_the_module_it_names(tmp_path):
    """A circle written with relative imports, in a made-up package on disk: found, as an absolute one is."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "from . import a\n",
        "a.py": "def f():\n    from .b import g\n",  # lazy, inside a function
        "b.py": "from .sub import c\n",
        "sub/__init__.py": "",
        "sub/c.py": "from .. import a\nfrom ..a import f\n",
    }
    for name, text in files.items():
        (package / name).write_text(text, encoding="utf-8")
    graph = import_graph(tmp_path, {"pkg": "pkg"})
    assert graph["pkg.a"] == {"pkg.b"} and graph["pkg.b"] == {"pkg.sub.c"}
    assert graph["pkg.sub.c"] == {"pkg.a"} and graph["pkg"] == {"pkg.a"}
    assert circles(graph) == [["pkg.a", "pkg.b", "pkg.sub.c"]]
    assert absolute("base", 2, "suite.workloads.sub") == "suite.workloads.base"
    assert absolute(None, 1, "suite.workloads") == "suite.workloads"
