"""What makes a row different, said on the row (suite/rows/labels.py): the precision as it ran
(`fp32+TF32`, never `fp32` for a TF32 run), a Settings column in words with the flags that set them, the
opening answer naming the winner's setting and its flag, notes that are sentences rather than config
dumps, MFU with TF32 against the TF32 tensor cores' dense peak, workloads in tokens answered in tokens, and
a host unlike the priced instance marked where the device was not the limit. Checked on the committed
H200 records (results/gpu, results/gpu-2026-11-27) as a buyer reads them."""

from __future__ import annotations

import copy
import csv
import io
import json
import re
import shlex

import pytest
from conftest import ROOT
from test_report import make_record

from suite.cli import main
from suite.prices.catalog import load_catalog
from suite.reporting import plots
from suite.reporting.render import render
from suite.rows import efficiency, labels
from suite.rows.build import build_rows
from suite.rows.gather import load_records
from suite.rows.identity import LOADER_FIELDS, SETTING_FIELDS

GPU = f"{ROOT}/results/gpu"
NEXT_DAY = f"{ROOT}/results/gpu-2026-11-27"
TF32_DCGAN = "20261126T210513Z-dcgan64-cuda-b44526"


def _records(path: str) -> list[dict]:
    return [record for _, record in load_records([path], include={"run"})]


@pytest.fixture(scope="module")
def gpu_rows() -> list[dict]:
    return build_rows(_records(GPU), load_catalog())


def _report(capsys, *args) -> str:
    assert main(["report", *args]) == 0
    return capsys.readouterr().out


def _answer(report: str) -> dict[str, str]:
    """The answer's text per workload (its lines joined)."""
    answer = report.split("## The table")[0].split("Verdicts:")[0]
    parts = re.split(r"^\*\*(\S+)\*\* ", answer, flags=re.MULTILINE)[1:]
    return {name: " ".join(text.split()) for name, text in zip(parts[::2], parts[1::2])}


def _table_row(report: str, rate: str) -> str:
    (line,) = [line for line in report.splitlines() if line.startswith("|") and f"| {rate} |" in line]
    return line


def test_a_tf32_run_reads_fp32_plus_tf32_in_the_tables_the_csv_and_the_json(gpu_rows, capsys):
    assert _table_row(_report(capsys, GPU), "30,525").split("|")[5].strip() == "fp32+TF32"
    assert _table_row(_report(capsys, GPU), "10,118").split("|")[5].strip() == "fp32"  # plain fp32 is fp32
    wide = _report(capsys, GPU, "--wide")
    assert "| Precision | Settings |" in wide and "| fp32+TF32 | — |" in wide
    by_rate = {
        round(float(r["images_per_hour"]) / 3600): r
        for r in csv.DictReader(io.StringIO(render(gpu_rows, load_catalog(), "csv")))
        if r["images_per_hour"]
    }
    # A CSV cell beginning with '-' is a formula to a spreadsheet: the flags are text, marked so (spreadsheet.py)
    assert (by_rate[30_525]["precision"], by_rate[30_525]["setting_flags"]) == ("fp32+TF32", "'--tf32")
    assert (by_rate[10_118]["precision"], by_rate[10_118]["setting_flags"]) == ("fp32", "")
    rows = json.loads(render(gpu_rows, load_catalog(), "json"))["rows"]
    assert sorted({r["precision"] for r in rows}) == ["amp", "bf16", "fp32", "fp32+TF32"]


def test_the_plots_label_tf32_and_the_settings(gpu_rows):
    (tf32,) = [r for r in _records(GPU) if r["run_id"] == TF32_DCGAN]
    assert " fp32+TF32 batch 256 " in plots._run_label(tf32)
    (fast,) = [r for r in gpu_rows if r["model_run"] == "resnet50" and r["settings"] == ["channels-last"]]
    assert "cuda amp + channels-last batch 256" in plots.bar_label(fast)
    assert " fp32+TF32 batch 256" in plots.bar_label(
        next(r for r in gpu_rows if r["precision"] == "fp32+TF32")
    )


def test_the_settings_column_says_each_setting_in_words_with_the_flag_that_sets_it():
    record = make_record(1_000_000)
    record["config"].update(channels_last=True, compile=True, threads=2, workers=8, pin_memory=False)
    record["data"].update(workers=8, pin_memory=False, prefetch=2)  # prefetch: its default, not asked for
    checked = copy.deepcopy(record)
    checked["config"]["check_numerics"] = True
    checked["run_id"] = "checked"
    (row,) = build_rows([record, checked], load_catalog("seed-2022"))
    assert row["settings"] == [
        "2 threads",
        "channels-last",
        "torch.compile",
        "8 workers",
        "no pinned memory",
        "a numerics check in 1 of 2 runs",
    ]
    # the flags reproduce the rate: a numerics check (after the timed windows) changes none
    assert row["setting_flags"] == [
        "--threads 2",
        "--channels-last",
        "--compile",
        "--workers 8",
        "--no-pin-memory",
    ]
    text = render([row], load_catalog("seed-2022"), "md")
    assert (
        "| 2 threads, channels-last, torch.compile, 8 workers, no pinned memory, a numerics check in 1 of"
        in text
    )
    assert "=" not in text.split("Notes:")[1].split("Prices:")[0]


