"""The JPEG path: an ImageFolder decoded while training, as the seed did.

Every image is decoded by PIL, resized (shorter side) and centre-cropped to the workload's size,
turned into a tensor and normalised to [-1, 1], in `torch.utils.data.DataLoader` workers. This is
the path that starved the seed's V100: its cost is part of what a run on it measures.

A folder must hold class sub-folders (torchvision's ImageFolder layout). A folder of loose images
is refused with an error that says how to make it one class (move them into a sub-folder), rather
than guessed at: the same rule as torchvision's, so every loader (HabanaDataLoader too) sees the
same dataset.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from suite.data import LoaderData, check_batch_fits
from suite.data.loader_options import LoaderOptions
from suite.data.worker_socket import check_worker_socket_fits
from suite.inputs.errors import UserError
from suite.inputs.files import open_regular

# ToTensor gives [0, 1]; (x - 0.5) / 0.5 maps it onto [-1, 1], the range of the generator's tanh.
NORMALISE_MEAN = (0.5, 0.5, 0.5)
NORMALISE_STD = (0.5, 0.5, 0.5)
# Classifiers take ImageNet-normalised input (torchvision's reference recipes). As lists: HabanaDataLoader's
# aeon compares them with lists and refuses tuples (aeon_transformers.py, Habana bridge v1.19.0).
IMAGENET_MEAN = [0.485, 0.456, 0.406]
IMAGENET_STD = [0.229, 0.224, 0.225]


def normalisation_for(workload) -> tuple:
    """(mean, std): a GAN's images in [-1, 1] (its generator ends in tanh); a classifier's ImageNet's."""
    if workload.num_classes > 0:
        return IMAGENET_MEAN, IMAGENET_STD
    return NORMALISE_MEAN, NORMALISE_STD


@dataclass
class FolderScan:
    path: str
    classes: list[str]
    samples: list[tuple[str, int]]  # (file path, class index), in torchvision's order

    @property
    def image_bytes(self) -> int:
        return sum(os.path.getsize(path) for path, _ in self.samples)

    def first_image_size(self) -> list[int] | None:
        """(width, height) of the first readable image of the first ten, read from its header only. An
        image that cannot be read is passed over, whatever Pillow raises: a decompression bomb is its
        DecompressionBombError, neither OSError nor ValueError, and one sorting first in its folder ended
        `data prepare` in a traceback and a run with an error naming no file; the decoder skips and names
        it, and the loader names it if a batch draws it."""
        from PIL import Image

        for path, _ in self.samples[:10]:
            try:
                with open_regular(path) as handle, Image.open(handle) as image:
                    return list(image.size)
            except Exception:  # noqa: BLE001 - NotAFile, OSError, DecompressionBombError, a format's SyntaxError
                continue
        return None


def load_image(path: str):
    """torchvision's default loader (PIL, converted to RGB), through the one bounded reader's check: an
    image that is a FIFO, a device or a kernel pseudo file is refused (NotAFile), never waited on."""
    from PIL import Image

    with open_regular(path) as handle:
        image = Image.open(handle)
        return image.convert("RGB")


def allow_empty_classes() -> dict:
    """`allow_empty=True` where torchvision has it (0.18 on: a class folder without images is kept, as an
    empty class); older torchvision refuses such a folder with its own error."""
    import inspect

    from torchvision.datasets.folder import make_dataset

    return {"allow_empty": True} if "allow_empty" in inspect.signature(make_dataset).parameters else {}


def _identity(path: str):
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_dev, stat.st_ino)


def walk_once(top: str, seen: set | None = None, reserved: frozenset = frozenset()):
    """os.walk(top, followlinks=True), sorted as torchvision sorts it, but entering no folder twice (`seen`,
    shared across calls) and no `reserved` folder but `top`: a symlink loop, or a link into another
    class, would otherwise list the same images again and again."""
    seen = set() if seen is None else seen
    found = []
    for root, dirs, files in os.walk(top, followlinks=True):
        identity = _identity(root)
        if identity is None or identity in seen or (identity in reserved and root != top):
            dirs[:] = []
            continue
        seen.add(identity)
        dirs.sort()  # which of two names of one folder is kept does not depend on listing order
        found.append((root, dirs, files))
    return sorted(found)


