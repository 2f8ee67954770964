"""`suite data prepare` and the cache loader: skipped files, interrupted prepares, refused caches,
sampling, and equality with the JPEG path."""

from __future__ import annotations

import glob
import io
import json
import os

import numpy as np
import pytest
import torch
from suite.backends.cpu import CPUBackend
from suite.workloads import get_workload

from suite.cli import main
from suite.data import open_data
from suite.data.cache import CacheData, open_cache
from suite.data.imagefolder import ImageFolderData
from suite.data.loader_options import LoaderOptions
from suite.data.prepare import prepare
from suite.data.progress import Progress
from suite.data.synth import synthesize
from suite.inputs.errors import UserError
from suite.spec import RunSpec


def quiet():
    return Progress("t", 0, io.StringIO())


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("src") / "jpeg"
    synthesize(str(path), 12, size=(40, 30), classes=3, workers=1, progress=quiet())
    return str(path)


@pytest.fixture(scope="module")
def cache(folder, tmp_path_factory):
    out = str(tmp_path_factory.mktemp("cache") / "c16")
    prepare(folder, 16, out, workers=1, progress=quiet())
    return out


def cache_source(path, batch_size=4, **kw):
    return CacheData(path, 16, CPUBackend(RunSpec()), LoaderOptions(batch_size, **kw))


def test_prepare_writes_a_cache_that_matches_the_jpeg_path_exactly(folder, cache):
    manifest = open_cache(cache).manifest
    assert manifest["count"] == 12 and manifest["image_size"] == 16 and manifest["skipped_count"] == 0
    assert manifest["classes"] == ["class_000", "class_001", "class_002"]
    assert manifest["source_image_size"] == [40, 30] and len(manifest["source_fingerprint"]) == 64
    # Same image through both paths: identical float tensors (the device-side normalisation repeats
    # ToTensor + Normalize's arithmetic).
    jpeg = ImageFolderData(folder, 16, CPUBackend(RunSpec()), LoaderOptions(4, workers=0, pin_memory=False))
    cached = cache_source(cache)
    images_u8, labels = cached.gather(np.arange(12))
    device_batch = next(iter(_fixed(cached, np.arange(12))))
    for index in (0, 5, 11):
        image, label = jpeg.dataset[index]
        assert label == labels[index]
        assert torch.equal(device_batch[0][index], image)
    assert images_u8.dtype == torch.uint8 and images_u8.shape == (12, 3, 16, 16)


def _fixed(source, indices):
    """The source's device batches for chosen indices (bypassing the random sampling)."""
    source.batch_indices = lambda: iter([indices])
    return source


def test_corrupt_file_is_skipped_counted_and_listed(folder, tmp_path, capsys):
    import shutil

    src = str(tmp_path / "src")
    shutil.copytree(folder, src)
    with open(os.path.join(src, "class_001", "broken.jpg"), "wb") as handle:
        handle.write(b"\xff\xd8\xff garbage, not a JPEG")
    assert main(["data", "prepare", src, "--size", "16", "--out", str(tmp_path / "c"), "--workers", "2"]) == 0
    out = capsys.readouterr().out
    assert "prepared 12 images" in out and "skipped 1 unreadable image(s): class_001/broken.jpg" in out
    manifest = open_cache(str(tmp_path / "c")).manifest
    assert manifest["source_images"] == 13 and manifest["count"] == 12 and manifest["skipped_count"] == 1
    assert manifest["skipped"][0]["path"] == "class_001/broken.jpg" and manifest["skipped"][0]["error"]


def test_interrupted_prepare_leaves_no_cache_and_a_rerun_completes(folder, tmp_path):
    out = str(tmp_path / "c")

    class Interrupt(Progress):
        def update(self, done, **extra):
            if done == 6:
                raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        prepare(folder, 16, out, workers=2, progress=Interrupt("t", 0, io.StringIO()))
    assert not os.path.exists(out) and os.listdir(tmp_path) == []
    # A killed prepare (no chance to clean up) leaves its hidden partial folder: never taken for a cache,
    # removed by the next prepare of the same target.
    os.makedirs(str(tmp_path / ".c.partial-killed"))
    (tmp_path / ".c.partial-killed" / "images.u8").write_bytes(b"\0" * 100)
    with pytest.raises(UserError, match="no such file or folder"):
        open_data(RunSpec().replace(data=out), get_workload("dcgan64"), CPUBackend(RunSpec()), 4)
    manifest = prepare(folder, 16, out, workers=1, progress=quiet())
    assert manifest["count"] == 12 and os.listdir(tmp_path) == ["c"]
    assert prepare(folder, 16, out, progress=quiet())["up_to_date"] is True
    with pytest.raises(UserError, match="already holds a different cache; pass --force"):
        prepare(folder, 8, out, progress=quiet())
    assert prepare(folder, 8, out, force=True, progress=quiet())["image_size"] == 8
    assert not glob.glob(str(tmp_path / ".c*"))


