"""Published figures in tokens: a figure in tokens/s or tokens/hour states its sequence length, is a row of
the report's token table (never of the image table, never ranked, never drawn among images), is compared
only with a measured row of the same workload and sequence length, and a malformed one is refused in one
line. The shipped Gaudi 2 figures are copied exactly from their page."""

from __future__ import annotations

import csv
import io
import json

import pytest
import yaml

from suite.cli import main
from suite.inputs.errors import UserError
from suite.prices.catalog import load_catalog
from suite.reporting.published import figures
from suite.reporting.published.csv_import import import_csv
from suite.reporting.published.rows import published_row, same_device, shares_configuration

TOKEN_FIGURE = {
    "model": "gpt2-small",
    "batch": 16,
    "precision": "bf16",
    "device": "NVIDIA H100 80GB",
    "count": 8,
    "throughput": 1_000_000,
    "unit": "tokens/s",
    "sequence_length": 1024,
    "data": "synthetic",
    "recipe": "the suite's gpt2-small recipe",  # a matched figure: in the token table, beside the runs
    "source": {"citation": "A token table", "url": None, "table": "Table 2, row 1", "read": "2026-11-27"},
}
IMAGE_FIGURE = {**TOKEN_FIGURE, "model": "resnet50", "unit": "images/s", "throughput": 3000}
IMAGE_FIGURE["source"] = dict(TOKEN_FIGURE["source"])  # its own mapping: the YAML writer makes no alias
del IMAGE_FIGURE["sequence_length"]


def write_figures(path, **entries) -> str:
    path.write_text(yaml.safe_dump({"name": "mine", "figures": entries}))
    return str(path)


def test_a_token_figure_parses_in_tokens_and_counts_its_sequences(tmp_path):
    (figure,) = figures.load_file(write_figures(tmp_path / "f.yaml", tok=TOKEN_FIGURE))
    assert figure.in_tokens and figure.kind == "tokens" and figure.sequence_length == 1024
    assert figure.per_hour == 1_000_000 * 3600  # tokens/hour
    assert figure.images_per_hour == pytest.approx(1_000_000 * 3600 / 1024)  # sequences/hour
    (hourly,) = figures.load_file(
        write_figures(tmp_path / "g.yaml", tok={**TOKEN_FIGURE, "unit": "tokens/hour", "throughput": 7200})
    )
    assert hourly.per_hour == 7200 and hourly.images_per_hour == pytest.approx(7200 / 1024)


@pytest.mark.parametrize(
    "change, field, says",
    [
        ({"sequence_length": None}, "sequence_length", "is missing: a figure in tokens/s states the tokens"),
        ({"sequence_length": 0}, "sequence_length", "whole number from 1"),
        ({"sequence_length": "long"}, "sequence_length", "whole number from 1"),
        ({"unit": "tok/s"}, "unit", "tokens/s, tokens/hour"),
        ({"throughput": 1e10}, "throughput", "tokens/hour (a wrong unit?)"),
        ({"unit": "images/s"}, "sequence_length", "is for a figure in tokens/s or tokens/hour"),
    ],
)
def test_a_malformed_token_figure_is_refused_in_one_line(tmp_path, change, field, says):
    path = write_figures(tmp_path / "bad.yaml", bad={**TOKEN_FIGURE, **change})
    with pytest.raises(UserError) as caught:
        figures.load_file(path)
    message = str(caught.value)
    assert "\n" not in message and "entry 'bad'" in message and f"'{field}'" in message and says in message


def test_a_token_figure_without_a_sequence_length_is_refused_by_the_report_with_exit_2(tmp_path, capsys):
    entry = {k: v for k, v in TOKEN_FIGURE.items() if k != "sequence_length"}
    path = write_figures(tmp_path / "bad.yaml", bad=entry)
    assert main(["report", str(tmp_path), "--published-from", path]) == 2
    err = capsys.readouterr().err.strip()
    assert (
        err.startswith("suite: error: ") and "\n" not in err and "field 'sequence_length' is missing" in err
    )


def _report(tmp_path, capsys, *extra) -> str:
    results = tmp_path / "results"
    results.mkdir(exist_ok=True)
    path = write_figures(tmp_path / "mine.yaml", tok=TOKEN_FIGURE, img=IMAGE_FIGURE)
    assert main(["report", str(results), "--published-from", path, *extra]) == 0
    return capsys.readouterr().out


