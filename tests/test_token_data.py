"""A file of token ids for the language models: nanoGPT's raw uint16 array and llm.c's headed .bin, each
read and refused at plan time, trained on by the real registry entries at their tiny widths, and measured
alone by `suite loader`."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import TINY, TINY_OPTIONS, model_override_options, only_record, records

from suite import cli
from suite.data.token_file import LLMC_HEADER_BYTES, check_token_file, read_token_file
from suite.inputs.errors import UserError

CONTEXT = TINY["gpt2-small"]["context"]  # 16
VOCABULARY = TINY["gpt2-small"]["vocabulary"]  # 64


def token_ids(count: int, high: int = VOCABULARY, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, high, size=count)


def nanogpt_file(path, tokens) -> str:
    """nanoGPT's train.bin: the ids as uint16, nothing else (data/openwebtext/prepare.py)."""
    np.asarray(tokens, dtype=np.uint16).tofile(path)
    return str(path)


def llmc_file(path, tokens, magic=20240520, version=1, count=None, dtype=np.uint16) -> str:
    """llm.c's .bin: 256 int32 (magic, version, token count), then the ids (data_common.py write_datafile)."""
    header = np.zeros(256, dtype=np.int32)
    header[:3] = magic, version, len(tokens) if count is None else count
    with open(path, "wb") as handle:
        handle.write(header.tobytes())
        handle.write(np.asarray(tokens, dtype=dtype).tobytes())
    return str(path)


def run(capsys, tmp_path, workload: str, data: str, *extra: str) -> tuple[int, str]:
    argv = ["run", *TINY_OPTIONS, "--workload", workload, *model_override_options(TINY[workload])]
    code = cli.main([*argv, "--data", data, "--out", str(tmp_path / "out"), *extra])
    return code, capsys.readouterr().err


# -- the two layouts, read --------------------------------------------------------------------------------


def test_a_raw_file_is_nanogpts_uint16_tokens(tmp_path):
    path = nanogpt_file(tmp_path / "train.bin", token_ids(1000))
    found = read_token_file(path)
    assert (found.format, found.dtype, found.offset, found.tokens) == ("nanogpt", "uint16", 0, 1000)
    assert np.array_equal(found.open().read(0, 1000), token_ids(1000))


@pytest.mark.parametrize(
    "magic, version, dtype", [(20240520, 1, np.uint16), (20240801, 7, np.uint32)], ids=["gpt-2", "llama-3"]
)
def test_the_header_not_the_name_says_llmc(tmp_path, magic, version, dtype):
    path = llmc_file(tmp_path / "train.bin", token_ids(500), magic, version, dtype=dtype)  # nanoGPT's name
    found = read_token_file(path)
    assert (found.format, found.offset, found.tokens) == ("llm.c", LLMC_HEADER_BYTES, 500)
    assert found.dtype == np.dtype(dtype).name
    assert np.array_equal(found.open().read(0, 500), token_ids(500))  # the header is not read as tokens


# -- refusals: one line naming the file and what is wrong, exit 2, before anything is built ---------------

