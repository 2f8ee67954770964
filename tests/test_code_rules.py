"""Rules that keep the code habitable, counted with `ast` (nothing is imported): no function over 60 lines,
no parameter list over 8, and every package says its one job in its docstring.

They replace a cap on module length: a long module of short functions reads well; one long function does
not, and a long parameter list is a type that has not been named yet.
"""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

SOURCE_FOLDERS = ("suite", "backends", "workloads")
MAX_FUNCTION_LINES = 60
MAX_PARAMETERS = 8


def functions(root: Path):
    """(where, function node) for every function and method in the project's source."""
    for folder in SOURCE_FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield f"{path.relative_to(root)}:{node.lineno} {node.name}", node


def length(node: ast.FunctionDef) -> int:
    """Lines from the `def` line to the last line of the body (decorators not counted)."""
    return node.end_lineno - node.lineno + 1


def parameter_count(node: ast.FunctionDef) -> int:
    """Every parameter a caller can pass, a method's `self` or `cls` left out."""
    args = node.args
    count = len(args.posonlyargs) + len(args.args) + len(args.kwonlyargs)
    count += (args.vararg is not None) + (args.kwarg is not None)
    first = (args.posonlyargs + args.args)[:1]
    return count - (1 if first and first[0].arg in ("self", "cls") else 0)


def test_no_function_is_longer_than_a_screen():
    long = [
        f"{where}: {length(node)} lines"
        for where, node in functions(Path(ROOT))
        if length(node) > MAX_FUNCTION_LINES
    ]
    assert not long, f"split into named steps (at most {MAX_FUNCTION_LINES} lines each): {long}"


def test_no_parameter_list_is_longer_than_eight():
    wide = [
        f"{where}: {parameter_count(node)} parameters"
        for where, node in functions(Path(ROOT))
        if parameter_count(node) > MAX_PARAMETERS
    ]
    assert not wide, f"name the type these values describe (at most {MAX_PARAMETERS} parameters): {wide}"


def test_every_package_says_its_one_job():
    silent = [
        str(init.relative_to(ROOT))
        for folder in SOURCE_FOLDERS
        for init in sorted((Path(ROOT) / folder).rglob("__init__.py"))
        if not (ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or "").strip()
    ]
    assert not silent, f"a package's docstring names its one job: {silent}"


def _counted(source: str) -> tuple[int, int]:
    node = ast.parse(source).body[0]
    return length(node), parameter_count(node)


def test_the_counts_are_what_a_reader_would_count():
    assert _counted("def f(a, b=1, *c, d, e=2, **f):\n    pass\n") == (2, 6)
    assert _counted("def m(self, a, /, b):\n    x = 1\n    return x\n") == (3, 2)
    assert _counted("def g():\n" + "    x = 1\n" * 60) == (61, 0)
    assert _counted("async def h(cls):\n    pass\n") == (2, 0)
