"""Bad input is exit 2 with one clear line, before anything runs or any record exists."""

from __future__ import annotations

import os
import warnings

import pytest
from conftest import TINY_RUN

from suite.cli import join_dash_values, main

# -- 10: clear messages -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv,expected",
    [
        (
            ["data", "synth", "--out", "x", "--count", "1", "--size", "-5x4"],
            "--size must be WIDTHxHEIGHT in pixels",
        ),
        (["run", "--batch-size", "-2"], "--batch-size must be a positive integer, got '-2'"),
        (["run", "--windows", "-1"], "--windows"),
        (["report", "--dataset-size", "-4"], "--dataset-size must be a positive integer, got '-4'"),
        (["data", "synth", "--out", "x", "--count", "-3"], "--count must be a positive integer, got '-3'"),
    ],
)
def test_a_negative_value_is_named_not_read_as_a_missing_argument(
    tmp_path, monkeypatch, capsys, argv, expected
):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert expected in err and "expected one argument" not in err and err.count("\n") == 1


def test_dash_values_are_joined_only_after_long_options():
    assert join_dash_values(["run", "--batch-size", "-2", "--json"]) == ["run", "--batch-size=-2", "--json"]
    assert join_dash_values(["run", "--json", "-h"]) == ["run", "--json", "-h"]
    assert join_dash_values(["run", "--", "--x", "-1"]) == ["run", "--", "--x", "-1"]
    assert join_dash_values(["run", "--out", "--json"]) == ["run", "--out", "--json"]


# -- 9: nonsense refused --------------------------------------------------------------------------------


@pytest.mark.parametrize("instance", ["", "   "])
def test_an_empty_instance_is_refused_not_taken_as_none(tiny, instance):
    from suite.inputs.errors import UserError
    from suite.measurement.plan import resolve_run_instance

    with pytest.raises(UserError, match="--instance is empty"):
        resolve_run_instance(tiny(instance=instance))


# -- 8: bad input is checked in planning, before a record exists -------------------------------------------


def no_record(out) -> bool:
    return not os.path.isdir(out) or not [n for n in os.listdir(out) if n.endswith(".json")]


@pytest.mark.parametrize(
    "extra,expected",
    [
        (["--threads", "100000"], "--threads 100000 is far more than this machine's"),
        (["--dist-timeout", "inf"], "--dist-timeout must be a positive"),
        (["--dist-timeout", "nan"], "--dist-timeout must be a positive"),
        (["--dist-timeout", "-5"], "--dist-timeout must be a positive"),
        (["--model-override", "ngf=-3"], "cannot be built with these overrides"),
        (["--model-override", "ngf=1.5"], "dcgan64's ngf is a whole number, got 1.5"),
        (["--model-override", "ngf=0"], "would have empty layers"),
    ],
)
def test_impossible_run_inputs_are_exit_2_before_any_record(tmp_path, capsys, extra, expected):
    out = tmp_path / "out"
    with warnings.catch_warnings(record=True) as warned:  # pytest would catch one the user sees
        warnings.simplefilter("always")
        assert main([*TINY_RUN, *extra, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1
    assert not warned, [str(w.message) for w in warned]  # ngf=0 printed torch's zero-element warning
    assert no_record(out)


def test_a_profile_path_that_is_a_file_is_exit_2_before_any_record(tmp_path, capsys):
    out, trace = tmp_path / "out", tmp_path / "trace.json"
    trace.write_text("{}")
    assert main([*TINY_RUN, "--profile", str(trace), "--out", str(out)]) == 2
    assert f"--profile {str(trace)!r} is a file" in capsys.readouterr().err
    assert main([*TINY_RUN, "--profile", str(trace / "below"), "--out", str(out)]) == 2
    assert "cannot be created" in capsys.readouterr().err
    assert no_record(out) and trace.read_text() == "{}"


@pytest.mark.parametrize("value", ["inf", "Infinity", "nan", "-1", "0"])
def test_a_sweep_point_timeout_must_be_positive_and_finite(tmp_path, capsys, value):
    argv = ["sweep", "--grid", "batch-size=2,3", "--set", "backend=cpu", "--point-timeout", value]
    assert main([*argv, "--out", str(tmp_path / "out")]) == 2
    assert "--point-timeout must be a positive number of seconds" in capsys.readouterr().err
    assert no_record(tmp_path / "out")


# -- 9 and 11: grids --------------------------------------------------------------------------------------


@pytest.mark.parametrize("grid", [["batch-size=,"], ["batch-size=2,3", "precision= , "]])
def test_an_empty_grid_is_refused(tmp_path, capsys, grid):
    assert main(["sweep", "--grid", *grid, "--set", "backend=cpu", "--out", str(tmp_path / "out")]) == 2
    assert "the grid has no points" in capsys.readouterr().err
    assert no_record(tmp_path / "out")


def test_a_grid_of_a_hundred_million_points_is_refused_before_any_is_made(tmp_path, capsys, monkeypatch):
    import tracemalloc

    values = ",".join(str(v) for v in range(1, 11))
    grid = [
        f"{name}={values}"
        for name in (
            "batch-size",
            "warmup",
            "steps",
            "windows",
            "threads",
            "prefetch",
            "workers",
            "device-index",
        )
    ]
    tracemalloc.start()
    assert main(["sweep", "--grid", *grid, "--set", "backend=cpu", "--out", str(tmp_path / "out")]) == 2
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    err = capsys.readouterr().err
    assert "the sweep would take about 100,000,000 points, more than 10,000 points" in err
    assert "SUITE_ALLOW_LARGE=1" in err and peak < 50 * 2**20  # nothing the size of the grid was built


def test_a_non_utf8_sweep_file_is_one_line(tmp_path, capsys):
    path = tmp_path / "sweep.yaml"
    path.write_bytes(b"grid:\n  batch-size: [2, 3]\n  precision: [fp32, b\xe9f16]\n")
    assert main(["sweep", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and "not UTF-8" in err