def _sample(action):
    """A value of an option other than its default, as the record's config would hold it."""
    if action.nargs == 0:
        return action.const
    if action.choices:
        return sorted(action.choices)[-1]
    if type(action).__name__ == "Switch":
        return False
    return 3 if action.type is not None else "ops.txt"


def test_every_setting_of_the_row_key_has_words_and_its_flag_gives_the_setting():
    from suite import run_options

    fields = [f for f in (*SETTING_FIELDS, *LOADER_FIELDS, labels.CHECK) if f not in labels.NOT_A_SETTING]
    assert not [f for f in fields if f not in labels.WORDS]  # none reads as a bare field name
    by_field = {action.dest: action for action in run_options.run_options().values()}
    for field in fields:
        value = _sample(by_field[field])
        typed = labels.flag(field, value)
        parsed = run_options.run_parser().parse_args(shlex.split(typed))
        assert getattr(parsed, field) == value, (field, typed)
        assert "_" not in labels.WORDS[field](value) or field.startswith("hpu_"), field


def test_the_answer_names_the_winning_setting_and_its_flag(capsys):
    answer = _answer(_report(capsys, GPU))
    dcgan, resnet = answer["dcgan64"], answer["resnet50"]
    assert "Fastest: #5 p5en.48xlarge (H200 ×1, fp32+TF32 (`--tf32`), batch 256;" in dcgan
    assert "at 30,525 img/s, 1.24× the next, #3 bf16 (24,569 img/s)" in dcgan  # the next named by what it ran
    assert "Fastest: #8 p5en.48xlarge (H200 ×1, amp + channels-last (`--channels-last`), batch 256;" in resnet
    assert "at 5,729 img/s, 1.96× the next, #7 amp NCHW (2,919 img/s)" in resnet
    # a numerics check is no setting of the rate: never in a configuration the answer names
    assert "numerics" not in " ".join(answer.values())


def test_the_next_row_of_another_batch_is_named_by_its_batch(tmp_path, capsys):
    """A batch-size sweep's rows differ in their batch alone: the answer names the one it beat by it."""
    for run, (batch, rate) in enumerate(((256, 40_000_000.0), (128, 30_000_000.0))):
        record = make_record(rate, batch=batch, run=str(run), data="synthetic")
        (tmp_path / f"{run}.json").write_text(json.dumps(record))
    dcgan = _answer(_report(capsys, str(tmp_path)))["dcgan64"]
    assert "batch 256;" in dcgan and "1.33× the next, #1 batch 128 (" in dcgan, dcgan
    # alike in every setting and batch: nothing to name
    assert labels.contrast({"precision": "amp", "batch_size": 8}, {"precision": "amp", "batch_size": 8}) == ""


@pytest.mark.parametrize("path", [GPU, NEXT_DAY])
def test_notes_are_sentences_never_config_dumps(path, capsys):
    rows = json.loads(_report(capsys, path, "--format", "json"))["rows"]
    notes = [note for row in rows for note in row["notes"]]
    assert notes
    dumps = [note for note in notes if re.search(r"\b[a-z_]+=", note) or note.startswith("settings:")]
    assert not dumps, dumps
    text = _report(capsys, path, "--wide")
    assert "class=" not in text and "grad_scaler" not in text and "channels_last" not in text


def test_two_look_alike_rows_are_told_apart_by_what_differs_between_them_only():
    older, newer, other = (make_record(1_000_000, run=n) for n in ("older", "newer", "other"))
    older["context"].update(torch="2.10.0")
    newer["context"].update(torch="2.11.0")
    other.update(workload={"class": "suite.workloads.resnet:ResNet", "model": 25_557_032})
    other["config"]["workload"] = "resnet50"
    rows = build_rows([older, newer, other], load_catalog("seed-2022"))
    notes = {r["run_ids"][0]: r["notes"] for r in rows}
    assert "told apart from the row(s) alike in every column by: torch 2.10.0" in notes["run-older"]
    assert "told apart from the row(s) alike in every column by: torch 2.11.0" in notes["run-newer"]
    assert not any(
        "told apart" in n or "class" in n for n in notes["run-other"]
    )  # another workload: a column


