"""HPU backend wiring, checked against the fakes in tests/fakes (no Gaudi here: nothing below runs on one).

The fakes run every tensor on the CPU (the backend's `device_type` is set to "cpu" for these tests) and
record calls: mark_step, synchronize, the fused optimizers' arguments and steps, HMP, hccl, the
environment seen at the first import of habana_frameworks.torch.
"""

from __future__ import annotations

import json
import os
import sys
import time

import habana_fakes
import pytest
import torch
from conftest import TINY, TINY_RUN, changed
from suite.backends import habana_releases, hpu
from suite.workloads import get_workload

from suite.cli import main
from suite.inputs.errors import UserError
from suite.measurement import runner
from suite.spec import RunSpec

drop_fake_modules = habana_fakes.drop_fake_modules


@pytest.fixture
def fakes(monkeypatch, tmp_path):
    """Habana 1.19 (the release whose bridge source the fakes follow)."""
    habana_fakes.install(monkeypatch, tmp_path, "1.19")
    yield
    drop_fake_modules()  # other tests never see the fakes


@pytest.fixture(params=habana_fakes.PROFILES)
def release(request, monkeypatch, tmp_path):
    """The same test under each release profile of the table."""
    installed = habana_fakes.install(monkeypatch, tmp_path, request.param)
    yield installed
    drop_fake_modules()


@pytest.fixture
def fakes_with_hmp(monkeypatch, tmp_path):
    """Habana 1.10: HMP still there, op lists named LOWER_LIST / FP32_LIST, eager is "2"."""
    yield habana_fakes.install(monkeypatch, tmp_path, "1.10")
    drop_fake_modules()


def cpu_autocast_enabled() -> bool:
    # torch.is_autocast_enabled(device) from torch 2.4; before, one function per device.
    try:
        return torch.is_autocast_enabled("cpu")
    except TypeError:
        return torch.is_autocast_cpu_enabled()


def cpu_autocast_dtype():
    getter = getattr(torch, "get_autocast_dtype", None)
    return getter("cpu") if getter else torch.get_autocast_cpu_dtype()


def recorder():
    import habana_frameworks

    return habana_frameworks


def tiny_dcgan_training(backend):
    return get_workload("dcgan64").with_overrides(**TINY["dcgan64"]).build(backend)


def make_backend(**config) -> hpu.HPUBackend:
    backend = hpu.HPUBackend(RunSpec().replace(backend="hpu", **config))
    backend.setup()
    return backend


def real_batch(batch_size=2):
    return torch.rand(batch_size, 3, 64, 64) * 2 - 1, torch.zeros(batch_size, dtype=torch.long)


# -- detection and environment -----------------------------------------------------------------
def test_wiring_detection_imports_nothing(fakes):
    ok, reason = hpu.HPUBackend.is_available()
    assert ok, reason
    hpu.HPUBackend(RunSpec().replace(backend="hpu", hpu_mode="lazy"))
    assert not any(name.startswith("habana_frameworks") for name in sys.modules)


@pytest.mark.parametrize("mode", ["lazy", "eager", "compile"])
def test_wiring_env_set_before_first_import_with_the_releases_values(release, tmp_path, mode):
    if mode == "compile" and release.compile_backend is None:
        pytest.skip("no torch.compile backend in this release (its refusal is tested below)")
    ops = tmp_path / "bf16.txt"
    ops.write_text("conv2d\n")
    backend = make_backend(hpu_mode=mode, hpu_bf16_ops=str(ops))
    import habana_frameworks.torch as bridge

    # 1.10: eager is "2"; later "0". The op list goes under the release's variable name.
    assert bridge.IMPORT_ENV[hpu.LAZY_ENV] == {"lazy": "1"}.get(
        mode, "2" if release.version == "1.10" else "0"
    )
    assert bridge.IMPORT_ENV[release.bf16_ops_env] == str(ops)
    assert habana_fakes.recorder().events()[0] == "import habana_frameworks.torch"
    # And the bridge really runs the mode asked for, as the record says.
    assert (bridge.LOADED_LIBRARY == "libhabana_pytorch_plugin.so") == (mode == "lazy")
    assert backend.device_info()["execution_mode_verified_by"] == "habana_frameworks is_lazy()"


