"""The CUDA backend (NVIDIA GPUs): where AMP, TF32, fused optimizers and GPU timing are decided.

Precisions:
  fp32  plain fp32; TF32 tensor-core math only with --tf32 (off by default, so fp32 means fp32).
  amp   fp16 autocast with one torch.amp.GradScaler: backward on the scaled loss, scaler.step() per
        optimizer, and scaler.update() once per iteration after every optimizer has stepped (DCGAN has
        two). "If you use multiple optimizers, call scaler.update() once, after all optimizers used this
        iteration have been stepped":
        https://pytorch.org/docs/stable/notes/amp_examples.html#working-with-multiple-models-losses-and-optimizers
  bf16  bf16 autocast, no scaler (bf16 has fp32's exponent range, gradients do not underflow).

Tests run this file's real logic on the CPU by replacing `_torch_device` and torch.cuda's queries. On a
real GPU it has run on one NVIDIA H200 (driver 580.159.04, torch 2.11.0+cu130, CUDA 13.0), on 2026-11-26 and
2026-11-27: the records in results/gpu, results/gpu-2026-11-27 and results/gpu-2026-11-27-lm (dcgan64,
dcgan64-safe, dcgan128, resnet50 and gpt2-small, one GPU each, the precisions and settings README's
backend matrix lists, never --compile), and tests/gpu's five real-device tests passed there. More than
one GPU, `--compile` and every other NVIDIA GPU have run only against the fakes.
"""

from __future__ import annotations

import contextlib
import os

import torch

from suite.inputs.errors import UserError
from suite.inputs.numbers import non_negative_int

from . import presence, register_backend
from .base import Backend, Schedule, ddp_without_buffer_broadcast, one_device_each


def _grad_scaler_class():
    """torch.amp.GradScaler (device-generic, torch >= 2.3); before it, torch.cuda.amp.GradScaler, which
    is CUDA's and takes no device argument (pytorch/pytorch torch/amp/grad_scaler.py, added in 2.3)."""
    generic = getattr(getattr(torch, "amp", None), "GradScaler", None)
    if generic is not None:
        return generic, True
    return torch.cuda.amp.GradScaler, False


# torch.OutOfMemoryError exists from torch 2.5 (pytorch/pytorch#121702, "Support Accelerator OOM Error");
# torch.cuda.OutOfMemoryError from 1.13.
# Older builds raise a RuntimeError whose message says "CUDA out of memory".
OUT_OF_MEMORY_ERRORS = tuple(
    error
    for error in (getattr(torch, "OutOfMemoryError", None), getattr(torch.cuda, "OutOfMemoryError", None))
    if isinstance(error, type)
)

# bf16 tensor cores arrived with Ampere (compute capability 8.0). torch.cuda.is_bf16_supported() also
# answers True where bf16 is only emulated (slowly), so the capability is checked instead.
BF16_MIN_CAPABILITY = (8, 0)


def _pci_bus_id(props) -> str | None:
    """NVML's bus-id format, NVML_DEVICE_PCI_BUS_ID_FMT "%08X:%02X:%02X.0" (nvml.h)."""
    try:
        return f"{props.pci_domain_id:08X}:{props.pci_bus_id:02X}:{props.pci_device_id:02X}.0"
    except (AttributeError, TypeError, ValueError):
        return None


