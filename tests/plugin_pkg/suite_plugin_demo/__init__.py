"""A workload a package adds: a two-layer MLP classifier over 3×8×8 images (the test uses it)."""

from torch import nn


def mlp(num_classes: int = 3, image_size: int = 8) -> nn.Module:
    return nn.Sequential(
        nn.Flatten(), nn.Linear(3 * image_size * image_size, 16), nn.ReLU(), nn.Linear(16, num_classes)
    )
