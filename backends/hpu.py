"""The HPU backend (Habana Gaudi): lazy mode or eager (+ torch.compile), bf16 autocast or legacy HMP,
Habana's fused optimizers, HabanaDataLoader where a dataset qualifies, memory and HLML telemetry.

Importing `habana_frameworks` fixes the execution mode: its `torch/__init__.py` loads
`libhabana_pytorch_plugin.so` (lazy) or `libhabana_pytorch2_plugin.so` (eager) according to
`PT_HPU_LAZY_MODE` at that moment, and the autocast op lists are read once, too. So nothing here imports
it before `setup()` has written those variables; `is_available()` and `__init__` only look for files.
(Habana bridge source, habana_frameworks/torch/__init__.py and torch/utils/internal.py `is_lazy()`.)
"""

from __future__ import annotations

import contextlib
import glob
import importlib
import importlib.metadata
import importlib.util
import os
import sys

import torch

from suite import import_probe
from suite.errors import UserError

from . import register_backend
from .base import Backend, Schedule

MODES = ("lazy", "eager", "compile")
LAZY_ENV = "PT_HPU_LAZY_MODE"
# Autocast op lists (Habana docs "Mixed precision training with PyTorch autocast"); the bridge reads them
# at import, like the lazy-mode switch.
BF16_OPS_ENV = "PT_HPU_AUTOCAST_LOWER_PRECISION_OPS_LIST"
FP32_OPS_ENV = "PT_HPU_AUTOCAST_FP32_OPS_LIST"
# Releases from about 1.21 default to eager mode (docs.habana.ai Runtime_Flags: PT_HPU_LAZY_MODE default 0,
# "Eager mode with torch.compile is the default mode. Lazy mode is a legacy fallback"); older ones to lazy
# (the bridge's is_lazy(): os.getenv("PT_HPU_LAZY_MODE", "1") != "0").
EAGER_DEFAULT_FROM = (1, 21)
PLUGIN_DIST = "habana-torch-plugin"  # the wheel that provides habana_frameworks.torch (not on PyPI)
# Gaudi device nodes: /dev/hl<N> (habanalabs driver; "habanalabs: create two char devices per ASIC", hlX and
# hl_controlDX) or /dev/accel/accel<N> since the driver moved to the kernel's accel subsystem.
DEVICE_NODE_GLOBS = ("/dev/hl[0-9]*", "/dev/accel/accel[0-9]*")
BRIDGE_PROBE = (
    "import habana_frameworks.torch.core, habana_frameworks.torch.hpu as h\n"
    "if h.device_count() < 1: raise SystemExit('the Habana bridge imports but no Gaudi device answers')"
)
INSTALL_HINT = (
    "use a Gaudi instance with Habana's PyTorch container (vault.habana.ai/gaudi-docker) or "
    "Habana's installer; the bridge is not on PyPI"
)

# habana_dataloader accelerates only these (its aeon_transformers.py HabanaAeonTransforms): anything else
# makes it fall back to a plain DataLoader silently, so the suite decides first and says why.
IMAGENET_MEAN = [0.485, 0.456, 0.406]
IMAGENET_STD = [0.229, 0.224, 0.225]
# Loader arguments habana_dataloader's _handle_vars() refuses unless left at these values.
HABANA_LOADER_FIXED = {
    "batch_sampler": None,
    "collate_fn": None,
    "timeout": 0,
    "worker_init_fn": None,
    "multiprocessing_context": None,
    "generator": None,
    "prefetch_factor": 2,
    "persistent_workers": False,
}


def _package_dir(*parts: str) -> str | None:
    """Where a habana_frameworks sub-package would be, found without importing anything."""
    spec = importlib.util.find_spec(parts[0])
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        path = os.path.join(root, *parts[1:])
        if os.path.isdir(path) or os.path.isfile(path + ".py"):
            return path
    return None


def plugin_version() -> str | None:
    try:
        return importlib.metadata.version(PLUGIN_DIST)
    except importlib.metadata.PackageNotFoundError:
        return None


