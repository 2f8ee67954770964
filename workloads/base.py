"""The Workload interface: what to build, and what one step consumes.

A workload's definition (this class and its fields) imports no torch, so listing and planning stay quick;
`build_modules` and `build` import the models and the training step (workloads/training.py) when called.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from suite.inputs.errors import UserError, shown

if TYPE_CHECKING:  # a workload's definition imports no torch: `suite list` reads it without torch
    import torch

    from .training import Training


def __getattr__(name: str):
    # `Training` lived here before the step moved to training.py (which imports torch): a user's workload that
    # imports it from here still works, and a listing still imports no torch.
    if name == "Training":
        from .training import Training

        return Training
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def count_parameters(module: torch.nn.Module) -> int:
    """The seed's count: trainable elements only (BatchNorm running statistics are buffers)."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


# A field's annotation (as written: the workloads use `from __future__ import annotations`) -> what an
# override of it may be, in words and as a check.
_OVERRIDE_TYPES = {
    "int": ("a whole number", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    "float": ("a number", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)),
    "bool": ("true or false", lambda v: isinstance(v, bool)),
    "str": ("text", lambda v: isinstance(v, str)),
}


def _check_override_type(workload: str, key: str, annotation, value) -> None:
    kind = _OVERRIDE_TYPES.get(
        annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    )
    if kind is not None and not kind[1](value):
        raise UserError(f"--model-override {key}: {workload}'s {key} is {kind[0]}, got {shown(value)}")


