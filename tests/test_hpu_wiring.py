"""HPU backend wiring, checked against the fakes in tests/fakes (no Gaudi here: nothing below runs on one).

The fakes run every tensor on the CPU (the backend's `device_type` is set to "cpu" for these tests) and
record calls: mark_step, synchronize, the fused optimizers' arguments and steps, HMP, hccl, the
environment seen at the first import of habana_frameworks.torch.
"""

from __future__ import annotations

import json
import pathlib
import shutil
import sys
import time

import pytest
import torch
from suite.backends import hpu
from suite.workloads import get_workload

from suite.cli import main
from suite.config import RunConfig
from suite.errors import UserError
from suite.measurement import runner

FAKES = pathlib.Path(__file__).parent / "fakes"
FAKE_PACKAGES = ("habana_frameworks", "habana_dataloader", "pyhlml")
ENV_VARS = (
    hpu.LAZY_ENV,
    hpu.BF16_OPS_ENV,
    hpu.FP32_OPS_ENV,
    "WORLD_SIZE",
    "OMPI_COMM_WORLD_SIZE",
    "LOCAL_RANK",
)
TINY_DCGAN = {"ngf": 8, "ndf": 8, "nz": 16}


def _drop_fake_modules() -> None:
    for name in list(sys.modules):
        if name.split(".")[0] in FAKE_PACKAGES:
            del sys.modules[name]


def _install(monkeypatch, tmp_path, root: pathlib.Path) -> None:
    _drop_fake_modules()
    monkeypatch.syspath_prepend(str(root))
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)  # restored (or removed again) after the test
    (tmp_path / "hl0").touch()  # a stand-in Gaudi device node
    monkeypatch.setattr(hpu, "DEVICE_NODE_GLOBS", (str(tmp_path / "hl[0-9]*"),))
    monkeypatch.setattr(hpu.HPUBackend, "device_type", "cpu")


@pytest.fixture
def fakes(monkeypatch, tmp_path):
    _install(monkeypatch, tmp_path, FAKES)
    yield
    _drop_fake_modules()  # other tests never see the fakes


@pytest.fixture
def fakes_without_hmp(monkeypatch, tmp_path):
    """A Habana release after 1.11: the same fakes, with no hpex/hmp."""
    root = tmp_path / "fakes"
    shutil.copytree(FAKES, root, ignore=lambda d, names: ["hmp"] if d.endswith("hpex") else [])
    _install(monkeypatch, tmp_path, root)
    yield
    _drop_fake_modules()


def recorder():
    import habana_frameworks

    return habana_frameworks


def tiny_dcgan_training(backend):
    return get_workload("dcgan64").with_overrides(**TINY_DCGAN).build(backend)


def make_backend(**config) -> hpu.HPUBackend:
    backend = hpu.HPUBackend(RunConfig(backend="hpu", **config))
    backend.setup()
    return backend


def real_batch(batch_size=2):
    return torch.rand(batch_size, 3, 64, 64) * 2 - 1, torch.zeros(batch_size, dtype=torch.long)


# -- detection and environment -----------------------------------------------------------------
def test_wiring_detection_imports_nothing(fakes):
    ok, reason = hpu.HPUBackend.is_available()
    assert ok, reason
    hpu.HPUBackend(RunConfig(backend="hpu", hpu_mode="lazy"))
    assert not any(name.startswith("habana_frameworks") for name in sys.modules)


@pytest.mark.parametrize("mode, expected", [("lazy", "1"), ("eager", "0"), ("compile", "0")])
def test_wiring_env_set_before_first_import(fakes, tmp_path, mode, expected):
    ops = tmp_path / "bf16.txt"
    ops.write_text("conv2d\n")
    make_backend(hpu_mode=mode, hpu_bf16_ops=str(ops))
    import habana_frameworks.torch as bridge

    assert bridge.IMPORT_ENV[hpu.LAZY_ENV] == expected
    assert bridge.IMPORT_ENV[hpu.BF16_OPS_ENV] == str(ops)
    assert recorder().events()[0] == "import habana_frameworks.torch"