def default_mode() -> tuple[str, str]:
    """(mode, why) when --hpu-mode is not given: the environment's choice, else the release's default."""
    env = os.environ.get(LAZY_ENV)
    if env is not None:
        # The bridge's own test: anything but "0" is lazy.
        if env.strip() == "0":
            return "compile", f"{LAZY_ENV}=0 in the environment (eager, compiled with hpu_backend)"
        return "lazy", f"{LAZY_ENV}={env} in the environment"
    version = plugin_version()
    if version is None:
        return (
            "lazy",
            f"{PLUGIN_DIST} version unknown: lazy mode, the default before {EAGER_DEFAULT_FROM[0]}.{EAGER_DEFAULT_FROM[1]}",
        )
    try:
        major_minor = tuple(int(p) for p in version.split(".")[:2])
    except ValueError:
        major_minor = (0, 0)
    if major_minor >= EAGER_DEFAULT_FROM:
        return "compile", f"default of {PLUGIN_DIST} {version} (eager + torch.compile)"
    return "lazy", f"default of {PLUGIN_DIST} {version} (lazy)"


def _checked_file(option: str, path: str | None) -> str | None:
    if path is not None and not os.path.isfile(path):
        raise UserError(f"{option} {path!r}: no such file (expected a text file of op names, one per line)")
    return os.path.abspath(path) if path is not None else None


