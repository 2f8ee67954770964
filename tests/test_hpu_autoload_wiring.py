"""The execution mode under torch's device-backend autoload, and mpirun launches, against the fake bridge.

From torch 2.5 `import torch` loads Habana's bridge itself when Habana's autoload allows it (releases 1.19
on), and the bridge fixes its mode at that import. These tests run the command line in the order of a real
process: the CLI's own start, then `import torch` (with its autoload), then the run; and check that the mode
in the record is the mode the bridge really ran, or that the run is refused.
"""

from __future__ import annotations

import json
import os

import habana_fakes
import pytest
from conftest import TINY, TINY_RUN, changed
from suite.backends import habana_releases, hpu

from suite import cli
from suite.cli import main
from suite.inputs.errors import UserError
from suite.measurement import distributed, runner
from suite.spec import RunSpec

RUN = [*changed(TINY_RUN, backend="hpu"), "--precision", "fp32", "--json"]


@pytest.fixture(params=habana_fakes.PROFILES)
def release(request, monkeypatch, tmp_path):
    installed = habana_fakes.install(monkeypatch, tmp_path, request.param)
    yield installed
    habana_fakes.drop_fake_modules()


def cli_with_torch_imported_after_start(monkeypatch):
    """main() as a fresh `suite` process runs it: the parser's imports are where torch is first imported."""
    build_parser = cli.build_parser

    def importing_torch(argv=None):
        habana_fakes.import_torch()
        return build_parser(argv)

    monkeypatch.setattr(cli, "build_parser", importing_torch)


@pytest.mark.parametrize("preset", [None, "0"])
def test_wiring_cli_lazy_mode_really_runs_lazy_under_autoload(release, monkeypatch, tmp_path, capsys, preset):
    if preset is not None:
        monkeypatch.setenv(hpu.LAZY_ENV, preset)  # eager in the environment; lazy asked on the command line
    cli_with_torch_imported_after_start(monkeypatch)
    rc = main([*RUN, "--hpu-mode", "lazy", "--out", str(tmp_path / "out")])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    record = json.loads(captured.out)
    assert record["status"] == "ok", record.get("error")
    assert record["config"]["hpu_mode"] == "lazy"
    assert record["device"]["execution_mode_verified_by"] == "habana_frameworks is_lazy()"
    # Really lazy: the bridge loaded its lazy library, and mark_step did something (a no-op otherwise).
    import habana_frameworks.torch as bridge

    assert bridge.LOADED_LIBRARY == "libhabana_pytorch_plugin.so"
    assert "mark_step" in habana_fakes.recorder().events()


def test_wiring_cli_eager_asked_under_autoload_runs_eager(release, monkeypatch, tmp_path, capsys):
    cli_with_torch_imported_after_start(monkeypatch)
    rc = main([*RUN, "--hpu-mode", "eager", "--out", str(tmp_path / "out")])
    record = json.loads(capsys.readouterr().out)
    assert rc == 0 and record["config"]["hpu_mode"] == "eager"
    import habana_frameworks.torch as bridge

    assert bridge.LOADED_LIBRARY == "libhabana_pytorch2_plugin.so"
    assert "mark_step" not in habana_fakes.recorder().events()


@habana_fakes.needs_torch_autoload
def test_wiring_autoload_imports_the_bridge_only_where_the_release_has_it(release, monkeypatch):
    monkeypatch.setenv(hpu.LAZY_ENV, "0")
    habana_fakes.import_torch()
    import sys

    assert ("habana_frameworks.torch" in sys.modules) == release.autoload
    assert release.autoload_imports_bridge(os.environ) == release.autoload


@pytest.mark.parametrize("switch", ["PT_HPU_AUTOLOAD", "TORCH_DEVICE_BACKEND_AUTOLOAD"])
def test_wiring_autoload_switches_are_honoured(monkeypatch, tmp_path, switch):
    habana_fakes.install(monkeypatch, tmp_path, "1.22")  # the fake bridge is eager by default: autoload on
    monkeypatch.setenv(switch, "0")
    habana_fakes.import_torch()
    import sys

    assert "habana_frameworks.torch" not in sys.modules
    backend = hpu.HPUBackend(RunSpec().replace(backend="hpu", hpu_mode="lazy"))
    assert backend.device_info()["autoload"] is False
    backend.setup()
    import habana_frameworks.torch as bridge

    assert bridge.LOADED_LIBRARY == "libhabana_pytorch_plugin.so"
    habana_fakes.drop_fake_modules()


@habana_fakes.needs_torch_autoload
def test_wiring_library_use_after_an_eager_autoload_is_refused(monkeypatch, tmp_path):
    # A program that imported torch (and so, by autoload, the bridge in its default eager mode) before
    # asking the suite for a lazy run: refused while planning, never run eager under the name lazy.
    habana_fakes.install(monkeypatch, tmp_path, "1.22")
    habana_fakes.import_torch()
    with pytest.raises(UserError, match="already imported in eager mode"):
        runner.plan_run(RunSpec().replace(backend="hpu", hpu_mode="lazy", workload="dcgan64"))
    habana_fakes.drop_fake_modules()


