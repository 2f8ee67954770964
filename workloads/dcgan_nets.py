"""The DCGAN networks and their training step (the definitions and widths are in dcgan.py).

The discriminator returns logits and the loss is BCEWithLogitsLoss: BCE after a sigmoid is refused
under autocast, and the fused form is the numerically stable one.
"""

from __future__ import annotations

import torch
from torch import nn

from .training import Training


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