def test_wiring_refuses_mode_after_a_foreign_import(fakes, monkeypatch):
    monkeypatch.setenv(hpu.LAZY_ENV, "0")
    import habana_frameworks.torch  # noqa: F401  (imported early, in eager mode)

    with pytest.raises(UserError, match="fresh process"):
        make_backend(hpu_mode="lazy")


def test_default_mode_follows_environment_then_release(monkeypatch):
    monkeypatch.setenv(hpu.LAZY_ENV, "1")
    assert hpu.default_mode()[0] == "lazy"
    monkeypatch.setenv(hpu.LAZY_ENV, "0")
    assert hpu.default_mode()[0] == "compile"
    monkeypatch.delenv(hpu.LAZY_ENV)
    monkeypatch.setattr(hpu, "plugin_version", lambda: "1.18.0.524")
    assert hpu.default_mode() == ("lazy", "default of habana-torch-plugin 1.18.0.524 (lazy)")
    monkeypatch.setattr(hpu, "plugin_version", lambda: "1.21.0.555")
    assert hpu.default_mode()[0] == "compile"
    monkeypatch.setattr(hpu, "plugin_version", lambda: None)
    assert hpu.default_mode()[0] == "lazy"


# -- the training step -------------------------------------------------------------------------
@pytest.fixture
def record_backward(monkeypatch):
    original = torch.Tensor.backward

    def backward(self, *args, **kwargs):
        recorder().record("backward")
        return original(self, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "backward", backward)


STEP_EVENTS = ("backward", "mark_step", "optimizer.step")


def test_wiring_lazy_mark_step_after_each_backward_and_each_step(fakes, record_backward):
    backend = make_backend(hpu_mode="lazy", precision="fp32")
    training = tiny_dcgan_training(backend)
    training.train_step(real_batch())
    one_optimizer = ["backward", "mark_step", "optimizer.step", "mark_step"]
    assert recorder().events(*STEP_EVENTS) == one_optimizer * 2  # discriminator, then generator
    training.train_step(real_batch())
    assert recorder().events("mark_step").count("mark_step") == 8  # 4 per DCGAN iteration


@pytest.mark.parametrize("mode", ["eager", "compile"])
def test_wiring_no_mark_step_outside_lazy_mode(fakes, record_backward, monkeypatch, mode):
    compiled = []
    monkeypatch.setattr(torch, "compile", lambda module, **kw: compiled.append(kw) or module)
    backend = make_backend(hpu_mode=mode, precision="fp32")
    tiny_dcgan_training(backend).train_step(real_batch())
    assert recorder().events(*STEP_EVENTS) == ["backward", "optimizer.step"] * 2
    expected = [{"backend": "hpu_backend"}] * 2 if mode == "compile" else []
    assert compiled == expected  # generator and discriminator, compiled only in compile mode


# -- optimizers --------------------------------------------------------------------------------
def test_wiring_fused_adamw_gets_dcgan_hyperparameters(fakes):
    backend = make_backend(hpu_mode="lazy")
    training = tiny_dcgan_training(backend)
    built = [details for event, details in recorder().CALLS if event == "FusedAdamW"]
    assert built == [{"lr": 2e-4, "betas": (0.5, 0.999), "eps": 1e-8, "weight_decay": 0.05}] * 2
    assert all(type(opt).__name__ == "FusedAdamW" for opt in training.optimizers.values())


def test_wiring_fused_optimizers_never_use_habana_defaults(fakes):
    backend = make_backend(hpu_mode="lazy")
    layer = torch.nn.Linear(2, 2)
    opt = backend.make_optimizer(layer.parameters(), "adamw", lr=1e-3)
    # torch.optim.AdamW's eps and weight decay, not FusedAdamW's 1e-6 and 0.0
    assert (opt.defaults["eps"], opt.defaults["weight_decay"]) == (1e-8, 1e-2)
    backend.make_optimizer(layer.parameters(), "sgd", lr=0.1, momentum=0.9, weight_decay=1e-4)
    sgd = [details for event, details in recorder().CALLS if event == "FusedSGD"]
    assert sgd == [{"lr": 0.1, "momentum": 0.9, "weight_decay": 1e-4, "dampening": 0, "nesterov": False}]