def make_dataset_once(directory, class_to_idx, extensions=None, is_valid_file=None, allow_empty=False):
    """torchvision's make_dataset (same samples, same order) with every folder entered once: each class
    folder belongs to its class alone, and a link to a folder already listed is not followed."""
    from torchvision.datasets.folder import has_file_allowed_extension

    def valid(path: str) -> bool:
        return is_valid_file(path) if is_valid_file else has_file_allowed_extension(path, extensions)

    root = os.path.expanduser(directory)
    targets = {name: os.path.join(root, name) for name in sorted(class_to_idx)}
    reserved = frozenset(i for i in map(_identity, targets.values()) if i is not None)
    seen: set = set()
    samples = []
    for name, target in targets.items():
        if not os.path.isdir(target):
            continue
        for folder, _, files in walk_once(target, seen, reserved):
            samples += [
                (os.path.join(folder, f), class_to_idx[name])
                for f in sorted(files)
                if valid(os.path.join(folder, f))
            ]
    if not samples and not allow_empty:
        raise FileNotFoundError(f"found no valid file for the classes of {directory!r}")
    return samples


def scan_folder(path: str, option: str = "--data") -> FolderScan:
    """Class sub-folders and their images, as torchvision's ImageFolder will see them, or a UserError."""
    from torchvision.datasets.folder import IMG_EXTENSIONS, find_classes, has_file_allowed_extension

    accepted = "a folder of class sub-folders holding images (" + ", ".join(IMG_EXTENSIONS) + ")"
    if not os.path.exists(path):
        others = "synthetic, a cache made by `suite data prepare`, or " if option == "--data" else ""
        raise UserError(f"{option} {path!r}: no such file or folder (accepted: {others}{accepted})")
    if not os.path.isdir(path):
        raise UserError(f"{option} {path!r} is a file, not a folder (accepted: {accepted})")
    if option != "--data" and os.path.isfile(os.path.join(path, "manifest.json")):
        raise UserError(
            f"{option} {path!r} is a cache made by `suite data prepare`, not a folder of images "
            f"(accepted: {accepted}); use it directly with `suite run --data {path}`"
        )
    try:
        classes, class_to_idx = find_classes(path)
    except FileNotFoundError:
        loose = [name for name in os.listdir(path) if has_file_allowed_extension(name, IMG_EXTENSIONS)]
        if loose:
            raise UserError(
                f"{option} {path!r} holds {len(loose)} images but no class sub-folders: put "
                f"them in one sub-folder (e.g. {os.path.join(path, 'images')}/) to use them "
                "as one class"
            ) from None
        raise UserError(
            f"{option} {path!r} is empty: no class sub-folders and no images (accepted: {accepted})"
        ) from None
    samples = make_dataset_once(path, class_to_idx, extensions=IMG_EXTENSIONS, allow_empty=True)
    if not samples:
        raise UserError(
            f"{option} {path!r} has {len(classes)} sub-folder(s) but no images in them (accepted: {accepted})"
        )
    return FolderScan(path, classes, samples)


def image_transform(image_size: int, normalisation: tuple = (NORMALISE_MEAN, NORMALISE_STD)):
    """Resize + CenterCrop + ToTensor + Normalize: the seed's transform. With ImageNet's mean/std (the
    classifiers') it is one HabanaDataLoader can take over."""
    from torchvision import transforms

    mean, std = normalisation
    return transforms.Compose(
        [
            transforms.Resize(image_size),
            transforms.CenterCrop(image_size),
            transforms.ToTensor(),
            transforms.Normalize(mean, std),
        ]
    )


def resize_and_crop(image_size: int):
    """The geometric part alone, on a PIL image (the cache stores its uint8 result)."""
    from torchvision import transforms

    return transforms.Compose([transforms.Resize(image_size), transforms.CenterCrop(image_size)])


class LoaderFailed(RuntimeError):
    """The JPEG path stopped (e.g. an undecodable image): the run's data must not silently change."""


class UnreadableImage(RuntimeError):
    """One image could not be decoded; the message starts with its path."""


def unreadable(error: Exception) -> LoaderFailed:
    """One line that names the cause. A worker's exception arrives as "Caught X in DataLoader worker
    process N" followed by the worker's traceback, whose last line is the original error."""
    lines = str(error).strip().splitlines() or [type(error).__name__]
    cause = lines[-1].split(f"{UnreadableImage.__name__}: ", 1)[-1]
    return LoaderFailed(
        f"the image loader failed: {cause} (`suite data prepare` skips and lists unreadable images)"
    )


