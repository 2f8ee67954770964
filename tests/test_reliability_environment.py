"""The environment left in a shell: every variable the suite reads is checked, owned (handed down by a suite
parent that proves it is an ancestor) or ignored with a warning, before anything reads it; and every one is
listed in docs/failure-modes.md, which a test holds the source to.

RANK/WORLD_SIZE from an old job ended a run with exit 1, nothing printed and no record;
SUITE_CPU_CORES=0,0,0,0,0,0,0,0 recorded 8 threads on 2 cores; a junk value recorded a failed run saying
"invalid literal for int()".
"""

from __future__ import annotations

import ast
import os
import pathlib
import re

import pytest
from conftest import TINY_RUN, only_record

from suite import context, limits
from suite.cli import main
from suite.inputs.errors import UserError
from suite.measurement import distributed

ROOT = pathlib.Path(__file__).resolve().parent.parent
RANKS = (*distributed.RANK_VARIABLES, "MASTER_ADDR", "MASTER_PORT", *distributed.MPI_TO_TORCHRUN)


@pytest.fixture
def clean(monkeypatch):
    """No launcher, hand-down or override variable from the test's own environment."""
    for name in (*RANKS, *context.HANDED_DOWN, context.OWNER_VARIABLE, limits.OVERRIDE_ENV, "HLS_MODULE_ID"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


# -- a launcher's variables: the set a launcher makes, or nothing -------------------------------------


@pytest.mark.parametrize(
    "env",
    [
        {"RANK": "3", "WORLD_SIZE": "8"},
        {"RANK": "0"},
        {"LOCAL_RANK": "3"},  # picked GPU 3 for a single run
        {"RANK": "1", "WORLD_SIZE": "2", "MASTER_ADDR": "10.0.0.1"},  # no port: no rendezvous
        {"WORLD_SIZE": "x", "GROUP_RANK": "y"},
    ],
    ids=["rank-world", "rank", "local-rank", "no-port", "junk"],
)
def test_rank_variables_without_a_launcher_are_ignored_with_a_warning(env):
    said = distributed.check_launcher_environment(env)
    assert said and "ignored" in said and "one process" in said
    assert not set(env) & set(distributed.RANK_VARIABLES)
    assert not distributed.launched(env) and distributed.rank_info(env).world_size == 1


LAUNCHED = {
    "RANK": "1",
    "WORLD_SIZE": "2",
    "LOCAL_RANK": "1",
    "MASTER_ADDR": "127.0.0.1",
    "MASTER_PORT": "29500",
}


@pytest.mark.parametrize(
    "change, bad",
    [
        ({"RANK": "x"}, "RANK='x'"),
        ({"RANK": "5"}, "RANK='5'"),
        ({"RANK": "\u0663"}, "RANK='\u0663'"),  # Arabic-Indic 3: int() reads it
        ({"WORLD_SIZE": "0"}, "WORLD_SIZE='0'"),
        ({"LOCAL_RANK": "2", "LOCAL_WORLD_SIZE": "2"}, "LOCAL_RANK='2'"),
        ({"MASTER_PORT": "70000"}, "MASTER_PORT='70000'"),
        ({"GROUP_RANK": "1", "GROUP_WORLD_SIZE": "1"}, "GROUP_RANK='1'"),
    ],
)
def test_a_launchers_values_are_checked(change, bad):
    with pytest.raises(UserError, match=re.escape(bad)):
        distributed.check_launcher_environment({**LAUNCHED, **change})


def test_a_launchers_set_is_kept_and_mpiruns_is_adopted():
    env = dict(LAUNCHED)
    assert distributed.check_launcher_environment(env) is None and env == LAUNCHED
    mpi = {"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_LOCAL_RANK": "1"}
    assert distributed.check_launcher_environment(mpi) is None
    assert distributed.rank_info(mpi).world_size == 4 and mpi["RANK"] == "1"


def test_a_run_in_a_shell_left_with_rank_variables_runs_as_one_process_and_records(tmp_path, capsys, clean):
    clean.setenv("RANK", "3")
    clean.setenv("WORLD_SIZE", "8")
    assert main([*TINY_RUN, "--out", str(tmp_path)]) == 0
    record = only_record(tmp_path)
    assert record["status"] == "ok" and record["config"]["world_size"] == 1
    assert "RANK, WORLD_SIZE in the environment ignored" in capsys.readouterr().err
    assert "RANK" not in os.environ


def test_a_launchers_junk_value_is_exit_2_in_one_line(tmp_path, capsys, clean):
    for name, value in {**LAUNCHED, "RANK": "x"}.items():
        clean.setenv(name, value)
    assert main([*TINY_RUN, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "RANK='x'" in err and not list(tmp_path.iterdir())


def test_a_failed_rank_with_no_launcher_to_collect_it_says_why(capsys):
    info = distributed.RankInfo(rank=1, world_size=2)
    distributed.report_failure(info, {"type": "DistNetworkError", "message": "timed out\nframe #0"}, env={})
    err = capsys.readouterr().err
    assert err == "suite: error: rank 1 of 2: DistNetworkError: timed out (rank 0 writes the record)\n"


# -- what a suite parent hands down, and values it checks -----------------------------------------------


@pytest.mark.parametrize("value", ["0,0,0,0,0,0,0,0", "x", "0", ""])
@pytest.mark.parametrize("name", ["SUITE_CPU_CORES", "SUITE_SIBLINGS"])
def test_a_per_device_copys_variables_left_in_a_shell_are_ignored(capsys, clean, name, value):
    clean.setenv(name, value)
    main([])  # the environment is checked before the command line is read
    assert f"{name} in the environment ignored" in capsys.readouterr().err
    assert name not in os.environ


def test_cores_left_in_a_shell_are_not_recorded_as_threads(tmp_path, capsys, clean):
    clean.setenv("SUITE_CPU_CORES", "0,0,0,0,0,0,0,0")
    assert main([*_without_threads(), "--out", str(tmp_path)]) == 0
    assert only_record(tmp_path)["config"]["threads"] != 8
    assert "SUITE_CPU_CORES in the environment ignored" in capsys.readouterr().err


def _without_threads() -> list[str]:
    argv = list(TINY_RUN)
    index = argv.index("--threads")
    return argv[:index] + argv[index + 2 :]


@pytest.mark.parametrize("value", ["0,0,0,0,0,0,0,0", "x,y", "0,99999", "0,,1", "\u0660"])
def test_cores_handed_down_are_checked(capsys, clean, value):
    from suite.backends.cpu import pinned_cores

    clean.setenv("SUITE_CPU_CORES", value)
    with pytest.raises(UserError, match=re.escape(f"SUITE_CPU_CORES={value!r}")):
        pinned_cores()
    clean.setenv("SUITE_CPU_CORES", str(min(os.sched_getaffinity(0))))
    assert pinned_cores() == [min(os.sched_getaffinity(0))]


def test_cores_handed_down_with_a_junk_value_are_exit_2_not_a_failed_record(tmp_path, capsys, clean):
    clean.setenv("SUITE_CPU_CORES", "x")
    clean.setenv(context.OWNER_VARIABLE, context.owner_token(os.getppid()))  # handed by an ancestor
    assert main([*_without_threads(), "--out", str(tmp_path)]) == 2
    assert "SUITE_CPU_CORES='x'" in capsys.readouterr().err and not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    "value, kept", [("yes", False), ("true", False), ("2", False), ("1", True), ("0", True)]
)
def test_the_override_takes_1_or_0_and_warns_on_anything_else(value, kept):
    env = {limits.OVERRIDE_ENV: value}
    said = limits.check_override_env(env)
    assert (said is None) == kept and (limits.OVERRIDE_ENV in env) == kept
    if not kept:
        assert repr(value) in said and "ignored" in said


@pytest.mark.parametrize("value, expected", [("3", 3), ("", None), ("x", None), ("-1", None), ("1e3", None)])
def test_hls_module_id_is_a_whole_number_or_ignored_with_a_warning(capsys, clean, value, expected):
    from suite.backends.hpu import hls_module_id

    clean.setenv("HLS_MODULE_ID", value)
    assert hls_module_id() == expected
    assert ("ignored" in capsys.readouterr().err) == (expected is None and value != "")


# -- every variable read is documented -------------------------------------------------------------------


def _module_strings() -> dict[str, set[str]]:
    """Module-level NAME = "string" constants across the package, by name."""
    found: dict[str, set[str]] = {}
    for path in _package_files():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                if isinstance(node.value.value, str):
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            found.setdefault(target.id, set()).add(node.value.value)
    return found


def _package_files():
    for top in ("suite", "backends", "workloads"):
        yield from sorted((ROOT / top).rglob("*.py"))


def _is_environment(node) -> bool:
    return ast.unparse(node) in ("os.environ", "env", "environ")


def _variable_read(node):
    """The expression naming the variable NODE reads from the environment, or None if it reads none."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
        if node.func.attr in ("get", "pop", "setdefault") and _is_environment(node.func.value):
            return node.args[0]
        if ast.unparse(node.func) == "os.getenv":
            return node.args[0]
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _is_environment(node.value):
        return node.slice
    if isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.In, ast.NotIn)):
        return node.left if _is_environment(node.comparators[0]) else None
    return None


def _reads_in(path: pathlib.Path) -> list[tuple[str, ast.AST]]:
    """(function, the expression naming the variable) for each read of the environment in PATH."""
    found = []

    def visit(node, where):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, f"{where}.{child.name}" if where else child.name)
                continue
            key = _variable_read(child)
            if key is not None:
                found.append((where, key))
            visit(child, where)

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return found


def environment_reads() -> tuple[set[str], set[tuple[str, str]]]:
    """(variables read by name, (file, function) of reads whose name is computed)."""
    strings = _module_strings()
    names, computed = set(), set()
    for path in _package_files():
        for where, key in _reads_in(path):
            constant = (
                key.id if isinstance(key, ast.Name) else key.attr if isinstance(key, ast.Attribute) else None
            )
            if isinstance(key, ast.Constant):
                names.add(key.value)
            elif constant in strings:
                names |= strings[constant]
            else:
                computed.add((path.relative_to(ROOT).as_posix(), where))
    return names, computed


def _computed_reads() -> dict[tuple[str, str], tuple[str, ...]]:
    """Reads whose variable is computed, with the variables each can be."""
    from suite.backends import habana_releases

    from suite.fleet import sky_driver

    op_lists = tuple({name for r in habana_releases.RELEASES for name in (r.bf16_ops_env, r.fp32_ops_env)})
    mpi = tuple(distributed.MPI_TO_TORCHRUN) + tuple(distributed.MPI_TO_TORCHRUN.values())
    return {
        ("suite/context.py", "drop_unowned_handoffs"): context.HANDED_DOWN,
        ("suite/context.py", "_started_with_siblings"): (
            "WORLD_SIZE",
            "OMPI_COMM_WORLD_SIZE",
            "SUITE_SIBLINGS",
        ),
        ("suite/measurement/distributed.py", "adopt_mpi_environment"): mpi,
        ("suite/measurement/distributed.py", "check_launcher_environment"): distributed.RANK_VARIABLES + mpi,
        ("suite/measurement/distributed.py", "_check_rank_values.number"): distributed.RANK_VARIABLES
        + ("MASTER_PORT",),
        ("suite/measurement/distributed.py", "rank_info.number"): distributed.RANK_VARIABLES,
        ("suite/fleet/sky_driver.py", "import_sky"): tuple(sky_driver.SKY_ENV),
        ("backends/hpu.py", "HPUBackend.setup"): op_lists,
    }


def documented_variables() -> set[str]:
    text = (ROOT / "docs" / "failure-modes.md").read_text(encoding="utf-8")
    section = text.split("### The environment the suite reads", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"`([A-Z][A-Z0-9_]{2,})`", section))


def test_every_environment_variable_the_suite_reads_is_documented_with_its_treatment():
    names, computed = environment_reads()
    known = _computed_reads()
    unexplained = computed - set(known)
    assert not unexplained, (
        f"reads of a computed variable name; list what each can read here: {sorted(unexplained)}"
    )
    assert not set(known) - computed, (
        f"listed computed reads no longer in the code: {sorted(set(known) - computed)}"
    )
    every = names | {name for variables in known.values() for name in variables}
    missing = sorted(every - documented_variables())
    assert not missing, f"variables the suite reads that docs/failure-modes.md does not list: {missing}"


def test_the_source_check_sees_each_way_to_read_a_variable(tmp_path, monkeypatch):
    import sys

    module = sys.modules[__name__]
    monkeypatch.setattr(module, "ROOT", tmp_path)
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "m.py").write_text(
        "import os\nNAME = 'A_CONST'\n"
        "def f(env):\n"
        "    return os.environ.get('A_GET'), os.getenv('A_GETENV'), os.environ['A_ITEM'], 'A_IN' in os.environ,"
        " env.get(NAME), os.environ.pop('A_POP', None)\n"
        "def g(name):\n    return os.environ.get(name)\n"
    )
    names, computed = environment_reads()
    assert names == {"A_GET", "A_GETENV", "A_ITEM", "A_IN", "A_CONST", "A_POP"}
    assert computed == {("suite/m.py", "g")}
