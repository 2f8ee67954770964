"""Every rate a language model's run prints is in tokens, labelled tok/s: the per-rank rates of `--nproc 2`
were its sequences per second labelled img/s beside a tok/s throughput, and so was a `--repeat` group's
median."""

from __future__ import annotations

from test_reliability_record_fields import token_record as a_token_record

from suite.launching import repeat
from suite.reporting import summary


def token_record(run_id: str = "tok-a") -> dict:
    """A token record with what the summary prints of a run's warm-up too."""
    record = a_token_record(run_id)
    record["metrics"].update(warmup_steps=1, warmup_time_s=0.5, time_to_first_step_s=2.0)
    return record


def test_per_rank_rates_of_a_language_model_are_tokens_per_second():
    record = token_record()  # 16 tokens a sequence
    record["config"].update(world_size=2, nproc=2, global_batch_size=16)
    record["ranks"] = [{"images_per_second": 60.0}, {"images_per_second": 75.5}]
    text = summary.render(record)
    assert "per rank 960.0, 1,208.0 tok/s" in text and "img/s" not in text


def test_per_rank_rates_of_an_image_workload_stay_images_per_second():
    record = token_record()
    for name in [name for name in record["metrics"] if name.startswith("tokens_") or name == "unit"]:
        del record["metrics"][name]
    record["workload"] = {"name": "dcgan64", "image_size": 64}
    record["config"].update(world_size=2, nproc=2, global_batch_size=16)
    record["ranks"] = [{"images_per_second": 60.0}, {"images_per_second": 75.5}]
    assert "per rank 60.0, 75.5 img/s" in summary.render(record)


def test_a_groups_median_of_a_language_model_is_tokens_per_second():
    records = []
    for index in range(3):
        record = token_record(f"tok-{index}")
        record["group"] = {"id": "g", "index": index, "of": 3}
        records.append(record)
    line = repeat.summary(records).splitlines()[0]
    rate = records[0]["metrics"]["tokens_per_second"]
    assert f"median {rate:,.1f} tok/s" in line and "img/s" not in line


def test_a_scale_table_of_a_language_model_is_in_tokens():
    from suite.reporting import scale

    records = {}
    for count in (1, 2):
        record = token_record(f"tok-n{count}")
        record["config"].update(world_size=count, nproc=count, global_batch_size=8 * count)
        records[count] = record
    rows = scale.scaling_rows(records, prices={n: (2.0, None, "test") for n in records})
    table = scale.render(rows)
    tokens = records[1]["metrics"]["tokens_per_second"]
    assert "tok/s (median ± σ)" in table and f"{tokens:,.1f} ±" in table and "img/s" not in table
    assert "$ / M tokens" in table and "images" not in table
    per_million_tokens = 2.0 / (tokens * 3600 / 1e6)
    assert f"{per_million_tokens:,.2f}" in table
