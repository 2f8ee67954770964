"""The CUDA backend's logic, on the CPU: torch.cuda's queries and NVML are fakes that record calls.
Every test here checks wiring; none of it says anything about a real GPU."""

from __future__ import annotations

import os
import sys

import pytest
import torch
from conftest import TINY
from suite.backends import backend_class, presence
from suite.workloads import get_workload

from suite.cli import main
from suite.inputs.errors import UserError
from suite.spec import RunSpec

# Through the registry, so that backends register in its own order (cpu, cuda, hpu).
CUDABackend = backend_class("cuda")


def make_backend(precision="amp", **config):
    backend = CUDABackend(RunSpec().replace(backend="cuda", precision=precision, batch_size=2, **config))
    backend.setup()
    return backend


# The CPU, where these tests run, has a GradScaler from torch 2.3 on (torch.amp.GradScaler("cpu")); before
# that, CUDA's disables itself without a GPU. benchmarks/compat.sh runs these files on older torch.
needs_cpu_grad_scaler = pytest.mark.skipif(
    not hasattr(torch.amp, "GradScaler"), reason="no CPU GradScaler before torch 2.3"
)


def cpu_fp16_autocast() -> bool:
    """Whether this torch autocasts to fp16 on the CPU (older ones: bf16 only), which amp tests need here."""
    try:
        with torch.autocast("cpu", dtype=torch.float16):
            return True
    except RuntimeError:
        return False


needs_cpu_fp16_autocast = pytest.mark.skipif(
    not cpu_fp16_autocast(), reason="no fp16 autocast on this CPU torch"
)


class RecordingScaler:
    """Wraps a real GradScaler (on the CPU) and logs the calls the backend makes."""

    def __init__(self, log):
        self.real = torch.amp.GradScaler("cpu")
        self.log = log

    def scale(self, loss):
        self.log.append("scale")
        return self.real.scale(loss)

    def step(self, optimizer):
        self.log.append("step")
        return self.real.step(optimizer)

    def update(self):
        self.log.append("update")
        return self.real.update()


# -- precisions --------------------------------------------------------------------------------------
@needs_cpu_grad_scaler
def test_which_precision_gets_a_grad_scaler_wiring(fake_gpu):
    amp = make_backend("amp")
    assert isinstance(amp.scaler, torch.amp.GradScaler) and amp.scaler.is_enabled()
    assert make_backend("fp32").scaler is None
    assert make_backend("bf16").scaler is None


@needs_cpu_fp16_autocast
def test_autocast_dtype_per_precision_wiring(fake_gpu):
    x = torch.ones(2, 2)
    with make_backend("amp").autocast():
        assert (x @ x).dtype == torch.float16
    with make_backend("bf16").autocast():
        assert (x @ x).dtype == torch.bfloat16
    with make_backend("fp32").autocast():
        assert (x @ x).dtype == torch.float32


@needs_cpu_grad_scaler
def test_amp_dcgan_one_scaler_update_per_iteration_after_both_optimizers_wiring(fake_gpu):
    backend = make_backend("amp")
    log: list[str] = []
    backend.scaler = RecordingScaler(log)
    workload = get_workload("dcgan64").with_overrides(**TINY["dcgan64"])
    training = workload.build(backend)
    batch = workload.synthetic_batch(2, backend.device)
    iterations = 2
    for _ in range(iterations):
        training.train_step(batch)
    # Discriminator then generator: scale+step each, then exactly one update.
    assert log == ["scale", "step", "scale", "step", "update"] * iterations
    assert log.count("update") == iterations


@needs_cpu_grad_scaler
def test_amp_dcgan_trains_with_real_grad_scaler_wiring(fake_gpu):
    backend = make_backend("amp")
    # The default initial scale (2**16) overflows fp16 gradients in the first iterations, which the
    # scaler then skips; a small one lets the first step be a real update.
    backend.scaler = torch.amp.GradScaler("cpu", init_scale=2.0**6)
    workload = get_workload("dcgan64").with_overrides(**TINY["dcgan64"])
    training = workload.build(backend)
    batch = workload.synthetic_batch(2, backend.device)
    before = [p.detach().clone() for p in training.modules["discriminator"].parameters()]
    loss = training.train_step(batch)
    assert torch.isfinite(loss).all()
    after = list(training.modules["discriminator"].parameters())
    assert any(not torch.equal(b, a) for b, a in zip(before, after))  # the fused AdamW step happened


