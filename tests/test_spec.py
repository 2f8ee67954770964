"""RunSpec: a run in typed parts, whose record `config` is byte-for-byte the flat dict records have always
held (old records read back), and whose JSON form is read strictly."""

from __future__ import annotations

import json

import pytest

from suite.inputs.errors import UserError
from suite.spec import RunSpec
from suite.spec.json_form import from_json, to_json

# A record's config as the suite has always written it (a cuda run of 2 processes), in its order.
RECORDED = {
    "backend": "cuda", "workload": "dcgan64", "batch_size": 4, "precision": "bf16", "warmup_steps": 3,
    "steps_per_window": 10, "windows": 5, "threads": None, "seed": 0, "model_overrides": {"ngf": 8},
    "num_classes": None, "image_size": None, "check_numerics": False, "reference_backend": None,
    "data": "synthetic", "workers": None, "pin_memory": None, "prefetch": None, "instance": "p5.48xlarge",
    "prices": "aws", "accelerators_used": 2, "per_device": None, "device_index": None, "tf32": True,
    "channels_last": False, "compile": False, "hpu_mode": None, "hpu_fused": True, "hpu_bf16_ops": None,
    "hpu_fp32_ops": None, "profile_dir": None, "max_memory_bytes": None, "nproc": 2, "nnodes": 1,
    "node_rank": 0, "rdzv_endpoint": None, "dist_timeout_s": 600.0, "grad_accum": 1,
    "activation_checkpointing": False, "fsdp": False, "compile_mode": None, "world_size": 2, "global_batch_size": 8,
}  # fmt: skip


def test_a_record_config_reads_back_byte_for_byte():
    spec = RunSpec.from_record_config(RECORDED)
    assert spec.workload.batch_size == 4 and spec.cuda.tf32 and spec.launch.nproc == 2
    assert spec.cost.instance == "p5.48xlarge" and spec.hpu.fused
    again = spec.to_record_config(world_size=2, global_batch_size=8)
    assert json.dumps(again) == json.dumps(RECORDED)
    assert again["model_overrides"] is not spec.workload.model_overrides  # the record shares no dict


def test_an_old_record_lacking_fields_reads_with_defaults_and_unknown_ones_are_left_out():
    old = {"backend": "cpu", "workload": "resnet50", "batch_size": 2, "retired_knob": 1, "world_size": 1}
    spec = RunSpec.from_record_config(old)
    assert spec == RunSpec().replace(backend="cpu", workload="resnet50", batch_size=2)
    assert list(spec.to_record_config()) == list(RECORDED)


def test_the_default_spec_records_a_single_process():
    config = RunSpec().to_record_config()
    assert config["world_size"] == 1 and config["global_batch_size"] is None
    assert config["backend"] == "auto" and config["hpu_fused"] is True


def test_flat_names_build_a_spec_and_an_unknown_one_is_refused():
    spec = RunSpec.from_flat({"batch_size": 8, "hpu_mode": "lazy", "threads": None})
    assert spec.workload.batch_size == 8 and spec.hpu.mode == "lazy" and spec.threads is None
    with pytest.raises(UserError, match="unknown run field 'batch'"):
        RunSpec.from_flat({"batch": 8})
    with pytest.raises(TypeError):
        spec.to_record_config(batch_size=2)  # only what the launcher started is the record's own


def test_the_spec_is_frozen():
    with pytest.raises(AttributeError):
        RunSpec().backend = "cpu"


def test_json_round_trip_and_strict_reading():
    spec = RunSpec.from_record_config(RECORDED)
    assert from_json(to_json(spec)) == spec
    for text, said in [
        ("[1]", "f.json: the spec must be a JSON object"),
        ("{", "f.json: not JSON"),
        ('{"wrkload": {}}', "unknown field 'wrkload' in the spec"),
        ('{"workload": {"batch_size": "8"}}', "workload.batch_size must be int or None, got '8'"),
        ('{"cuda": {"tf32": 1}}', "cuda.tf32 must be bool, got 1"),
        ('{"schedule": {"windows": true}}', "schedule.windows must be int or None, got True"),
    ]:
        with pytest.raises(UserError, match=None) as caught:
            from_json(text, "f.json")
        assert said in str(caught.value) and "\n" not in str(caught.value)
