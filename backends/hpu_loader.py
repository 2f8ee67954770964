"""HabanaDataLoader for the hpu backend: whether a dataset and loader settings qualify, the arguments it
accepts, and the record of what was changed (pytorch_helpers/dataloader/habana_dataloader/habana_dataloader/
habana_dataset.py and aeon_transformers.py, bridge v1.19.0)."""

from __future__ import annotations

import importlib.util

import torch

from . import habana_releases

# habana_dataloader accelerates only these (its aeon_transformers.py HabanaAeonTransforms): anything else
# makes it fall back to a plain DataLoader silently, so the suite decides first and says why.
IMAGENET_MEAN = [0.485, 0.456, 0.406]
IMAGENET_STD = [0.229, 0.224, 0.225]
# Loader arguments HabanaDataLoader's _aeon_dl_handle_vars / _media_dl_handle_vars refuse unless left at
# these values (habana_dataset.py, bridge v1.19.0). A run that sets them otherwise gets torch's loader.
HABANA_LOADER_FIXED = {
    "batch_sampler": None,
    "collate_fn": None,
    "timeout": 0,
    "worker_init_fn": None,
}
# Refused too, but only the suite's own loader settings: left out when HabanaDataLoader is used.
HABANA_LOADER_DROPPED = {
    "multiprocessing_context": None,
    "generator": None,
    "persistent_workers": False,
}
# The generations ResnetDataLoader knows; anything else (Gaudi3) is "Unsupported device" in v1.19.0.
HABANA_LOADER_GENERATIONS = {
    habana_releases.GAUDI1: "first-generation Gaudi: aeon",
    habana_releases.GAUDI2: "Gaudi2: MediaPipe",
}


def _transforms(dataset) -> list:
    transform = getattr(dataset, "transform", None)
    return list(getattr(transform, "transforms", [transform] if transform is not None else []))


def habana_loader_qualifies(dataset, loader_kwargs: dict, generation: str | None) -> tuple[bool, str]:
    """(qualifies, why): the checks HabanaDataLoader makes before it falls back to torch's loader
    (habana_dataset.py ResnetDataLoader and aeon_transformers.py HabanaAeonTransforms, bridge v1.19.0),
    for the generation in hand. Loader settings the suite chose itself (generator, persistent workers, start
    method, prefetch) are not reasons: habana_loader_kwargs drops or sets them."""
    import torchvision
    from torchvision import transforms as T

    if importlib.util.find_spec("habana_dataloader") is None:
        return False, "habana_dataloader not installed (pip package habana-torch-dataloader)"
    if generation not in HABANA_LOADER_GENERATIONS:
        return False, (
            f"HabanaDataLoader supports first-generation Gaudi (aeon) and Gaudi2 (MediaPipe), not "
            f'{generation or "an unknown device"} ("Unsupported device")'
        )
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
            # Compared as lists, as aeon does: a tuple mean is refused even with ImageNet's values.
            if t.mean != IMAGENET_MEAN or t.std != IMAGENET_STD:
                return False, (
                    f"HabanaDataLoader normalises only with ImageNet mean/std as lists, not "
                    f"mean={t.mean!r} std={t.std!r}"
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
    return True, f"ImageFolder with supported transforms ({HABANA_LOADER_GENERATIONS[generation]})"


def habana_loader_kwargs(dataset, loader_kwargs: dict, generation: str) -> tuple[dict, dict]:
    """The arguments HabanaDataLoader accepts on this generation, and the record of what was changed.

    Both paths refuse a generator, persistent workers and a start method: the suite's own choices for
    torch's loader, dropped here. First-generation Gaudi (aeon) also needs shuffle False (a RandomSampler
    gives the same order), num_workers 8, pin_memory True and prefetch_factor 2. Gaudi2 (MediaPipe) ignores
    sampler, num_workers and pin_memory and clamps prefetch_factor to 1..3; with `shuffle` left out it
    shuffles when the sampler is a RandomSampler or a shuffling DistributedSampler."""
    kwargs = {k: v for k, v in loader_kwargs.items() if v is not None}
    adjusted = {}
    for name, default in HABANA_LOADER_DROPPED.items():
        if name in kwargs and kwargs[name] != default:
            adjusted[name] = f"{kwargs.pop(name)!r} -> left out"
        kwargs.pop(name, None)
    if generation == habana_releases.GAUDI1:
        if kwargs.pop("shuffle", False):
            kwargs["sampler"] = torch.utils.data.RandomSampler(dataset)  # the same order, as a sampler
            adjusted["shuffle"] = "True -> RandomSampler"
        for name, value in (("num_workers", 8), ("pin_memory", True), ("prefetch_factor", 2)):
            if kwargs.get(name) != value:
                adjusted[name] = f"{kwargs.get(name)} -> {value}"
                kwargs[name] = value
    else:
        if kwargs.get("sampler") is not None and not kwargs.get("shuffle"):
            kwargs.pop("shuffle", None)  # MediaPipe takes shuffling from the sampler it otherwise ignores
        for name in ("num_workers", "pin_memory"):
            if name in kwargs:
                adjusted[name] = f"{kwargs[name]} (ignored by MediaPipe)"
    return kwargs, adjusted
