"""DCGAN workloads: the Naive/Safe-Params models at 64 and 128 px (the standard DCGAN of Radford et al.,
arXiv:1511.06434, as in https://github.com/pytorch/examples/tree/main/dcgan; widths per model below).

The discriminator returns logits and the loss is BCEWithLogitsLoss: BCE after a sigmoid is refused
under autocast, and the fused form is the numerically stable one.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from suite.errors import UserError

from . import register_workload
from .base import Training, Workload

# The seed's optimiser, used for both networks.
ADAMW = {"lr": 2e-4, "betas": (0.5, 0.999), "eps": 1e-8, "weight_decay": 0.05}


def _up(cin: int, cout: int, first: bool = False) -> list[nn.Module]:
    stride, pad = (1, 0) if first else (2, 1)
    return [nn.ConvTranspose2d(cin, cout, 4, stride, pad, bias=False), nn.BatchNorm2d(cout), nn.ReLU(True)]


def _down(cin: int, cout: int, norm: bool = True) -> list[nn.Module]:
    layers: list[nn.Module] = [nn.Conv2d(cin, cout, 4, 2, 1, bias=False)]
    if norm:
        layers.append(nn.BatchNorm2d(cout))
    layers.append(nn.LeakyReLU(0.2, inplace=True))
    return layers


def generator(image_size: int, nz: int, ngf: int) -> nn.Sequential:
    # 64 px: nz -> 8g -> 4g -> 2g -> g -> 3; 128 px starts one block wider, at 16g.
    widths = [ngf * m for m in ((16, 8, 4, 2, 1) if image_size == 128 else (8, 4, 2, 1))]
    layers = _up(nz, widths[0], first=True)
    for cin, cout in zip(widths, widths[1:]):
        layers += _up(cin, cout)
    layers += [nn.ConvTranspose2d(widths[-1], 3, 4, 2, 1, bias=False), nn.Tanh()]
    return nn.Sequential(*layers)


def discriminator(image_size: int, ndf: int) -> nn.Sequential:
    # 64 px: 3 -> d -> 2d -> 4d -> 8d -> 1 logit; 128 px goes on to 16d first.
    widths = [ndf * m for m in ((1, 2, 4, 8, 16) if image_size == 128 else (1, 2, 4, 8))]
    layers = _down(3, widths[0], norm=False)
    for cin, cout in zip(widths, widths[1:]):
        layers += _down(cin, cout)
    layers.append(nn.Conv2d(widths[-1], 1, 4, 1, 0, bias=False))
    return nn.Sequential(*layers)


def init_weights(module: nn.Module) -> None:
    if isinstance(module, (nn.Conv2d, nn.ConvTranspose2d)):
        nn.init.normal_(module.weight, 0.0, 0.02)
    elif isinstance(module, nn.BatchNorm2d):
        nn.init.normal_(module.weight, 1.0, 0.02)
        nn.init.zeros_(module.bias)


class DCGANTraining(Training):
    def __init__(self, backend, modules, optimizers, nz: int):
        super().__init__(backend, modules, optimizers)
        self.nz = nz
        self.criterion = nn.BCEWithLogitsLoss()

    def train_step(self, batch):
        backend = self.backend
        netG, netD = self.modules["generator"], self.modules["discriminator"]
        optG, optD = self.optimizers["generator"], self.optimizers["discriminator"]
        real = batch[0]
        n = real.shape[0]
        z = self.randn(n, self.nz, 1, 1, device=real.device)
        # Hard labels, as the seed used: real 1, fake 0.
        ones = torch.ones(n, device=real.device)
        zeros = torch.zeros(n, device=real.device)

        # Discriminator: real batch, and a generated batch detached from the generator.
        optD.zero_grad(set_to_none=True)
        with backend.autocast():
            fake = netG(z)
            loss_d = self.criterion(netD(real).view(-1), ones) + self.criterion(
                netD(fake.detach()).view(-1), zeros
            )
        backend.backward(loss_d)
        backend.step(optD)

        # Generator: make D call the fakes real.
        optG.zero_grad(set_to_none=True)
        with backend.autocast():
            loss_g = self.criterion(netD(fake).view(-1), ones)
        backend.backward(loss_g)
        backend.step(optG)
        backend.end_step()  # once per iteration, after both optimizers (GradScaler.update)
        return torch.stack([loss_d.detach().float(), loss_g.detach().float()])


@dataclass(frozen=True)
class DCGAN(Workload):
    nz: int = 100
    ngf: int = 64
    ndf: int = 64

    def build_modules(self, device="cpu"):
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
    loss_must_fall = False  # D and G chase each other: neither loss need fall (suite.measurement.numerics)

    def with_shape(self, num_classes=None, image_size=None):
        if num_classes is not None:
            raise UserError(f"--num-classes does not apply to {self.name}: a GAN has no classes")
        if image_size is not None and image_size != self.image_size:
            raise UserError(
                f"--image-size {image_size} does not fit {self.name}, whose layers are built for "
                f"{self.image_size} px (the dcgan64* and dcgan128* workloads are the sizes there are)"
            )
        return self

    def build(self, backend) -> DCGANTraining:
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
