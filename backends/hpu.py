"""The HPU backend (Habana Gaudi): lazy mode or eager (+ torch.compile), bf16 autocast or legacy HMP,
Habana's fused optimizers, HabanaDataLoader where a dataset qualifies, memory and HLML telemetry.

Importing `habana_frameworks.torch` fixes the execution mode: it loads `libhabana_pytorch_plugin.so` (lazy)
or `libhabana_pytorch2_plugin.so` (eager) according to `is_lazy()` at that moment, and the autocast op lists
are read once, too (bridge v1.19.0: habana_frameworks/torch/__init__.py, torch/utils/internal.py). From torch
2.5 that import may happen inside `import torch` (Habana's torch autoload), so the command line sets the
variables before torch is imported (habana_releases.preset_mode), `setup()` sets them otherwise, and after
the import the backend asks the bridge which mode really runs and refuses a run in another mode than asked.
`is_available()` and `__init__` import nothing: they only look for files. Every release difference comes
from the table in habana_releases.py. Where the table does not know a release's default mode and no mode is
asked, the variable is left unset and the mode is the one the bridge reports after its import.
"""

from __future__ import annotations

import contextlib
import glob
import importlib
import importlib.util
import os
import sys

import torch

from suite.inputs.errors import UserError
from suite.vendors import fresh_import

from . import habana_releases, peaks, presence, register_backend
from .base import Backend, Schedule, ddp_without_buffer_broadcast, one_device_each
from .hpu_attention import causal_attention
from .hpu_install import (
    BRIDGE_PROBE,
    active_mode,
    bridge_default_mode,
    card_refusal,
    default_mode,
    device_generation,
    hmp_refusal,
    torch_refusal,
)
from .hpu_loader import build_habana_loader, habana_loader_qualifies
from .hpu_optimizers import fused_optimizer

MODES = ("lazy", "eager", "compile")
LAZY_ENV = habana_releases.LAZY_ENV
PLUGIN_DIST = habana_releases.PLUGIN_DIST
plugin_version = habana_releases.plugin_version


def _checked_file(option: str, path: str | None) -> str | None:
    if path is not None and not os.path.isfile(path):
        raise UserError(f"{option} {path!r}: no such file (expected a text file of op names, one per line)")
    return os.path.abspath(path) if path is not None else None


def hls_module_id() -> int | None:
    """HLS_MODULE_ID, the card this process holds, as Habana's hccl sets it: a whole number, else None with
    a warning (a junk value left in a shell used to fail the run with int()'s message)."""
    value = os.environ.get("HLS_MODULE_ID")
    if value is None or not value.strip():
        return None
    if not (value.strip().isascii() and value.strip().isdigit() and len(value.strip()) <= 4):
        print(
            f"suite: warning: HLS_MODULE_ID={value!r} in the environment ignored: a module id is a whole "
            "number (telemetry then reads a card only where one is visible; the record says which)",
            file=sys.stderr,
        )
        return None
    return int(value)


