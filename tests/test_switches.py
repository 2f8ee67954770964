"""One spelling of a true/false option in every command: `--pin-memory`, `--pin-memory on|off` and
`--no-pin-memory` on `suite run`; the same, or a list such as on,off, on `suite loader` and in a sweep grid;
and the advice the diagnosis prints parses as typed."""

from __future__ import annotations

import pytest

from suite import run_options
from suite.cli import main
from suite.diagnosis.rules import BottleneckEvidence, verdict
from suite.inputs.errors import UserError
from suite.launching import child


def run_args(*argv: str):
    return run_options.run_parser().parse_args(list(argv))


@pytest.mark.parametrize(
    "argv, pinned",
    [
        ([], None),
        (["--pin-memory"], True),
        (["--no-pin-memory"], False),
        (["--pin-memory", "on"], True),
        (["--pin-memory", "off"], False),
        (["--pin-memory", "no"], False),
        (["--pin-memory", "--workers", "1"], True),  # the value is optional: the next option is not taken
    ],
)
def test_run_takes_every_spelling_of_the_switch(argv, pinned):
    assert run_args(*argv).pin_memory is pinned


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--pin-memory", "maybe"], "--pin-memory is a switch: give true or false"),
        (["--pin-memory", "on,off"], "--pin-memory is a switch"),  # one run has one setting
        (["--no-pin-memory", "on"], "--no-pin-memory takes no value, got 'on'"),
    ],
)
def test_run_refuses_a_bad_switch_value_in_one_line(argv, message):
    with pytest.raises(UserError, match=message):
        run_args(*argv)


def test_the_diagnosis_advice_parses_as_suite_run_options():
    """ "try --pin-memory on" is printed to be typed: it must be a valid `suite run` option."""
    found = verdict(
        BottleneckEvidence(
            compute_ips=1000.0,
            end_to_end_ips=500.0,
            loader_ips=4000.0,
            compute_cv=0.01,
            loader_cv=0.01,
            end_to_end_cv=0.01,
            workers=4,
            pin_memory=False,
            copies_to_device=True,
            cores=8,
        ),
    )
    changes = {c["option"]: c["value"] for c in found["changes"]}
    assert changes.get("--pin-memory") == "on"
    for option, value in changes.items():
        if option != "--data":  # --data cache names a cache to make first (`suite data prepare`)
            run_args(option, str(value))


@pytest.mark.parametrize(
    "argv, settings",
    [
        ([], [None]),
        (["--pin-memory"], [True]),
        (["--no-pin-memory"], [False]),
        (["--pin-memory", "off"], [False]),
        (["--pin-memory", "on,off"], [True, False]),
    ],
)
def test_loader_takes_the_run_spellings_or_a_list(argv, settings, monkeypatch, tmp_path):
    """`suite loader` measures each setting; what it would measure is read from the plans it makes."""
    from suite.measurement import loader_only, runner

    planned = []

    def plan(spec):
        planned.append(spec.data.pin_memory)
        return spec

    def stop_before_measuring(*args, **kwargs):
        raise UserError("not measured here")

    monkeypatch.setattr(runner, "plan_run", plan)
    monkeypatch.setattr(loader_only, "measure_setting", stop_before_measuring)
    assert main(["loader", "--data", "photos", "--out", str(tmp_path), *argv]) == 2
    assert planned == settings


def test_loader_refuses_an_empty_item_and_a_bad_word(capsys):
    assert main(["loader", "--data", "x", "--pin-memory", "on,,off"]) == 2
    assert (
        "--pin-memory must be a comma-separated list such as on,off, got 'on,,off'" in capsys.readouterr().err
    )
    assert main(["loader", "--data", "x", "--pin-memory", "on,maybe"]) == 2
    assert "--pin-memory is a switch" in capsys.readouterr().err


def test_a_sweep_point_hands_the_switch_on_as_its_flag():
    options = run_options.run_options()
    assert "no-pin-memory" not in options  # listed once, under its positive name
    assert child.run_argv({"pin-memory": "off"}) == ["--no-pin-memory"]
    assert child.run_argv({"pin-memory": "on"}) == ["--pin-memory"]
    assert run_args(*child.run_argv({"pin-memory": "off"})).pin_memory is False


def test_help_shows_the_negative_form_without_a_value(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "--pin-memory [on|off], --no-pin-memory" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["loader", "--help"])
    assert "--pin-memory [on,off], --no-pin-memory" in capsys.readouterr().out
