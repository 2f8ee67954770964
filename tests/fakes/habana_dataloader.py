"""Fake `habana_dataloader` (wheel habana-torch-dataloader): a torch DataLoader that records its arguments."""

import torch

CREATED: list = []


class HabanaDataLoader(torch.utils.data.DataLoader):
    def __init__(self, dataset, **kwargs):
        CREATED.append({"dataset": dataset, **kwargs})
        self.fallback_activated = False
        super().__init__(dataset, **kwargs)
