"""`suite data synth`: deterministic, photograph-like JPEG folders."""

from __future__ import annotations

import hashlib
import io
import os

import numpy as np
import pytest
from PIL import Image

from suite.cli import main
from suite.data.synth import make_image, parse_image_size, synthesize
from suite.inputs.errors import UserError


def digest_tree(root: str) -> dict[str, str]:
    out = {}
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as handle:
                out[os.path.relpath(path, root)] = hashlib.sha256(handle.read()).hexdigest()
    return out


def test_same_seed_same_bytes_and_layout(tmp_path):
    a = synthesize(str(tmp_path / "a"), 6, size=(40, 30), classes=2, seed=3, workers=1, progress=_quiet())
    b = synthesize(str(tmp_path / "b"), 6, size="40x30", classes=2, seed=3, workers=1, progress=_quiet())
    c = synthesize(str(tmp_path / "c"), 6, size=(40, 30), classes=2, seed=4, workers=1, progress=_quiet())
    tree_a, tree_b, tree_c = digest_tree(a["path"]), digest_tree(b["path"]), digest_tree(c["path"])
    assert tree_a == tree_b
    assert sorted(tree_a) == sorted(tree_c) and tree_a != tree_c
    assert sorted(tree_a) == [f"class_00{i % 2}/000000{i}.jpg" for i in (0, 2, 4, 1, 3, 5)]
    with Image.open(tmp_path / "a" / "class_001" / "0000003.jpg") as image:
        assert image.size == (40, 30) and image.format == "JPEG"
    assert a["bytes"] == sum(os.path.getsize(os.path.join(a["path"], p)) for p in tree_a)


def test_content_compresses_like_a_photograph_not_flat_colour():
    image = make_image(0, 0, 480, 360)
    pixels = np.asarray(image, dtype=np.float32)
    assert pixels.std() > 20  # not flat
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=90)
    raw = 480 * 360 * 3
    # Photos of this size at q90 are tens of KB (about 1:5 to 1:20); flat colour would be ~1:200.
    assert raw / 25 < len(buffer.getvalue()) < raw / 3


def test_bad_inputs_are_user_errors(tmp_path):
    with pytest.raises(UserError, match="480x360"):
        parse_image_size("480by360")
    with pytest.raises(UserError, match="--count"):
        synthesize(str(tmp_path / "x"), 0, size=(8, 8))
    with pytest.raises(UserError, match="--classes 5 is more than --count 2"):
        synthesize(str(tmp_path / "x"), 2, size=(8, 8), classes=5)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "f.txt").write_text("x")
    with pytest.raises(UserError, match="not an empty folder"):
        synthesize(str(tmp_path / "full"), 2, size=(8, 8))


def test_cli_synth_writes_and_bad_size_exits_2(tmp_path, capsys):
    assert main(["data", "synth", "--out", str(tmp_path / "s"), "--count", "3", "--size", "16x12"]) == 0
    assert "wrote 3 JPEGs of 16x12 in 1 class(es)" in capsys.readouterr().out
    assert main(["data", "synth", "--out", str(tmp_path / "t"), "--count", "3", "--size", "big"]) == 2
    err = capsys.readouterr().err
    assert "suite: error: --size must be WIDTHxHEIGHT" in err and "Traceback" not in err


def _quiet():
    from suite.data.progress import Progress

    return Progress("test", 0, stream=io.StringIO())
