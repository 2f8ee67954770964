"""The Backend interface: every device difference the rest of the suite may see, as verbs.

Nothing outside `backends/` asks which device it runs on. A workload's step calls `autocast()`,
`backward()`, `step()` and `end_step()`; the runner calls `synchronize()` at window edges and
`memory_stats()` after them. Vendor SDKs are imported inside the backend that needs them, lazily,
so that `suite --help` and the CPU path never import them.
"""

from __future__ import annotations

import contextlib
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

from suite.inputs.errors import UserError
from suite.spec import RunSpec

if TYPE_CHECKING:
    import torch


@dataclass(frozen=True)
class Schedule:
    """Default measurement schedule: warm-up steps, then `windows` timed windows of `steps` steps.

    `min_window_s`: where set, and the person gave no --steps, a window is made to last at least this
    long: the last warm-up steps are timed (the device synchronised at both edges, outside the windows)
    and the steps per window become the fewest that fill `min_window_s`, never fewer than
    `steps_per_window` nor more than `max_steps_per_window` (suite/measurement/window_length.py). A
    device whose steps take milliseconds needs it: a few such steps are too short a window for telemetry
    sampled every 0.15 s, a power reading averaged over a second, or an energy counter's resolution."""

    warmup_steps: int
    steps_per_window: int
    windows: int
    min_window_s: float | None = None
    max_steps_per_window: int = 1000
    # Where set, and the person gave neither --steps nor --windows: the timed windows are fitted to about
    # this many seconds from warm-up timing, the schedule's windows and steps their ceiling
    # (suite/measurement/window_length.py). For a device whose steps take seconds (the CPU's).
    window_budget_s: float | None = None


