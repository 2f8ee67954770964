"""Sweep: reading sweep files, expanding the grid, resume matching and the effect of each knob."""

from __future__ import annotations

import json
import textwrap

import pytest

from suite.cli import main
from suite.exploring import grid, grid_options, sweep, sweep_table
from suite.inputs.errors import UserError
from suite.launching import child
from suite.run_options import run_options


@pytest.fixture(scope="module")
def options():
    return run_options()


def write(tmp_path, text: str) -> str:
    path = tmp_path / "sweep.yaml"
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_sweep_file_expands_to_every_combination_in_order(tmp_path, options):
    path = write(
        tmp_path,
        """\
        fixed:
          backend: cpu
          model-override: {ngf: 8, ndf: 8}
        grid:
          batch-size: [2, 4, 8]
          precision: [fp32, bf16]
        """,
    )
    spec = sweep.load_spec(path, options)
    points = grid.expand(spec, options)
    assert [p.knobs for p in points][:3] == [
        {"batch-size": "2", "precision": "fp32"},
        {"batch-size": "2", "precision": "bf16"},
        {"batch-size": "4", "precision": "fp32"},
    ]
    assert len(points) == 6
    assert points[5].argv == [
        "--backend",
        "cpu",
        "--model-override",
        "ngf=8",
        "--model-override",
        "ndf=8",
        "--batch-size",
        "8",
        "--precision",
        "bf16",
    ]


@pytest.mark.parametrize(
    "text, needle",
    [
        ("grid:\n  batch-size: [2]\n  bach-size: [4]\n", "unknown option 'bach-size' (SWEEP, line 3)"),
        ("grid:\n  batch-size: [2]\nextra:\n  x: 1\n", "unknown section 'extra' in SWEEP, line 3"),
        (
            "fixed:\n  out: here\ngrid:\n  batch-size: [2]\n",
            "option 'out' (SWEEP, line 2) is set by the sweep",
        ),
        ("grid:\n  batch-size: []\n", "'batch-size' has an empty list of values (SWEEP, line 2)"),
        (
            "grid:\n  batch-size: [2, [3]]\n",
            "'batch-size' must be a value or a list of values (SWEEP, line 2)",
        ),
        ("grid:\n  batch-size: [2\n  precision: [fp32]\n", "is not valid YAML"),
        ("fixed:\n  backend: cpu\n", "has no 'grid' section"),
        ("- 1\n- 2\n", "must be a mapping"),
    ],
)
def test_malformed_sweep_file_names_key_and_line(tmp_path, options, text, needle):
    path = write(tmp_path, text)
    with pytest.raises(UserError) as caught:
        sweep.load_spec(path, options)
    assert needle.replace("SWEEP", path) in str(caught.value)


def test_malformed_yaml_reports_a_line(tmp_path, options):
    path = write(tmp_path, "grid:\n  batch-size: [2\n  precision: [fp32]\n")
    with pytest.raises(UserError, match=r"line \d+"):
        sweep.load_spec(path, options)


