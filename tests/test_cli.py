"""The command line: bad input is one line on stderr and exit 2; a good run writes one record."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch
from conftest import TINY_RUN

from suite import cli
from suite.context import child_env
from suite.measurement import runner


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "argv,message",
    [
        (["run", "--backend", "tpu"], "unknown backend 'tpu' (known: auto, cpu, cuda, hpu)"),
        (
            ["run", "--workload", "gpt2"],
            "unknown workload 'gpt2' (known: dcgan64, dcgan64-safe, dcgan128-safe, "
            "dcgan128, resnet50, resnet50-inat, resnet18-cifar, gpt2-small, llama-1b)",
        ),
        (["run", "--batch-size", "0"], "--batch-size must be a positive integer, got '0'"),
        (["run", "--batch-size", "lots"], "--batch-size must be a positive integer, got 'lots'"),
        (["run", "--steps", "-3"], "--steps must be a positive integer, got '-3'"),
        (["run", "--windows", "1.5"], "--windows must be a positive integer, got '1.5'"),
        (["run", "--threads", "0"], "--threads must be a positive integer, got '0'"),
        (
            ["run", "--backend", "cpu", "--precision", "fp8"],
            "precision 'fp8' is not supported by the cpu backend (accepted: fp32, bf16)",
        ),
        (
            ["run", "--backend", "cpu", "--precision", "amp"],
            "precision 'amp' is not supported by the cpu backend (accepted: fp32, bf16)",
        ),
        (["run", "--frobnicate"], "unrecognized arguments: --frobnicate"),
        (["launch"], "invalid choice: 'launch'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path, argv, message):
    code, out, err = run_cli(capsys, *argv, *(["--out", str(tmp_path)] if argv[0] == "run" else []))
    assert code == 2
    assert err.startswith("suite: error: ") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not list(tmp_path.iterdir())  # nothing was written


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_an_unavailable_backend_says_why(capsys, tmp_path):
    for backend, why in (("cuda", "nvidia-smi"), ("hpu", "Habana software not installed")):
        code, out, err = run_cli(capsys, "run", "--backend", backend, "--out", str(tmp_path))
        assert code == 2 and err.startswith(f"suite: error: backend '{backend}' is not available: ")
        assert why in err and err.count("\n") == 1


def test_an_out_folder_that_cannot_be_written_is_refused_before_measuring(capsys, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    code, out, err = run_cli(capsys, *TINY_RUN, "--out", str(blocker / "results"))
    assert code == 2
    assert f"--out '{blocker / 'results'}' cannot be written" in err and "Traceback" not in err


def test_a_run_writes_one_record_and_prints_a_summary(capsys, tmp_path):
    code, out, err = run_cli(capsys, *TINY_RUN, "--out", str(tmp_path))
    assert code == 0, err
    files = os.listdir(tmp_path)
    assert len(files) == 1 and files[0].endswith(".json")
    record = json.loads((tmp_path / files[0]).read_text())
    assert record["status"] == "ok" and record["schema"] == "suite.run"
    assert "img/s median" in out and "img/h" in out and files[0] in out
    # Which final loss is whose: the discriminator's, then the generator's.
    assert record["metrics"]["final_loss_names"] == ["discriminator", "generator"]
    assert "(discriminator), " in out and out.count(" (generator)") == 1


def test_json_prints_the_record_on_stdout(capsys, tmp_path):
    code, out, err = run_cli(capsys, *TINY_RUN, "--json", "--out", str(tmp_path))
    assert code == 0
    record = json.loads(out)
    assert record["metrics"]["images_per_second"] > 0
    assert os.listdir(tmp_path) == [f"{record['run_id']}.json"]


def test_ctrl_c_exits_130_and_leaves_no_record(capsys, tmp_path, monkeypatch):
    def interrupted(plan, progress=None):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "execute", interrupted)
    code, out, err = run_cli(capsys, *TINY_RUN, "--out", str(tmp_path))
    assert code == 130 and "interrupted" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_list_shows_every_workload_with_exact_counts_and_every_backend(capsys):
    code, out, err = run_cli(capsys, "list")
    assert code == 0
    for name, counts in {
        "dcgan64": ("3,576,704", "2,765,568"),
        "dcgan128-safe": ("195,063,296", "44,611,072"),
        "dcgan64-safe": ("52,448,768",),
        "dcgan128": ("48,772,864", "2,796,928"),
        "resnet50": ("25,557,032",),
        "resnet50-inat": ("43,998,032",),
        "resnet18-cifar": ("11,181,642",),
    }.items():
        assert name in out
        for count in counts:
            assert count in out
    assert "cpu        available" in out
    assert "hpu        unavailable" in out and "cuda       unavailable" in out


@pytest.mark.slow  # a fresh Python that imports torch: `python -m suite` as a person runs it
def test_the_installed_entry_point_reports_errors_without_a_traceback(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "suite", "run", "--workload", "nope", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("suite: error: unknown workload 'nope'") and "Traceback" not in proc.stderr


def test_env_reports_versions_and_backends_as_json(capsys):
    code, out, err = run_cli(capsys, "env", "--json")
    assert code == 0
    info = json.loads(out)
    assert info["context"]["torch"] == torch.__version__
    assert info["backends"]["cpu"]["available"] is True
    assert info["backends"]["cpu"]["device"]["cores_logical"] >= 1
    assert info["backends"]["hpu"]["available"] is False


def test_help_env_and_a_sweeps_dry_run_do_not_import_torch(tmp_path):
    # What a person types first answers in well under 2 s on 2 cores: importing torch alone takes 4 s of
    # CPU there. One fresh Python runs them all (a torch already imported here would hide an import).
    script = (
        "import sys\n"
        "from suite import cli\n"
        "cli.build_parser()\n"
        "assert cli.main(['env', '--json']) == 0\n"
        "assert cli.main(['sweep', '--grid', 'batch-size=2,4', 'precision=fp32,bf16', '--dry-run', '--out', "
        f"{str(tmp_path / 'sweep')!r}]) == 0\n"
        "assert cli.main(['run', '--workload', 'resnet50', '--batch-size', '0']) == 2\n"
        "print('torch imported:', 'torch' in sys.modules, file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=child_env()
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip().endswith("torch imported: False"), proc.stderr
    assert '"torch": "' + torch.__version__ + '"' in proc.stdout  # the version, read without the import
    assert proc.stdout.count("to run") == 4 and "--batch-size must be" in proc.stderr
    assert not os.listdir(tmp_path)  # a dry run makes nothing, not even its folder


def test_a_cached_listing_imports_no_model_code_and_no_torch_where_files_settle_every_backend(
    capsys, monkeypatch, tmp_path
):
    from suite.backends import presence

    monkeypatch.setenv("SUITE_CACHE_DIR", str(tmp_path))
    assert run_cli(capsys, "list")[0] == 0  # counts the parameters once, into the cache
    listing = (
        "import sys; from suite import cli; cli.main(['list']); "
        "print('torchvision' in sys.modules, 'torch' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", listing], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert (
        "195,063,296" in proc.stdout and "25,557,032" in proc.stdout
    )  # DCGAN's and ResNet's, from the cache
    torchvision_imported, torch_imported = proc.stdout.splitlines()[-1].split()
    assert torchvision_imported == "False"  # nothing was counted again
    # Where a GPU driver or Habana's software is present (or off Linux), torch is asked whether it is usable.
    if presence.cuda_absent() is not None and presence.habana_absent() is not None:
        assert torch_imported == "False"


def test_threads_sets_torch_threads_and_is_recorded(capsys, tmp_path):
    before = torch.get_num_threads()
    try:
        code, out, err = run_cli(capsys, *TINY_RUN, "--threads", "1", "--json", "--out", str(tmp_path))
        assert code == 0, err
        record = json.loads(out)
        assert record["config"]["threads"] == 1 and record["device"]["threads"] == 1
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--tf32"], "--tf32 does not apply to the cpu backend (it is an option of: cuda)"),
        (["--channels-last"], "--channels-last does not apply to the cpu backend (it is an option of: cuda)"),
        (["--hpu-mode", "lazy"], "--hpu-mode does not apply to the cpu backend (it is an option of: hpu)"),
        (["--no-fused"], "--no-fused does not apply to the cpu backend (it is an option of: hpu)"),
    ],
)
def test_an_option_of_another_backend_is_refused_not_ignored(capsys, tmp_path, argv, message):
    code, out, err = run_cli(capsys, *TINY_RUN, *argv, "--out", str(tmp_path))
    assert code == 2 and err == f"suite: error: {message}\n"


def test_progress_shows_warmup_and_each_window_on_one_line():
    import io

    from suite.commands.run import progress_printer

    stream = io.StringIO()
    show = progress_printer(stream)
    show("warmup", step=1, of=2)
    show("window", window=1, of=2, images_per_second=1234.5)
    show("window", window=2, of=2, images_per_second=1000.0)
    text = stream.getvalue()
    assert "warm-up step 1/2" in text and "window 1/2: 1,234.5 img/s" in text and "window 2/2" in text
    assert "\n" not in text and text.endswith("\r\033[K")  # rewritten in place, cleared at the end


def test_off_a_terminal_progress_is_plain_lines_on_stderr_and_quiet_silences_it(capsys, tmp_path):
    code, out, err = run_cli(capsys, *TINY_RUN, "--out", str(tmp_path))
    assert code == 0 and "\r" not in err and "warm-up step 1/1" not in err  # no line rewritten in place
    lines = err.splitlines()
    assert lines[0].startswith("suite: dcgan64 on cpu") and "1 timed window(s) of 1 step(s)" in lines[0]
    assert "suite: warm-up done: 1 step," in err and "suite: window 1/1: " in err
    assert lines[-1].startswith(f"suite: record written to {tmp_path}")
    code, out, err = run_cli(capsys, *TINY_RUN, "--quiet", "--out", str(tmp_path))
    assert code == 0 and err == ""


def test_run_options_are_typed_where_they_are_parsed():
    """A RunSpec holds what its hints say: numbers as numbers, whatever path the options came by."""
    from suite.run_options import run_parser, spec_from_args

    args = run_parser().parse_args(
        ["--workers", "2", "--batch-size", "4", "--dist-timeout", "30", "--max-memory", "1KiB"]
    )
    spec = spec_from_args(args)
    assert (
        spec.data.workers,
        spec.workload.batch_size,
        spec.launch.dist_timeout_s,
        spec.checks.max_memory_bytes,
    ) == (
        2,
        4,
        30.0,
        1024,
    )
    assert isinstance(spec.launch.dist_timeout_s, float)