@dataclass(frozen=True)
class Workload:
    name: str
    description: str
    image_size: int
    default_batch_size: int
    num_classes: int  # labels the data path must deliver (a GAN ignores them)

    # The numerics check (suite.numerics.check): steps of the workload's own recipe it compares, and
    # whether the loss must fall over them (a classifier learns its few batches; a GAN's two losses chase
    # each other instead). docs/numerics.md says how the steps were chosen.
    numerics_steps = 8
    loss_must_fall = True
    # The check's batch: the run's, capped here. The check does not need the timed batch, and its cost
    # grows with it. A classifier's BatchNorm needs several samples per channel: at batch 2 a ResNet's last
    # 1×1 feature map (32 px) normalises two numbers and its gradients explode in fp32 itself.
    numerics_batch = 8
    # The batch the recipe's learning rate is given for, where the recipe scales it linearly with the batch
    # (SGD: Goyal et al. 2017, arXiv:1706.02677, lr 0.1 per 256 images); None: the rate holds at any batch
    # (Adam's step is normalised per element). The check trains at the rate the recipe gives its batch.
    recipe_batch = 256  # no annotation: a class constant, not a dataclass field

    # What each of the losses its step returns is (the record keeps them beside the final losses): one
    # loss, unnamed, unless a workload says otherwise.
    loss_names = ()  # no annotation: a class constant, not a dataclass field

    # Fields that name or describe the workload rather than shape its model: `--model-override` sets none.
    identity_fields = ("name", "description", "default_batch_size")

    # The run options a workload's training step honours (`suite run --grad-accum`, `--activation-checkpointing`,
    # Training.use_run_options); any other workload refuses them while the run is planned.
    accumulates_gradients = False
    checkpoints_activations = False
    # Whether its training can shard its parameters across processes (`suite run --fsdp`, Training.shard).
    shards_parameters = False

    def check_run_options(self, grad_accum: int, activation_checkpointing: bool) -> None:
        """One line (a UserError) where this workload cannot honour --grad-accum or --activation-checkpointing."""
        if grad_accum != 1 and not self.accumulates_gradients:
            raise UserError(
                f"--grad-accum {grad_accum} does not apply to {self.name}: only the language models "
                "(gpt2-small, llama-1b) accumulate gradients; leave it at 1"
            )
        if activation_checkpointing and not self.checkpoints_activations:
            raise UserError(
                f"--activation-checkpointing does not apply to {self.name}: only the language models "
                "(gpt2-small, llama-1b) checkpoint their decoder blocks"
            )

    def recipe_lr_scale(self, batch_size: int) -> float:
        """The factor on the optimizer's learning rate the recipe gives a batch of BATCH_SIZE."""
        return 1.0 if self.recipe_batch is None else batch_size / self.recipe_batch

    # -- what subclasses define ----------------------------------------------------------------
    def build_modules(self, device: str | torch.device = "cpu") -> dict[str, torch.nn.Module]:
        raise NotImplementedError

    def build(self, backend) -> Training:
        """Create the modules on the backend's device, and their optimizers through the backend."""
        raise NotImplementedError

    # -- shared --------------------------------------------------------------------------------
    def overridable_fields(self) -> list[str]:
        """The fields `--model-override KEY=VALUE` may set: the model's shape, not the workload's name, its
        description or its batch."""
        return sorted(f.name for f in dataclasses.fields(self) if f.name not in self.identity_fields)

    def with_overrides(self, **overrides) -> Workload:
        """The same workload with some architecture fields changed (tests use tiny widths), each value of
        its field's type: `ngf=true` is no width (a bool is an int to Python: it trained a width-1 model)."""
        settable = self.overridable_fields()
        unknown = sorted(set(overrides) - set(settable))
        if unknown:
            raise UserError(
                f"unknown model override(s) {', '.join(unknown)} for {self.name} "
                f"(settable: {', '.join(settable)})"
            )
        fields = {f.name: f for f in dataclasses.fields(self)}
        for key, value in overrides.items():
            _check_override_type(self.name, key, fields[key].type, value)
        return dataclasses.replace(self, **overrides)

    def with_shape(self, num_classes: int | None = None, image_size: int | None = None) -> Workload:
        """--num-classes and --image-size; a workload whose architecture fixes either refuses it."""
        changes = {
            k: v for k, v in (("num_classes", num_classes), ("image_size", image_size)) if v is not None
        }
        return self.with_overrides(**changes) if changes else self

    def check_data_classes(self, classes: int, where: str, head_asked: bool = False) -> None:
        """The head must fit the data's labels: more classes than outputs cannot train at all, and a head
        a person chose (--num-classes, or a named model's default 1000) must match the data exactly."""
        if self.num_classes <= 0:
            return  # a GAN ignores labels
        if classes > self.num_classes or (head_asked and classes != self.num_classes):
            raise UserError(
                f"{where} has {classes} classes but {self.name} has a {self.num_classes}-class head: "
                f"pass --num-classes {classes}"
            )

    def provenance(self) -> dict:
        """What, beyond its name, makes a run of this workload repeatable (kept in the record)."""
        return {
            "class": f"{type(self).__module__}:{type(self).__qualname__}",
            "num_classes": self.num_classes,
        }

    def parameter_counts(self) -> dict[str, int]:
        # Built on the meta device: shapes without memory, so the 240M-parameter models count instantly.
        modules = self.build_modules(device="meta")
        return {name: count_parameters(module) for name, module in modules.items()}

    # What a throughput counts: one sample (what images_per_step counts) is worth units_per_sample() of
    # it. Images: one image each. A token workload (workloads/gpt.py) says "tokens", a sequence's length.
    unit = "images"  # no annotation: a class constant, not a dataclass field

    def units_per_sample(self) -> int:
        return 1

    def sample_text(self) -> str:
        """One sample in words, for `suite list`: `64 px`, `1,024 tokens`."""
        return f"{self.image_size} px"

    def images_per_step(self, batch_size: int) -> int:
        """Real training images one step consumes (DCGAN: the real batch, not the fakes)."""
        return batch_size

    def input_shape(self, batch_size: int) -> tuple[int, ...]:
        return (batch_size, 3, self.image_size, self.image_size)

    def synthetic_batch(self, batch_size: int, device, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        """One batch shaped like real data, normalised to [-1, 1] as the real-data path does."""
        import torch

        generator = torch.Generator().manual_seed(seed)
        images = torch.rand(self.input_shape(batch_size), generator=generator) * 2 - 1
        labels = torch.randint(0, max(self.num_classes, 1), (batch_size,), generator=generator)
        return images.to(device), labels.to(device)