def test_wiring_no_fused_uses_torch_optimizers(fakes):
    backend = make_backend(hpu_mode="lazy", hpu_fused=False)
    training = tiny_dcgan_training(backend)
    assert all(type(opt) is torch.optim.AdamW for opt in training.optimizers.values())
    assert "FusedAdamW" not in recorder().events()
    assert backend.device_info()["optimizers"] == ["adamw: torch.optim (--no-fused)"]


# -- precision ---------------------------------------------------------------------------------
def test_wiring_hmp_converts_once_and_steps_without_casts(fakes, tmp_path):
    bf16, fp32 = tmp_path / "bf16.txt", tmp_path / "fp32.txt"
    bf16.write_text("conv2d\n")
    fp32.write_text("binary_cross_entropy_with_logits\n")
    backend = make_backend(hpu_mode="lazy", precision="hmp", hpu_bf16_ops=str(bf16), hpu_fp32_ops=str(fp32))
    converts = [details for event, details in recorder().CALLS if event == "hmp.convert"]
    assert converts == [
        {"opt_level": "O1", "bf16_file_path": str(bf16), "fp32_file_path": str(fp32), "isVerbose": False}
    ]
    import habana_frameworks.torch as bridge

    assert hpu.BF16_OPS_ENV not in bridge.IMPORT_ENV  # the lists went to HMP, not to autocast
    assert not torch.is_autocast_enabled("cpu")
    with backend.autocast():
        assert not torch.is_autocast_enabled("cpu")  # HMP casts ops itself
    tiny_dcgan_training(backend).train_step(real_batch())
    steps = recorder().events(
        "hmp.disable_casts enter", "optimizer.step", "hmp.disable_casts exit", "mark_step"
    )
    assert steps[-4:] == ["hmp.disable_casts enter", "optimizer.step", "hmp.disable_casts exit", "mark_step"]
    assert steps.count("hmp.disable_casts enter") == 2


def test_wiring_hmp_absent_is_a_user_error_pointing_to_bf16(fakes_without_hmp, capsys):
    with pytest.raises(UserError, match="--precision bf16"):
        runner.plan_run(RunConfig(backend="hpu", precision="hmp"))
    assert main(["run", "--backend", "hpu", "--precision", "hmp"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("suite: error: precision 'hmp'") and err.count("\n") == 1
    assert "Traceback" not in err


def test_wiring_bf16_autocast_on_the_device_type(fakes):
    backend = make_backend(hpu_mode="lazy")
    with backend.autocast():
        assert torch.is_autocast_enabled("cpu") and torch.get_autocast_dtype("cpu") == torch.bfloat16


# -- data --------------------------------------------------------------------------------------
@pytest.fixture
def image_folder(tmp_path):
    from PIL import Image

    for label in ("a", "b"):
        (tmp_path / "images" / label).mkdir(parents=True)
        Image.new("RGB", (40, 40), (10, 20, 30)).save(tmp_path / "images" / label / "0.png")
    return tmp_path / "images"


def test_wiring_habana_dataloader_when_dataset_qualifies(fakes, image_folder):
    import torchvision
    from torchvision import transforms as T

    backend = make_backend(hpu_mode="lazy")
    imagenet = T.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    train = T.Compose([T.RandomResizedCrop(32), T.RandomHorizontalFlip(), T.ToTensor(), imagenet])
    dataset = torchvision.datasets.ImageFolder(str(image_folder), transform=train)
    loader, info = backend.make_loader(dataset, batch_size=2, shuffle=True, num_workers=2, pin_memory=False)
    import habana_dataloader

    assert info["loader"] == "habana_dataloader.HabanaDataLoader"
    assert isinstance(loader, habana_dataloader.HabanaDataLoader)
    created = habana_dataloader.CREATED[-1]
    assert (created["num_workers"], created["pin_memory"], created["drop_last"]) == (8, True, True)
    assert "shuffle" not in created and isinstance(created["sampler"], torch.utils.data.RandomSampler)
    assert set(info["adjusted"]) == {"shuffle", "num_workers", "pin_memory"}

    # DCGAN's own normalisation (mean 0.5) is not one HabanaDataLoader can do: the plain loader, and why.
    dataset.transform = T.Compose(
        [T.Resize(32), T.CenterCrop(32), T.ToTensor(), T.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))]
    )
    loader, info = backend.make_loader(dataset, batch_size=2)
    assert type(loader) is torch.utils.data.DataLoader
    assert info["loader"] == "torch.utils.data.DataLoader" and "ImageNet mean/std" in info["why"]
    assert len(habana_dataloader.CREATED) == 1