def test_wiring_old_release_reads_2_as_eager(fakes_with_hmp, monkeypatch):
    # Up to 1.11, PT_HPU_LAZY_MODE=2 is eager (Model-References 1.11.0 train.py); the bridge agrees.
    monkeypatch.setenv(hpu.LAZY_ENV, "2")
    assert hpu.default_mode()[0] == "eager"
    backend = make_backend()
    assert backend.mode == "eager" and backend.device_info()["execution_mode"] == "eager"
    import habana_frameworks.torch as bridge

    assert bridge.LOADED_LIBRARY == "libhabana_pytorch2_plugin.so"


def test_wiring_compile_refused_where_the_release_has_no_backend(fakes_with_hmp):
    with pytest.raises(UserError, match="no torch.compile backend"):
        hpu.HPUBackend(RunSpec().replace(backend="hpu", hpu_mode="compile"))


def test_wiring_refuses_mode_after_a_foreign_import(fakes, monkeypatch):
    monkeypatch.setenv(hpu.LAZY_ENV, "0")
    import habana_frameworks.torch  # noqa: F401  (imported early, in eager mode)

    monkeypatch.delenv(hpu.LAZY_ENV)  # whatever the environment says now, the bridge runs eager
    with pytest.raises(UserError, match="already imported in eager mode") as refused:
        hpu.HPUBackend(RunSpec().replace(backend="hpu", hpu_mode="lazy"))
    # Advice that can work: the variable before Python starts, or no autoload.
    assert f"{hpu.LAZY_ENV}=1 set before Python starts" in str(refused.value)
    assert "PT_HPU_AUTOLOAD=0" in str(refused.value)


@pytest.mark.parametrize(
    "version, env, expected",
    [
        ("1.10", None, "lazy"),
        ("1.10", "2", "eager"),
        ("1.13", "0", "compile"),
        ("1.13", "2", "lazy"),  # from 1.12 anything but "0" is lazy
        ("1.19", None, "lazy"),
        ("1.20", None, "lazy"),  # Habana: lazy is no longer the default since 1.21.0
        ("1.21", None, "compile"),  # eager, run with the release's torch.compile backend
        ("1.24.1", None, "compile"),
        ("1.24.1", "1", "lazy"),
        ("1.23", "0", "compile"),
        ("1.25.0", None, None),  # not in the table: the bridge's own, known after its import
        ("1.25.0", "1", "lazy"),
    ],
)
def test_default_mode_follows_environment_then_release(monkeypatch, version, env, expected):
    if env is None:
        monkeypatch.delenv(hpu.LAZY_ENV, raising=False)
    else:
        monkeypatch.setenv(hpu.LAZY_ENV, env)
    release, _ = habana_releases.lookup(version)
    assert hpu.default_mode(release)[0] == expected


def test_wiring_default_mode_is_the_one_that_runs(release):
    backend = make_backend()
    import habana_frameworks.torch as bridge

    running_lazy = bridge.LOADED_LIBRARY == "libhabana_pytorch_plugin.so"
    assert (backend.mode == "lazy") == running_lazy == (release.default_mode == "lazy")


@pytest.mark.parametrize("bridge_default, mode", [("eager", "compile"), ("lazy", "lazy")])
def test_wiring_unknown_default_runs_the_mode_the_bridge_chose(monkeypatch, tmp_path, bridge_default, mode):
    # A release the table does not know (1.25, read as its nearest row 1.24.1): its default is not assumed,
    # so the suite sets no PT_HPU_LAZY_MODE and runs what the bridge reports: eager + torch.compile where
    # eager is the default, lazy where lazy is.
    habana_fakes.install(monkeypatch, tmp_path, "1.24.1", bridge_default=bridge_default)
    monkeypatch.setattr(habana_releases, "plugin_version", lambda: "1.25.0.100")
    compiled = []
    monkeypatch.setattr(torch, "compile", lambda module, **kw: compiled.append(kw) or module)
    record = run_tiny()
    assert record["status"] == "ok", record.get("error")
    device = record["device"]
    assert (
        device["execution_mode"] == mode
        and device["execution_mode_verified_by"] == "habana_frameworks is_lazy()"
    )
    assert device["execution_mode_source"].startswith(
        f"default of Habana 1.24.1 ({bridge_default}, as the bridge"
    )
    assert "1.25.0.100 is not in the release table" in device["release_warning"]
    assert hpu.LAZY_ENV not in device["env_at_import"]  # left to the bridge
    assert ("mark_step" in recorder().events()) == (mode == "lazy")
    assert all(kw == {"backend": "hpu_backend"} for kw in compiled) and bool(compiled) == (mode == "compile")
    drop_fake_modules()


