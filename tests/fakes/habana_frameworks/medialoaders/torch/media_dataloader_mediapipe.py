"""Fake of Habana's MediaPipe loader module (package habana_frameworks.medialoaders, Gaudi 2), which
HabanaDataLoader imports to decide between MediaPipe and aeon. Its own transform rules are not in the
bridge's source, so the fake accepts what it is given and records it. Tests that need it missing install the
fakes without the medialoaders folder."""

from habana_frameworks import record


class HPUMediaPipe:
    def __init__(self, a_torch_transforms=None, a_root=None, a_batch_size=None, a_shuffle=None, **rest):
        record("HPUMediaPipe", shuffle=a_shuffle, batch_size=a_batch_size, **rest)
