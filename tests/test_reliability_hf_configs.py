"""`hf:` configs: read by the one bounded reader (a config.json linked to /proc/kmsg hung the run; a 1 GiB
config was read whole, 2.6 GB at its peak), as strict JSON, and built on the meta device while the run is
planned, so that a config transformers reads but cannot build (NaN, a negative width, heads that do not
divide it, positions -1, an unknown rope_type) is one line and exit 2, not a traceback with no record."""

from __future__ import annotations

import json
import os
import stat

import pytest
from conftest import TINY_OPTIONS
from test_reliability_blocking_files import blocking, deadline  # noqa: F401 - the fixture, by name

from suite import cli

pytestmark = pytest.mark.hf

GPT2 = {"model_type": "gpt2", "n_layer": 2, "n_embd": 32, "n_head": 2, "n_positions": 16, "vocab_size": 64}
GPT2 |= {"bos_token_id": 0, "eos_token_id": 0}
LLAMA = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 32, "intermediate_size": 64}
LLAMA |= {"num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 16, "vocab_size": 64}
LLAMA |= {"bos_token_id": 0, "eos_token_id": 0}


@pytest.fixture(autouse=True)
def transformers():
    return pytest.importorskip("transformers")


def refused(capsys, tmp_path, config_path) -> str:
    """`suite run --workload hf:CONFIG_PATH`: exit 2, one line, no traceback, no record; the line."""
    out = tmp_path / "out"
    code = cli.main(["run", *TINY_OPTIONS, "--workload", f"hf:{config_path}", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.strip().count("\n") == 0 and "Traceback" not in err, err
    assert not out.exists() or not list(out.iterdir())
    return err


UNBUILDABLE = {
    "no heads": (GPT2, {"n_head": 0}, "ZeroDivisionError"),
    "3 heads for 32 wide": (GPT2, {"n_head": 3}, "divisible by num_heads"),
    "negative width": (GPT2, {"n_embd": -32}, "negative dimension -32"),
    "positions -1": (GPT2, {"n_positions": -1}, "negative dimension -1"),
    "unknown rope_type": (LLAMA, {"rope_scaling": {"rope_type": "nonsense", "factor": 2.0}}, "nonsense"),
}


@pytest.mark.parametrize("case", UNBUILDABLE, ids=list(UNBUILDABLE))
def test_a_config_transformers_reads_but_cannot_build_is_one_line(capsys, tmp_path, case):
    base, change, why = UNBUILDABLE[case]
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**base, **change}))
    err = refused(capsys, tmp_path, path)
    assert "transformers cannot build a model from this config" in err and why in err, err


@pytest.mark.parametrize(
    "text, why",
    [
        (json.dumps({**GPT2, "n_embd": float("nan")}), "NaN is no JSON number"),
        (json.dumps({**GPT2, "layer_norm_epsilon": float("inf")}), "Infinity is no JSON number"),
        (json.dumps(GPT2)[:-1] + ', "n_embd": 64}', "key 'n_embd' is given twice"),
        ("[1, 2]", "it is not a JSON object"),
    ],
    ids=["nan", "infinity", "duplicate key", "a list"],
)
def test_a_config_that_is_not_strict_json_is_one_line(capsys, tmp_path, text, why):
    path = tmp_path / "config.json"
    path.write_text(text)
    assert why in refused(capsys, tmp_path, path)


def test_a_config_of_the_kernels_files_is_refused_before_it_is_read(capsys, tmp_path):
    path = tmp_path / "config.json"
    path.symlink_to("/proc/self/status")  # a pseudo file (harmless to read) for /proc/kmsg, never read
    assert "a file of the kernel's procfs" in refused(capsys, tmp_path, path)


def test_a_config_whose_read_waits_is_refused_not_waited_on(capsys, tmp_path, monkeypatch, blocking):  # noqa: F811
    path = blocking(tmp_path / "config.json")  # /proc/kmsg as the reader sees it: regular, size 0
    real_stat = os.stat

    def stat_as_regular(target, *args, **kwargs):  # a path check (is_file) sees it as /proc/kmsg too
        found = real_stat(target, *args, **kwargs)
        if stat.S_ISFIFO(found.st_mode):
            fields = list(tuple(found)[:10])
            fields[0], fields[6] = stat.S_IFREG | 0o444, 0
            return os.stat_result(fields)
        return found

    monkeypatch.setattr(os, "stat", stat_as_regular)
    with deadline():
        assert "a file whose read waits for data" in refused(capsys, tmp_path, path)


def test_a_gigabyte_config_is_refused_without_being_read(capsys, tmp_path):
    path = tmp_path / "config.json"
    with open(path, "wb") as handle:
        handle.truncate(2**30)  # sparse: a GiB by its size, nothing on disk
    assert "1,073,741,824 bytes, more than the 16 MiB" in refused(capsys, tmp_path, path)


def test_a_config_that_builds_still_runs(capsys, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(LLAMA))
    code = cli.main(["run", *TINY_OPTIONS, "--workload", f"hf:{path}", "--out", str(tmp_path / "out")])
    assert code == 0, capsys.readouterr().err