def test_malformed_sweep_file_on_the_command_line_exits_2_without_traceback(tmp_path, capsys):
    path = write(tmp_path, "grid:\n  batch-size: [2]\n  bach-size: [4]\n")
    assert main(["sweep", path, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("suite: error: unknown option 'bach-size'") and "line 3" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--grid", "batch-size"], "--grid takes OPTION=V1,V2"),
        (["--grid", "colour=red,blue"], "unknown option 'colour' (--grid)"),
        (["--grid", "batch-size=2", "--set", "workload"], "--set takes OPTION=VALUE"),
        ([], "nothing to sweep"),
        (
            ["--grid", "batch-size=2,zero"],
            "sweep point 2 (batch-size=zero): --batch-size must be a positive integer",
        ),
    ],
)
def test_bad_inline_grid_exits_2(tmp_path, capsys, argv, needle):
    assert main(["sweep", *argv, "--set", "backend=cpu", "--out", str(tmp_path), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err


def test_switch_options_become_flags(options):
    import argparse

    from suite.inputs.option_types import Switch

    flag = argparse.Namespace(nargs=0)
    assert child.option_argv("json-ish", "true", flag) == ["--json-ish"]
    assert child.option_argv("json-ish", "false", flag) == []
    with pytest.raises(UserError, match="is a switch"):
        child.option_argv("json-ish", "maybe", flag)
    both = Switch(["--pin-memory"], dest="pin_memory")
    assert child.option_argv("pin-memory", "off", both) == ["--no-pin-memory"]
    assert child.option_argv("pin-memory", "on", both) == ["--pin-memory"]


def test_resume_matches_on_the_resolved_configuration(tmp_path, options):
    spec = grid_options.parse_inline(["batch-size=2,4"], ["backend=cpu", "model-override=ngf=8"], options)
    points = grid.expand(spec, options)
    grid.resolve(points)
    assert points[0].config["batch_size"] == 2 and points[0].config["model_overrides"] == {"ngf": 8}
    done = {"status": "ok", "config": dict(points[0].config), "context": {"utc_time": "1"}}
    oom = {"status": "oom", "config": dict(points[1].config), "context": {"utc_time": "1"}}
    crashed = {"status": "error", "config": dict(points[1].config), "context": {"utc_time": "2"}}
    other = {
        "status": "ok",
        "config": {**points[0].config, "precision": "bf16"},
        "context": {"utc_time": "3"},
    }
    assert grid.find_record(points[0], [other, done]) is done
    assert grid.find_record(points[1], [crashed]) is None  # an error is run again
    assert grid.find_record(points[1], [crashed, oom]) is oom  # an oom would only repeat


def test_existing_records_ignore_other_json(tmp_path):
    (tmp_path / "notes.json").write_text(json.dumps({"hello": 1}))
    (tmp_path / "broken.json").write_text("{")
    assert grid.existing_records(str(tmp_path)) == []


def test_knob_effects_are_geometric_means_of_paired_ratios():
    grid = {"precision": ["fp32", "bf16"], "batch-size": ["16", "32"]}
    rates = [
        ({"precision": "fp32", "batch-size": "16"}, 100.0),
        ({"precision": "bf16", "batch-size": "16"}, 170.0),
        ({"precision": "fp32", "batch-size": "32"}, 104.0),
        ({"precision": "bf16", "batch-size": "32"}, 176.8),
    ]
    lines = sweep_table.knob_effects(grid, rates)
    assert lines == ["precision fp32→bf16: 1.70×", "batch-size 16→32: +4%"]


def test_knob_effects_skip_failed_pairs_and_say_so():
    grid = {"batch-size": ["2", "4", "8"]}
    rates = [({"batch-size": "2"}, 50.0), ({"batch-size": "4"}, 25.0), ({"batch-size": "8"}, None)]
    assert sweep_table.knob_effects(grid, rates) == ["batch-size 2→4: 0.50×, 4→8: n/a (no pair completed)"]


def test_table_sorted_by_throughput_with_failures_last():
    knobs = {"batch-size": ["2", "4", "8"]}

    def rec(rate, status="ok"):
        metrics = (
            {"images_per_second": rate, "images_per_second_stdev": 0.0, "step_time_s": 0.01} if rate else {}
        )
        return {
            "status": status,
            "metrics": metrics,
            "memory": {},
            "error": None if rate else {"message": "too big"},
        }

    outcome = [
        (grid.Point(0, {"batch-size": "2"}, []), rec(10.0)),
        (grid.Point(1, {"batch-size": "4"}, []), rec(None, "oom")),
        (grid.Point(2, {"batch-size": "8"}, []), rec(30.0)),
    ]
    text = sweep_table.render(outcome, knobs)
    rows = [line.split()[0] for line in text.splitlines()[2:5]]
    assert rows == ["8", "2", "4"]
    assert "oom: too big" in text