def test_wiring_plain_loader_for_other_datasets_or_without_the_wheel(fakes, monkeypatch):
    backend = make_backend(hpu_mode="lazy")
    dataset = torch.utils.data.TensorDataset(torch.zeros(4, 3, 8, 8))
    loader, info = backend.make_loader(dataset, batch_size=2)
    assert type(loader) is torch.utils.data.DataLoader and loader.drop_last
    assert "only torchvision ImageFolder, not TensorDataset" in info["why"]
    monkeypatch.setitem(sys.modules, "habana_dataloader", None)  # as if the wheel were not installed
    _, info = backend.make_loader(dataset, batch_size=2)
    assert "habana_dataloader not installed" in info["why"]


# -- measurement -------------------------------------------------------------------------------
class RecordingClock:
    """Stands in for the runner's `time` module and window clock: every read is recorded next to device calls."""

    def __getattr__(self, name):
        return getattr(time, name)

    def perf_counter(self):
        recorder().record("clock")
        return time.perf_counter()

    def time(self):
        recorder().record("clock")
        return time.time()


def run_tiny(**config):
    # fp32: bf16 autocast on a CPU without bf16 units is slow, and the precision is not what is checked here.
    plan = runner.plan_run(
        RunConfig(
            backend="hpu",
            workload="dcgan64",
            batch_size=2,
            warmup_steps=1,
            steps_per_window=1,
            windows=2,
            precision="fp32",
            model_overrides=TINY_DCGAN,
            **config,
        )
    )
    return runner.execute(plan)


def test_wiring_synchronize_before_each_timestamp(fakes, monkeypatch):
    recording = RecordingClock()
    monkeypatch.setattr(runner, "time", recording)
    monkeypatch.setattr(runner, "clock", recording.perf_counter)
    record = run_tiny(hpu_mode="lazy")
    assert record["status"] == "ok", record.get("error")
    events = recorder().events("clock", "synchronize", "mark_step", "optimizer.step")
    clocks = [i for i, event in enumerate(events) if event == "clock"]
    # warm-up start, first step done, warm-up end, then start and end of each of 2 windows
    assert len(clocks) == 3 + 2 * 2
    assert "mark_step" not in events[: clocks[0]]  # the first read comes before any device work
    for i in clocks[1:]:
        assert events[i - 1] == "synchronize", events[max(0, i - 4) : i + 1]


def test_wiring_record_says_mode_memory_and_device(fakes):
    record = run_tiny()  # no --hpu-mode, no PT_HPU_LAZY_MODE, no plugin version: lazy assumed
    assert record["status"] == "ok", record.get("error")
    assert record["config"]["hpu_mode"] == "lazy"
    device = record["device"]
    assert device["execution_mode"] == "lazy" and "version unknown" in device["execution_mode_source"]
    assert device["env_at_import"][hpu.LAZY_ENV] == "1"
    assert (device["name"], device["count"]) == ("GAUDI (fake)", 1)
    assert record["memory"] == {
        "peak_memory_bytes": 3 * 2**20,
        "allocated_bytes": 3 * 2**20,
        "total_memory_bytes": 32 * 2**30,
        "num_allocs": 7,
    }
    assert "reset_peak_memory_stats" in recorder().events()