@habana_fakes.needs_torch_autoload
def test_wiring_unknown_default_after_an_autoload_is_the_bridges_from_the_plan_on(monkeypatch, tmp_path):
    # A release not in the table (1.25, read as 1.24.1) has no default there; the bridge, autoloaded by
    # `import torch`, already chose eager: the plan runs that (eager + torch.compile), and the record's
    # configuration says so from the start.
    habana_fakes.install(monkeypatch, tmp_path, "1.24.1", bridge_default="eager")
    monkeypatch.setattr(habana_releases, "plugin_version", lambda: "1.25.0.100")
    habana_fakes.import_torch()
    plan = runner.plan_run(RunSpec().replace(backend="hpu", workload="dcgan64"))
    assert plan.spec.hpu.mode == "compile"
    assert "as the bridge reports it" in plan.backend.device_info()["execution_mode_source"]
    habana_fakes.drop_fake_modules()


@habana_fakes.needs_torch_autoload
def test_wiring_eager_default_after_an_autoload_is_the_releases_own(monkeypatch, tmp_path):
    # 1.22 starts eager ([tutorials-1.21]); `import torch` autoloads the bridge in that mode, which is the
    # mode the plan asks for: no refusal, and the record names the release's default as the source.
    habana_fakes.install(monkeypatch, tmp_path, "1.22")
    habana_fakes.import_torch()
    import sys

    assert "habana_frameworks.torch" in sys.modules
    plan = runner.plan_run(RunSpec().replace(backend="hpu", workload="dcgan64"))
    assert plan.spec.hpu.mode == "compile"
    assert plan.backend.device_info()["execution_mode_source"] == "default of Habana 1.22 (eager)"
    habana_fakes.drop_fake_modules()


# -- mpirun ------------------------------------------------------------------------------------------
def test_wiring_mpirun_ranks_plan_the_whole_world(monkeypatch, tmp_path):
    habana_fakes.install(monkeypatch, tmp_path, "1.19")
    # What `mpirun -np 8` gives rank 3 (Open MPI's names only: no torchrun variables).
    for name, value in (
        ("OMPI_COMM_WORLD_RANK", "3"),
        ("OMPI_COMM_WORLD_SIZE", "8"),
        ("OMPI_COMM_WORLD_LOCAL_RANK", "3"),
        ("OMPI_COMM_WORLD_LOCAL_SIZE", "8"),
    ):
        monkeypatch.setenv(name, value)
    plan = runner.plan_run(
        RunSpec().replace(
            backend="hpu", hpu_mode="lazy", workload="dcgan64", batch_size=4, model_overrides=TINY["dcgan64"]
        )
    )
    assert (plan.world_size, plan.global_batch_size) == (8, 32)
    info = distributed.rank_info()
    assert (info.rank, info.world_size, info.local_rank) == (3, 8, 3)
    # The bridge's hccl then finds the set complete and opens module 3.
    plan.backend.setup()
    assert os.environ["HLS_MODULE_ID"] == "3"
    habana_fakes.drop_fake_modules()


def test_mpi_names_are_mapped_only_when_all_three_are_there():
    env = {"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2"}
    assert not distributed.launched(env) and "RANK" not in env
    env = {"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_LOCAL_RANK": "1"}
    assert distributed.launched(env) and (env["RANK"], env["WORLD_SIZE"], env["LOCAL_RANK"]) == (
        "1",
        "2",
        "1",
    )
    torchrun = {
        "RANK": "0",
        "WORLD_SIZE": "4",
        "LOCAL_RANK": "0",
        **{k: "9" for k in distributed.MPI_TO_TORCHRUN},
    }
    distributed.adopt_mpi_environment(torchrun)
    assert (torchrun["RANK"], torchrun["WORLD_SIZE"]) == ("0", "4")  # a complete torchrun set is kept


def test_wiring_cli_op_lists_reach_an_autoloaded_bridge(monkeypatch, tmp_path, capsys):
    habana_fakes.install(monkeypatch, tmp_path, "1.22")
    ops = tmp_path / "bf16.txt"
    ops.write_text("conv2d\n")
    cli_with_torch_imported_after_start(monkeypatch)
    argv = [*RUN, "--hpu-mode", "eager", "--out", str(tmp_path / "out")]
    argv[argv.index("fp32")] = "bf16"
    rc = main([*argv, "--hpu-bf16-ops", str(ops)])
    assert rc == 0, capsys.readouterr().err
    import habana_frameworks.torch as bridge

    assert bridge.IMPORT_ENV["PT_HPU_AUTOCAST_LOWER_PRECISION_OPS_LIST"] == str(ops)
    habana_fakes.drop_fake_modules()


@habana_fakes.needs_torch_autoload
def test_wiring_op_lists_too_late_for_an_imported_bridge_are_refused(monkeypatch, tmp_path):
    habana_fakes.install(monkeypatch, tmp_path, "1.22")
    habana_fakes.import_torch()  # the fake bridge is eager by default: autoloaded without the op list
    ops = tmp_path / "bf16.txt"
    ops.write_text("conv2d\n")
    backend = hpu.HPUBackend(RunSpec().replace(backend="hpu", hpu_mode="eager", hpu_bf16_ops=str(ops)))
    with pytest.raises(UserError, match="PT_HPU_AUTOCAST_LOWER_PRECISION_OPS_LIST"):
        backend.setup()
    habana_fakes.drop_fake_modules()
