"""Fake `habana_dataloader` (wheel habana-torch-dataloader) with the real structure and refusals
(pytorch_helpers/dataloader/habana_dataloader/habana_dataloader/habana_dataset.py, bridge v1.19.0):

HabanaDataLoader is a wrapper, not a DataLoader: `.dataloader` holds a ResnetDataLoader for an ImageFolder,
or a plain torch DataLoader when building that failed. ResnetDataLoader catches its own ValueError /
ImportError and falls back to a plain DataLoader, with `fallback_activated = True` on itself (the inner
loader). The checks depend on the generation: first-generation Gaudi (aeon) needs shuffle False, num_workers
8, pin_memory True (given), prefetch_factor 2; Gaudi2 (MediaPipe) ignores sampler, num_workers and
pin_memory; both refuse batch_sampler, collate_fn, timeout, worker_init_fn, multiprocessing_context,
generator and persistent_workers other than their defaults. Gaudi3 is "Unsupported device". On Gaudi2 the
loader takes aeon instead when PT_HPU_MEDIA_PIPE is false or habana_frameworks.medialoaders is missing.
Transforms are checked as aeon does (HabanaAeonTransforms) on the aeon path only. A successful build records
"habana loader" with its path.
"""

import os

import torch
import torchvision
from habana_frameworks import record
from habana_frameworks.torch.utils import experimental as htexp

IMAGENET_MEAN = [0.485, 0.456, 0.406]
IMAGENET_STD = [0.229, 0.224, 0.225]


def _enforce(kwargs, name, expected, allow_default=True):
    if not allow_default and kwargs.get(name) is None:
        raise ValueError(f"'{name}' is supported only as {expected}")
    if kwargs.get(name) is not None and kwargs.get(name) != expected:
        raise ValueError(f"'{name}' is supported only as {expected}")


def _check_transforms(transform):
    """HabanaAeonTransforms.get_aeon_transforms (aeon_transformers.py, v1.19.0), comparisons included: mean and
    std are compared as lists, so a Normalize built from tuples is refused."""
    from torchvision import transforms as T

    if not isinstance(transform, T.Compose):
        raise ValueError("torch_transforms should be of type torchvision.transforms")
    is_train = is_val = False
    for t in transform.transforms:
        if isinstance(t, (T.CenterCrop, T.Resize)):
            is_val = True
        elif isinstance(t, T.RandomResizedCrop):
            is_train = True
        elif isinstance(t, T.RandomHorizontalFlip):
            is_train = True
            if t.p != 0.5:
                raise ValueError("aeon RandomHorizontalFlip supports only probability of 0.5")
        elif isinstance(t, T.Normalize):
            if t.mean != IMAGENET_MEAN:
                raise ValueError("aeon Normalize supports only mean of [0.485, 0.456, 0.406]")
            if t.std != IMAGENET_STD:
                raise ValueError("aeon Normalize supports only std of [0.229, 0.224, 0.225]")
        elif not isinstance(t, T.ToTensor):
            raise ValueError("Unsupported transform: " + str(type(t)))
    if is_train == is_val:
        raise ValueError("Could not determine if running on train or validation mode")


def _aeon_handle_vars(kwargs):
    """_aeon_dl_handle_vars: aeon's fixed values."""
    for name, expected, allow_default in (
        ("shuffle", False, True),
        ("batch_sampler", None, True),
        ("num_workers", 8, True),
        ("collate_fn", None, True),
        ("pin_memory", True, False),
        ("timeout", 0, True),
        ("worker_init_fn", None, True),
        ("multiprocessing_context", None, True),
        ("generator", None, True),
        ("prefetch_factor", 2, True),
        ("persistent_workers", False, True),
    ):
        _enforce(kwargs, name, expected, allow_default)