@register_backend
class HPUBackend(Backend):
    name = "hpu"
    dist_backend = "hccl"
    precisions = ("bf16", "fp32", "hmp")
    # Graph compilation makes the first steps slow (more so with torch.compile): warm up longer.
    schedule = Schedule(warmup_steps=10, steps_per_window=20, windows=5)
    # The torch device type of tensors, autocast and the model. Only the wiring tests set it to "cpu":
    # a tensor on "hpu" needs Habana's kernels, which no fake can provide.
    device_type = "hpu"

    @classmethod
    def is_available(cls) -> tuple[bool, str]:
        # find_spec looks without importing: importing habana_frameworks fixes the execution mode.
        if importlib.util.find_spec("habana_frameworks") is None:
            return False, f"Habana software not installed (no habana_frameworks module): {INSTALL_HINT}"
        if not any(glob.glob(pattern) for pattern in DEVICE_NODE_GLOBS):
            return False, (
                "habana_frameworks is installed but no Gaudi device is visible (no /dev/hl* or "
                "/dev/accel/accel*): run on a Gaudi instance, or pass the devices into the container"
            )
        # A half-installed SDK has the package and the device node but no working bridge: ask a fresh
        # process to import it and count devices (nothing is imported here).
        ok, why = import_probe.check(BRIDGE_PROBE)
        if not ok:
            return False, f"habana_frameworks is installed and a device node is present, but {why}"
        return True, f"habana_frameworks found ({PLUGIN_DIST} {plugin_version() or 'version unknown'})"

    def __init__(self, config):
        super().__init__(config)
        if config.hpu_mode is None:
            self.mode, self.mode_source = default_mode()
        elif config.hpu_mode in MODES:
            self.mode, self.mode_source = config.hpu_mode, "--hpu-mode"
        else:
            raise UserError(f"--hpu-mode {config.hpu_mode!r} is not a mode (accepted: {', '.join(MODES)})")
        self.bf16_ops = _checked_file("--hpu-bf16-ops", config.hpu_bf16_ops)
        self.fp32_ops = _checked_file("--hpu-fp32-ops", config.hpu_fp32_ops)
        if self.precision == "hmp" and _package_dir("habana_frameworks", "torch", "hpex", "hmp") is None:
            raise UserError(
                "precision 'hmp' needs habana_frameworks.torch.hpex.hmp, which this Habana release "
                "does not have (HMP was dropped after SynapseAI 1.11): use --precision bf16 "
                "(torch.autocast on hpu)"
            )
        # The record stores the mode that ran, not only the one typed.
        self.config = config.resolved(hpu_mode=self.mode)
        self.device = torch.device(self.device_type)
        self._htcore = self._hthpu = self._hmp = None
        self._env_at_import: dict[str, str] = {}
        self._optimizer_notes: list[str] = []

    # -- life cycle ----------------------------------------------------------------------------
    def _environment(self) -> dict[str, str]:
        env = {LAZY_ENV: "1" if self.mode == "lazy" else "0"}
        if self.bf16_ops and self.precision == "bf16":
            env[BF16_OPS_ENV] = self.bf16_ops
        if self.fp32_ops and self.precision == "bf16":
            env[FP32_OPS_ENV] = self.fp32_ops
        return env

    def setup(self) -> None:
        env = self._environment()
        if "habana_frameworks.torch" in sys.modules:
            # Too late to choose: the bridge already loaded the library of whatever mode was set then.
            lazy_now = os.environ.get(LAZY_ENV, "1") != "0"
            if lazy_now != (self.mode == "lazy"):
                raise UserError(
                    f"habana_frameworks was imported before the suite could set {LAZY_ENV} "
                    f"for --hpu-mode {self.mode}; run the suite in a fresh process"
                )
        os.environ.update(env)  # before the first import of habana_frameworks, which reads them once
        self._env_at_import = {k: v for k, v in os.environ.items() if k.startswith("PT_HPU_")}
        self._htcore = importlib.import_module("habana_frameworks.torch.core")
        self._hthpu = importlib.import_module("habana_frameworks.torch.hpu")
        if not self._hthpu.is_available():
            raise UserError(
                "habana_frameworks is installed but torch.hpu.is_available() is False: "
                "check `hl-smi` and that the devices are passed into the container"
            )
        if os.environ.get("WORLD_SIZE", "1") != "1" or "OMPI_COMM_WORLD_SIZE" in os.environ:
            self.init_distributed()
        if self.precision == "hmp":
            try:
                self._hmp = importlib.import_module("habana_frameworks.torch.hpex.hmp")
            except ImportError as error:
                raise UserError(f"precision 'hmp': {error}; use --precision bf16") from None
            # Once, before training (Model-References' setup_hpu: hmp.convert(opt_level=...,
            # bf16_file_path=..., fp32_file_path=..., isVerbose=...)); "" selects HMP's built-in lists.
            self._hmp.convert(
                opt_level="O1",
                bf16_file_path=self.bf16_ops or "",
                fp32_file_path=self.fp32_ops or "",
                isVerbose=False,
            )

    def init_distributed(self) -> None:
        # Registers the hccl process-group backend and maps OMPI_COMM_WORLD_* to RANK/WORLD_SIZE; it must
        # come before init_process_group(backend="hccl").
        importlib.import_module("habana_frameworks.torch.distributed.hccl")

    def profiler_activities(self) -> list:
        # Habana's torch build adds ProfilerActivity.HPU ("replace GPU with HPU": docs.habana.ai, Profiling
        # with PyTorch); a stock torch has none, and then only the host is traced.
        hpu_activity = getattr(torch.profiler.ProfilerActivity, "HPU", None)
        return [torch.profiler.ProfilerActivity.CPU, *([hpu_activity] if hpu_activity else [])]

    def wrap_ddp(self, module: torch.nn.Module) -> torch.nn.Module:
        # Habana's DDP guidance: no device_ids, no buffer broadcast each step, gradients as bucket views.
        return torch.nn.parallel.DistributedDataParallel(
            module, broadcast_buffers=False, gradient_as_bucket_view=True
        )

    def prepare_model(self, module: torch.nn.Module) -> torch.nn.Module:
        # channels_last is not supported on HPU: the default (contiguous) layout is kept.
        module = module.to(self.device)
        if self.mode == "compile":
            # Habana's torch.compile backend; registered by habana_frameworks.torch.core in eager mode.
            module = torch.compile(module, backend="hpu_backend")
        return module

    def make_optimizer(self, params, kind: str, **hyper) -> torch.optim.Optimizer:
        if not self.config.hpu_fused:
            self._optimizer_notes.append(f"{kind}: torch.optim (--no-fused)")
            return super().make_optimizer(params, kind, **hyper)
        optimizers = importlib.import_module("habana_frameworks.torch.hpex.optimizers")
        if kind == "adamw":
            # FusedAdamW defaults to eps=1e-6, weight_decay=0.0; torch.optim.AdamW to 1e-8 and 1e-2.
            # Pass both explicitly so an HPU run computes the update a CUDA/CPU run computes.
            hyper = {"eps": 1e-8, "weight_decay": 1e-2, **hyper}
            self._optimizer_notes.append("adamw: habana FusedAdamW")
            return optimizers.FusedAdamW(params, **hyper)
        if kind == "sgd":
            # FusedSGD(params, lr, momentum=0, weight_decay=0, dampening=0, nesterov=False): torch's defaults.
            self._optimizer_notes.append("sgd: habana FusedSGD")
            return optimizers.FusedSGD(params, **hyper)
        raise ValueError(f"unknown optimizer kind {kind!r}")

    def make_loader(self, dataset, **loader_kwargs) -> tuple[object, dict]:
        # A short last batch has a new shape, and a new shape is a new graph to compile.
        loader_kwargs.setdefault("drop_last", True)
        ok, why = habana_loader_qualifies(dataset, loader_kwargs)
        if not ok:
            return (
                torch.utils.data.DataLoader(dataset, **loader_kwargs),
                {"loader": "torch.utils.data.DataLoader", "why": why},
            )
        kwargs, adjusted = habana_loader_kwargs(dataset, loader_kwargs)
        habana_dataloader = importlib.import_module("habana_dataloader")
        loader = habana_dataloader.HabanaDataLoader(dataset, **kwargs)
        info = {"loader": "habana_dataloader.HabanaDataLoader", "why": why, "adjusted": adjusted}
        if getattr(loader, "fallback_activated", False):  # its own refusal, printed and otherwise silent
            info = {
                "loader": "torch.utils.data.DataLoader (HabanaDataLoader fell back)",
                "why": why,
                "adjusted": adjusted,
            }
        return loader, info

    # -- the training step ---------------------------------------------------------------------
    def autocast(self):
        if self.precision == "bf16":
            # bf16 only: first-generation Gaudi has no fp16, and bf16 needs no GradScaler.
            return torch.autocast(device_type=self.device_type, dtype=torch.bfloat16)
        return contextlib.nullcontext()  # fp32, or HMP (which casts ops itself)

    def backward(self, loss: torch.Tensor) -> None:
        loss.backward()
        if self.mode == "lazy":
            # Cut the lazy graph here: forward + backward compile and run as one graph.
            self._htcore.mark_step()

    def step(self, optimizer: torch.optim.Optimizer) -> None:
        if self._hmp is not None:
            # The optimizer's arithmetic stays in fp32 (Model-References: with hmp.disable_casts()).
            with self._hmp.disable_casts():
                optimizer.step()
        else:
            optimizer.step()
        if self.mode == "lazy":
            # And again after the update, so the next iteration starts a fresh graph. (Habana's FusedAdamW
            # also marks a step inside its step(); one more on an empty graph costs nothing, and
            # torch.optim's optimizers under --no-fused need it.)
            self._htcore.mark_step()

    # -- measurement ---------------------------------------------------------------------------
    def synchronize(self) -> None:
        # mark_step() only hands the graph to the device; this waits for it to finish.
        self._hthpu.synchronize()

    def reset_peak_memory(self) -> None:
        self._hthpu.reset_peak_memory_stats()

    def memory_stats(self) -> dict:
        if self._hthpu is None:
            return {}
        # Habana's names (habana_frameworks/torch/hpu/memory.py): Limit = memory the allocator may use,
        # InUse = allocated now, MaxInUse = peak since reset_peak_memory_stats().
        stats = self._hthpu.memory_stats()
        return {
            "peak_memory_bytes": int(stats["MaxInUse"]),
            "allocated_bytes": int(stats["InUse"]),
            "total_memory_bytes": int(stats["Limit"]),
            "num_allocs": int(stats.get("NumAllocs", 0)),
        }

    def device_info(self) -> dict:
        info = {
            "backend": self.name,
            "execution_mode": self.mode,
            "execution_mode_source": self.mode_source,
            "precision_path": {
                "bf16": "torch.autocast(hpu, bfloat16)",
                "fp32": "fp32",
                "hmp": "hmp.convert(O1) + disable_casts()",
            }[self.precision],
            "optimizers": sorted(set(self._optimizer_notes)),
            "habana_torch_plugin": plugin_version(),
            "env_at_import": self._env_at_import,
        }
        if self._hthpu is not None:
            info.update({"name": self._hthpu.get_device_name(), "count": self._hthpu.device_count()})
        return info

    def telemetry_samplers(self) -> list:
        from .hlml import HLMLSampler, hlml_installed

        if not hlml_installed():
            return []  # pyhlml (pip install habana-pyhlml) is optional
        return [HLMLSampler(index=int(os.environ.get("LOCAL_RANK", "0")))]

    def is_out_of_memory(self, error: BaseException) -> bool:
        # The bridge reports device OOM as a RuntimeError naming the allocator.
        text = str(error)
        return (
            super().is_out_of_memory(error) or "Allocation failed" in text or "out of memory" in text.lower()
        )