def test_mfu_with_tf32_is_derived_from_the_dense_tf32_peak_as_the_report_reads_the_record(tmp_path):
    (read,) = [r for r in _records(GPU) if r["run_id"] == TF32_DCGAN]
    with open(f"{GPU}/{TF32_DCGAN}.json", encoding="utf-8") as handle:
        on_disk = json.load(handle)
    assert (
        on_disk["metrics"]["mfu"] is None and on_disk["device"]["peak_tflops"] is None
    )  # as the run wrote it
    metrics = read["metrics"]
    assert metrics["mfu_peak_tflops"] == read["device"]["peak_tflops"] == 494.7
    flops = 2_482_257_920.0  # what the day's other dcgan64 runs counted
    assert metrics["flops_per_image"] == flops
    assert metrics["mfu"] == pytest.approx(flops * on_disk["metrics"]["images_per_second"] / 494.7e12)
    assert (
        metrics["mfu"] == pytest.approx(0.153, abs=0.001)
        and "derived by the report" in metrics["mfu_derived"]
    )
    # and the row says the report derived it: no format shows the figure as the run's own
    (row,) = [r for r in build_rows(_records(GPU), load_catalog()) if TF32_DCGAN in r["run_ids"]]
    assert any(note.startswith("MFU of 1 of 1 run(s) derived by the report") for note in row["notes"])
    (plain,) = [
        r
        for r in build_rows(_records(GPU), load_catalog())
        if r["precision"] == "fp32" and r["model_run"] == "dcgan64" and r["batch_size"] == 256
    ]
    assert not any("derived by the report" in note for note in plain["notes"])
    # Alone, with no run of the same model that counted its FLOPs, the record keeps its blank MFU
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "r.json").write_text(json.dumps(on_disk))
    (alone,) = _records(str(tmp_path / "one"))
    assert alone["metrics"]["mfu"] is None
    # and a record that has its MFU keeps its own
    assert efficiency.complete([alone]) == [alone]


def test_workloads_in_tokens_are_answered_in_tokens_never_ranked_with_images(capsys, tmp_path):
    report = _report(capsys, NEXT_DAY)
    answer = _answer(report)
    tokens = answer["gpt2-small"]
    assert tokens.startswith("(1 row(s) in tokens, 1 with a throughput):")
    assert "Fastest: T1 p5en.48xlarge (H200 ×1, bf16, batch 16 × 1,024 tokens;" in tokens
    assert "at 238,654 tok/s, the only configuration measured." in tokens and " tokens per $" in tokens
    assert "img/s" not in tokens and "images per $" not in tokens
    assert not any("T1" in text or "tok/s" in text for name, text in answer.items() if name != "gpt2-small")
    # rows in tokens only: the report still opens with their answer
    (tmp_path / "lm").mkdir()
    for record in _records(NEXT_DAY):
        if record["config"]["workload"] == "gpt2-small":
            (tmp_path / "lm" / "r.json").write_text(json.dumps(dict(record)))
    alone = _report(capsys, str(tmp_path / "lm"))
    assert alone.startswith("## Fastest and cheapest, per workload") and "at 238,654 tok/s" in alone
    page = tmp_path / "page.html"
    assert main(["report", NEXT_DAY, "--format", "html", "--out", str(page)]) == 0
    assert "at 238,654 tok/s" in page.read_text(encoding="utf-8")


def _host_notes(row: dict) -> list[str]:
    return [note for note in row["notes"] if note.startswith("HOST:")]


def test_a_host_unlike_the_priced_instance_is_marked_where_the_device_was_not_the_limit(gpu_rows):
    (amp,) = [r for r in gpu_rows if r["model_run"] == "dcgan64" and r["precision"] == "amp"]
    assert _host_notes(amp) == [
        "HOST: the GPU was busy 53–57 % of the timed windows (under 80 %: not the limit, the host set the "
        "rate), on a host of 16 logical CPUs, not the 24 vCPUs of 1 of p5en.48xlarge's 8 accelerators (192 "
        "in all): on the instance itself the rate may differ"
    ]
    # The GPU busy throughout (resnet50, 96–99 %): the host did not set the rate, no word
    assert not any(_host_notes(r) for r in gpu_rows if r["model_run"] == "resnet50")
    runs = [
        r for r in _records(GPU) if r["config"]["workload"] == "dcgan64" and r["config"]["precision"] == "amp"
    ]
    share = [copy.deepcopy(r) for r in runs]
    for record in share:  # the instance's own share of CPUs for one GPU
        record["context"]["cpu_cores_logical"] = 24
    assert not _host_notes(build_rows(share, load_catalog())[0])
    # A CPU run on a host of 64 CPUs priced as a 4-vCPU m6i.xlarge: its host is its device, and the cpu
    # backend declares no utilisation gauge (its host's CPU is the run's own load, not a device's)
    cpu = make_record(1_000, backend="cpu", device="AMD EPYC 7R13", instance="m6i.xlarge")
    cpu["context"]["cpu_cores_logical"] = 64
    cpu["telemetry"] = {"summary": {"host_cpu_util_percent": {"mean": 30.0}}}
    (row,) = build_rows([cpu], load_catalog())
    assert row["usd_per_hour"] is not None and not _host_notes(row)


def test_compare_and_the_run_summary_say_fp32_plus_tf32_too(capsys):
    from suite.reporting import summary

    assert main(["compare", GPU, NEXT_DAY]) in (0, 4)
    compared = capsys.readouterr().out
    assert "dcgan64 · cuda (NVIDIA H200) · batch 256 · fp32+TF32 · synthetic · p5en.48xlarge |" in compared
    assert "tf32=True" not in compared  # said once, in the precision
    (tf32,) = [r for r in _records(GPU) if r["run_id"] == TF32_DCGAN]
    assert summary.render(tf32).splitlines()[0] == (
        "dcgan64 on cuda (NVIDIA H200), fp32+TF32, batch 256, synthetic data"
    )
