"""A decompression-bomb JPEG (a header claiming 20,000 × 20,000 pixels: Pillow refuses it, with an error that
is neither OSError nor ValueError) sorting first in its folder ended `suite data prepare` in a traceback and
`suite run` in an error naming no file; the same bomb elsewhere in the folder was already skipped and named."""

from __future__ import annotations

import io
import struct

import pytest
from conftest import tiny_config
from PIL import Image

from suite import cli
from suite.data.imagefolder import scan_folder
from suite.measurement import runner


def bomb(path, width: int = 20_000, height: int = 20_000) -> None:
    """A JPEG of 8 × 8 pixels whose frame header says WIDTH × HEIGHT: a few hundred bytes, refused by Pillow
    as a decompression bomb (over twice Image.MAX_IMAGE_PIXELS) as soon as it is opened."""
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), (10, 20, 30)).save(buffer, "JPEG")
    data, at = bytearray(buffer.getvalue()), 2
    while data[at + 1] not in (0xC0, 0xC2):  # to the start-of-frame segment
        at += 2 + struct.unpack(">H", data[at + 2 : at + 4])[0]
    data[at + 5 : at + 9] = struct.pack(">HH", height, width)
    path.write_bytes(bytes(data))


@pytest.fixture
def bomb_first(tmp_path):
    """A folder of one class whose first image, by name, is a bomb; then four good 80 × 60 JPEGs."""
    folder = tmp_path / "photos" / "c"
    folder.mkdir(parents=True)
    bomb(folder / "000_bomb.jpg")
    for n in range(4):
        Image.new("RGB", (80, 60), (n * 40, 0, 0)).save(folder / f"img{n}.jpg")
    with pytest.raises(Image.DecompressionBombError):
        Image.open(folder / "000_bomb.jpg")  # the bomb is real: Pillow refuses it
    return tmp_path / "photos"


def test_the_source_size_passes_over_a_bomb(bomb_first):
    assert scan_folder(str(bomb_first)).first_image_size() == [80, 60]


def test_prepare_skips_a_bomb_that_sorts_first_and_names_it(bomb_first, tmp_path, capsys):
    code = cli.main(["data", "prepare", str(bomb_first), "--size", "16", "--out", str(tmp_path / "cache")])
    out, err = capsys.readouterr()
    assert code == 0 and "Traceback" not in err, err
    assert "skipped 1 unreadable image(s): c/000_bomb.jpg" in out + err


def test_a_run_on_a_folder_whose_first_image_is_a_bomb_names_it(bomb_first):
    (bomb_first / "c" / "img1.jpg").unlink()  # one image left beside the bomb: every batch of 2 draws it
    (bomb_first / "c" / "img2.jpg").unlink()
    (bomb_first / "c" / "img3.jpg").unlink()
    spec = tiny_config(steps_per_window=1, windows=1, threads=1, data=str(bomb_first), workers=0)
    record = runner.execute(runner.plan_run(spec))
    assert record["status"] == "error" and record["data"]["source_image_size"] == [80, 60]
    message = record["error"]["message"]
    assert "000_bomb.jpg" in message and "DecompressionBombError" in message, message