def test_bf16_on_a_pre_ampere_gpu_is_exit_2(fake_gpu, tmp_path, capsys):
    fake_gpu.capability = (7, 0)
    fake_gpu.name = "Tesla V100-SXM2-16GB"
    code = main(["run", "--backend", "cuda", "--precision", "bf16", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert "bf16" in err and "7.0" in err and "--precision amp" in err and "Traceback" not in err


# -- device selection and switches -------------------------------------------------------------------
def test_device_index_from_option_then_local_rank_wiring(fake_gpu, monkeypatch):
    fake_gpu.count = 4
    assert make_backend(device_index="2").index == 2
    assert fake_gpu.set_device_calls[-1] == 2
    monkeypatch.setenv("LOCAL_RANK", "3")
    assert make_backend().index == 3
    assert make_backend(device_index="1").index == 1  # the option wins over LOCAL_RANK
    monkeypatch.delenv("LOCAL_RANK")
    assert make_backend().index == 0


@pytest.mark.parametrize(
    "value, expected",
    [
        ("5", "GPU index 5 is not visible: 2 GPU(s)"),
        ("x", "--device-index must be a whole number >= 0, got 'x'"),
        ("-1", "--device-index must be a whole number >= 0"),
    ],
)
def test_bad_device_index_is_exit_2(fake_gpu, tmp_path, capsys, value, expected):
    fake_gpu.count = 2
    code = main(["run", "--backend", "cuda", "--device-index", value, "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert expected in err and "Traceback" not in err
    assert err.count("\n") == 1


def test_no_gpu_visible_is_one_line_exit_2(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(presence, "cuda_absent", lambda: None)  # a driver, but torch sees no GPU
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    code = main(["run", "--backend", "cuda", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("suite: error: backend 'cuda' is not available")
    assert "nvidia-smi" in err and err.count("\n") == 1 and "Traceback" not in err
    assert not os.listdir(tmp_path)


def test_is_available_reasons(monkeypatch):
    monkeypatch.setattr(presence, "cuda_absent", lambda: None)  # the driver's library loads
    monkeypatch.setattr(torch.version, "cuda", "12.4")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert CUDABackend.is_available() == (True, "2 GPU(s) visible")
    monkeypatch.setattr(torch.version, "cuda", None)
    monkeypatch.setattr(torch.version, "hip", None, raising=False)
    ok, reason = CUDABackend.is_available()
    assert not ok and "no CUDA support" in reason and torch.__version__ in reason


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the driver's files are Linux's")
def test_without_the_driver_library_no_gpu_is_settled_from_files(monkeypatch, tmp_path):
    from suite.backends import is_available

    monkeypatch.setattr(presence, "CUDA_DRIVER_LIBRARY", "libsuite-no-such-driver.so.1")
    monkeypatch.setattr(presence, "ROCM_DEVICE_NODES", (str(tmp_path / "kfd"), str(tmp_path / "dxg")))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # torch is never asked
    ok, reason = is_available("cuda")
    assert not ok and "libsuite-no-such-driver.so.1 does not load" in reason and "nvidia-smi" in reason
    assert CUDABackend.is_available() == (ok, reason)  # the backend's own check starts with the same files
    (tmp_path / "dxg").touch()  # a ROCm device node (WSL2's): only torch can tell
    assert presence.cuda_absent() is None


def test_setup_switches_wiring(fake_gpu):
    make_backend("fp32")
    assert torch.backends.cudnn.benchmark is True
    # fp32 means fp32: TF32 off for both matmuls and convolutions unless asked for.
    assert torch.backends.cuda.matmul.allow_tf32 is False and torch.backends.cudnn.allow_tf32 is False
    make_backend("fp32", tf32=True)
    assert torch.backends.cuda.matmul.allow_tf32 is True and torch.backends.cudnn.allow_tf32 is True


@pytest.fixture
def cpu_fused_adamw():
    """Skips the test where this torch has no fused AdamW for CPU tensors (older ones: CUDA only). Asked
    when the test runs, not at collection: building an optimizer imports torch._dynamo (seconds)."""
    try:
        torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], fused=True)
    except RuntimeError:
        pytest.skip("no fused AdamW for CPU tensors in this torch")


def test_fused_optimizers_wiring(fake_gpu, cpu_fused_adamw):
    backend = make_backend("fp32")
    model = torch.nn.Linear(3, 2)
    adamw = backend.make_optimizer(model.parameters(), "adamw", lr=1e-3, weight_decay=0.05)
    sgd = backend.make_optimizer(model.parameters(), "sgd", lr=0.1, momentum=0.9)
    assert isinstance(adamw, torch.optim.AdamW) and adamw.defaults["fused"] is True
    assert adamw.defaults["weight_decay"] == 0.05
    assert isinstance(sgd, torch.optim.SGD) and sgd.defaults["fused"] is True
    assert backend.optimizers_built == ["adamw (fused)", "sgd (fused)"]


@needs_cpu_grad_scaler
def test_sgd_under_a_grad_scaler_is_not_fused_and_a_skipped_step_leaves_no_momentum_wiring(
    fake_gpu, cpu_fused_adamw
):
    # Fused SGD under a GradScaler makes its momentum buffers (torch.empty_like) on a step the scaler
    # skips and keeps them: the next step reads uninitialised memory (resnet50 at amp diverged so on an
    # H200). The backend builds SGD unfused under a scaler, so a skipped step leaves no state at all.
    backend = make_backend("amp")
    model = torch.nn.Linear(3, 2)
    before = [p.detach().clone() for p in model.parameters()]
    sgd = backend.make_optimizer(model.parameters(), "sgd", lr=0.1, momentum=0.9)
    adamw = backend.make_optimizer(torch.nn.Linear(3, 2).parameters(), "adamw", lr=1e-3)
    assert not sgd.defaults["fused"] and adamw.defaults["fused"] is True  # fused AdamW honours the skip
    assert backend.optimizers_built[0].startswith("sgd (not fused: fused SGD mishandles")

    backend.backward(model(torch.ones(1, 3)).sum() * float("inf"))  # an fp16 overflow, as in warm-up
    backend.step(sgd)
    backend.end_step()
    assert sgd.state == {}  # fused SGD here: a momentum buffer per parameter
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert make_backend("fp32").make_optimizer(model.parameters(), "sgd", lr=0.1).defaults["fused"] is True


def test_unfusable_optimizer_falls_back_wiring(fake_gpu, monkeypatch):
    backend = make_backend("fp32")
    model = torch.nn.Linear(3, 2)

    class NoFused(torch.optim.SGD):  # a torch without fused kernels for these parameters
        def __init__(self, params, fused=None, **hyper):
            if fused:
                raise RuntimeError("`fused=True` requires all the params to be floating point Tensors")
            super().__init__(params, **hyper)

    monkeypatch.setattr(torch.optim, "SGD", NoFused)
    optimizer = backend.make_optimizer((p for p in model.parameters()), "sgd", lr=0.1)
    # The generator was not used up by the first, failed try.
    assert len(optimizer.param_groups[0]["params"]) == 2
    assert backend.optimizers_built[0].startswith("sgd (not fused: ")


def test_channels_last_and_compile_wiring(fake_gpu, monkeypatch):
    compiled = []
    monkeypatch.setattr(torch, "compile", lambda module: compiled.append(module) or module)
    backend = make_backend("fp32", channels_last=True, compile=True)
    conv = torch.nn.Conv2d(3, 8, 3)
    model = backend.prepare_model(torch.nn.Sequential(conv))
    assert compiled == []  # compiled later, after any DDP wrap (compile_model)
    assert backend.compile_model(model) is model and compiled == [model]
    assert conv.weight.is_contiguous(memory_format=torch.channels_last)
    batch = backend.to_device(torch.rand(2, 3, 8, 8))
    assert batch.is_contiguous(memory_format=torch.channels_last)
    assert backend.to_device(torch.rand(2, 3)).shape == (2, 3)  # not an image batch: left alone
    plain = make_backend("fp32")
    plain.compile_model(plain.prepare_model(torch.nn.Conv2d(3, 8, 3)))
    assert len(compiled) == 1  # no --compile, no compile


def test_compile_mode_reaches_torch_compile_and_needs_compile_wiring(fake_gpu, monkeypatch):
    calls = []
    monkeypatch.setattr(torch, "compile", lambda module, **options: calls.append(options) or module)
    backend = make_backend("bf16", compile=True, compile_mode="reduce-overhead")
    backend.compile_model(torch.nn.Linear(2, 2))
    make_backend("bf16", compile=True).compile_model(torch.nn.Linear(2, 2))
    assert calls == [{"mode": "reduce-overhead"}, {}]  # a plain --compile calls torch.compile plainly
    assert backend.device_info()["compile_mode"] == "reduce-overhead"
    with pytest.raises(UserError, match="--compile-mode max-autotune needs --compile"):
        make_backend("bf16", compile_mode="max-autotune")


def test_grad_scaler_and_oom_on_an_older_torch_wiring(fake_gpu, monkeypatch):
    # torch before 2.3 has no torch.amp.GradScaler, before 2.5 no torch.OutOfMemoryError.
    from suite.backends import cuda

    monkeypatch.delattr(torch.amp, "GradScaler", raising=False)
    backend = make_backend("amp")
    assert type(backend.scaler) is torch.cuda.amp.GradScaler
    monkeypatch.delattr(torch, "OutOfMemoryError", raising=False)
    monkeypatch.setattr(cuda, "OUT_OF_MEMORY_ERRORS", (torch.cuda.OutOfMemoryError,))
    assert backend.is_out_of_memory(RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"))
    assert not backend.is_out_of_memory(RuntimeError("something else"))


def test_loader_pins_memory_wiring(fake_gpu):
    loader, note = make_backend("fp32").make_loader(
        torch.utils.data.TensorDataset(torch.zeros(4, 1)), batch_size=2
    )
    assert loader.pin_memory is True and note["pin_memory"] is True


# -- measurement verbs -------------------------------------------------------------------------------
def test_memory_stats_names_and_device_info_wiring(fake_gpu, monkeypatch):
    backend = make_backend("amp")
    backend.reset_peak_memory()
    assert fake_gpu.peak_resets == 1
    memory = backend.memory_stats()
    assert memory == {
        "peak_memory_bytes": 3_000_000,
        "peak_allocated_bytes": 3_000_000,
        "peak_reserved_bytes": 4_194_304,
        "allocated_bytes": 1_000_000,
        "total_memory_bytes": 40 * 1024**3,
    }
    info = backend.device_info()
    assert info["name"] == "NVIDIA A100-SXM4-40GB" and info["compute_capability"] == "8.0"
    assert info["driver"] == "550.54.15" and info["cuda"] == torch.version.cuda
    assert info["count"] == 1 and info["grad_scaler"] is True
    assert info["peak_tflops"] == 312.0 and "datasheet" in info["peak_tflops_note"]
    assert backend.telemetry_samplers()[0].pci_bus_id == "00000000:3B:00.0"


def test_device_info_without_nvml_has_no_driver_wiring(fake_gpu, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "pynvml", None)  # import pynvml -> ImportError
    assert make_backend("fp32").device_info()["driver"] is None


def test_is_out_of_memory(fake_gpu):
    backend = make_backend("fp32")
    assert backend.is_out_of_memory(
        torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2 GiB")
    )
    assert backend.is_out_of_memory(RuntimeError("CUDA out of memory. Tried to allocate 20.00 MiB"))
    assert not backend.is_out_of_memory(RuntimeError("shape mismatch"))


def test_unknown_precision_for_cuda_is_exit_2(fake_gpu, tmp_path, capsys):
    code = main(["run", "--backend", "cuda", "--precision", "fp8", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "'fp8'" in err and "amp, fp32, bf16" in err


def test_ddp_pins_each_process_to_its_gpu_wiring(fake_gpu, monkeypatch):
    fake_gpu.count = 2
    seen = {}
    monkeypatch.setattr(
        torch.nn.parallel, "DistributedDataParallel", lambda module, **kwargs: seen.update(kwargs) or module
    )
    monkeypatch.setenv("LOCAL_RANK", "1")
    backend = make_backend(precision="fp32")
    backend.wrap_ddp(torch.nn.Linear(2, 2))
    assert seen == {"device_ids": [1], "output_device": 1, "broadcast_buffers": False}


def test_profiler_traces_host_and_gpu_wiring(fake_gpu):
    activities = make_backend(precision="fp32").profiler_activities()
    assert activities == [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
