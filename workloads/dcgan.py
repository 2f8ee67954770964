"""DCGAN workloads: the Naive/Safe-Params models at 64 and 128 px (the standard DCGAN of Radford et al.,
arXiv:1511.06434, as in https://github.com/pytorch/examples/tree/main/dcgan; widths per model below).
The networks and the training step are in dcgan_nets.py, imported when a model is built.
"""

from __future__ import annotations

from dataclasses import dataclass

from suite.inputs.errors import UserError

from . import register_workload
from .base import Workload

# The seed's optimiser, used for both networks.
ADAMW = {"lr": 2e-4, "betas": (0.5, 0.999), "eps": 1e-8, "weight_decay": 0.05}


def __getattr__(name: str):
    # The networks and the step lived here before they moved to dcgan_nets.py (which imports torch): code
    # that imports them from here still works.
    if name in ("generator", "discriminator", "init_weights", "DCGANTraining"):
        from . import dcgan_nets

        return getattr(dcgan_nets, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class DCGAN(Workload):
    nz: int = 100
    ngf: int = 64
    ndf: int = 64

    loss_names = ("discriminator", "generator")  # the order dcgan_nets.DCGANTraining.train_step returns

    def build_modules(self, device="cpu"):
        import torch

        from .dcgan_nets import discriminator, generator, init_weights

        with torch.device(device):
            modules = {
                "generator": generator(self.image_size, self.nz, self.ngf),
                "discriminator": discriminator(self.image_size, self.ndf),
            }
        if str(device) != "meta":
            for module in modules.values():
                module.apply(init_weights)
        return modules

    recipe_batch = None  # AdamW: the rate holds at any batch
    numerics_batch = 2  # D's last BatchNorm still sees 2 × 4 × 4 values per channel
    loss_must_fall = False  # D and G chase each other: neither loss need fall (suite.numerics.check)

    def with_shape(self, num_classes=None, image_size=None):
        if num_classes is not None:
            raise UserError(f"--num-classes does not apply to {self.name}: a GAN has no classes")
        if image_size is not None and image_size != self.image_size:
            raise UserError(
                f"--image-size {image_size} does not fit {self.name}, whose layers are built for "
                f"{self.image_size} px (the dcgan64* and dcgan128* workloads are the sizes there are)"
            )
        return self

    def build(self, backend):
        from .dcgan_nets import DCGANTraining

        modules = {name: backend.prepare_model(m) for name, m in self.build_modules().items()}
        optimizers = {
            name: backend.make_optimizer(m.parameters(), "adamw", **ADAMW) for name, m in modules.items()
        }
        return DCGANTraining(backend, modules, optimizers, self.nz)


@register_workload
def dcgan64() -> DCGAN:
    return DCGAN(
        "dcgan64",
        "DCGAN 64 px, the seed's Naive-Params-64 (nz 100, ngf 64, ndf 64)",
        image_size=64,
        default_batch_size=256,
        num_classes=0,
        nz=100,
        ngf=64,
        ndf=64,
    )


@register_workload
def dcgan64_safe() -> DCGAN:
    return DCGAN(
        "dcgan64-safe",
        "DCGAN 64 px, the seed's Safe-Params-64 (nz 256, ngf 256, ndf 64)",
        image_size=64,
        default_batch_size=256,
        num_classes=0,
        nz=256,
        ngf=256,
        ndf=64,
    )


@register_workload
def dcgan128_safe() -> DCGAN:
    return DCGAN(
        "dcgan128-safe",
        "DCGAN 128 px, the seed's Safe-Params-128 (nz 256, ngf 256, ndf 128)",
        image_size=128,
        default_batch_size=256,
        num_classes=0,
        nz=256,
        ngf=256,
        ndf=128,
    )


@register_workload
def dcgan128() -> DCGAN:
    return DCGAN(
        "dcgan128",
        "DCGAN 128 px, a later revision's Safe-128 (nz 128, ngf 128, ndf 32)",
        image_size=128,
        default_batch_size=256,
        num_classes=0,
        nz=128,
        ngf=128,
        ndf=32,
    )
