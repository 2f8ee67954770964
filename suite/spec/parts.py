"""The parts of a RunSpec, one job each. None means "the default": the workload's, the backend's, or the
launcher's, filled in when the run is planned (suite.measurement.plan.resolve_plan)."""

from __future__ import annotations

from dataclasses import dataclass, field

# Bounds of the fields below, for their options, a spec file and a record alike.
# Micro-batches per optimizer step: nanoGPT's GPT-2 recipe uses 40 (5 x 8 GPUs); a thousand is already a
# step of minutes on any device.
MAX_GRAD_ACCUM = 1024
# A run's seed: what numpy's and torch's generators take on every platform (a 2**64 seed failed the run in
# torch.manual_seed, after the model was built); as `suite data synth --seed`.
MAX_SEED = 2**32 - 1
# A run's share of an instance: as many accelerators as a catalog's instance may have (pricing.UPPER_BOUNDS).
MAX_ACCELERATORS_USED = 1024


@dataclass(frozen=True)
class Workload:
    """What is trained, on what inputs."""

    name: str = "dcgan64"
    batch_size: int | None = None  # per process; None: the backend's default for the workload
    image_size: int | None = None  # None: the workload's own size (named models: their published one)
    num_classes: int | None = None  # None: the workload's own head (named models: 1000)
    # Architecture overrides (e.g. {"ngf": 8} for tiny test models); recorded as given.
    model_overrides: dict = field(default_factory=dict)
    seed: int = 0
    # One optimizer step per GRAD_ACCUM micro-batches of batch_size (nanoGPT's gradient_accumulation_steps):
    # a step consumes batch_size x grad_accum samples.
    grad_accum: int = 1
    # Each decoder block's activations recomputed in the backward pass instead of kept (torch.utils.checkpoint).
    activation_checkpointing: bool = False

    @property
    def samples_per_step(self) -> int | None:
        """Samples one optimizer step consumes in one process: the micro-batch times the micro-batches."""
        return None if self.batch_size is None else self.batch_size * self.grad_accum


@dataclass(frozen=True)
class Schedule:
    """Warm-up, then WINDOWS timed windows of STEPS_PER_WINDOW steps (None: the backend's Schedule)."""

    warmup_steps: int | None = None
    steps_per_window: int | None = None  # None: the backend's, grown from warm-up where it declares so
    windows: int | None = None


@dataclass(frozen=True)
class Data:
    """Where the batches come from and how the loader feeds them."""

    source: str = "synthetic"  # "synthetic", a folder of class sub-folders of images, or a prepared cache
    workers: int | None = None  # None: 4 for images, capped at the cores; 1 for a cache
    pin_memory: bool | None = None  # None: pin when the device is not the host
    prefetch: int | None = None  # batches each worker prepares ahead (None: 2 with workers)


@dataclass(frozen=True)
class Cost:
    """The instance a run is priced on."""

    instance: str | None = None  # a name in a price catalog
    prices: str | None = None  # the catalog that instance is checked against (name or file)
    accelerators_used: int | None = None  # of the instance's accelerators; None: one per process


@dataclass(frozen=True)
class Checks:
    """What is checked or traced besides the timing; none changes a throughput figure's meaning."""

    numerics: bool = False  # the numerics check after the timed windows (suite.numerics.check)
    reference_backend: str | None = None  # None: the same backend
    # A memory ceiling for backends without device memory of their own (the CPU): peak resident memory
    # above what the process held at setup; going over it is an out-of-memory failure, as on a device.
    max_memory_bytes: int | None = None
    profile_dir: str | None = None  # torch.profiler traces; a profiled run's timings are perturbed


@dataclass(frozen=True)
class Launch:
    """How many processes run it: one (all None), torchrun's (nproc, nnodes, node rank, rendezvous
    HOST:PORT), or independent copies one per device (per_device)."""

    nproc: int | None = None
    nnodes: int | None = None
    node_rank: int | None = None
    rdzv_endpoint: str | None = None
    dist_timeout_s: float | None = None  # bound on any wait for another rank; None: the default
    per_device: int | None = None
    # The language model's parameters, gradients and AdamW state sharded across the ranks (torch's FSDP2
    # fully_shard) instead of replicated on each (DDP): a model too big for one device's memory.
    fsdp: bool = False


# Options only one backend honours, each backend's in its own part (their flags: backends/declared.py).


@dataclass(frozen=True)
class CudaOptions:
    device_index: int | None = None  # None: LOCAL_RANK (set by torchrun), else 0
    tf32: bool = False  # allow TF32 tensor-core math for fp32 matmuls and convolutions
    channels_last: bool = False  # NHWC memory format for the model (and 4-D inputs copied in)
    compile: bool = False  # torch.compile the model(s)
    # torch.compile's mode (None: its default); "reduce-overhead" replays CUDA graphs, "max-autotune" also
    # searches kernels: only with compile.
    compile_mode: str | None = None


@dataclass(frozen=True)
class HpuOptions:
    mode: str | None = None  # lazy | eager | compile; None: the environment's or the Habana release's
    fused: bool = True  # Habana's FusedAdamW / FusedSGD; False (--no-fused): torch.optim's
    bf16_ops: str | None = None  # op-list file: autocast's lower-precision list, or HMP's bf16 list
    fp32_ops: str | None = None  # op-list file: ops kept in fp32 (autocast or HMP)