@pytest.mark.parametrize("mode, value", [("lazy", "1"), ("eager", "0"), ("compile", "0")])
def test_wiring_hpu_mode_still_chooses_on_a_release_with_an_unknown_default(
    monkeypatch, tmp_path, mode, value
):
    habana_fakes.install(monkeypatch, tmp_path, "1.24.1", bridge_default="lazy" if value == "0" else "eager")
    monkeypatch.setattr(habana_releases, "plugin_version", lambda: "1.25.0.100")
    backend = make_backend(hpu_mode=mode)
    import habana_frameworks.torch as bridge

    assert bridge.IMPORT_ENV[hpu.LAZY_ENV] == value and backend.spec.hpu.mode == mode
    assert (bridge.LOADED_LIBRARY == "libhabana_pytorch_plugin.so") == (mode == "lazy")
    assert backend.device_info()["execution_mode_source"] == "--hpu-mode"
    drop_fake_modules()


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
    # FusedAdamW.step() ends with its own mark_step in lazy mode; the backend's follows it.
    one_optimizer = ["backward", "mark_step", "optimizer.step", "mark_step", "mark_step"]
    assert recorder().events(*STEP_EVENTS) == one_optimizer * 2  # discriminator, then generator
    training.train_step(real_batch())
    assert recorder().events("mark_step").count("mark_step") == 12  # 6 per DCGAN iteration


@pytest.mark.parametrize("mode", ["eager", "compile"])
def test_wiring_no_mark_step_outside_lazy_mode(fakes, record_backward, monkeypatch, mode):
    compiled = []
    monkeypatch.setattr(torch, "compile", lambda module, **kw: compiled.append(kw) or module)
    backend = make_backend(hpu_mode=mode, precision="fp32")
    training = tiny_dcgan_training(backend)
    assert compiled == []  # building does not compile: the runner compiles after the DDP wrap
    training.modules = {name: backend.compile_model(m) for name, m in training.modules.items()}
    training.train_step(real_batch())
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
def test_wiring_hmp_converts_once_and_steps_without_casts(fakes_with_hmp, tmp_path):
    bf16, fp32 = tmp_path / "bf16.txt", tmp_path / "fp32.txt"
    bf16.write_text("conv2d\n")
    fp32.write_text("binary_cross_entropy_with_logits\n")
    backend = make_backend(hpu_mode="lazy", precision="hmp", hpu_bf16_ops=str(bf16), hpu_fp32_ops=str(fp32))
    converts = [details for event, details in recorder().CALLS if event == "hmp.convert"]
    assert converts == [
        {"opt_level": "O1", "bf16_file_path": str(bf16), "fp32_file_path": str(fp32), "isVerbose": False}
    ]
    import habana_frameworks.torch as bridge

    assert fakes_with_hmp.bf16_ops_env not in bridge.IMPORT_ENV  # the lists went to HMP, not to autocast
    assert not cpu_autocast_enabled()
    with backend.autocast():
        assert not cpu_autocast_enabled()  # HMP casts ops itself
    tiny_dcgan_training(backend).train_step(real_batch())
    steps = recorder().events(
        "hmp.disable_casts enter", "optimizer.step", "hmp.disable_casts exit", "mark_step"
    )
    assert steps[-5:] == [
        "hmp.disable_casts enter",
        "optimizer.step",
        "mark_step",  # FusedAdamW's own, inside its step()
        "hmp.disable_casts exit",
        "mark_step",
    ]
    assert steps.count("hmp.disable_casts enter") == 2


