"""`suite run --spec FILE`: a run given as a RunSpec in JSON is the run its options would give, a bad
file is one line naming it (exit 2), and the runs it starts are given the same spec."""

from __future__ import annotations

import argparse
import json

import pytest

from suite.cli import main
from suite.commands import run as run_command
from suite.launching import child
from suite.measurement.plan import resolve_plan
from suite.run_options import spec_from_args
from suite.spec import RunSpec


def parsed(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    run_command.add_parser(sub)
    return parser.parse_args(["run", *argv])


def test_a_spec_file_gives_the_run_its_options_would(tmp_path):
    path = tmp_path / "spec.json"
    path.write_text(
        json.dumps(
            {
                "backend": "cpu",
                "workload": {"batch_size": 2, "model_overrides": {"ngf": 8}},
                "schedule": {"windows": 2},
                "cuda": {"tf32": True},
            }
        )
    )
    typed = spec_from_args(
        parsed(
            "--backend", "cpu", "--batch-size", "2", "--model-override", "ngf=8", "--windows", "2", "--tf32"
        )
    )
    assert spec_from_args(parsed("--spec", str(path))) == typed
    assert typed == RunSpec().replace(
        backend="cpu", batch_size=2, model_overrides={"ngf": 8}, windows=2, tf32=True
    )


def started_children(monkeypatch, tmp_path, *argv: str) -> list:
    """The Requests `suite run --spec FILE ARGV` hands its children (child.run stands in for them)."""
    from suite import run_record

    started = []

    def run(what, config, out_dir):
        started.append(what)
        record = run_record.new_record(f"r{len(started)}", {"utc_time": "2026-01-01T00:00:00Z"}, config)
        record.update(status="ok", metrics={"images_per_second": 1.0})
        return record

    monkeypatch.setattr(child, "run", run)
    path = tmp_path / "spec.json"
    path.write_text(
        json.dumps({"backend": "cpu", "workload": {"batch_size": 2, "model_overrides": {"ngf": 8}}})
    )
    assert main(["run", "--spec", str(path), *argv, "--out", str(tmp_path / "out")]) == 0
    return started


def test_the_runs_a_spec_run_starts_get_its_spec(monkeypatch, tmp_path):
    asked = RunSpec().replace(backend="cpu", batch_size=2, model_overrides={"ngf": 8})
    started = started_children(monkeypatch, tmp_path, "--repeat", "2")
    assert started == [child.Request(asked)] * 2


def test_against_changes_a_spec_runs_candidate(monkeypatch, tmp_path):
    """`--against` applies to a --spec run: the candidate is the file's run with the option changed."""
    asked = RunSpec().replace(backend="cpu", batch_size=2, model_overrides={"ngf": 8})
    started = started_children(
        monkeypatch,
        tmp_path,
        "--repeat",
        "1",
        "--against",
        "batch-size=4",
        "--against",
        "model-override=ndf=4",
    )
    candidate = asked.replace(batch_size=4, model_overrides={"ngf": 8, "ndf": 4})
    assert started == [child.Request(asked), child.Request(candidate)]


@pytest.mark.parametrize(
    "content, extra, said",
    [
        (None, [], "--spec '{path}': cannot be opened"),
        ("{", [], "--spec '{path}': not JSON"),
        ('{"workload": {"batch_size": "8"}}', [], "workload.batch_size must be int or None, got '8'"),
        ('{"backend": "cpu"}', ["--batch-size", "4"], "gives the whole run: drop --batch-size"),
        ('{"workload": {"batch_size": 0}}', [], "workload.batch_size: --batch-size must be a positive"),
        ('{"data": {"workers": -5}}', [], "data.workers: --workers must be"),
        ('{"checks": {"max_memory_bytes": -1}}', [], "checks.max_memory_bytes: --max-memory"),
        (
            '{"workload": {"model_overrides": {"ngf": ""}}}',
            [],
            "model_overrides: --model-override takes KEY=VALUE",
        ),
    ],
)
def test_a_bad_spec_is_one_line_and_exit_2(tmp_path, capsys, content, extra, said):
    path = tmp_path / "spec.json"
    if content is not None:
        path.write_text(content)
    assert main(["run", "--spec", str(path), *extra, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert said.format(path=path) in err and "\n" not in err and "Traceback" not in err


def test_an_instance_the_spec_names_is_not_said_to_be_the_machines(capsys):
    """A spec file naming the instance is priced as it, and not said to be priced from the machine's DMI."""
    asked = RunSpec().replace(backend="cpu", batch_size=2, instance="m6i.xlarge")
    plan = resolve_plan(asked)
    run_command.say_start(plan, asked)
    assert "priced as" not in capsys.readouterr().err
    run_command.say_start(plan, asked.replace(instance=None))  # as a run the machine named would be
    assert "suite: priced as m6i.xlarge, the instance this machine's DMI" in capsys.readouterr().err