def test_wiring_cli_run_end_to_end(fakes, tmp_path, capsys, monkeypatch):
    tiny = get_workload("dcgan64").with_overrides(**TINY_DCGAN)
    monkeypatch.setattr(runner, "get_workload", lambda name: tiny)  # the CLI has no width option
    rc = main(
        [
            "run",
            "--backend",
            "hpu",
            "--hpu-mode",
            "eager",
            "--precision",
            "fp32",
            "--batch-size",
            "2",
            "--warmup",
            "1",
            "--steps",
            "1",
            "--windows",
            "1",
            "--out",
            str(tmp_path / "out"),
            "--json",
        ]
    )
    record = json.loads(capsys.readouterr().out)
    assert rc == 0 and record["status"] == "ok"
    assert (
        record["config"]["hpu_mode"] == "eager" and record["device"]["execution_mode_source"] == "--hpu-mode"
    )
    assert "mark_step" not in recorder().events()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--hpu-mode", "turbo"], "argument --hpu-mode: invalid choice: 'turbo'"),
        (["--hpu-bf16-ops", "/no/such/ops.txt"], "--hpu-bf16-ops '/no/such/ops.txt': no such file"),
    ],
)
def test_wiring_bad_hpu_options_exit_2(fakes, capsys, argv, message):
    assert main(["run", "--backend", "hpu", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1


def test_wiring_hccl_imported_for_multi_process_runs(fakes, monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "8")
    make_backend(hpu_mode="lazy")
    assert "import hccl" in recorder().events()


# -- telemetry ---------------------------------------------------------------------------------
def test_wiring_hlml_units_converted_and_init_once(fakes):
    import pyhlml
    from suite.backends.hlml import HLMLSampler

    backend = make_backend(hpu_mode="lazy")
    (sampler,) = backend.telemetry_samplers()
    assert isinstance(sampler, HLMLSampler)
    sampler.open()
    samples = [sampler.sample() for _ in range(3)]
    counters = sampler.counters()
    sampler.close()
    assert samples[0] == {
        "hpu_util_percent": 87.0,
        "hpu_memory_used_bytes": float(12 * 2**30),
        "hpu_power_w": 123.456,  # 123456 mW
        "hpu_temperature_c": 48.0,
    }
    assert counters == {"hpu_energy_j": 9876.0}  # 9876000 mJ, a running total read at window edges
    assert pyhlml.CALLS.count("hlmlInit") == 1 and pyhlml.CALLS.count("hlmlShutdown") == 1
    assert pyhlml.CALLS.count("utilization") == 3 and "temperature sensor 0" in pyhlml.CALLS


def test_wiring_hlml_without_energy_counter(fakes, monkeypatch):
    import pyhlml
    from suite.backends.hlml import HLMLSampler

    monkeypatch.setattr(pyhlml, "HAS_ENERGY", False)
    sampler = HLMLSampler(index=3)
    sampler.open()
    assert sampler.counters() == {}
    assert "handle 3" in pyhlml.CALLS


def test_wiring_hpu_ddp_follows_habanas_guidance(fakes, monkeypatch):
    seen = {}
    monkeypatch.setattr(
        torch.nn.parallel, "DistributedDataParallel", lambda module, **kwargs: seen.update(kwargs) or module
    )
    backend = make_backend(hpu_mode="lazy")
    backend.init_distributed()
    assert "import hccl" in recorder().events()
    backend.wrap_ddp(torch.nn.Linear(2, 2))
    assert seen == {"broadcast_buffers": False, "gradient_as_bucket_view": True}  # and no device_ids


def test_wiring_numerics_check_against_the_cpu(fakes):
    plan = runner.plan_run(
        RunConfig(
            backend="hpu",
            workload="dcgan64",
            batch_size=2,
            precision="bf16",
            hpu_mode="lazy",
            model_overrides=TINY_DCGAN,
            check_numerics=True,
            reference_backend="cpu",
        )
    )
    from suite.measurement import numerics

    result = numerics.check(plan)
    assert result["reference"] == "cpu fp32 (TF32 off)" and result["candidate"] == "hpu bf16"
    assert result["verdict"] == "pass", result["reason"]
    # Only the candidate ran on the (fake) Gaudi: one read at its end, lazy graphs cut every step.
    assert recorder().events("synchronize").count("synchronize") == 1
    assert recorder().events("mark_step").count("mark_step") >= result["steps"]
