"""Bad input is exit 2 with one clear line, before anything runs or any record exists."""

from __future__ import annotations

import os

import pytest

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
    from suite.errors import UserError
    from suite.reporting.pricing import resolve_run_instance

    with pytest.raises(UserError, match="--instance is empty"):
        resolve_run_instance(tiny(instance=instance))


# -- 8: bad input is checked in planning, before a record exists -------------------------------------------

TINY_ARGS = [
    "--backend",
    "cpu",
    "--workload",
    "dcgan64",
    "--model-override",
    "ngf=4",
    "--model-override",
    "ndf=4",
]
TINY_ARGS += ["--batch-size", "2", "--warmup", "1", "--steps", "1", "--windows", "1"]


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
        (["--model-override", "ngf=1.5"], "cannot be built with these overrides"),
        (["--model-override", "ngf=0"], "would have empty layers"),
    ],
)
def test_impossible_run_inputs_are_exit_2_before_any_record(tmp_path, capsys, extra, expected):
    out = tmp_path / "out"
    assert main(["run", *TINY_ARGS, *extra, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1
    assert no_record(out)


def test_a_profile_path_that_is_a_file_is_exit_2_before_any_record(tmp_path, capsys):
    out, trace = tmp_path / "out", tmp_path / "trace.json"
    trace.write_text("{}")
    assert main(["run", *TINY_ARGS, "--profile", str(trace), "--out", str(out)]) == 2
    assert f"--profile {str(trace)!r} is a file" in capsys.readouterr().err
    assert main(["run", *TINY_ARGS, "--profile", str(trace / "below"), "--out", str(out)]) == 2
    assert "cannot be created" in capsys.readouterr().err
    assert no_record(out) and trace.read_text() == "{}"
