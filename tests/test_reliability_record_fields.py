"""The record checks know the newer fields: `config.grad_accum` of -1, "2", 10^9 or 2.5, `config.fsdp` "yes"
and `activation_checkpointing` 1 were read into reports, and an image record marked `unit: "tokens"` landed
in the token table. Each is refused on read naming the field; records as the suite writes them still read."""

from __future__ import annotations

import copy
import json

import pytest
from test_record_identity import made, put, refusal

from suite import cli, run_record
from suite.measurement import units


def token_record(run_id: str = "tok-a") -> dict:
    """A language model's record as the suite writes it: the sample figures, then the same in tokens."""
    record = made(run_id)
    record["config"]["workload"] = "gpt2-small"
    record["workload"] = {"name": "gpt2-small", "image_size": 0, "unit": "tokens", "tokens_per_sample": 16}
    record["metrics"].update(units.unit_metrics(record["metrics"], "tokens", 16))
    return record


def image_record(run_id: str = "img-a") -> dict:
    record = made(run_id)
    record["workload"] = {"name": "dcgan64", "image_size": 64}
    return record


@pytest.mark.parametrize(
    "field, value, says",
    [
        ("grad_accum", -1, "field config.grad_accum: must be a whole number from 1 to 1,024"),
        ("grad_accum", 0, "field config.grad_accum: must be a whole number from 1 to 1,024"),
        ("grad_accum", "2", "field config.grad_accum: must be a whole number from 1 to 1,024"),
        ("grad_accum", 10**9, "field config.grad_accum: must be a whole number from 1 to 1,024"),
        ("grad_accum", 2.5, "field config.grad_accum: must be a whole number from 1 to 1,024"),
        ("fsdp", "yes", "field config.fsdp: must be true, false or null"),
        ("fsdp", 1, "field config.fsdp: must be true, false or null"),
        ("activation_checkpointing", 1, "field config.activation_checkpointing: must be true, false or null"),
    ],
)
def test_a_newer_setting_of_the_wrong_type_is_refused(field, value, says):
    record = made("run-a")
    record["config"][field] = value
    assert says in refusal(record)


def test_the_settings_as_the_suite_writes_them_read():
    record = made("run-a")
    record["config"].update(grad_accum=4, fsdp=True, activation_checkpointing=False)
    run_record.check_record(json.loads(json.dumps(record)))
    run_record.check_record(json.loads(json.dumps(token_record())))


def _marked_tokens(record: dict) -> dict:
    record = copy.deepcopy(record)
    record["metrics"]["unit"] = "tokens"
    return record


@pytest.mark.parametrize(
    "change, says",
    [
        (_marked_tokens, "field metrics.unit: must be images, for a workload of 64 px images"),
        (
            lambda r: {**_marked_tokens(r), "workload": {"name": "dcgan64", "unit": "images"}},
            "field metrics.unit: must be images, the unit of the workload that ran",
        ),
        (
            lambda r: {**_marked_tokens(r), "workload": {"name": "x", "unit": "tokens"}},
            "field metrics.tokens_per_sample: must be the tokens one sample holds",
        ),
    ],
    ids=["marked alone", "its workload says images", "no tokens per sample"],
)
def test_an_image_record_marked_tokens_is_refused(change, says):
    assert says in refusal(change(image_record()))


def test_a_token_record_whose_tokens_disagree_with_its_sequences_is_refused():
    record = token_record()
    record["metrics"]["tokens_per_second"] *= 2
    assert "field metrics.tokens_per_second: must be images_per_second × tokens_per_sample" in refusal(record)
    record = token_record()
    record["metrics"].pop("unit")  # a token workload's figures read as images
    assert "field metrics.unit: must be tokens, as workload.unit says" in refusal(record)


def test_the_token_table_holds_no_image_record_marked_tokens(tmp_path, capsys):
    put(tmp_path, token_record())
    put(tmp_path, _marked_tokens(image_record()))
    assert cli.main(["report", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert "skipped" in err and "img-a.json" in err and "metrics.unit" in err
    tokens = out.split("## Language models, in tokens")[1]
    assert "gpt2-small" in tokens and "dcgan64" not in out