class Backend:
    name: str = "base"
    # Collective library for torch.distributed on this device.
    dist_backend: str = "gloo"
    # Precisions this backend can run, the first one is its default.
    precisions: tuple[str, ...] = ("fp32",)
    schedule = Schedule(warmup_steps=3, steps_per_window=10, windows=5)
    # Its options, place in `auto` selection and summary gauges: declared in backends/declared.py.
    # Whether batches are copied from host memory into the device's own (False: the device is the host).
    copies_to_device: bool = True

    def __init__(self, spec: RunSpec):
        self.spec = spec
        self.precision = spec.precision or self.precisions[0]

    # The class and a plan import no torch (imported where a verb needs it): a plan, a sweep's dry run and
    # the line `suite run` prints before it starts stay quick.
    @property
    def device(self) -> torch.device:
        """The torch device the run's tensors live on: the host's, unless the backend sets its own."""
        if "_device" not in self.__dict__:
            import torch

            self._device = torch.device("cpu")
        return self._device

    @device.setter
    def device(self, device: torch.device) -> None:
        self._device = device

    # -- discovery -----------------------------------------------------------------------------
    @classmethod
    def is_available(cls) -> tuple[bool, str]:
        """(available, reason). The reason says what is missing and how to get it."""
        raise NotImplementedError

    @property
    def pin_memory_default(self) -> bool:
        """Page-locked host batches unless asked otherwise: pinned memory only helps a copy into
        separate device memory; when the device is the host itself there is no copy to speed up."""
        return self.device.type != "cpu"

    def default_batch_size(self, workload) -> int:
        return workload.default_batch_size

    # -- life cycle ----------------------------------------------------------------------------
    def setup(self) -> None:
        """Select and configure the device (threads, device index, execution mode)."""

    def prepare_model(self, module: torch.nn.Module) -> torch.nn.Module:
        return module.to(self.device)

    def compile_model(self, module: torch.nn.Module) -> torch.nn.Module:
        """torch.compile where the run asks for it. Called after DDP wrapping (wrap first, then compile, as
        Habana's Model-References torchvision train.py does): DDP's graph splitting at bucket boundaries
        then keeps the gradient all-reduce overlapping the backward."""
        return module

    def make_optimizer(self, params, kind: str, **hyper) -> torch.optim.Optimizer:
        """`kind` is "adamw" or "sgd"; hyper-parameters are passed explicitly so every backend's
        optimizer computes the same update (vendor fused optimizers have other defaults)."""
        import torch

        if kind == "adamw":
            return torch.optim.AdamW(params, **hyper)
        if kind == "sgd":
            return torch.optim.SGD(params, **hyper)
        raise ValueError(f"unknown optimizer kind {kind!r}")

    def to_device(self, tensor: torch.Tensor, non_blocking: bool = False) -> torch.Tensor:
        """Copy a host tensor to the device (non-blocking where the device supports it and the
        source is pinned)."""
        return tensor.to(self.device, non_blocking=non_blocking)

    def make_loader(self, dataset, **loader_kwargs) -> tuple[object, dict]:
        """A data loader for `dataset`, and a note for the record saying which loader it is and why.
        A vendor loader (HabanaDataLoader) replaces the stock one where the dataset qualifies."""
        import torch.utils.data

        return torch.utils.data.DataLoader(dataset, **loader_kwargs), {
            "loader": "torch.utils.data.DataLoader"
        }

    # -- distributed (torch.distributed, one process per device) --------------------------------
    def init_distributed(self) -> None:
        """Called just before init_process_group: make `dist_backend` usable (hpu imports
        `habana_frameworks.torch.distributed.hccl` here, which registers hccl)."""

    def wrap_ddp(self, module: torch.nn.Module) -> torch.nn.Module:
        """DistributedDataParallel around a prepared module. cpu: no device_ids. cuda passes
        device_ids=[local rank]; hpu wants broadcast_buffers=False, gradient_as_bucket_view=True and
        no device_ids (Habana's DDP guidance)."""
        # No buffer broadcast before every forward (BatchNorm statistics stay per rank), as on hpu: the
        # same collectives on every backend, and none between DCGAN's two discriminator passes.
        return ddp_without_buffer_broadcast(module)

    # -- the training step ---------------------------------------------------------------------
    def causal_attention(self):
        """The function a language model's attention calls instead of torch's scaled_dot_product_attention,
        `(q, k, v) -> output`, each (batch, heads, length, head width), with the causal mask; None keeps
        torch's, which picks its own kernel. Called once per model, after setup(). A backend returns its
        own where torch does not reach the device's fused kernel, and says in device_info() which ran."""
        return None

    def autocast(self):
        return contextlib.nullcontext()

    def backward(self, loss: torch.Tensor) -> None:
        loss.backward()

    def step(self, optimizer: torch.optim.Optimizer) -> None:
        optimizer.step()

    def end_step(self) -> None:
        """Once per iteration, after every optimizer has stepped (GradScaler.update lives here)."""

    # -- measurement ---------------------------------------------------------------------------
    def synchronize(self) -> None:
        """Wait for all queued device work. Called only at the edges of timed windows."""

    def reset_peak_memory(self) -> None:
        pass

    def memory_stats(self) -> dict:
        """Normalised memory figures in bytes: peak_memory_bytes always; others where known."""
        return {}

    def device_info(self) -> dict:
        return {"backend": self.name}

    def describe(self) -> dict:
        """What `suite env` shows of this device: set up as a run would, then its device_info()."""
        self.setup()
        return self.device_info()

    def profiler_activities(self) -> list:
        """torch.profiler activities to trace for this device (the host's always)."""
        import torch.profiler

        return [torch.profiler.ProfilerActivity.CPU]

    def telemetry_samplers(self) -> list:
        """Device samplers for suite.measurement.telemetry (host CPU/RAM is sampled for every backend)."""
        return []

    def is_out_of_memory(self, error: BaseException) -> bool:
        import torch

        return isinstance(error, torch.OutOfMemoryError) if hasattr(torch, "OutOfMemoryError") else False

    # -- one independent copy per device (`suite run --per-device`) -----------------------------
    def pin_envs(self, copies: int) -> list[dict[str, str]]:
        """The environment of each of `copies` independent processes, so that each sees only its own
        device (the variable differs by vendor). UserError when there are fewer devices than copies."""
        raise UserError(f"the {self.name} backend cannot pin a copy to one device (--per-device)")


def one_device_each(variable: str, visible: list[str], copies: int, what: str) -> list[dict[str, str]]:
    """{variable: one visible device} for each copy, in order; refused when fewer are visible."""
    if copies > len(visible):
        raise UserError(
            f"--per-device {copies}: only {len(visible)} {what} visible ({', '.join(visible) or 'none'})"
        )
    return [{variable: device} for device in visible[:copies]]


def ddp_without_buffer_broadcast(module: torch.nn.Module, **options) -> torch.nn.Module:
    """DistributedDataParallel with `broadcast_buffers=False`: no buffer broadcast, at wrap time or before
    each forward. Newer torch deprecates the argument for `forward_sync_buffers`, which still syncs at
    wrap time; until torch has the argument that stops that too, this one keeps the semantics every
    backend (and Habana's DDP guidance) relies on, so its FutureWarning says nothing a user can act on."""
    import torch.nn.parallel

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*broadcast_buffers.*", category=FutureWarning)
        return torch.nn.parallel.DistributedDataParallel(module, broadcast_buffers=False, **options)