def test_a_token_figure_lands_in_the_token_table_and_never_in_the_image_table(tmp_path, capsys):
    out = _report(tmp_path, capsys)
    images, tokens = out.split("## Language models, in tokens")
    assert "gpt2-small" not in images and "(tok)" not in images  # not a row of images, not cited there
    assert "resnet50" in images and "resnet50" not in tokens
    row = next(line for line in tokens.splitlines() if line.startswith("| T1 "))
    assert "gpt2-small" in row and "1,000,000" in row and "16 × 1,024" in row and "pub" in row
    assert (
        "- T1 (tok): 1,000,000 tokens/s at 1,024 tokens a sequence" in tokens
    )  # its source, under its table
    assert "- T1: published figure tok" in tokens
    assert "fastest" not in tokens  # a published figure is never ranked


def test_a_token_figure_in_csv_carries_its_tokens(tmp_path, capsys):
    out = _report(tmp_path, capsys, "--format", "csv")
    rows = {r["model_run"]: r for r in csv.DictReader(io.StringIO(out))}
    token, image = rows["gpt2-small"], rows["resnet50"]
    assert token["unit"] == "tokens" and token["units_per_sample"] == "1024" and token["published"] == "True"
    assert float(token["tokens_per_hour"]) == 1_000_000 * 3600
    assert image["unit"] == "images" and image["tokens_per_hour"] == ""


def test_a_token_figure_is_priced_in_tokens(tmp_path):
    (figure,) = figures.load_file(write_figures(tmp_path / "f.yaml", tok=TOKEN_FIGURE))
    row = published_row(figure, load_catalog("skypilot-2026"), 1_281_167)
    assert row["unit"] == "tokens" and row["units_per_sample"] == 1024
    assert row["tokens_per_hour"] == 3.6e9 and row["usd_per_hour"]  # 8 × H100 80GB: a p5.48xlarge
    assert row["tokens_per_usd"] == pytest.approx(3.6e9 / row["usd_per_hour"])
    assert row["usd_per_million_tokens"] == pytest.approx(row["usd_per_hour"] / 3.6e9 * 1e6)
    assert row["spot_tokens_per_usd"] == pytest.approx(3.6e9 / row["spot_usd_per_hour"])


def _measured(**change) -> dict:
    row = {
        "model_run": "gpt2-small",
        "precision": "bf16",
        "batch_size": 16,
        "accelerators_used": 8,
        "device": "NVIDIA H100 80GB HBM3",
        "unit": "tokens",
        "units_per_sample": 1024,
    }
    return {**row, **change}


def test_a_token_figure_is_compared_only_at_its_own_sequence_length_and_workload(tmp_path):
    catalog = load_catalog("skypilot-2026")
    (figure,) = figures.load_file(write_figures(tmp_path / "f.yaml", tok=TOKEN_FIGURE))
    published = published_row(figure, catalog, 1_281_167)
    assert shares_configuration(_measured(), published)
    assert not shares_configuration(_measured(units_per_sample=2048), published)  # another sequence
    assert not shares_configuration(_measured(unit="images", units_per_sample=1), published)
    (other,) = figures.load_file(
        write_figures(tmp_path / "g.yaml", tok={**TOKEN_FIGURE, "model": "llama-3.1-8b"})
    )
    foreign = published_row(other, catalog, 1_281_167)
    assert "llama-3.1-8b is not a suite workload: no measured row is compared with it" in foreign["notes"]
    assert not shares_configuration(_measured(model_run="llama-1b"), foreign)
    assert not any("not a suite workload" in note for note in published["notes"])


def test_a_gaudi_2_is_never_priced_as_a_first_gaudi():
    assert not same_device("Intel Gaudi 2 HL-225H", "Habana Gaudi HL-205 32GB")
    assert not same_device("Intel Gaudi2", "Habana Gaudi HL-205 32GB")
    assert not same_device("Intel Gaudi 3", "Intel Gaudi 2")
    assert same_device("Habana Gaudi (HL-205)", "Habana Gaudi HL-205 32GB")
    assert same_device("Intel Gaudi 2 HL-225H", "Intel Gaudi 2")


def test_token_rows_are_never_drawn_among_images_per_dollar(tmp_path):
    pytest.importorskip("matplotlib")
    from suite.reporting.plots import images_per_dollar

    (figure,) = figures.load_file(write_figures(tmp_path / "f.yaml", tok=TOKEN_FIGURE))
    row = published_row(figure, load_catalog("skypilot-2026"), 1_281_167)
    assert row["images_per_usd"] is not None  # priced: only its unit keeps it out
    assert images_per_dollar([row], "caption", str(tmp_path / "plot.png")) is None