@register_backend
class CUDABackend(Backend):
    name = "cuda"
    dist_backend = "nccl"
    precisions = ("amp", "fp32", "bf16")
    # A small model's step on a large GPU can take milliseconds, and ten of them too short a window: without
    # --steps, windows are grown to last a second at least. NVML's power reading is itself averaged over 1 s
    # on Ampere (but GA100) and newer GPUs (nvmlDeviceGetPowerUsage, nvml.h; docs/cuda.md), and the
    # telemetry thread samples every 0.15 s.
    schedule = Schedule(warmup_steps=3, steps_per_window=10, windows=5, min_window_s=1.0)

    def __init__(self, spec):
        super().__init__(spec)
        # Checked here, while the run is planned, so a bad index is exit 2 before anything is built.
        self.index = self._device_index()
        count = torch.cuda.device_count()
        if self.index >= count:
            raise UserError(
                f"GPU index {self.index} is not visible: {count} GPU(s) visible "
                f"(accepted: 0..{max(count - 1, 0)}); check --device-index, LOCAL_RANK and "
                "CUDA_VISIBLE_DEVICES"
            )
        if self.precision == "bf16":
            capability = tuple(torch.cuda.get_device_capability(self.index))
            if capability < BF16_MIN_CAPABILITY:
                raise UserError(
                    f"precision 'bf16' needs compute capability 8.0 or newer (A100, L4, H100, ...); "
                    f"GPU {self.index} ({torch.cuda.get_device_name(self.index)}) is "
                    f"{capability[0]}.{capability[1]}: use --precision amp or fp32"
                )
        if spec.cuda.compile_mode and not spec.cuda.compile:
            raise UserError(
                f"--compile-mode {spec.cuda.compile_mode} needs --compile (it is the mode of that)"
            )
        self.scaler = None  # a GradScaler under amp
        self.optimizers_built: list[str] = []
        self.attention = None  # a language model's attention (cuda_sdpa.RecordingAttention)

    def _device_index(self) -> int:
        if self.spec.cuda.device_index is not None:
            return non_negative_int("--device-index", self.spec.cuda.device_index)
        local_rank = os.environ.get("LOCAL_RANK")
        if local_rank is not None:  # torchrun: one process per GPU
            return non_negative_int("LOCAL_RANK", local_rank)
        return 0

    def pin_envs(self, copies: int) -> list[dict[str, str]]:
        # CUDA_VISIBLE_DEVICES (CUDA C Programming Guide, "CUDA Environment Variables"): a copy sees one
        # GPU, as its index 0. A list already set for this process is divided, not widened.
        if self.spec.cuda.device_index is not None:
            raise UserError(
                "--device-index cannot be combined with --per-device (each copy gets its own GPU)"
            )
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        ids = [d.strip() for d in visible.split(",") if d.strip()] if visible else None
        return one_device_each(
            "CUDA_VISIBLE_DEVICES",
            ids or [str(i) for i in range(torch.cuda.device_count())],
            copies,
            "GPU(s)",
        )

    def _torch_device(self, index: int) -> torch.device:
        """The device tensors go to (tests replace this with the CPU)."""
        return torch.device("cuda", index)

    # -- discovery -----------------------------------------------------------------------------
    @classmethod
    def is_available(cls) -> tuple[bool, str]:
        absent = presence.cuda_absent()
        if absent:
            return False, absent
        if torch.version.cuda is None and getattr(torch.version, "hip", None) is None:
            return False, (
                f"this torch build ({torch.__version__}) has no CUDA support: install a CUDA build "
                "(https://pytorch.org/get-started/locally/)"
            )
        if not torch.cuda.is_available():
            return False, (
                "no CUDA GPU visible to torch (torch.cuda.is_available() is False): check "
                "`nvidia-smi`, the driver and CUDA_VISIBLE_DEVICES"
            )
        return True, f"{torch.cuda.device_count()} GPU(s) visible"

    # -- life cycle ----------------------------------------------------------------------------
    def setup(self) -> None:
        torch.cuda.set_device(self.index)
        self.device = self._torch_device(self.index)
        # Let cuDNN time its convolution algorithms for these fixed shapes and keep the fastest. The
        # autotuning happens in the first steps, which is what warm-up is for.
        torch.backends.cudnn.benchmark = True
        # PyTorch's defaults disagree (cuDNN convolutions allow TF32, matmuls do not), so both are set:
        # fp32 means fp32 unless --tf32 asks for tensor-core TF32 math.
        # https://pytorch.org/docs/stable/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices
        torch.backends.cuda.matmul.allow_tf32 = bool(self.spec.cuda.tf32)
        torch.backends.cudnn.allow_tf32 = bool(self.spec.cuda.tf32)
        if self.precision == "amp":
            # One scaler for every optimizer of the run.
            scaler_class, device_generic = _grad_scaler_class()
            self.scaler = scaler_class(self.device.type) if device_generic else scaler_class()

    def profiler_activities(self) -> list:
        # CUPTI traces the kernels, so the trace shows what the GPU did, not only what was launched.
        return [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]

    def wrap_ddp(self, module: torch.nn.Module) -> torch.nn.Module:
        # One process per GPU: DDP keeps its buckets and collectives (NCCL) on this process's GPU.
        return ddp_without_buffer_broadcast(module, device_ids=[self.index], output_device=self.index)

    def prepare_model(self, module: torch.nn.Module) -> torch.nn.Module:
        if self.spec.cuda.channels_last:
            # NHWC lets cuDNN use tensor-core convolution kernels without transposes.
            module = module.to(self.device, memory_format=torch.channels_last)
        else:
            module = module.to(self.device)
        return module

    def compile_model(self, module: torch.nn.Module) -> torch.nn.Module:
        if self.spec.cuda.compile:
            # Compile time lands in warm-up / time-to-first-step; a mode only where one is asked, so that
            # a plain --compile calls torch.compile exactly as a person's script does.
            mode = self.spec.cuda.compile_mode
            module = torch.compile(module, mode=mode) if mode else torch.compile(module)
        return module

    def make_optimizer(self, params, kind: str, **hyper) -> torch.optim.Optimizer:
        classes = {"adamw": torch.optim.AdamW, "sgd": torch.optim.SGD}
        if kind not in classes:
            raise ValueError(f"unknown optimizer kind {kind!r}")
        params = list(params)  # may be a generator, and may be needed twice
        if kind == "sgd" and self.scaler is not None:
            # Fused SGD and a GradScaler do not mix: on a step the scaler skips (an fp16 overflow, routine
            # in the first steps), torch/optim/sgd.py `_fused_sgd` has already made the momentum buffers
            # with torch.empty_like and the kernel returns on the inf flag without writing them; SGD
            # then keeps them as state, so the next step reads uninitialised memory as momentum. Seen on
            # an H200 (torch 2.11): resnet50 at amp diverged at step 4; the same bug in
            # LibreYOLO/libreyolo pull 771. The default (foreach) SGD is skipped whole by the scaler.
            self.optimizers_built.append("sgd (not fused: fused SGD mishandles GradScaler-skipped steps)")
            return classes[kind](params, **hyper)
        # fused=True: one kernel for the whole update instead of several per parameter; supported by
        # AdamW and SGD on CUDA (and by GradScaler, which hands the fused kernel its scale and inf flag).
        # https://pytorch.org/docs/stable/generated/torch.optim.AdamW.html ("fused")
        try:
            optimizer = classes[kind](params, fused=True, **hyper)
            self.optimizers_built.append(f"{kind} (fused)")
        except (RuntimeError, ValueError, TypeError) as error:
            optimizer = classes[kind](params, **hyper)
            self.optimizers_built.append(f"{kind} (not fused: {error})")
        return optimizer

    def to_device(self, tensor: torch.Tensor, non_blocking: bool = True) -> torch.Tensor:
        # non_blocking from pinned host memory (make_loader pins it) overlaps the copy with compute.
        if self.spec.cuda.channels_last and tensor.dim() == 4:
            return tensor.to(self.device, non_blocking=non_blocking, memory_format=torch.channels_last)
        return tensor.to(self.device, non_blocking=non_blocking)

    def make_loader(self, dataset, **loader_kwargs) -> tuple[object, dict]:
        loader_kwargs.setdefault("pin_memory", True)
        loader = torch.utils.data.DataLoader(dataset, **loader_kwargs)
        return loader, {"loader": "torch.utils.data.DataLoader", "pin_memory": loader_kwargs["pin_memory"]}

    # -- the training step ---------------------------------------------------------------------
    def causal_attention(self):
        # torch's own SDPA and its own kernel choice, which the record then states (cuda_sdpa.py: why the
        # choice is recorded, not forced).
        from .cuda_sdpa import RecordingAttention

        self.attention = RecordingAttention()
        return self.attention

    def autocast(self):
        if self.precision == "amp":
            return torch.autocast(device_type=self.device.type, dtype=torch.float16)
        if self.precision == "bf16":
            return torch.autocast(device_type=self.device.type, dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def backward(self, loss: torch.Tensor) -> None:
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()

    def step(self, optimizer: torch.optim.Optimizer) -> None:
        if self.scaler is not None:
            self.scaler.step(optimizer)  # skips the update if this optimizer's gradients hold inf/NaN
        else:
            optimizer.step()

    def end_step(self) -> None:
        if self.scaler is not None:
            self.scaler.update()  # once per iteration, after every optimizer has stepped

    # -- measurement ---------------------------------------------------------------------------
    def synchronize(self) -> None:
        # Host-device sync point: kernels are queued asynchronously, so a clock read without this
        # measures how fast work was queued, not done. Only the runner calls it, at window edges.
        torch.cuda.synchronize(self.device)

    def reset_peak_memory(self) -> None:
        torch.cuda.reset_peak_memory_stats(self.device)

    def memory_stats(self) -> dict:
        peak_allocated = torch.cuda.max_memory_allocated(self.device)
        return {
            # Tensors' peak (what the model needs) and the caching allocator's peak (what it took).
            "peak_memory_bytes": peak_allocated,
            "peak_allocated_bytes": peak_allocated,
            "peak_reserved_bytes": torch.cuda.max_memory_reserved(self.device),
            "allocated_bytes": torch.cuda.memory_allocated(self.device),
            "total_memory_bytes": torch.cuda.get_device_properties(self.index).total_memory,
        }

    def device_info(self) -> dict:
        from . import nvml, peaks

        props = torch.cuda.get_device_properties(self.index)
        peak, peak_note = peaks.peak_tflops(props.name, self.precision, bool(self.spec.cuda.tf32))
        return {
            "backend": self.name,
            "name": props.name,
            "index": self.index,
            "count": torch.cuda.device_count(),
            "compute_capability": f"{props.major}.{props.minor}",
            "total_memory_bytes": props.total_memory,
            "multiprocessors": props.multi_processor_count,
            "driver": nvml.driver_version(),
            "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(),
            "peak_tflops": peak,  # for this run's precision; None where no datasheet figure is known
            "peak_tflops_note": peak_note,
            "cudnn_benchmark": bool(torch.backends.cudnn.benchmark),
            "tf32": bool(self.spec.cuda.tf32),
            "channels_last": bool(self.spec.cuda.channels_last),
            "compile": bool(self.spec.cuda.compile),
            **({"compile_mode": self.spec.cuda.compile_mode} if self.spec.cuda.compile_mode else {}),
            "grad_scaler": self.scaler is not None,
            "optimizers": list(self.optimizers_built),
            **({"sdpa": self.attention.record()} if self.attention is not None else {}),
        }

    def telemetry_samplers(self) -> list:
        from .nvml import NVMLSampler

        props = torch.cuda.get_device_properties(self.index)
        return [NVMLSampler(index=self.index, pci_bus_id=_pci_bus_id(props))]

    def is_out_of_memory(self, error: BaseException) -> bool:
        return isinstance(error, OUT_OF_MEMORY_ERRORS) or "CUDA out of memory" in str(error)
