"""The language-model path's wiring on the CUDA and HPU backends, checked against the fakes (torch.cuda's
queries on the CPU; tests/fakes' habana_frameworks). Nothing here has run on a GPU or a Gaudi.

CUDA: fused AdamW, the SDPA switches and torch's kernel choice in the record, no host-device sync inside
a timed window. HPU: the execution mode of each release, Habana's FusedSDPA where the install has it (and
torch's SDPA where not), mark_step in lazy mode only.
"""

from __future__ import annotations

import habana_fakes
import pytest
import torch
from conftest import TINY
from suite.backends import backend_class, hpu
from suite.workloads import get_workload

from suite.measurement import runner
from suite.spec import RunSpec

CUDABackend = backend_class("cuda")
LAYERS = TINY["gpt2-small"]["layers"]


def tiny_gpt():
    return get_workload("gpt2-small").with_overrides(**TINY["gpt2-small"])


def run_gpt(backend: str, **config) -> dict:
    plan = runner.plan_run(
        RunSpec().replace(
            backend=backend,
            workload="gpt2-small",
            batch_size=2,
            warmup_steps=2,
            steps_per_window=3,
            windows=2,
            model_overrides=TINY["gpt2-small"],
            **config,
        )
    )
    return runner.execute(plan)


# -- CUDA --------------------------------------------------------------------------------------------
HOST_READS = ("item", "tolist", "cpu", "__float__", "__int__", "__bool__")


def record_host_reads(monkeypatch, events: list) -> None:
    """Each read of a tensor's value by the host (on a GPU, a sync) logged as "read <how>"."""
    for name in HOST_READS:
        original = getattr(torch.Tensor, name)

        def read(self, *args, _name=name, _original=original, **kwargs):
            events.append(f"read {_name}")
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(torch.Tensor, name, read)


def test_cuda_gpt_step_has_no_sync_inside_a_window_wiring(fake_gpu, monkeypatch):
    original_end_step = CUDABackend.end_step

    def end_step(self):
        fake_gpu.events.append("step")
        original_end_step(self)

    monkeypatch.setattr(CUDABackend, "end_step", end_step)
    record_host_reads(monkeypatch, fake_gpu.events)
    record = run_gpt("cuda", precision="bf16")
    assert record["status"] == "ok", record["error"]
    events = fake_gpu.events
    last_sync = len(events) - 1 - events[::-1].index("sync")
    window = ["sync", "step", "step", "step", "sync"]
    # The two windows end the timed part; nothing but steps between their edges, and no value read by the
    # host before the last edge (the losses are read after it).
    assert events[last_sync - 2 * len(window) + 1 : last_sync + 1] == window * 2, events
    assert not [event for event in events[: last_sync + 1] if event.startswith("read")], events


def test_cuda_gpt_builds_fused_adamw_and_records_the_sdpa_kernel_wiring(fake_gpu):
    record = run_gpt("cuda", precision="bf16")
    assert record["status"] == "ok", record["error"]
    device = record["device"]
    assert device["optimizers"] == ["adamw (fused)"]  # as recorded on an H200 (torch 2.11)
    sdpa = device["sdpa"]
    assert set(sdpa["enabled"]) <= {"flash", "mem_efficient", "cudnn", "math"}
    assert sdpa["enabled"]["flash"] is torch.backends.cuda.flash_sdp_enabled()
    # torch's choice for the model's own (bf16, causal) inputs; here on the CPU, where the fake runs.
    q = torch.zeros(2, 2, 16, 16, dtype=torch.bfloat16)
    expected = torch.nn.attention.SDPBackend(torch._fused_sdp_choice(q, q, q, is_causal=True)).name
    assert sdpa["chosen"] == expected


def test_cuda_gpt_optimizer_is_fused_and_attention_is_torchs_wiring(fake_gpu):
    backend = CUDABackend(RunSpec().replace(backend="cuda", precision="bf16", batch_size=2))
    backend.setup()
    training = tiny_gpt().build(backend)
    assert training.optimizers["model"].defaults["fused"] is True
    attention = training.modules["model"].blocks[0].attention
    assert attention.attend is backend.attention  # torch's SDPA, its choice recorded, never forced


def test_cuda_records_no_sdpa_for_an_image_workload_wiring(fake_gpu):
    backend = CUDABackend(RunSpec().replace(backend="cuda", precision="fp32", batch_size=2))
    backend.setup()
    get_workload("dcgan64").with_overrides(**TINY["dcgan64"]).build(backend)
    assert "sdpa" not in backend.device_info()