REFUSALS = {
    "odd byte length": (lambda p: p.write_bytes(b"\x01\x00\x02"), "3 bytes, an odd count"),
    "too short": (lambda p: nanogpt_file(p, token_ids(CONTEXT)), "too few for one sequence"),
    "id past the vocabulary": (
        lambda p: nanogpt_file(p, [*token_ids(100), VOCABULARY]),
        f"token id {VOCABULARY} is not in gpt2-small's vocabulary of {VOCABULARY}",
    ),
    "count disagrees": (
        lambda p: llmc_file(p, token_ids(100), count=120),
        "header says 120 tokens (240 bytes of uint16) but 200 bytes follow",
    ),
    "unknown version": (lambda p: llmc_file(p, token_ids(100), version=2), "header version 2 with magic"),
    "eval file": (lambda p: llmc_file(p, token_ids(100), magic=20240522), "an llm.c eval file"),
    "truncated header": (lambda p: p.write_bytes(np.int32(20240520).tobytes() * 4), "less than its 1,024"),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_a_bad_token_file_is_refused_in_one_line_at_plan_time(capsys, tmp_path, case):
    make, said = REFUSALS[case]
    path = tmp_path / "tokens.bin"
    make(path)
    code, err = run(capsys, tmp_path, "gpt2-small", str(path))
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert str(path) in err and said in err, err
    assert not (tmp_path / "out").exists() or not records(tmp_path / "out")  # refused before any run


def test_a_folder_is_refused_for_a_language_model(capsys, tmp_path):
    (tmp_path / "images" / "a").mkdir(parents=True)
    code, err = run(capsys, tmp_path, "gpt2-small", str(tmp_path / "images"))
    assert code == 2 and err.count("\n") == 1 and "is a folder; a language model reads a file" in err


def test_a_sampled_check_still_finds_ids_out_of_range(tmp_path, monkeypatch):
    """Above the full check's size the ids are sampled at plan time, and every drawn sequence is checked."""
    from suite.data import token_file
    from suite.data.token_loader import TokenSequences

    monkeypatch.setattr(token_file, "FULL_CHECK_BYTES", 64)
    monkeypatch.setattr(token_file, "SAMPLE_CHUNK_TOKENS", 8)
    monkeypatch.setattr(token_file, "SAMPLE_CHUNKS", 2)  # the first and the last 8 ids
    tokens = token_ids(400)
    tokens[200] = VOCABULARY + 5  # between the sampled chunks
    found = read_token_file(nanogpt_file(tmp_path / "t.bin", tokens))
    assert "2 chunks of 8 ids" in check_token_file(found, CONTEXT, VOCABULARY, "gpt2-small")
    sequences = TokenSequences(found, CONTEXT, VOCABULARY, "gpt2-small")
    sequences.__getitems__([0, 10])  # clean sequences pass
    with pytest.raises(ValueError, match=f"token id {VOCABULARY + 5} is not in"):
        sequences.__getitems__([0, 195])


def test_too_short_is_context_plus_one(tmp_path):
    found = read_token_file(nanogpt_file(tmp_path / "t.bin", token_ids(CONTEXT + 1)))
    check_token_file(found, CONTEXT, VOCABULARY, "gpt2-small")  # exactly one sequence and its target
    with pytest.raises(UserError, match="needs 18"):
        check_token_file(found, CONTEXT + 1, VOCABULARY, "gpt2-small")


# -- the batches -------------------------------------------------------------------------------------------


def batches(path: str, seed: int, count: int = 3):
    from suite.backends.cpu import CPUBackend
    from suite.workloads import get_workload

    from suite.data.loader_options import LoaderOptions
    from suite.data.token_loader import TokenFileData
    from suite.spec import RunSpec

    workload = get_workload("gpt2-small").with_overrides(**TINY["gpt2-small"])
    source = TokenFileData(
        read_token_file(path), workload, CPUBackend(RunSpec()), LoaderOptions(4, seed=seed)
    )
    try:
        iterator = source.host_batches()
        return [next(iterator) for _ in range(count)]
    finally:
        source.close()


def test_batches_are_seeded_sequences_of_the_file_shifted_by_one(tmp_path):
    tokens = token_ids(2000)
    path = nanogpt_file(tmp_path / "t.bin", tokens)
    drawn = batches(path, seed=3)
    text = tokens.astype(np.int64).tobytes()
    for inputs, targets in drawn:
        assert inputs.shape == targets.shape == (4, CONTEXT) and str(inputs.dtype) == "torch.int64"
        assert (inputs[:, 1:] == targets[:, :-1]).all()
        for row_in, row_target in zip(inputs, targets):
            sequence = np.concatenate([row_in.numpy(), row_target.numpy()[-1:]])
            assert sequence.tobytes() in text  # context + 1 consecutive tokens of the file
    again, other = batches(path, seed=3), batches(path, seed=4)
    assert all((a[0] == b[0]).all() for a, b in zip(drawn, again))
    assert not all((a[0] == b[0]).all() for a, b in zip(drawn, other))


# -- the real registry entries train on it -----------------------------------------------------------------


@pytest.mark.parametrize(
    "workload, layout",
    [("gpt2-small", "nanogpt"), ("llama-1b", "llm.c"), ("gpt2-small", "llm.c llama-3")],
)
def test_a_tiny_run_trains_on_a_token_file(capsys, tmp_path, workload, layout):
    make = {
        "nanogpt": lambda p: nanogpt_file(p, token_ids(3000)),
        "llm.c": lambda p: llmc_file(p, token_ids(3000)),
        "llm.c llama-3": lambda p: llmc_file(p, token_ids(3000), 20240801, 7, dtype=np.uint32),
    }[layout]
    path = make(tmp_path / "tokens.bin")
    code, err = run(capsys, tmp_path, workload, path)
    assert code == 0, err
    record = only_record(tmp_path / "out")
    assert record["status"] == "ok"
    assert all(math.isfinite(loss) for loss in record["metrics"]["final_loss"])
    data = record["data"]
    assert data["source"] == "tokens" and data["format"] == layout.split()[0]
    assert data["path"] == path and data["tokens"] == 3000 and data["context"] == CONTEXT
    assert record["metrics"]["tokens_per_second"] == pytest.approx(
        record["metrics"]["images_per_second"] * 16
    )


def test_suite_loader_measures_a_token_file_in_tokens(capsys, tmp_path):
    path = nanogpt_file(tmp_path / "t.bin", token_ids(3000))
    argv = ["loader", "--data", path, "--workload", "gpt2-small", "--batch-size", "4", "--workers", "0"]
    argv += ["--batches", "3", "--windows", "2", "--warmup", "1", "--out", str(tmp_path / "out")]
    code = cli.main(argv)
    out = capsys.readouterr().out
    assert code == 0
    record = only_record(tmp_path / "out")
    assert record["data"]["source"] == "tokens" and record["data"]["tokens"] == 3000
    metrics = record["metrics"]
    # gpt2-small as registered: sequences of 1,024 tokens
    assert metrics["tokens_per_second"] == pytest.approx(metrics["images_per_second"] * 1024)
    assert "tok/s" in out and "batches/s" in out and "seq/s (median ± σ)" in out and "img/h" not in out


# -- the bottleneck advice ---------------------------------------------------------------------------------


@pytest.mark.parametrize("loader_ips, end_to_end_ips", [(500.0, 500.0), (3000.0, 500.0)])
def test_a_token_file_is_never_told_to_use_an_image_cache(loader_ips, end_to_end_ips):
    from suite.diagnosis.cases import BottleneckEvidence
    from suite.diagnosis.rules import verdict

    found = verdict(
        BottleneckEvidence(
            compute_ips=1000.0, end_to_end_ips=end_to_end_ips, loader_ips=loader_ips, data_kind="tokens"
        )
    )
    assert found["verdict"] in {"input-bound", "transfer-bound", "host-contention"}, found
    assert not any(c["option"] == "--data" for c in found["changes"]), found