def test_a_csv_import_reads_the_sequence_length(tmp_path):
    path = tmp_path / "mine.csv"
    header = "id,model,batch,precision,device,count,throughput,unit,citation,url,table,read,sequence_length"
    path.write_text(
        f"{header}\n"
        't,gpt2-small,16,bf16,NVIDIA H100 80GB,8,"1,000,000",tokens/s,A table,,Table 2,2026-11-27,1024\n'
        "i,resnet50,,amp,NVIDIA V100 16GB,1,1200,images/s,A table,,Table 1,2026-11-27,\n"
    )
    data = import_csv(str(path))
    assert data["figures"]["t"]["sequence_length"] == 1024 and data["figures"]["t"]["unit"] == "tokens/s"
    assert "sequence_length" not in data["figures"]["i"]  # an image figure has none, not even a null


def test_published_list_gives_tokens_per_hour_never_images(capsys):
    assert main(["published", "list"]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("| id"))
    assert [cell.strip() for cell in header.strip("|").split("|")][-2:] == ["tokens/hour", "basis"]
    row = next(line for line in out.splitlines() if "intel-gaudi2-llama-3.1-8b-x8-fp8 " in line)
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[5:] == ["37,440 tokens/s at 8,192 tokens a sequence", "—", "134,784,000", "another"]
    lambda_h200 = next(line for line in out.splitlines() if "lambda-rn50-h200-sxm-x1-amp " in line)
    assert lambda_h200.rstrip(" |").endswith("the workload's recipe")


# The training page's table "Large Language Model (LLM) Throughput: Intel Gaudi 2 Accelerator", as read on
# 2026-11-27 (SynapseAI 1.19.0, PyTorch 2.5.1): model, HPUs, sequence length, precision, batch, tokens/sec.
GAUDI2_TABLE = [
    ("llama-2-7b", "LLaMA V2 7B", 8, 4096, "fp8", 1024, 70523),
    ("llama-2-13b", "LLaMA V2 13B", 16, 4096, "fp8", 256, 59397),
    ("llama-2-70b", "LLaMA V2 70B", 64, 4096, "fp8", 1024, 54614),
    ("llama-3.1-8b", "LLaMA V3.1 8B", 8, 8192, "fp8", 128, 37440),
    ("llama-3.1-70b", "LLaMA V3.1 70B", 64, 8192, "fp8", 128, 43332),
]


def test_the_gaudi_2_llm_figures_are_copied_exactly():
    shipped = [
        f for f in figures.load_shipped() if f.file == "published figures 'intel-gaudi2-llm-training.yaml'"
    ]
    got = [
        (f.model, f.model_label, f.count, f.sequence_length, f.precision, f.batch, f.throughput)
        for f in shipped
    ]
    assert got == GAUDI2_TABLE
    for figure in shipped:
        assert figure.unit == "tokens/s" and figure.device == "Intel Gaudi 2 HL-225H"
        assert figure.source.url.endswith("/gaudi/model-performance-gaudi2-training.html")
        assert "SynapseAI 1.19.0" in figure.source.citation and figure.source.read == "2026-11-27"
        assert figure.model_label in figure.source.table


def test_no_shipped_token_figure_is_of_a_suite_workload_it_could_be_mistaken_for():
    from suite.reporting.published.rows import suite_workloads

    tokens = [f for f in figures.load_shipped() if f.in_tokens]
    assert tokens and not {f.model for f in tokens} & suite_workloads()


def test_every_shipped_file_parses_and_its_token_rows_stay_out_of_the_image_table(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["report", str(tmp_path / "empty"), "--published", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert {r["published_id"] for r in rows if r["unit"] == "tokens"} == {
        f"intel-gaudi2-{model}-x{count}-fp8" for model, _, count, *_ in GAUDI2_TABLE
    }
    assert main(["report", str(tmp_path / "empty"), "--published"]) == 0
    # LLaMA on Gaudi 2 is no suite workload: its rows are on another basis, in their own table
    images, others = capsys.readouterr().out.split("## Published figures on other bases")
    assert "gaudi" not in images.lower() and "Language models, in tokens" not in images
    assert sum(1 for line in others.splitlines() if "Gaudi 2" in line and line.startswith("| P")) == len(
        GAUDI2_TABLE
    )