# -- HPU ---------------------------------------------------------------------------------------------
@pytest.fixture(params=habana_fakes.PROFILES)
def release(request, monkeypatch, tmp_path):
    installed = habana_fakes.install(monkeypatch, tmp_path, request.param)
    yield installed
    habana_fakes.drop_fake_modules()


@pytest.fixture
def without_fused_sdpa(monkeypatch, tmp_path):
    installed = habana_fakes.install(monkeypatch, tmp_path, "1.19", fused_sdpa=False)
    yield installed
    habana_fakes.drop_fake_modules()


def hpu_training(monkeypatch, mode: str | None):
    """A tiny gpt2-small built on the hpu backend; every mark_step the backend itself asks for is logged
    (the fake's own mark_step does nothing outside lazy mode, as the bridge's)."""
    monkeypatch.setattr(torch, "compile", lambda module, **options: module)
    backend = hpu.HPUBackend(RunSpec().replace(backend="hpu", hpu_mode=mode, precision="fp32"))
    backend.setup()
    workload = tiny_gpt()
    training = workload.build(backend)
    # After the build: FusedAdamW keeps the bridge's own mark_step, imported by name.
    monkeypatch.setattr(
        backend._htcore, "mark_step", lambda: habana_fakes.recorder().record("backend mark_step")
    )
    training.modules = {name: backend.compile_model(m) for name, m in training.modules.items()}
    return backend, training, workload.synthetic_batch(2, "cpu")


@pytest.mark.parametrize("mode", ["lazy", "eager", "compile"])
def test_hpu_gpt_fused_sdpa_per_layer_and_mark_step_in_lazy_mode_only(release, monkeypatch, mode):
    if mode == "compile" and release.compile_backend is None:
        pytest.skip("no torch.compile backend in this release (its refusal is tested in test_hpu_wiring)")
    backend, training, batch = hpu_training(monkeypatch, mode)
    training.train_step(batch)
    calls = [details for event, details in habana_fakes.recorder().CALLS if event == "FusedSDPA"]
    assert len(calls) == LAYERS  # one per attention layer of one forward
    assert all(c["is_causal"] is True and c["attn_mask"] is None and c["dropout_p"] == 0.0 for c in calls)
    marks = habana_fakes.recorder().events("backend mark_step").count("backend mark_step")
    assert marks == (2 if mode == "lazy" else 0)  # after the backward and after the step
    assert backend.device_info()["attention"] == "habana FusedSDPA (hpex.kernels)"


def test_hpu_gpt_runs_torch_sdpa_where_the_install_has_no_fused_sdpa(without_fused_sdpa, monkeypatch):
    backend, training, batch = hpu_training(monkeypatch, "lazy")
    loss = training.train_step(batch)
    assert torch.isfinite(loss)
    assert "FusedSDPA" not in habana_fakes.recorder().events()
    assert training.modules["model"].blocks[0].attention.attend.__name__ == "causal_sdpa"
    assert backend.device_info()["attention"].startswith("torch.nn.functional.scaled_dot_product_attention")


def test_hpu_gpt_record_says_the_releases_mode_and_the_attention(release, monkeypatch):
    compiled = []
    monkeypatch.setattr(torch, "compile", lambda module, **options: compiled.append(options) or module)
    record = run_gpt("hpu", precision="fp32")  # no --hpu-mode: the release's default, or the bridge's
    assert record["status"] == "ok", record.get("error")
    device = record["device"]
    # 1.10 to 1.19: lazy, from the table; 1.24.1: eager, from the table, which the suite runs as eager +
    # torch.compile with the release's backend.
    expected = "lazy" if release.default_mode == "lazy" else "compile"
    assert device["execution_mode"] == expected
    assert compiled == ([{"backend": release.compile_backend}] if expected == "compile" else [])
    assert device["habana_release"] == release.version
    assert device["attention"] == "habana FusedSDPA (hpex.kernels)"
    fused = habana_fakes.recorder().events("FusedSDPA").count("FusedSDPA")
    steps = habana_fakes.recorder().events("optimizer.step").count("optimizer.step")
    assert fused == LAYERS * steps  # every step's forward, in warm-up and in the windows


def test_hpu_fake_fused_sdpa_takes_positional_arguments_only(release):
    # The real FusedSDPA is a torch.autograd.Function: a keyword is not bound to its forward's parameter.
    hpu.HPUBackend(RunSpec().replace(backend="hpu", precision="fp32")).setup()
    from habana_frameworks.torch.hpex.kernels import FusedSDPA

    q = torch.randn(1, 2, 4, 8)
    assert torch.allclose(
        FusedSDPA.apply(q, q, q, None, 0.0, True),
        torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True),
    )
    with pytest.raises(TypeError):
        FusedSDPA.apply(q, q, q, is_causal=True)
