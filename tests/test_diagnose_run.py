"""`suite diagnose` end to end on the CPU: a slow loader (its decoding slowed by an injected wait) is input-bound; without a data source (its
verdict known before measuring) the command is refused at once."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT, SAFETY_NET_S, TINY_DCGAN_OPTIONS, TINY_OPTIONS, as_sets, changed, suite_env
from held_runs import FAULTS

# The command's own backend and batch size (TINY_OPTIONS' batch of 2: the loader's injected wait is per image,
# so the fewer images, the shorter the test); every point at TINY_RUN's settings, except: a window long
# against the loader's prefetch (2 batches a worker): with fewer steps, batches decoded before a window
# starts make the end-to-end rate look faster than the loader alone; and a warm-up longer than that
# prefetch, so a loader-bound run starts its first window with the queue drained, as in steady state. One
# window a process: the evidence is the spread between processes, three an arm.
TINY = [
    "--backend",
    "cpu",
    "--batch-size",
    "2",
    *as_sets(
        changed([*TINY_OPTIONS, *TINY_DCGAN_OPTIONS], steps=6, windows=1, warmup=3),
        leave_out=("backend", "batch-size"),
    ),
]


def suite(*argv, timeout=SAFETY_NET_S, env=None):
    return subprocess.run(
        [sys.executable, "-m", "suite", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


# Each image the loader decodes takes this much longer (tests/faults/sitecustomize.py): 1 worker then
# delivers at most 1 ÷ 0.1 = 10 img/s on an idle or a busy host alike, where the tiny model trains some
# 170 to 220 img/s at batch 2 on a quiet host (its compute arm measured 172, 223 and 177) and, by that, some
# 35 on a fifth of a core (a load of 10 on 2): the loader is slower by a margin the host's load cannot close,
# and a sleep varies little from process to process, so three processes an arm decide it. At 0.05 s an
# image (20 img/s) a run beside two busy loops found compute's processes too far apart (113.6 img/s median,
# one at 194) for the interval to separate: the margin has to cover compute's spread on a busy host.
DECODE_DELAY_S = "0.1"


def diagnosed_record(out) -> dict:
    found = []
    for path in glob.glob(os.path.join(str(out), "*.json")):
        with open(path) as handle:
            record = json.load(handle)
        if (record.get("diagnosis") or {}).get("processes"):  # the diagnosis's, not a run's own probe
            found.append(record)
    [record] = found
    return record


@pytest.fixture(scope="module")
def jpegs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("data") / "jpegs"
    done = suite("data", "synth", "--out", str(folder), "--count", "16", "--size", "320x240")
    assert done.returncode == 0, done.stderr
    return folder


@pytest.mark.slow  # trains in a child process
def test_a_slow_loader_with_one_worker_is_input_bound(tmp_path, jpegs):
    # Not suite_env(tmp_path): a TMPDIR that deep leaves the loader's worker socket no room (its path
    # would pass 107 bytes: suite/data/worker_socket.py), and the run is refused.
    env = suite_env(SUITE_FAULT_DECODE_S=DECODE_DELAY_S)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (FAULTS, env.get("PYTHONPATH")) if p)
    args = ("diagnose", "--data", str(jpegs), "--workers", "1", *TINY, "--out", str(tmp_path))
    done = suite(*args, env=env)
    assert done.returncode == 0, done.stderr
    assert "verdict: input-bound: the loader delivers" in done.stdout
    record = diagnosed_record(tmp_path)
    diagnosis = record["diagnosis"]
    assert diagnosis["verdict"] == "input-bound"
    assert diagnosis["loader_images_per_second"] < 0.9 * diagnosis["compute_images_per_second"]
    assert record["data"]["source"] == "imagefolder" and record["config"]["workers"] == 1
    # every process of the three measurements is recorded: 3 each by default, interleaved
    runs = {os.path.basename(p)[:-5] for p in glob.glob(str(tmp_path / "*.json"))}
    assert set(diagnosis["records"].values()) <= runs and len(runs) == 9
    assert diagnosis["processes"] == {"loader": 3, "compute": 3, "end_to_end": 3}
    assert {run for ids in diagnosis["runs"].values() for run in ids} == runs
    assert diagnosis["ratios"]["loader_over_compute"]["high"] < 0.9  # the interval separates


@pytest.mark.parametrize(
    "data", [[], ["--data", "synthetic"], ["--set", "data=synthetic"]], ids=["none", "synthetic", "set"]
)
def test_diagnose_without_a_data_source_is_refused_at_once_naming_data(tmp_path, capsys, monkeypatch, data):
    """Synthetic data has no loader: its verdict (compute-bound) is known before anything runs, so the
    command refuses before planning or measuring anything (it used to measure for minutes first)."""
    from suite.cli import main
    from suite.exploring import grid
    from suite.measurement import plan as planning

    def never(*_args, **_kwargs):
        raise AssertionError("nothing may be planned or measured")

    monkeypatch.setattr(grid, "resolve", never)
    monkeypatch.setattr(planning, "resolve_plan", never)
    code = main(["diagnose", "--backend", "cpu", *data, "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("suite: error:") and err.count("\n") == 1, err
    assert "needs --data FOLDER" in err and "`suite diagnose --data photos`" in err
    assert "`suite data synth --out photos --count 2048`" in err
    assert not list(tmp_path.iterdir())  # no record


def test_diagnose_without_data_exits_2_before_torch_is_imported():
    # A fresh Python (one here has imported torch already), which imports no torch: under a second.
    script = (
        "import sys; from suite.cli import main; code = main(['diagnose', '--backend', 'cpu']); "
        "print(code, 'torch' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=SAFETY_NET_S
    )
    assert done.stdout.split() == ["2", "False"], done.stdout + done.stderr
    assert "--data" in done.stderr and done.stderr.count("\n") == 1, done.stderr


def test_diagnose_bad_data_path_exits_2(tmp_path, capsys):
    from suite.cli import main

    code = main(["diagnose", "--data", str(tmp_path / "missing"), "--backend", "cpu", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("suite: error:") and err.count("\n") == 1 and "Traceback" not in err


def test_diagnose_option_also_given_with_set_exits_2_naming_both(tmp_path, capsys):
    from suite.cli import main

    argv = ["diagnose", "--data", "photos", "--workload", "dcgan64", "--set", "workload=resnet18"]
    argv += ["--out", str(tmp_path)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "'workload' (--workload) and 'workload' (--set); give it once" in err and "Traceback" not in err
