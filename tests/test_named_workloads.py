"""Workloads named beyond the registry: torchvision:NAME, timm:NAME, module.path:factory and installed entry
points each resolve, list, count parameters and train on the CPU; bad names and broken factories are one line,
exit 2, nothing written."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch
from conftest import TINY_OPTIONS
from suite.workloads import get_workload

from suite import cli
from suite.context import child_env
from suite.inputs.errors import UserError
from suite.prices.catalog import load_catalog
from suite.rows.build import build_rows

TESTS = os.path.dirname(os.path.abspath(__file__))
# Each test names its own workload.
TINY_RUN_NO_WORKLOAD = ["run", *TINY_OPTIONS]


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_record(folder) -> dict:
    (path,) = [p for p in folder.rglob("*.json")]
    assert ":" not in path.name  # a portable file name, whatever the workload's name
    return json.loads(path.read_text())


# -- each kind resolves, counts and trains -----------------------------------------------------------


def test_torchvision_name_counts_like_torchvision_and_trains(capsys, tmp_path):
    import torchvision  # here, not at collection: it imports torch._dynamo (seconds on 2 cores)

    workload = get_workload("torchvision:squeezenet1_1", num_classes=3, image_size=32)
    with torch.device("meta"):
        expected = sum(p.numel() for p in torchvision.models.squeezenet1_1(num_classes=3).parameters())
    assert workload.parameter_counts() == {"model": expected}
    assert (workload.image_size, workload.num_classes) == (32, 3)
    assert get_workload("torchvision:inception_v3").image_size == 299  # its weights' crop, not 224
    code, out, err = run_cli(
        capsys, *TINY_RUN_NO_WORKLOAD, "--workload", "torchvision:squeezenet1_1", "--num-classes", "3",
        "--image-size", "32", "--out", str(tmp_path),
    )  # fmt: skip
    assert code == 0, err
    record = one_record(tmp_path)
    assert record["status"] == "ok"
    assert record["config"]["workload"] == "torchvision:squeezenet1_1"
    assert record["config"]["num_classes"] == 3 and record["config"]["image_size"] == 32
    described = record["workload"]
    assert described["source"] == "torchvision" and described["model"] == "squeezenet1_1"
    assert described["library_version"] == torchvision.__version__
    assert described["num_classes"] == 3 and described["image_size"] == 32
    assert described["parameters"] == {"model": expected}


def test_a_vit_takes_its_image_size_and_refuses_one_its_patches_do_not_divide():
    assert get_workload("torchvision:vit_b_16", num_classes=10, image_size=32).image_size == 32
    with pytest.raises(UserError, match=r"'torchvision:vit_b_16' cannot be built at 30 px .*patch size"):
        get_workload("torchvision:vit_b_16", image_size=30)


@pytest.mark.timm
def test_timm_name_uses_its_pretrained_cfg_size_and_trains(capsys, tmp_path):
    timm = pytest.importorskip("timm")
    assert get_workload("timm:test_vit").image_size == 160  # from its pretrained_cfg
    workload = get_workload("timm:test_vit", num_classes=4, image_size=32)
    with torch.device("meta"):
        model = timm.create_model("test_vit", pretrained=False, num_classes=4, img_size=32)
    assert workload.parameter_counts() == {"model": sum(p.numel() for p in model.parameters())}
    code, out, err = run_cli(
        capsys, *TINY_RUN_NO_WORKLOAD, "--workload", "timm:test_vit", "--num-classes", "4", "--image-size", "32",
        "--out", str(tmp_path),
    )  # fmt: skip
    assert code == 0, err
    record = one_record(tmp_path)
    assert record["status"] == "ok"
    assert (
        record["workload"]["source"] == "timm" and record["workload"]["library_version"] == timm.__version__
    )


def test_timm_missing_is_one_line_saying_how_to_install(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "timm", None)  # `import timm` now raises ImportError
    code, out, err = run_cli(
        capsys, *TINY_RUN_NO_WORKLOAD, "--workload", "timm:resnet18", "--out", str(tmp_path)
    )
    assert code == 2
    assert err.strip().count("\n") == 0 and "pip install 'suite[timm]'" in err and "Traceback" not in err
    assert not list(tmp_path.iterdir())


def test_a_user_factory_returning_a_module_trains_with_the_classifier_recipe(capsys, tmp_path):
    workload = get_workload("user_models:small_cnn", num_classes=3, image_size=8)
    assert workload.num_classes == 3
    assert workload.parameter_counts() == {"model": 3 * 4 * 9 + 4 + 8 + 4 * 3 + 3}
    code, out, err = run_cli(
        capsys, *TINY_RUN_NO_WORKLOAD, "--workload", "user_models:small_cnn", "--num-classes", "3",
        "--image-size", "8", "--out", str(tmp_path),
    )  # fmt: skip
    assert code == 0, err
    record = one_record(tmp_path)
    assert record["status"] == "ok"
    assert (
        record["workload"]["source"] == "factory" and record["workload"]["model"] == "user_models:small_cnn"
    )


def test_a_factory_head_is_read_off_the_model():
    assert get_workload("user_models:five_classes", image_size=4).num_classes == 5
    with pytest.raises(UserError, match="5-class head and its factory takes no num_classes"):
        get_workload("user_models:five_classes", num_classes=7, image_size=4)


def test_a_user_factory_returning_a_workload_defines_its_own_step(capsys, tmp_path):
    code, out, err = run_cli(
        capsys, *TINY_RUN_NO_WORKLOAD, "--workload", "tiny_workload:tiny", "--out", str(tmp_path)
    )
    assert code == 0, err
    record = one_record(tmp_path)
    assert record["status"] == "ok" and record["workload"]["class"] == "tiny_workload:Tiny"


@pytest.mark.slow
def test_an_installed_package_adds_a_workload_that_is_listed_and_runs(tmp_path):
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--no-index", "--target", str(target), os.path.join(TESTS, "plugin_pkg")],
        check=True, capture_output=True, cwd=tmp_path,
    )  # fmt: skip
    env = child_env()
    env["PYTHONPATH"] = os.pathsep.join([str(target), env["PYTHONPATH"]])
    env["SUITE_CACHE_DIR"] = str(tmp_path / "cache")
    listed = subprocess.run(
        [sys.executable, "-m", "suite", "list"], env=env, capture_output=True, text=True, cwd=tmp_path
    )
    assert listed.returncode == 0, listed.stderr
    line = next(line for line in listed.stdout.splitlines() if line.startswith("demo-mlp"))
    # Listed at the factory's own defaults: 3 classes of 8 px images.
    assert "installed: suite_plugin_demo:mlp" in line and f"{3 * 64 * 16 + 16 + 16 * 3 + 3:,}" in line
    assert line.split()[1:3] == ["8", "px"]
    ran = subprocess.run(
        [sys.executable, "-m", "suite", *TINY_RUN_NO_WORKLOAD, "--workload", "demo-mlp",
         "--out", str(tmp_path / "out"), "--json"],
        env=env, capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    record = json.loads(ran.stdout)
    assert record["status"] == "ok" and record["workload"]["model"] == "suite_plugin_demo:mlp"


# -- bad names, broken factories, impossible sizes -----------------------------------------------------


@pytest.mark.parametrize(
    "name,message",
    [
        ("torchvision:vit_b16", "unknown torchvision model 'vit_b16' (near: vit_b_16"),
        ("torchvision:resnet", "see `suite list --models torchvision`"),
        ("user_models:smal_cnn", "module 'user_models' has no callable 'smal_cnn' (near: small_cnn)"),
        ("no_such_module_here:make", "cannot import module 'no_such_module_here'"),
        ("user_models:raises", "the factory raised RuntimeError: weights file models/best.pt not found"),
        (
            "user_models:wrong_type",
            "the factory returned a dict; it must return a torch.nn.Module or a suite",
        ),
        ("user_models:NOT_CALLABLE", "NOT_CALLABLE is a int, not a callable"),
        ("user_models:not_a_classifier", "not (batch, classes) logits"),
    ],
)
def test_a_bad_name_or_broken_factory_is_one_line_exit_2_nothing_written(capsys, tmp_path, name, message):
    code, out, err = run_cli(capsys, *TINY_RUN_NO_WORKLOAD, "--workload", name, "--out", str(tmp_path))
    assert code == 2
    assert err.startswith("suite: error: ") and err.strip().count("\n") == 0, err
    assert message in err and "Traceback" not in err
    assert not list(tmp_path.iterdir())


@pytest.mark.timm
def test_a_bad_timm_name_gets_near_matches():
    pytest.importorskip("timm")
    with pytest.raises(UserError, match=r"unknown timm model 'resnet19' \(near: resnet18"):
        get_workload("timm:resnet19")


def test_impossible_combinations_are_refused_before_anything_is_built(capsys, tmp_path):
    folder = tmp_path / "ten-classes"
    for index in range(10):
        (folder / f"c{index}").mkdir(parents=True)
        from PIL import Image

        Image.new("RGB", (8, 8)).save(folder / f"c{index}" / "a.png")
    out = str(tmp_path / "out")
    cases = [
        (["--workload", "torchvision:squeezenet1_1", "--image-size", "32", "--data", str(folder)],
         "has 10 classes but torchvision:squeezenet1_1 has a 1000-class head: pass --num-classes 10"),
        (["--workload", "resnet18-cifar", "--num-classes", "4", "--data", str(folder)],
         "has 10 classes but resnet18-cifar has a 4-class head: pass --num-classes 10"),
        (["--workload", "dcgan64", "--num-classes", "3"], "--num-classes does not apply to dcgan64"),
        (["--workload", "dcgan64", "--image-size", "96"], "--image-size 96 does not fit dcgan64"),
        (["--workload", "torchvision:vit_b_16", "--image-size", "30"], "indivisible by patch size"),
        (["--workload", "torchvision:squeezenet1_1", "--num-classes", "0"],
         "--num-classes must be a positive integer, got '0'"),
    ]  # fmt: skip
    for argv, message in cases:
        code, _, err = run_cli(capsys, *TINY_RUN_NO_WORKLOAD, *argv, "--out", out)
        assert code == 2 and message in err and err.strip().count("\n") == 0, (argv, err)
    assert not os.path.exists(out)


# -- listing -----------------------------------------------------------------------------------------


def test_list_models_of_a_library_with_a_pattern(capsys):
    code, out, _ = run_cli(capsys, "list", "--models", "torchvision", "vit_b_*")
    assert code == 0
    assert [line for line in out.splitlines() if line.startswith("torchvision:")] == [
        "torchvision:vit_b_16",
        "torchvision:vit_b_32",
    ]
    code, _, err = run_cli(capsys, "list", "--models", "keras")
    assert code == 2 and "unknown --models library 'keras' (known: torchvision, timm)" in err


@pytest.mark.timm
def test_list_timm_models(capsys):
    pytest.importorskip("timm")
    code, out, _ = run_cli(capsys, "list", "--models", "timm", "test_vit*")
    assert code == 0 and "timm:test_vit\n" in out and "timm:test_resnet" not in out


# -- sweeps and reports --------------------------------------------------------------------------------


def test_sweep_takes_a_model_list(capsys, tmp_path):
    models = tmp_path / "models.txt"
    models.write_text("# two models\ntorchvision:squeezenet1_1\n\nuser_models:small_cnn  # mine\n")
    code, out, err = run_cli(
        capsys, "sweep", "--model-list", str(models), "--set", "backend=cpu", "--set", "image-size=32",
        "--out", str(tmp_path / "sweep"), "--dry-run",
    )  # fmt: skip
    assert code == 0, err
    assert "workload=torchvision:squeezenet1_1" in out and "workload=user_models:small_cnn" in out
    bad = tmp_path / "bad.txt"
    bad.write_text("torchvision:vit_b16\n")
    code, _, err = run_cli(
        capsys, "sweep", "--model-list", str(bad), "--dry-run", "--out", str(tmp_path / "s")
    )
    assert code == 2 and "near: vit_b_16" in err


def _record(workload: str, num_classes: int | None) -> dict:
    return {
        "status": "ok",
        "config": {"workload": workload, "backend": "cpu", "precision": "fp32", "batch_size": 2,
                   "num_classes": num_classes},
        "device": {"name": "cpu", "count": 1},
        "metrics": {"images_per_second": 10.0},
    }  # fmt: skip


def test_report_rows_never_merge_two_heads_of_one_model():
    rows = build_rows(
        [_record("torchvision:resnet18", 10), _record("torchvision:resnet18", 100)], load_catalog(None)
    )
    assert len(rows) == 2
    assert sorted(row["settings"] for row in rows) == [["10 classes"], ["100 classes"]]
    assert sorted(row["setting_flags"] for row in rows) == [["--num-classes 10"], ["--num-classes 100"]]
