"""Caches and folders are trusted only as far as checked: pixels checksummed, no folder entered twice, an
undecodable image named; and data commands estimate what they will take before taking it."""

from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest
from conftest import TINY

from suite.cli import main
from suite.data import cache as cache_format
from suite.inputs.errors import UserError


@pytest.fixture
def folder(tmp_path):
    from suite.data.synth import synthesize

    path = str(tmp_path / "images")
    synthesize(path, 6, size=(32, 24), classes=2, workers=1)
    return path


@pytest.fixture
def prepared(folder, tmp_path):
    from suite.data.prepare import prepare

    out = str(tmp_path / "cache")
    prepare(folder, 16, out, workers=1)
    cache_format._CHECKED.clear()
    return out


def edit_one_pixel(cache_path: str, row: int) -> None:
    images = os.path.join(cache_path, cache_format.IMAGES_FILE)
    with open(images, "r+b") as handle:
        handle.seek(row * 3 * 16 * 16 + 100)
        value = handle.read(1)[0]
        handle.seek(row * 3 * 16 * 16 + 100)
        handle.write(bytes([(value + 1) % 256]))  # same size, one byte changed


# -- 7: caches and folders ------------------------------------------------------------------------------


def test_a_cache_whose_pixels_were_edited_is_refused(prepared):
    cache_format.open_cache(prepared)  # whole and unchanged: opens
    edit_one_pixel(prepared, 3)
    with pytest.raises(UserError, match="images.u8 has changed since it was written"):
        cache_format.open_cache(prepared)


def test_a_large_cache_is_checked_on_its_sampled_images(prepared, monkeypatch):
    monkeypatch.setattr(cache_format, "FULL_CHECK_BYTES", 0)  # as if it were over the full-check size
    cache_format.open_cache(prepared)
    edit_one_pixel(prepared, 5)  # the last image is always sampled
    with pytest.raises(UserError, match="checksum differs"):
        cache_format.open_cache(prepared)
    # `data prepare` checks in full before calling a cache up to date
    with pytest.raises(UserError, match="checksum differs"):
        cache_format.open_cache(prepared, full_check=True)


def test_a_cache_without_an_images_checksum_is_refused(prepared):
    import json

    manifest_path = os.path.join(prepared, cache_format.MANIFEST)
    manifest = json.load(open(manifest_path))
    del manifest["images_sha256"]
    with open(manifest_path, "w") as handle:
        json.dump(manifest, handle)
    with pytest.raises(UserError, match="no images_sha256"):
        cache_format.open_cache(prepared)


def test_a_symlink_loop_in_an_image_folder_lists_each_image_once(folder):
    from suite.data.imagefolder import image_folder_class, scan_folder

    os.symlink(".", os.path.join(folder, "class_000", "loop"))  # a real loop: the folder inside itself
    os.symlink(os.path.join(folder, "class_001"), os.path.join(folder, "class_000", "again"))
    assert len(scan_folder(folder).samples) == 6
    assert len(image_folder_class()(folder)) == 6  # what the JPEG path trains on


def test_an_undecodable_jpeg_is_named_by_the_loader(folder):
    import torch

    from suite.data.imagefolder import image_folder_class, image_transform, unreadable

    bad = os.path.join(folder, "class_001", "0000001.jpg")
    with open(bad, "r+b") as handle:
        handle.truncate(200)  # a JPEG cut short, as a failed copy leaves it
    dataset = image_folder_class()(folder, transform=image_transform(16))
    batches = iter(torch.utils.data.DataLoader(dataset, batch_size=6, num_workers=1))
    try:
        with pytest.raises(Exception) as caught:
            next(batches)
    finally:
        # The iterator's own clean-up (its __del__ runs it), done now: left to a later garbage collection in
        # another test, joining the worker was seen to wait out its 5 s timeout.
        batches._shutdown_workers()
    message = str(unreadable(caught.value))
    assert bad in message and "\n" not in message


def test_prepare_on_a_cache_says_it_is_a_cache(prepared, tmp_path, capsys):
    assert main(["data", "prepare", prepared, "--size", "16", "--out", str(tmp_path / "other")]) == 2
    assert "is a cache made by `suite data prepare`, not a folder of images" in capsys.readouterr().err


# -- 11: bounded resources ------------------------------------------------------------------------------


def test_prepare_refuses_a_cache_larger_than_memory_or_disk_before_writing(folder, tmp_path, capsys):
    out = tmp_path / "huge"
    assert main(["data", "prepare", folder, "--size", "200000", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "would take about" in err and "SUITE_ALLOW_LARGE=1" in err and err.count("\n") == 1
    assert not out.exists() and not [n for n in os.listdir(tmp_path) if n.startswith(".huge")]


def test_prepare_refuses_a_cache_a_real_small_disk_cannot_hold(folder, tmp_path):
    from suite.data.prepare import prepare

    disk = tmp_path / "disk"
    disk.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)], capture_output=True)
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        with pytest.raises(
            UserError, match=r"a cache of 6 images of 128 px would take about 288\.0 KiB, more than"
        ):
            prepare(folder, 128, str(disk / "cache"), workers=1)
        assert os.listdir(disk) == []
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)


def test_synth_refuses_images_pillow_would_refuse(tmp_path, capsys):
    assert (
        main(["data", "synth", "--out", str(tmp_path / "s"), "--count", "1", "--size", "100000x100000"]) == 2
    )
    err = capsys.readouterr().err
    assert "--size 100000x100000 would take about 10,000,000,000 pixels" in err and "SUITE_ALLOW_LARGE" in err
    assert not (tmp_path / "s").exists()


def test_thousands_of_workers_are_refused_with_the_override_named(monkeypatch):
    from suite.data import check_worker_bounds

    with pytest.raises(
        UserError, match=r"--workers 3000 would take about 3,000 loader processes.*SUITE_ALLOW_LARGE=1"
    ):
        check_worker_bounds(3000)
    check_worker_bounds(4)
    monkeypatch.setenv("SUITE_ALLOW_LARGE", "1")
    check_worker_bounds(3000)


def test_a_run_with_thousands_of_workers_is_refused_at_planning(folder, tiny):
    from suite.measurement.runner import plan_run

    with pytest.raises(UserError, match="--workers 3000"):
        plan_run(tiny(data=folder, workers=3000))


# -- 9 (data part): loader options with synthetic data ----------------------------------------------------


@pytest.mark.parametrize("field", [{"workers": 4}, {"pin_memory": True}, {"prefetch": 2}])
def test_loader_options_with_synthetic_data_are_said_to_be_ignored(tiny, capsys, field):
    from suite.backends.cpu import CPUBackend
    from suite.workloads import get_workload

    from suite.data import open_data
    from suite.measurement.runner import plan_run

    config = tiny(**field)
    plan_run(config)
    assert "ignored: synthetic data has no loader" in capsys.readouterr().err
    workload = get_workload("dcgan64").with_overrides(**TINY["dcgan64"])
    described = open_data(config, workload, CPUBackend(config), 2).describe()
    assert "synthetic data has no loader" in described["ignored"]  # in the record's data section


def test_cache_check_cost_is_bounded_by_the_sample_above_the_full_size(monkeypatch):
    assert cache_format.sample_rows(10).tolist() == list(range(10))
    rows = cache_format.sample_rows(1_200_000)
    assert len(rows) == cache_format.SAMPLE_ROWS and rows[0] == 0 and rows[-1] == 1_199_999
    assert np.all(np.diff(rows) > 0)
