"""HabanaDataLoader for the hpu backend: whether a dataset and loader settings qualify, the arguments it
accepts, and the record of what was changed (pytorch_helpers/dataloader/habana_dataloader/habana_dataloader/
habana_dataset.py and aeon_transformers.py, bridge v1.19.0)."""

from __future__ import annotations

import importlib
import importlib.util
import os

import torch

from . import habana_releases
from .hpu_install import package_dir

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
HABANA_LOADER_GENERATIONS = (habana_releases.GAUDI1, habana_releases.GAUDI2)
# Gaudi2's ResnetDataLoader takes aeon instead of MediaPipe when this is "false", "0" or "f" (any case).
MEDIA_PIPE_ENV = "PT_HPU_MEDIA_PIPE"
AEON, MEDIAPIPE = "aeon", "mediapipe"
FELL_BACK = "torch.utils.data.DataLoader (HabanaDataLoader fell back; its reason is in its log)"


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
    return True, "ImageFolder with supported transforms"


def habana_loader_path(generation: str, env=None) -> tuple[str, str]:
    """(aeon or mediapipe, why): the path ResnetDataLoader takes. First-generation Gaudi: aeon. Gaudi2:
    MediaPipe, unless PT_HPU_MEDIA_PIPE is false or habana_frameworks.medialoaders is missing, then aeon.
    (The loader tries to import the module; here it is looked for, and `engaged_loader` reads what ran.)"""
    env = os.environ if env is None else env
    if generation == habana_releases.GAUDI1:
        return AEON, "first-generation Gaudi: aeon"
    if env.get(MEDIA_PIPE_ENV, "").lower() in ("false", "0", "f"):
        return AEON, f"Gaudi2 with {MEDIA_PIPE_ENV}={env[MEDIA_PIPE_ENV]}: aeon instead of MediaPipe"
    if package_dir("habana_frameworks", "medialoaders") is None:
        return AEON, "Gaudi2 without habana_frameworks.medialoaders: aeon instead of MediaPipe"
    return MEDIAPIPE, "Gaudi2: MediaPipe"


def engaged_loader(loader, generation: str) -> str:
    """Which loader HabanaDataLoader really built: its `.dataloader` is a ResnetDataLoader whose
    `fallback_activated` says it fell back to torch's loader, and whose `aeon_fallback_activated` says Gaudi2
    took aeon; or a plain DataLoader when building one failed altogether (its __len__/__iter__ choose so)."""
    inner = getattr(loader, "dataloader", loader)
    if getattr(inner, "fallback_activated", False) or type(inner) is torch.utils.data.DataLoader:
        return FELL_BACK
    if generation == habana_releases.GAUDI1 or getattr(inner, "aeon_fallback_activated", False):
        return AEON
    return MEDIAPIPE


def build_habana_loader(dataset, loader_kwargs: dict, generation: str, why: str) -> tuple[object, dict]:
    """HabanaDataLoader with the arguments its path accepts, and the record: the path expected and why,
    the loader that engaged, and what was changed."""
    path, path_why = habana_loader_path(generation)
    kwargs, adjusted = habana_loader_kwargs(dataset, loader_kwargs, path)
    loader = importlib.import_module("habana_dataloader").HabanaDataLoader(dataset, **kwargs)
    engaged = engaged_loader(loader, generation)
    info = {
        "loader": FELL_BACK if engaged == FELL_BACK else "habana_dataloader.HabanaDataLoader",
        "engaged": engaged,
        "generation": generation,
        "why": f"{why}; {path_why}",
        "adjusted": adjusted,
    }
    return loader, info


def habana_loader_kwargs(dataset, loader_kwargs: dict, path: str) -> tuple[dict, dict]:
    """The arguments HabanaDataLoader accepts on this path, and the record of what was changed.

    Both paths refuse a generator, persistent workers and a start method: the suite's own choices for
    torch's loader, dropped here. aeon also needs shuffle False (a RandomSampler
    gives the same order), num_workers 8, pin_memory True and prefetch_factor 2. MediaPipe ignores
    sampler, num_workers and pin_memory and clamps prefetch_factor to 1..3; with `shuffle` left out it
    shuffles when the sampler is a RandomSampler or a shuffling DistributedSampler."""
    kwargs = {k: v for k, v in loader_kwargs.items() if v is not None}
    adjusted = {}
    for name, default in HABANA_LOADER_DROPPED.items():
        if name in kwargs and kwargs[name] != default:
            adjusted[name] = f"{kwargs.pop(name)!r} -> left out"
        kwargs.pop(name, None)
    if path == AEON:
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