@pytest.mark.parametrize(
    "damage, message",
    [
        ("truncate", r"images.u8 is \d+ bytes, 12 images of 3x16x16 need 9216"),
        ("count", r"images.u8 is 9216 bytes, 13 images"),
        ("labels", "labels.npy has changed since it was written"),
        ("manifest", "cannot read manifest.json"),
    ],
)
def test_cache_whose_manifest_does_not_match_its_data_is_refused(cache, tmp_path, damage, message):
    import shutil

    broken = str(tmp_path / "broken")
    shutil.copytree(cache, broken)
    manifest_path = os.path.join(broken, "manifest.json")
    if damage == "truncate":
        with open(os.path.join(broken, "images.u8"), "r+b") as handle:
            handle.truncate(1000)
    elif damage == "count":
        manifest = json.load(open(manifest_path))
        manifest["count"] = 13
        json.dump(manifest, open(manifest_path, "w"))
    elif damage == "labels":
        labels = np.load(os.path.join(broken, "labels.npy"))
        np.save(os.path.join(broken, "labels.npy"), labels[::-1].copy())
    else:
        open(manifest_path, "w").write("{not json")
    with pytest.raises(UserError, match=message):
        cache_source(broken)
    assert main(["run", "--backend", "cpu", "--data", broken, "--out", str(tmp_path / "r")]) == 2


def test_every_epoch_is_a_new_permutation_and_ranks_share_it(cache):
    data = cache_source(cache, batch_size=4, seed=1)
    indices = data.batch_indices()
    epochs = [np.concatenate([next(indices) for _ in range(3)]) for _ in range(2)]
    for epoch in epochs:
        assert sorted(epoch.tolist()) == list(range(12))  # each image once per epoch
    assert not np.array_equal(epochs[0], epochs[1])
    shares = [cache_source(cache, batch_size=2, seed=1, rank=r, world_size=2) for r in (0, 1)]
    first_epoch = [np.concatenate([b for _, b in zip(range(3), s.batch_indices())]) for s in shares]
    assert len(first_epoch[0]) == len(first_epoch[1]) == 6
    assert sorted(np.concatenate(first_epoch).tolist()) == list(range(12))


def test_gather_threads_give_the_same_batches_in_the_same_order(cache):
    plain = cache_source(cache, batch_size=4, seed=2).host_batches()
    threaded_source = cache_source(cache, batch_size=4, seed=2, workers=2, prefetch=2)
    threaded = threaded_source.host_batches()
    for _ in range(5):
        (a, la), (b, lb) = next(plain), next(threaded)
        assert torch.equal(a, b) and torch.equal(la, lb)
    threaded_source.close()


def test_device_batches_are_float_in_range_and_describe_says_what_ran(cache):
    data = open_data(
        RunSpec().replace(data=cache, workers=0),
        get_workload("dcgan64").with_overrides(image_size=16),
        CPUBackend(RunSpec()),
        4,
    )
    images, labels = next(iter(data))
    assert images.dtype == torch.float32 and images.shape == (4, 3, 16, 16)
    assert -1 <= images.min() < 0 < images.max() <= 1 and labels.dtype == torch.int64
    described = data.describe()
    assert described["source"] == "cache" and described["images"] == 12 and described["classes"] == 3
    assert described["dataset_bytes"] == 12 * 3 * 16 * 16 and described["source_image_size"] == [40, 30]
    assert (described["workers"], described["pin_memory"], described["prefetch"]) == (0, False, None)


def test_batch_larger_than_the_cache_and_wrong_size_are_refused(cache):
    with pytest.raises(UserError, match="--batch-size 13 is larger than the 12 images"):
        cache_source(cache, batch_size=13)
    with pytest.raises(UserError, match="--batch-size 7 is larger than the 6 images each of 2"):
        cache_source(cache, batch_size=7, world_size=2, rank=1)
    with pytest.raises(UserError, match="holds 16 px images but the workload trains on 64 px"):
        CacheData(cache, 64, CPUBackend(RunSpec()), LoaderOptions(4))