def image_folder_class():
    """torchvision's ImageFolder (HabanaDataLoader accepts it), entering each folder once and naming
    the file when one cannot be decoded."""
    from torchvision.datasets import ImageFolder

    class SuiteImageFolder(ImageFolder):
        @staticmethod
        def make_dataset(directory, class_to_idx, extensions=None, is_valid_file=None, allow_empty=False):
            return make_dataset_once(directory, class_to_idx, extensions, is_valid_file, allow_empty)

        def __init__(self, root, **kwargs):
            super().__init__(root, loader=load_image, **kwargs)

        def __getitem__(self, index):
            try:
                return super().__getitem__(index)
            except Exception as error:  # noqa: BLE001 - any decoding failure, named with its file
                raise UnreadableImage(f"{self.samples[index][0]}: {type(error).__name__}: {error}") from error

    return SuiteImageFolder


class ImageFolderData(LoaderData):
    kind = "imagefolder"

    def __init__(
        self,
        path: str,
        image_size: int,
        backend,
        options: LoaderOptions,
        normalisation: tuple = (NORMALISE_MEAN, NORMALISE_STD),
    ):
        import torch

        batch_size, workers, pin_memory, prefetch = (
            options.batch_size,
            options.workers,
            options.pin_memory,
            options.prefetch,
        )
        seed, rank, world_size = options.seed, options.rank, options.world_size
        self.scan = scan_folder(path)
        self.backend, self.batch_size, self.image_size = backend, batch_size, image_size
        self.workers, self.pin_memory, self.prefetch = workers, pin_memory, prefetch
        self.rank, self.world_size = rank, world_size
        self.normalisation = normalisation
        try:
            dataset = image_folder_class()(
                path, transform=image_transform(image_size, normalisation), **allow_empty_classes()
            )
        except FileNotFoundError as error:  # no image in any class folder
            raise UserError(f"--data {path!r}: {error}") from None
        check_batch_fits(batch_size, len(dataset), world_size, repr(path))
        check_worker_socket_fits(workers)
        self.sampler = None
        if world_size > 1:
            # Each process reads its own share; set_epoch reshuffles the shares every epoch.
            self.sampler = torch.utils.data.DistributedSampler(
                dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=seed, drop_last=True
            )
        kwargs = dict(
            batch_size=batch_size,
            shuffle=self.sampler is None,
            sampler=self.sampler,
            num_workers=workers,
            pin_memory=pin_memory,
            drop_last=True,  # fixed shapes
            generator=torch.Generator().manual_seed(seed),
        )
        if workers > 0:
            # Persistent workers: an epoch boundary does not pay process start-up again.
            kwargs.update(prefetch_factor=prefetch, persistent_workers=True)
        self.dataset = dataset
        self.loader, self.loader_info = backend.make_loader(dataset, **kwargs)
        self._iterators: list = []

    def host_batches(self):
        """Endless (images, labels) batches as the DataLoader hands them out, on the host."""

        def epochs():
            epoch = 0
            while True:
                if self.sampler is not None:
                    self.sampler.set_epoch(epoch)
                try:
                    yield from self.loader
                except Exception as error:
                    raise unreadable(error) from error
                epoch += 1

        iterator = epochs()
        self._iterators.append(iterator)
        return iterator

    def describe(self) -> dict:
        return {
            "source": self.kind,
            "path": os.path.abspath(self.scan.path),
            "images": len(self.dataset),
            "classes": len(self.scan.classes),
            "dataset_bytes": self.scan.image_bytes,
            "source_image_size": self.scan.first_image_size(),
            "image_size": self.image_size,
            "batches_per_epoch": len(self.loader),
            "workers": self.workers,
            "pin_memory": self.pin_memory,
            "prefetch": self.prefetch,
            "rank": self.rank,
            "world_size": self.world_size,
            "transform": f"Resize, CenterCrop, ToTensor, Normalize(mean={list(self.normalisation[0])}, "
            f"std={list(self.normalisation[1])}) (PIL decode in the workers)",
            **self.loader_info,
        }
