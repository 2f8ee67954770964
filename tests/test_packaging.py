"""What `pip install .` installs: every package of the source tree is listed in pyproject.toml, or a wheel
leaves it out and the installed suite fails on its first import of it (an editable install hides this)."""

from __future__ import annotations

import os
import re

from conftest import ROOT


def _listed() -> set[str]:
    # read without tomllib, which Python 3.9 (the floor) lacks: the list is `packages = [ "a", "b", ... ]`
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as handle:
        [block] = re.findall(r"^packages = \[(.*?)\]", handle.read(), re.S | re.M)
    return set(re.findall(r'"([\w.]+)"', block))


def _in_the_tree() -> set[str]:
    found = set()
    for top, name in (("suite", "suite"), ("backends", "suite.backends"), ("workloads", "suite.workloads")):
        for folder, _, files in os.walk(os.path.join(ROOT, top)):
            if "__init__.py" in files:
                relative = os.path.relpath(folder, os.path.join(ROOT, top))
                found.add(name if relative == "." else f"{name}.{relative.replace(os.sep, '.')}")
    return found


def test_every_package_in_the_tree_is_installed_by_a_wheel():
    assert _in_the_tree() - _listed() == set()


def test_every_listed_package_exists():
    assert _listed() - _in_the_tree() == set()
