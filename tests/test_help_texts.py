"""Help and messages that say what a person needs, in the field's own words."""

from __future__ import annotations

import argparse

import pytest

from suite.cli import build_parser, main


def help_of(command: str, capsys) -> str:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    return capsys.readouterr().out


def test_help_texts_show_defaults_and_no_doubled_percent(capsys):
    assert "95%%" not in help_of("batch-size", capsys)
    text = " ".join(help_of("run", capsys).split())
    assert "(default: cpu 1, cuda 3, hpu 10)" in text and "(default 5; cpu 2 to 5" in text


def test_model_override_is_in_run_help_with_an_example(capsys):
    text = " ".join(help_of("run", capsys).split())
    assert "--model-override KEY=VALUE change one field of the workload's model" in text
    assert "`--model-override ngf=16 --model-override ndf=16` makes a small dcgan64" in text


def declared_commands(parser) -> set[str]:
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return set(commands.choices)


def test_the_parser_declares_the_named_command_alone_and_every_command_otherwise(capsys):
    assert declared_commands(build_parser(["run", "--batch-size", "2"])) == {"run"}
    assert declared_commands(build_parser(["fleet", "plan"])) == {"fleet"}
    every = declared_commands(build_parser())
    assert {"run", "fleet", "batch-size", "report", "sweep"} <= every
    for argv in (["--help"], ["batch_size"], []):  # no command named: all of them, to list them
        assert declared_commands(build_parser(argv)) == every
    assert main(["batch_size"]) == 2
    assert "(choose from 'batch-size', 'compare'," in capsys.readouterr().err


def test_nproc_per_node_is_torchruns_name_for_nproc():
    args = build_parser().parse_args(["run", "--nproc-per-node", "2"])
    assert args.nproc == "2" or args.nproc == 2


def test_one_step_is_not_one_steps():
    from suite.reporting.summary import render

    record = {
        "status": "ok",
        "config": {
            "workload": "dcgan64",
            "backend": "cpu",
            "precision": "fp32",
            "batch_size": 2,
            "steps_per_window": 1,
        },
        "metrics": {
            "images_per_second": 1.0,
            "images_per_second_stdev": 0.0,
            "images_per_second_min": 1.0,
            "images_per_second_max": 1.0,
            "images_per_second_cv": 0.0,
            "window_time_s": [1.0],
            "images_per_hour": 3600.0,
            "step_time_s": 1.0,
            "warmup_steps": 0,
            "warmup_time_s": 0.0,
        },
    }
    assert "1 windows × 1 step)" in render(record) and "1 steps" not in render(record)


def test_a_single_point_error_names_no_sweep_point(tmp_path):
    from suite.exploring import grid
    from suite.inputs.errors import UserError

    point = grid.Point(0, {}, ["--backend", "cpu", "--batch-size", "0"], {})
    with pytest.raises(UserError) as raised:
        grid.resolve([point])
    assert "sweep point" not in str(raised.value) and "--batch-size" in str(raised.value)


@pytest.mark.parametrize(
    "argv, says",
    [
        (["run", "--output", "x"], "--output x (did you mean --out? see `suite run --help`)"),
        (["report", "--formt", "md"], "--formt (did you mean --format? see `suite report --help`)"),
        (["fleet", "plan", "--zzz"], "--zzz (see `suite fleet plan --help`)"),
        (["--zzz"], "--zzz (see `suite --help`)"),
    ],
)
def test_an_unknown_option_points_to_its_commands_help_and_the_nearest_option(capsys, argv, says):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == f"suite: error: unrecognized arguments: {says}\n"


def test_out_says_which_it_takes_a_file_or_a_folder(capsys, tmp_path):
    # Records go into a folder (one file each); a rendered report or comparison is one file. A records
    # command given a new path named like a file would have made a folder of that name.
    assert main(["run", "--out", str(tmp_path / "mine.json")]) == 2
    err = capsys.readouterr().err
    assert "names a file, but this command writes its records into a folder" in err
    assert f"such as {str(tmp_path / 'mine')!r}" in err and not list(tmp_path.iterdir())
    assert main(["report", str(tmp_path), "--out", str(tmp_path)]) == 2
    assert f"is a folder: this command writes one file, such as {str(tmp_path / 'report.md')!r}" in (
        capsys.readouterr().err
    )
