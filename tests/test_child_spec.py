"""A child run is handed its RunSpec as JSON (`suite run --spec FILE`), never an argv it parses again: every
run option survives the trip, the file lives outside the results folder and is gone once the child is."""

from __future__ import annotations

import os
import subprocess

import pytest

from suite import run_options
from suite.inputs.errors import UserError
from suite.launching import child
from suite.spec import RunSpec
from suite.spec.json_form import to_json
from suite.spec.run_spec import FLAT

# A value for every `suite run` option that is part of a run (None: a switch given alone). A new option
# without one here fails test_every_run_option_has_a_sample_value.
SAMPLES = {
    "backend": "cpu",
    "workload": "resnet50",
    "num-classes": "10",
    "image-size": "64",
    "batch-size": "8",
    "precision": "bf16",
    "warmup": "0",
    "steps": "3",
    "windows": "2",
    "threads": "2",
    "data": "some/folder",
    "workers": "0",
    "pin-memory": "off",
    "prefetch": "3",
    "instance": "p5.48xlarge",
    "prices": "aws",
    "max-memory": "2GiB",
    "device-index": "1",
    "tf32": None,
    "channels-last": None,
    "compile": None,
    "compile-mode": "reduce-overhead",
    "hpu-mode": "eager",
    "no-fused": None,
    "hpu-bf16-ops": "bf16.txt",
    "hpu-fp32-ops": "fp32.txt",
    "profile": "traces",
    "model-override": "dropout=0.5",
    "check-numerics": None,
    "reference-backend": "cpu",
    "per-device": "2",
    "nproc": "2",
    "nproc-per-node": "4",
    "nnodes": "2",
    "node-rank": "1",
    "rdzv-endpoint": "node0:29500",
    "dist-timeout": "30",
    "grad-accum": "4",
    "activation-checkpointing": None,
    "fsdp": None,
}


def run_option_names() -> list[str]:
    return [name for name, action in run_options.run_options().items() if action.dest in FLAT]


def test_every_run_option_has_a_sample_value():
    assert sorted(run_option_names()) == sorted(SAMPLES)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_run_option_survives_the_trip_to_a_child(name, tmp_path):
    """spec_from_args(ARGV) -> JSON -> read_spec is the same spec, for each option typed alone."""
    value = SAMPLES[name]
    argv = [f"--{name}"] if value is None else [f"--{name}", value]
    spec = run_options.spec_from_args(run_options.run_parser().parse_args(argv))
    assert spec != RunSpec(), "the option changes nothing"
    path = tmp_path / "spec.json"
    path.write_text(to_json(spec))
    assert run_options.read_spec(str(path)) == spec


def test_a_run_option_given_as_a_whole_number_is_one_in_the_spec():
    spec = run_options.spec_from_args(run_options.run_parser().parse_args(["--device-index", "1"]))
    assert spec.cuda.device_index == 1


class Started:
    """subprocess.Popen for child.spawn: records the command and the spec its file holds while it runs."""

    def __init__(self, end=lambda: ("", "")):
        self.commands, self.specs, self.end = [], [], end

    def __call__(self, command, **kwargs):
        self.commands.append(command)
        self.specs.append(run_options.read_spec(command[5]))
        started = self

        class Process:
            returncode = 0

            def communicate(self, timeout=None):
                return started.end()

            def kill(self):
                started.end = lambda: ("", "")

            def poll(self):
                return 0

        return Process()


def test_a_child_is_given_its_spec_and_the_options_that_are_not_the_runs(monkeypatch, tmp_path):
    started = Started()
    monkeypatch.setattr(child.subprocess, "Popen", started)
    out = tmp_path / "out"
    out.mkdir()
    argv = ["--backend", "cpu", "--batch-size", "2", "--repeat", "3", "--against", "batch-size=4"]
    child.spawn([*argv, "--json", "--out", "elsewhere", "--quiet"], str(out))
    [command] = started.commands
    spec_path = command[5]
    assert command[3:] == [
        "run",
        *("--spec", spec_path, "--repeat", "3", "--against", "batch-size=4"),
        *("--json", "--quiet", "--out", str(out)),
    ]
    assert started.specs == [RunSpec().replace(backend="cpu", batch_size=2)]
    assert not os.path.exists(spec_path)  # removed once the child is done
    assert os.path.dirname(spec_path) != str(out) and not os.listdir(out)  # never among the records


@pytest.mark.parametrize("ending", [subprocess.TimeoutExpired("suite", 1), KeyboardInterrupt()])
def test_the_spec_file_goes_however_the_child_ends(monkeypatch, tmp_path, ending):
    def end():
        raise ending

    started = Started(end)
    monkeypatch.setattr(child.subprocess, "Popen", started)
    try:
        child.spawn(child.Request(RunSpec().replace(backend="cpu")), str(tmp_path), timeout_s=1)
    except KeyboardInterrupt:
        pass
    [command] = started.commands
    assert not os.path.exists(command[5])


def test_a_bad_option_is_refused_before_any_child_starts(monkeypatch, tmp_path):
    started = Started()
    monkeypatch.setattr(child.subprocess, "Popen", started)
    with pytest.raises(UserError, match="--batch-size"):
        child.spawn(["--batch-size", "0"], str(tmp_path))
    assert started.commands == []


def test_options_typed_after_a_spec_change_it_as_they_would_an_argv():
    spec = RunSpec().replace(backend="cpu", batch_size=2, model_overrides={"ngf": 8}, tf32=True, seed=3)
    changed = child.with_options(spec, ["--batch-size", "4", "--model-override", "ndf=4", "--no-pin-memory"])
    assert changed == spec.replace(batch_size=4, model_overrides={"ngf": 8, "ndf": 4}, pin_memory=False)
    assert spec.workload.model_overrides == {"ngf": 8}  # the spec itself is left as it was
    with pytest.raises(UserError, match="--quiet is not part of a run"):
        child.with_options(spec, ["--quiet"])


def test_the_resolved_config_of_a_spec_is_that_of_its_options():
    argv = ["--backend", "cpu", "--batch-size", "2", "--model-override", "ngf=8", "--windows", "2"]
    spec = RunSpec().replace(backend="cpu", batch_size=2, model_overrides={"ngf": 8}, windows=2)
    assert (
        child.resolved_config(spec)
        == child.resolved_config(argv)
        == child.resolved_config(child.Request(spec))
    )
