"""The JPEG path: folder rules, batches, errors."""

from __future__ import annotations

import io
import os

import pytest
import torch
from suite.backends.cpu import CPUBackend
from suite.workloads import get_workload

from suite.data import loader_settings, open_data
from suite.data.imagefolder import ImageFolderData, LoaderFailed, scan_folder
from suite.data.loader_options import LoaderOptions
from suite.data.progress import Progress
from suite.data.synth import synthesize
from suite.inputs.errors import UserError
from suite.spec import RunSpec


def make_folder(path, count=8, classes=2, size=(40, 30)) -> str:
    synthesize(
        str(path), count, size=size, classes=classes, workers=1, progress=Progress("t", 0, io.StringIO())
    )
    return str(path)


def source(path, batch_size=4, workers=0, image_size=16):
    options = LoaderOptions(batch_size, workers=workers, pin_memory=False, prefetch=2 if workers else None)
    return ImageFolderData(path, image_size, CPUBackend(RunSpec()), options)


def test_batches_are_normalised_fixed_shape_and_reshuffled(tmp_path):
    data = source(make_folder(tmp_path / "d", count=10), batch_size=4)
    batches = iter(data)
    seen = [next(batches) for _ in range(4)]  # 2 batches per epoch (drop_last): two epochs
    for images, labels in seen:
        assert images.shape == (4, 3, 16, 16) and images.dtype == torch.float32
        assert labels.dtype == torch.int64 and set(labels.tolist()) <= {0, 1}
        assert images.min() >= -1 and images.max() <= 1 and images.min() < -0.5 < 0.5 < images.max()
    epoch_1 = torch.cat([seen[0][0], seen[1][0]])
    epoch_2 = torch.cat([seen[2][0], seen[3][0]])
    assert not torch.equal(epoch_1, epoch_2)  # shuffled anew each epoch
    described = data.describe()
    assert described["source"] == "imagefolder" and described["images"] == 10 and described["classes"] == 2
    assert described["source_image_size"] == [40, 30] and described["dataset_bytes"] > 0
    assert described["loader"] == "torch.utils.data.DataLoader" and described["workers"] == 0
    data.close()


def test_folder_without_class_subfolders_is_refused_with_the_fix(tmp_path):
    folder = make_folder(tmp_path / "d", count=3, classes=1)
    for name in os.listdir(os.path.join(folder, "class_000")):
        os.rename(os.path.join(folder, "class_000", name), os.path.join(folder, name))
    os.rmdir(os.path.join(folder, "class_000"))
    with pytest.raises(
        UserError, match=r"holds 3 images but no class sub-folders: put them in one sub-folder"
    ):
        scan_folder(folder)


def test_empty_folder_and_missing_path_are_clear_errors(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="is empty"):
        scan_folder(str(tmp_path / "empty"))
    (tmp_path / "hollow" / "a").mkdir(parents=True)
    with pytest.raises(UserError, match="1 sub-folder.* but no images"):
        scan_folder(str(tmp_path / "hollow"))
    with pytest.raises(UserError, match="no such file or folder"):
        scan_folder(str(tmp_path / "nowhere"))


def test_batch_larger_than_the_dataset_is_refused(tmp_path):
    with pytest.raises(UserError, match="--batch-size 9 is larger than the 8 images"):
        source(make_folder(tmp_path / "d"), batch_size=9)


def test_corrupt_image_stops_the_run_naming_the_file(tmp_path):
    folder = make_folder(tmp_path / "d", count=4, classes=1)
    with open(os.path.join(folder, "class_000", "0000002.jpg"), "wb") as handle:
        handle.write(b"not a jpeg")
    data = source(folder, batch_size=4)
    with pytest.raises(LoaderFailed, match=r"0000002\.jpg.*suite data prepare"):
        next(iter(data))


def test_loader_settings_defaults_and_bad_values():
    backend = CPUBackend(RunSpec())
    settings = loader_settings(RunSpec(), backend, default_workers=4)
    # the CPU computes on the same cores: workers leave compute at least half of them
    assert settings == {"workers": min(4, max(1, os.cpu_count() // 2)), "pin_memory": False, "prefetch": 2}
    assert loader_settings(RunSpec().replace(workers=0), backend, 4) == {
        "workers": 0,
        "pin_memory": False,
        "prefetch": None,
    }
    with pytest.raises(UserError, match="--prefetch 3 needs --workers 1 or more"):
        loader_settings(RunSpec().replace(workers=0, prefetch=3), backend, 4)
    with pytest.raises(UserError, match="--workers must be a whole number >= 0, got -1"):
        loader_settings(RunSpec().replace(workers=-1), backend, 4)


def test_open_data_dispatches_a_folder_to_the_jpeg_path(tmp_path):
    folder = make_folder(tmp_path / "d")
    workload = get_workload("dcgan64")
    data = open_data(RunSpec().replace(data=folder, workers=0), workload, CPUBackend(RunSpec()), 4)
    assert isinstance(data, ImageFolderData) and data.describe()["image_size"] == 64
    with pytest.raises(UserError, match="no such file or folder"):
        open_data(RunSpec().replace(data=str(tmp_path / "nope")), workload, CPUBackend(RunSpec()), 4)