def test_wiring_hmp_absent_is_a_user_error_pointing_to_bf16(fakes, capsys):
    with pytest.raises(UserError, match="--precision bf16"):
        runner.plan_run(RunSpec().replace(backend="hpu", precision="hmp"))
    assert main(["run", "--backend", "hpu", "--precision", "hmp"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("suite: error: precision 'hmp'") and err.count("\n") == 1
    assert "Traceback" not in err


def test_wiring_bf16_autocast_on_the_device_type(fakes):
    backend = make_backend(hpu_mode="lazy")
    with backend.autocast():
        assert cpu_autocast_enabled() and cpu_autocast_dtype() == torch.bfloat16


# -- data --------------------------------------------------------------------------------------
@pytest.fixture
def image_folder(tmp_path):
    from PIL import Image

    for label in ("a", "b"):
        (tmp_path / "images" / label).mkdir(parents=True)
        Image.new("RGB", (40, 40), (10, 20, 30)).save(tmp_path / "images" / label / "0.png")
    return tmp_path / "images"


IMAGENET = {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}


def suite_loader_kwargs(**extra):
    """What suite.data.imagefolder hands make_loader (its own generator, persistent workers, prefetch)."""
    return dict(
        batch_size=2,
        shuffle=True,
        sampler=None,
        num_workers=2,
        pin_memory=False,
        drop_last=True,
        generator=torch.Generator().manual_seed(0),
        prefetch_factor=2,
        persistent_workers=True,
        **extra,
    )


@pytest.mark.parametrize("generation, path", [("gaudi", "aeon"), ("gaudi2", "mediapipe")])
def test_wiring_resnet_imagefolder_qualifies_on_gaudi1_and_gaudi2(fakes, image_folder, generation, path):
    from suite.data.imagefolder import ImageFolderData, normalisation_for
    from suite.data.loader_options import LoaderOptions

    habana_fakes.set_generation(generation)
    backend = make_backend(hpu_mode="lazy")
    data = ImageFolderData(
        str(image_folder),
        image_size=32,
        backend=backend,
        options=LoaderOptions(batch_size=2, workers=2, pin_memory=False, prefetch=2),
        normalisation=normalisation_for(get_workload("resnet50")),
    )
    import habana_dataloader

    # HabanaDataLoader really built its own loader (no fallback, nothing printed and lost).
    assert isinstance(data.loader, habana_dataloader.HabanaDataLoader)
    assert not data.loader.dataloader.fallback_activated
    assert recorder().events("habana loader", "habana loader fallback") == ["habana loader"]
    built = next(details for event, details in recorder().CALLS if event == "habana loader")
    assert built["path"] == path
    assert data.loader_info["loader"] == "habana_dataloader.HabanaDataLoader"
    assert data.loader_info["generation"] == generation
    if generation == "gaudi":
        kwargs = built["kwargs"]
        assert (kwargs["num_workers"], kwargs["pin_memory"], kwargs["prefetch_factor"]) == (8, True, 2)
        assert "shuffle" not in kwargs and isinstance(kwargs["sampler"], torch.utils.data.RandomSampler)
    images, labels = next(iter(data.loader))
    assert images.shape == (2, 3, 32, 32)


def test_wiring_dcgan_imagefolder_falls_back_with_the_reason(fakes, image_folder):
    from suite.data.imagefolder import ImageFolderData
    from suite.data.loader_options import LoaderOptions

    backend = make_backend(hpu_mode="lazy")
    data = ImageFolderData(
        str(image_folder),
        image_size=32,
        backend=backend,
        options=LoaderOptions(batch_size=2, workers=2, pin_memory=False, prefetch=2),
    )  # DCGAN's Normalize(0.5, 0.5): one HabanaDataLoader cannot do
    assert type(data.loader) is torch.utils.data.DataLoader
    assert "ImageNet mean/std" in data.loader_info["why"]
    # Plain loader workers on hpu start by forkserver, never fork (Synapse).
    assert data.loader.multiprocessing_context.get_start_method() == "forkserver"
    assert data.loader_info["worker_start_method"] == "forkserver"


def test_wiring_habana_fallback_detected_on_the_inner_loader(fakes, image_folder, monkeypatch):
    import torchvision
    from torchvision import transforms as T

    backend = make_backend(hpu_mode="lazy")
    transform = T.Compose([T.Resize(32), T.CenterCrop(32), T.ToTensor(), T.Normalize(**IMAGENET)])
    dataset = torchvision.datasets.ImageFolder(str(image_folder), transform=transform)
    # A refusal the suite's checks do not foresee: the real loader falls back by itself.
    import habana_dataloader

    monkeypatch.setattr(
        habana_dataloader, "_check_transforms", lambda t: (_ for _ in ()).throw(ValueError("x"))
    )
    loader, info = backend.make_loader(dataset, **suite_loader_kwargs())
    assert isinstance(loader, habana_dataloader.HabanaDataLoader) and loader.dataloader.fallback_activated
    assert info["loader"].startswith("torch.utils.data.DataLoader (HabanaDataLoader fell back")


def test_wiring_no_habana_loader_on_gaudi3(fakes, image_folder):
    import torchvision
    from torchvision import transforms as T

    habana_fakes.set_generation("gaudi3")
    backend = make_backend(hpu_mode="lazy")
    transform = T.Compose([T.Resize(32), T.CenterCrop(32), T.ToTensor(), T.Normalize(**IMAGENET)])
    dataset = torchvision.datasets.ImageFolder(str(image_folder), transform=transform)
    loader, info = backend.make_loader(dataset, **suite_loader_kwargs())
    assert type(loader) is torch.utils.data.DataLoader and "not gaudi3" in info["why"]


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
        RunSpec().replace(
            backend="hpu",
            workload="dcgan64",
            batch_size=2,
            warmup_steps=1,
            steps_per_window=1,
            windows=2,
            precision="fp32",
            model_overrides=TINY["dcgan64"],
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
    record = run_tiny()  # no --hpu-mode, no PT_HPU_LAZY_MODE: 1.19's default, lazy
    assert record["status"] == "ok", record.get("error")
    assert record["config"]["hpu_mode"] == "lazy"
    device = record["device"]
    assert device["execution_mode"] == "lazy"
    assert device["execution_mode_source"] == "default of Habana 1.19 (lazy)"
    assert device["habana_release"] == "1.19" and "release_warning" not in device
    assert device["env_at_import"][hpu.LAZY_ENV] == "1"
    assert (device["name"], device["generation"], device["count"]) == ("GAUDI", "gaudi", 1)
    assert record["memory"] == {
        "peak_memory_bytes": 3 * 2**20,
        "allocated_bytes": 3 * 2**20,
        "total_memory_bytes": 32 * 2**30,
        "num_allocs": 7,
    }
    assert "reset_peak_memory_stats" in recorder().events()


def test_wiring_cli_run_end_to_end(fakes, tmp_path, capsys):
    rc = main(
        [
            *changed(TINY_RUN, backend="hpu"),
            "--hpu-mode",
            "eager",
            "--precision",
            "fp32",
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
def test_wiring_hlml_units_converted_and_init_once(fakes, monkeypatch):
    import pyhlml
    from suite.backends.hlml import HLMLSampler

    monkeypatch.setenv("HLS_MODULE_ID", "5")  # HLML index 0 holds module 5 in the fake, as on an HLS
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


@pytest.mark.parametrize("local_rank, module_id, hlml_index", [(0, "0", 3), (5, "5", 0), (2, "2", 5)])
def test_wiring_hlml_opens_the_card_of_this_rank(fakes, monkeypatch, local_rank, module_id, hlml_index):
    # An 8-rank run: the bridge's hccl maps LOCAL_RANK to HLS_MODULE_ID; HLML's index order differs.
    monkeypatch.setenv("WORLD_SIZE", "8")
    monkeypatch.setenv("RANK", str(local_rank))
    monkeypatch.setenv("LOCAL_RANK", str(local_rank))
    backend = make_backend(hpu_mode="lazy")
    assert os.environ["HLS_MODULE_ID"] == module_id
    (sampler,) = backend.telemetry_samplers()
    sampler.open()
    assert sampler.attribution["hlml_index"] == hlml_index
    assert sampler.attribution["matched_by"] == "module_id (HLS_MODULE_ID)"
    assert backend.device_info()["hlml_card"]["module_id"] == int(module_id)
    sampler.close()


def test_wiring_hlml_unattributed_when_it_cannot_tell(fakes):
    backend = make_backend(hpu_mode="lazy")  # one process, 8 cards, no HLS_MODULE_ID: the bridge took any
    (sampler,) = backend.telemetry_samplers()
    sampler.open()
    assert sampler.sample() == {} and sampler.counters() == {}
    assert "unattributed" in backend.device_info()["hlml_card"]
    sampler.close()


def test_wiring_hlml_without_energy_counter(fakes, monkeypatch):
    import pyhlml
    from suite.backends.hlml import HLMLSampler

    monkeypatch.setattr(pyhlml, "HAS_ENERGY", False)
    sampler = HLMLSampler(index=3)
    sampler.open()
    assert sampler.counters() == {}
    assert "handle 3" in pyhlml.CALLS


def test_wiring_ddp_wrap_before_compile(fakes, monkeypatch):
    from test_cuda_runner import OneRankGroup

    from suite.measurement import distributed

    events = []
    monkeypatch.setattr(runner.distributed, "process_group", lambda backend, config: OneRankGroup(events))
    monkeypatch.setattr(distributed, "finish", lambda group, record: None)
    monkeypatch.setattr(
        torch, "compile", lambda module, backend: events.append((type(module).__name__, backend)) or module
    )
    record = run_tiny(hpu_mode="compile")
    assert record["status"] == "ok", record.get("error")
    assert events == ["ddp", ("Wrapped", "hpu_backend"), ("Wrapped", "hpu_backend")]  # D and G


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


def test_wiring_fused_adamw_is_close_to_torch_adamw_not_identical(fakes):
    # FusedAdamW folds bias correction into the step size, so its eps is not scaled by sqrt(1 - beta2^t)
    # (hpex/optimizers/FusedAdamW.py): the record says so next to the optimizer.
    backend = make_backend(hpu_mode="eager")
    hyper = {"lr": 1e-2, "betas": (0.5, 0.999), "eps": 1e-3, "weight_decay": 0.05}
    fused_layer, torch_layer = torch.nn.Linear(4, 4), torch.nn.Linear(4, 4)
    torch_layer.load_state_dict(fused_layer.state_dict())
    fused = backend.make_optimizer(fused_layer.parameters(), "adamw", **hyper)
    reference = torch.optim.AdamW(torch_layer.parameters(), **hyper)
    for layer, optimizer in ((fused_layer, fused), (torch_layer, reference)):
        layer(torch.ones(2, 4)).square().sum().backward()
        optimizer.step()
    difference = (fused_layer.weight - torch_layer.weight).abs().max().item()
    assert 0 < difference < 1e-2
    (note,) = backend.device_info()["optimizers"]
    assert "FusedAdamW" in note and "not identical" in note


def test_wiring_numerics_check_against_the_cpu(fakes):
    plan = runner.plan_run(
        RunSpec().replace(
            backend="hpu",
            workload="dcgan64",
            batch_size=2,
            precision="bf16",
            hpu_mode="lazy",
            model_overrides=TINY["dcgan64"],
            check_numerics=True,
            reference_backend="cpu",
        )
    )
    from suite.numerics import check as numerics

    result = numerics.check(plan)
    assert result["reference"] == "cpu fp32 (TF32 off)" and result["candidate"] == "hpu bf16"
    assert result["verdict"] == "pass", result["reason"]
    # Only the candidate ran on the (fake) Gaudi: one read at its end, lazy graphs cut every step.
    assert recorder().events("synchronize").count("synchronize") == 1
    assert recorder().events("mark_step").count("mark_step") >= result["steps"]