def _media_handle_vars(kwargs):
    """_media_dl_handle_vars: sampler, num_workers and pin_memory ignored, shuffle taken from a shuffling
    sampler when not given, prefetch_factor clamped to 1..3 (3 when not given)."""
    shuffle = kwargs.get("shuffle", False)
    sampler = kwargs.get("sampler")
    if "shuffle" not in kwargs and (
        isinstance(sampler, torch.utils.data.RandomSampler)
        or (isinstance(sampler, torch.utils.data.distributed.DistributedSampler) and sampler.shuffle)
    ):
        shuffle = True
    for name, expected in (
        ("batch_sampler", None),
        ("collate_fn", None),
        ("timeout", 0),
        ("worker_init_fn", None),
        ("multiprocessing_context", None),
        ("generator", None),
        ("persistent_workers", False),
    ):
        _enforce(kwargs, name, expected)
    return shuffle, min(max(kwargs.get("prefetch_factor", 3), 1), 3)


class ResnetDataLoader(torch.utils.data.DataLoader):
    """The real one's choice: aeon on first-generation Gaudi; on Gaudi 2 MediaPipe, unless PT_HPU_MEDIA_PIPE
    is false/0/f or habana_frameworks.medialoaders does not import, then aeon (`aeon_fallback_activated`).
    aeon checks its fixed arguments and the transforms (HabanaAeonTransforms); MediaPipe checks its own
    arguments and hands the transforms to HPUMediaPipe. Any ValueError/ImportError: torch's loader. (The
    fake does not model aeon's own module, habana_dataloader.habana_dl_app.)"""

    def __init__(self, dataset, **kwargs):
        device = htexp._get_device_type()
        self.fallback_activated = False
        try:
            self.aeon_fallback_activated = False
            if "PT_HPU_MEDIA_PIPE" in os.environ:
                self.aeon_fallback_activated = os.getenv("PT_HPU_MEDIA_PIPE").lower() in ("false", "0", "f")
            if not self.aeon_fallback_activated and device == htexp.synDeviceType.synDeviceGaudi2:
                try:
                    from habana_frameworks.medialoaders.torch.media_dataloader_mediapipe import HPUMediaPipe
                except ImportError:
                    self.aeon_fallback_activated = True
            if device == htexp.synDeviceType.synDeviceGaudi or self.aeon_fallback_activated:
                _aeon_handle_vars(kwargs)
                _check_transforms(dataset.transform)
                path, plain_names = "aeon", ("batch_size", "drop_last", "sampler", "shuffle")
            elif device == htexp.synDeviceType.synDeviceGaudi2:
                shuffle, prefetch = _media_handle_vars(kwargs)
                HPUMediaPipe(
                    a_torch_transforms=dataset.transform,
                    a_root=dataset.root,
                    a_batch_size=kwargs.get("batch_size", 1),
                    a_shuffle=shuffle,
                    a_drop_last=kwargs.get("drop_last", False),
                    a_prefetch_count=prefetch,
                )
                path, plain_names = "mediapipe", ("batch_size", "drop_last", "shuffle")
            else:
                raise ValueError("Unsupported device")
            record("habana loader", path=path, kwargs=dict(kwargs))
            # The fake iterates with torch's loader (no aeon/MediaPipe here), without the ignored arguments.
            super().__init__(dataset, **{k: v for k, v in kwargs.items() if k in plain_names})
        except (ValueError, ImportError) as error:
            record("habana loader fallback", error=str(error))
            self.fallback_activated = True
            super().__init__(dataset, **kwargs)


class HabanaDataLoader:
    def __init__(self, *args, **kwargs):
        dataset = kwargs.get("dataset", args[0] if args else None)
        dataloader_type = None
        if isinstance(dataset, torchvision.datasets.ImageFolder):
            dataloader_type = ResnetDataLoader
        try:
            self.dataloader = dataloader_type(*args, **kwargs)
        except Exception as error:  # noqa: BLE001 - as the real one: any failure gives torch's loader
            record("habana loader fallback", error=str(error))
            self.dataloader = torch.utils.data.DataLoader(*args, **kwargs)

    def __iter__(self):
        self.iter = iter(self.dataloader)
        return self

    def __next__(self):
        return next(self.iter)

    def __len__(self):
        return len(self.dataloader)