def _transforms(dataset) -> list:
    transform = getattr(dataset, "transform", None)
    return list(getattr(transform, "transforms", [transform] if transform is not None else []))


def habana_loader_qualifies(dataset, loader_kwargs: dict) -> tuple[bool, str]:
    """(qualifies, why): the checks habana_dataloader makes before it silently falls back."""
    import torchvision
    from torchvision import transforms as T

    if importlib.util.find_spec("habana_dataloader") is None:
        return False, "habana_dataloader not installed (pip package habana-torch-dataloader)"
    if not isinstance(dataset, torchvision.datasets.ImageFolder):
        return (
            False,
            f"HabanaDataLoader accelerates only torchvision ImageFolder, not {type(dataset).__name__}",
        )
    if not isinstance(dataset.transform, T.Compose):
        return False, "HabanaDataLoader needs the transforms in a torchvision Compose"
    train = val = False
    for t in _transforms(dataset):
        if isinstance(t, T.RandomResizedCrop):
            train = True
        elif isinstance(t, (T.CenterCrop, T.Resize)):
            val = True
        elif isinstance(t, T.RandomHorizontalFlip):
            train = True
            if t.p != 0.5:
                return False, f"HabanaDataLoader flips only with p=0.5, not {t.p}"
        elif isinstance(t, T.Normalize):
            if list(t.mean) != IMAGENET_MEAN or list(t.std) != IMAGENET_STD:
                return False, (
                    f"HabanaDataLoader normalises only with ImageNet mean/std, not "
                    f"mean={list(t.mean)} std={list(t.std)}"
                )
        elif not isinstance(t, T.ToTensor):
            return False, f"HabanaDataLoader does not support the transform {type(t).__name__}"
    if train == val:
        return (
            False,
            "HabanaDataLoader needs either RandomResizedCrop/flip (train) or Resize/CenterCrop (eval)",
        )
    for name, expected in HABANA_LOADER_FIXED.items():
        if loader_kwargs.get(name) is not None and loader_kwargs[name] != expected:
            return False, f"HabanaDataLoader supports {name} only as {expected!r}"
    return True, "ImageFolder with supported transforms"


def habana_loader_kwargs(dataset, loader_kwargs: dict) -> tuple[dict, dict]:
    """What first-generation Gaudi's HabanaDataLoader requires (its _handle_vars: shuffle False,
    num_workers 8, pin_memory True), and the record of what was changed to get there."""
    kwargs = {k: v for k, v in loader_kwargs.items() if v is not None}
    adjusted = {}
    if kwargs.pop("shuffle", False):
        kwargs["sampler"] = torch.utils.data.RandomSampler(dataset)  # the same order, as a sampler
        adjusted["shuffle"] = "True -> RandomSampler"
    for name, value in (("num_workers", 8), ("pin_memory", True)):
        if kwargs.get(name) != value:
            adjusted[name] = f"{kwargs.get(name)} -> {value}"
            kwargs[name] = value
    return kwargs, adjusted
