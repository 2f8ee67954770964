"""A spec (`suite run --spec FILE`) is checked exactly as the options are: a boolean width trained a width-1
generator; text, fractional, nested or null override values ended in an internal TypeError naming neither
key nor value; a seed of 2**64 became a failed run; `accelerators_used` 0 or -3 wrote a record `suite
report` then skipped; a key given twice kept its last value silently. Each is one line, exit 2, no record."""

from __future__ import annotations

import json

import pytest
from conftest import TINY_RUN, tiny_config

from suite import cli
from suite.spec.json_form import to_json

TINY_SPEC = tiny_config(steps_per_window=1, windows=1, threads=1)


def spec_file(tmp_path, change=None, text=None) -> str:
    data = json.loads(to_json(TINY_SPEC))
    if change:
        change(data)
    path = tmp_path / "spec.json"
    path.write_text(text if text is not None else json.dumps(data))
    return str(path)


def refused(capsys, tmp_path, *argv: str) -> str:
    out = tmp_path / "out"
    code = cli.main([*argv, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.strip().count("\n") == 0 and "Traceback" not in err and "TypeError" not in err, err
    assert not out.exists() or not list(out.iterdir())
    return err


def override(value):
    return lambda data: data["workload"]["model_overrides"].update(ngf=value)


@pytest.mark.parametrize(
    "change, says",
    [
        (override(True), "dcgan64's ngf is a whole number, got True"),
        (override("wide"), "dcgan64's ngf is a whole number, got 'wide'"),
        (override(8.5), "dcgan64's ngf is a whole number, got 8.5"),
        (override({"a": 1}), "ngf: {'a': 1} is no value --model-override ngf=VALUE gives"),
        (override(None), "ngf: None is no value --model-override ngf=VALUE gives"),
        (override([8]), "ngf: [8] is no value --model-override ngf=VALUE gives"),
        (override("8"), "ngf: '8' is no value --model-override ngf=VALUE gives"),  # typed, it is 8
        (lambda d: d["workload"].update(seed=2**64), "workload.seed must be a whole number >= 0 of at most"),
        (
            lambda d: d["cost"].update(accelerators_used=0),
            "cost.accelerators_used must be a positive integer",
        ),
        (
            lambda d: d["cost"].update(accelerators_used=-3),
            "cost.accelerators_used must be a positive integer",
        ),
        (lambda d: d["cost"].update(accelerators_used=2000), "cost.accelerators_used must be a positive"),
    ],
    ids=[
        "width true",
        "width text",
        "width 8.5",
        "width an object",
        "width null",
        "width a list",
        "width '8'",
        "seed 2**64",
        "accelerators 0",
        "accelerators -3",
        "accelerators 2000",
    ],
)
def test_a_spec_value_no_option_would_take_is_one_line(capsys, tmp_path, change, says):
    assert says in refused(capsys, tmp_path, "run", "--spec", spec_file(tmp_path, change))


def test_a_key_given_twice_is_refused_not_the_last_kept(capsys, tmp_path):
    text = to_json(TINY_SPEC).replace('"batch_size": 2', '"batch_size": 2, "batch_size": 3')
    said = refused(capsys, tmp_path, "run", "--spec", spec_file(tmp_path, text=text))
    assert "'batch_size' is given twice in one object" in said


def test_a_boolean_width_typed_as_an_option_is_refused_too(capsys, tmp_path):
    said = refused(capsys, tmp_path, *TINY_RUN, "--model-override", "ngf=true")
    assert "dcgan64's ngf is a whole number, got True" in said


def test_a_spec_as_the_suite_writes_it_still_runs(capsys, tmp_path):
    spec = TINY_SPEC.replace(seed=2**32 - 1, accelerators_used=1)
    path = tmp_path / "spec.json"
    path.write_text(to_json(spec))
    assert cli.main(["run", "--spec", str(path), "--out", str(tmp_path / "out")]) == 0, (
        capsys.readouterr().err
    )