@register_backend
class HPUBackend(Backend):
    name = "hpu"
    dist_backend = "hccl"
    precisions = ("bf16", "fp32", "hmp")
    # Graph compilation makes the first steps slow (more so with torch.compile): warm up longer.
    # A window lasts 1 s at least (steps grown from warm-up timing when --steps is not given), as on cuda:
    # the power that pyhlml reports is sampled by the telemetry thread every 0.15 s.
    schedule = Schedule(warmup_steps=10, steps_per_window=20, windows=5, min_window_s=1.0)
    # The torch device type of tensors, autocast and the model. Only the wiring tests set it to "cpu":
    # a tensor on "hpu" needs Habana's kernels, which no fake can provide.
    device_type = "hpu"

    @classmethod
    def is_available(cls) -> tuple[bool, str]:
        absent = presence.habana_absent()
        if absent:
            return False, absent
        # A card the installed release no longer supports (a DL1's first-generation Gaudi from 1.22): said
        # from the PCI ids in sysfs, before the bridge is asked (it may not drive the card at all).
        refusal = card_refusal(habana_releases.installed()[0])
        if refusal:
            return False, refusal
        # A half-installed SDK has the package and the device node but no working bridge: ask a fresh
        # process to import it and count devices (nothing is imported here).
        ok, why = fresh_import.check(BRIDGE_PROBE)
        if not ok:
            return False, torch_refusal(
                why
            ) or f"habana_frameworks is installed and a device node is present, but {why}"
        return True, f"habana_frameworks found ({PLUGIN_DIST} {plugin_version() or 'version unknown'})"

    def __init__(self, spec):
        super().__init__(spec)
        self.release, self.release_warning = habana_releases.installed()
        if spec.hpu.mode is None:
            self.mode, self.mode_source = default_mode(self.release)
        elif spec.hpu.mode in MODES:
            self.mode, self.mode_source = spec.hpu.mode, "--hpu-mode"
        else:
            raise UserError(f"--hpu-mode {spec.hpu.mode!r} is not a mode (accepted: {', '.join(MODES)})")
        if self.mode == "compile" and self.release.compile_backend is None:
            raise UserError(
                f"--hpu-mode compile: Habana {self.release.version} has no torch.compile backend "
                "(hpu_backend arrived in 1.15, aot_hpu_training_backend in 1.12): use --hpu-mode lazy or eager"
            )
        self.bf16_ops = _checked_file("--hpu-bf16-ops", spec.hpu.bf16_ops)
        self.fp32_ops = _checked_file("--hpu-fp32-ops", spec.hpu.fp32_ops)
        if self.precision == "hmp":
            refusal = hmp_refusal(self.release)
            if refusal:
                raise UserError(refusal)
        # torch's autoload (torch >= 2.5) may already have imported the bridge in some mode: refuse now,
        # before anything is built, rather than run another mode under this one's name.
        self._refuse_other_active_mode()
        # The record stores the mode that ran, not only the one typed (None: the bridge's own default,
        # known after its import in setup()).
        self.spec = spec.replace(hpu_mode=self.mode)
        self.device = torch.device(self.device_type)
        self._htcore = self._hthpu = self._hmp = None
        self._env_at_import: dict[str, str] = {}
        self._optimizer_notes: list[str] = []
        self._attention_note: str | None = None  # which attention a language model runs
        self._verified_by: str | None = None
        self._loader_notes: dict = {}
        self._hlml = None

    # -- life cycle ----------------------------------------------------------------------------
    def _environment(self) -> dict[str, str]:
        # No mode yet: the release's default is not known, and the bridge is left to choose it.
        env = {LAZY_ENV: self.release.mode_value(self.mode)} if self.mode else {}
        if self.bf16_ops and self.precision == "bf16":
            env[self.release.bf16_ops_env] = self.bf16_ops
        if self.fp32_ops and self.precision == "bf16":
            env[self.release.fp32_ops_env] = self.fp32_ops
        return env

    def _bridge_mode_wanted(self) -> str:
        return "lazy" if self.mode == "lazy" else "eager"

    def _adopt_bridge_default(self) -> None:
        """No mode asked and the release's default unknown: run the mode the imported bridge chose."""
        self.mode, self.mode_source = bridge_default_mode(self.release)
        self.spec = self.spec.replace(hpu_mode=self.mode)

    def _refuse_other_active_mode(self) -> None:
        """A bridge already imported (by torch's autoload, or by the caller) runs the mode it was imported
        in; that mode cannot change in this process."""
        if "habana_frameworks.torch" not in sys.modules:
            return
        if self.mode is None:
            self._adopt_bridge_default()
            return
        running, how = active_mode(self.release)
        if running != self._bridge_mode_wanted():
            raise UserError(
                f"--hpu-mode {self.mode} asked, but habana_frameworks was already imported in {running} mode "
                f"({how}; `import torch` loads it when Habana's autoload is on): start the suite with "
                f"{LAZY_ENV}={self.release.mode_value(self.mode)} set before Python starts, or set "
                f"{habana_releases.AUTOLOAD_ENV}=0"
            )

    def setup(self) -> None:
        env = self._environment()
        self._refuse_other_active_mode()
        if "habana_frameworks.torch" not in sys.modules:
            os.environ.update(env)  # before the first import of habana_frameworks, which reads them once
        else:
            # Imported already (torch's autoload): the op lists it read then are the ones in use.
            late = [name for name, value in env.items() if name != LAZY_ENV and os.environ.get(name) != value]
            if late:
                raise UserError(
                    f"habana_frameworks was imported before the suite could set {', '.join(late)}: "
                    f"set {habana_releases.AUTOLOAD_ENV}=0, or set them before Python starts"
                )
        self._env_at_import = {k: v for k, v in os.environ.items() if k.startswith("PT_HPU_")}
        try:
            self._htcore = importlib.import_module("habana_frameworks.torch.core")
            self._hthpu = importlib.import_module("habana_frameworks.torch.hpu")
        except (AssertionError, AttributeError) as error:
            refusal = torch_refusal(f"{type(error).__name__}: {error}")
            if refusal is None:
                raise
            raise UserError(refusal) from None
        if self.mode is None:
            self._adopt_bridge_default()
        # What runs is what the bridge decided at its import, whatever was asked: check it.
        running, self._verified_by = active_mode(self.release)
        if running != self._bridge_mode_wanted():
            raise UserError(
                f"--hpu-mode {self.mode} asked, but the bridge runs {running} mode ({self._verified_by})"
            )
        if not self._hthpu.is_available():
            raise UserError(
                "habana_frameworks is installed but torch.hpu.is_available() is False: "
                "check `hl-smi` and that the devices are passed into the container"
            )
        # The bridge's own device type; is_available() saw the PCI ids already, where sysfs shows them.
        generation = self.generation()
        refusal = generation and habana_releases.unsupported_card(self.release, generation)
        if refusal:
            raise UserError(refusal)
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
        return ddp_without_buffer_broadcast(module, gradient_as_bucket_view=True)

    def prepare_model(self, module: torch.nn.Module) -> torch.nn.Module:
        # channels_last is not supported on HPU: the default (contiguous) layout is kept.
        return module.to(self.device)

    def compile_model(self, module: torch.nn.Module) -> torch.nn.Module:
        if self.mode == "compile":
            # Habana's torch.compile backend of this release (hpu_backend from 1.15, registered by
            # habana_frameworks.torch.core in eager mode; aot_hpu_training_backend in 1.12-1.14).
            module = torch.compile(module, backend=self.release.compile_backend)
        return module

    def make_optimizer(self, params, kind: str, **hyper) -> torch.optim.Optimizer:
        if not self.spec.hpu.fused:
            self._optimizer_notes.append(f"{kind}: torch.optim (--no-fused)")
            return super().make_optimizer(params, kind, **hyper)
        optimizer, note = fused_optimizer(params, kind, **hyper)
        self._optimizer_notes.append(note)
        return optimizer

    # Loader workers are started with forkserver, never fork: "Default 'fork' doesn't work with synapse. Use
    # 'forkserver' or 'spawn'" (Model-References torchvision train.py, 1.11.0 to 1.23.0). A forked worker
    # would inherit the process's hold on the card.
    loader_start_method = "forkserver"

    def make_loader(self, dataset, **loader_kwargs) -> tuple[object, dict]:
        # A short last batch has a new shape, and a new shape is a new graph to compile.
        loader_kwargs.setdefault("drop_last", True)
        generation = self.generation()
        ok, why = habana_loader_qualifies(dataset, loader_kwargs, generation)
        if not ok:
            return self._plain_loader(dataset, loader_kwargs, why)
        return build_habana_loader(dataset, loader_kwargs, generation, why)

    def _plain_loader(self, dataset, loader_kwargs: dict, why: str) -> tuple[object, dict]:
        if loader_kwargs.get("num_workers") and loader_kwargs.get("multiprocessing_context") is None:
            loader_kwargs["multiprocessing_context"] = self.loader_start_method
        info = {"loader": "torch.utils.data.DataLoader", "why": why}
        if loader_kwargs.get("num_workers"):
            info["worker_start_method"] = self.loader_start_method
        return torch.utils.data.DataLoader(dataset, **loader_kwargs), info

    def generation(self) -> str | None:
        """gaudi, gaudi2 or gaudi3 from the bridge's own device type (None before setup or if unknown)."""
        if self._hthpu is None:
            return None
        return device_generation()

    # -- the training step ---------------------------------------------------------------------
    def causal_attention(self):
        # Habana's FusedSDPA where the bridge has it: torch's SDPA does not reach it on HPU (hpu_attention.py).
        attend, self._attention_note = causal_attention()
        return attend

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
            "habana_release": self.release.version,  # the row of habana_releases.RELEASES used
            "execution_mode_verified_by": self._verified_by,  # None: setup did not get that far
            "autoload": self.release.autoload_imports_bridge(os.environ),
            "env_at_import": self._env_at_import,
        }
        if self._attention_note is not None:
            info["attention"] = self._attention_note
        if self.release_warning:
            info["release_warning"] = self.release_warning
        if self._hthpu is not None:
            name = self._hthpu.get_device_name()
            generation = self.generation()
            peak, peak_note = peaks.hpu_peak_tflops(generation, self.precision)
            info.update(
                {
                    "name": name,
                    "generation": generation,
                    "count": self._hthpu.device_count(),
                    "peak_tflops": peak,
                    "peak_tflops_note": peak_note,
                }
            )
            if generation is not None and generation not in self.release.generations:
                info["release_warning"] = (
                    f"Habana {self.release.version} does not list {generation} among its supported "
                    f"generations ({', '.join(self.release.generations)})"
                )
        if self._hlml is not None:
            info["hlml_card"] = self._hlml.attribution
        return info

    def pin_envs(self, copies: int) -> list[dict[str, str]]:
        # HABANA_VISIBLE_MODULES takes module IDs 0..N-1 (Intel Gaudi docs, "Gaudi-to-process Assignment");
        # the device nodes are counted without importing the bridge. A list already set is divided.
        visible = os.environ.get("HABANA_VISIBLE_MODULES")
        ids = [d.strip() for d in visible.split(",") if d.strip()] if visible else None
        if ids is None:
            nodes = max(len(glob.glob(pattern)) for pattern in presence.DEVICE_NODE_GLOBS)
            ids = [str(i) for i in range(nodes)]
        return one_device_each("HABANA_VISIBLE_MODULES", ids, copies, "Gaudi module(s)")

    def telemetry_samplers(self) -> list:
        from .hlml import HLMLSampler, hlml_installed

        if not hlml_installed():
            return []  # pyhlml (pip install habana-pyhlml) is optional
        # HLML's index is not LOCAL_RANK: index 0 can be module 5 (`hl-smi -Q index,module_id`). The card
        # this process holds is HLS_MODULE_ID, which the bridge's hccl sets from LOCAL_RANK (through
        # HABANA_VISIBLE_MODULES where set) for multi-process runs (distributed/hccl/__init__.py, v1.19.0).
        self._hlml = HLMLSampler(module_id=hls_module_id())
        return [self._hlml]

    def is_out_of_memory(self, error: BaseException) -> bool:
        # The bridge reports device OOM as a RuntimeError naming the allocator.
        text = str(error)
        return (
            super().is_out_of_memory(error) or "Allocation failed" in text or "out of memory" in text.lower()
        )
