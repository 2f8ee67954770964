"""Published figures: the shipped catalog loads and cites its sources (the DCGAN article's figures copied
exactly), a malformed entry or CSV row is refused in one line naming the file, entry and field, and
`suite report --published` shows them as marked rows of their own — priced, never pooled with a measured
row, with measured ÷ published where a configuration matches — in markdown, CSV and JSON."""

from __future__ import annotations

import csv
import io
import json

import pytest
import yaml
from test_compare import record

from suite import run_record
from suite.cli import main
from suite.inputs.errors import UserError
from suite.prices.catalog import load_catalog
from suite.reporting.published import figures
from suite.reporting.published.csv_import import import_csv
from suite.reporting.published.rows import published_row, same_device, with_published
from suite.rows.build import build_rows

# A figure whose source ran the workload's own recipe (synthetic data, the suite's amp): a matched figure.
GOOD = {
    "model": "resnet50",
    "batch": 256,
    "precision": "amp",
    "device": "NVIDIA V100 16GB",
    "count": 1,
    "throughput": 1000,
    "unit": "images/s",
    "data": "synthetic",
    "recipe": "torchvision's resnet50, fp16 autocast with a loss scaler, synthetic data",
    "source": {"citation": "A test table", "url": None, "table": "Table 1", "read": "2026-11-20"},
}


def write_figures(path, **entries) -> str:
    path.write_text(yaml.safe_dump({"name": "mine", "figures": entries}))
    return str(path)


@pytest.mark.parametrize(
    "change, field, says",
    [
        ({"batch": "big"}, "batch", "whole number"),
        ({"batch": 0}, "batch", "whole number"),
        ({"count": None}, "count", "whole number"),
        ({"unit": "img/s"}, "unit", "images/s, images/hour"),
        ({"throughput": -5}, "throughput", "above 0"),
        ({"throughput": 1e12}, "throughput", "a wrong unit"),
        ({"device": ""}, "device", "non-empty text"),
        ({"source": {"citation": "x", "table": "t"}}, "source.read", "missing"),
        ({"source": {"citation": "x", "table": "t", "read": "last week"}}, "source.read", "YYYY-MM-DD"),
        ({"source": "a blog"}, "source", "mapping"),
    ],
)
def test_a_malformed_entry_is_refused_in_one_line_naming_file_entry_and_field(tmp_path, change, field, says):
    path = write_figures(tmp_path / "mine.yaml", bad={**GOOD, **change})
    with pytest.raises(UserError) as caught:
        figures.load_file(path)
    message = str(caught.value)
    assert "\n" not in message
    assert repr(path) in message and "entry 'bad'" in message and f"'{field}'" in message and says in message


def test_a_missing_field_is_named_and_batch_may_be_null_but_not_absent(tmp_path):
    entry = dict(GOOD)
    del entry["batch"]
    with pytest.raises(UserError, match=r"entry 'nobatch': field 'batch' is missing \(write null"):
        figures.load_file(write_figures(tmp_path / "f.yaml", nobatch=entry))
    unmatched = {**GOOD, "batch": None, "recipe": None}  # a batch not stated: no recipe can be matched
    (loaded,) = figures.load_file(write_figures(tmp_path / "g.yaml", ok=unmatched))
    assert loaded.batch is None and loaded.images_per_hour == 3_600_000


def test_the_report_refuses_a_bad_figures_file_with_exit_2_and_one_line(tmp_path, capsys):
    path = write_figures(tmp_path / "bad.yaml", bad={**GOOD, "unit": "fps"})
    assert main(["report", str(tmp_path), "--published-from", path]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("suite: error: ") and "\n" not in err and "entry 'bad': field 'unit'" in err


def test_every_shipped_figure_loads_and_cites_its_source():
    shipped = figures.load_shipped()
    assert {f.file for f in shipped} == {
        "published figures 'dcgan-wilson-2022.yaml'",
        "published figures 'intel-gaudi2-llm-training.yaml'",
        "published figures 'lambda-resnet50-pytorch.yaml'",
        "published figures 'nvidia-resnet50-pytorch.yaml'",
    }
    for figure in shipped:
        assert figure.source.citation and figure.source.table and figure.source.read
        assert figure.images_per_hour > 0 and (figure.sequence_length is not None) == figure.in_tokens
        # an address names the version read (a commit), or the source says why none can
        assert figure.source.pinned or figure.source.not_pinned, figure.id
    nvidia = [f for f in shipped if f.id.startswith("nvidia-")]
    assert len(nvidia) == 12
    assert all(
        "DeepLearningExamples" in f.source.url and "resnet50v1.5/README.md" in f.source.url for f in nvidia
    )


def test_the_dcgan_articles_figures_are_copied_exactly():
    # Table 2.1 of the article: the four rows that print a throughput (images/hour).
    wilson = {
        f.id: (f.model, f.device, f.count, f.instance, f.throughput, f.unit) for f in figures.load_shipped()
    }
    assert {k: v for k, v in wilson.items() if k.startswith("wilson")} == {
        "wilson-2022-naive64-p2.8xlarge": (
            "dcgan64",
            "NVIDIA K80",
            8,
            "p2.8xlarge",
            7_780_000,
            "images/hour",
        ),
        "wilson-2022-naive64-p3.2xlarge": (
            "dcgan64",
            "NVIDIA V100",
            1,
            "p3.2xlarge",
            5_830_000,
            "images/hour",
        ),
        "wilson-2022-safe64-p3.2xlarge": (
            "dcgan64-safe",
            "NVIDIA V100",
            1,
            "p3.2xlarge",
            1_225_000,
            "images/hour",
        ),
        "wilson-2022-safe64-p3.8xlarge": (
            "dcgan64-safe",
            "NVIDIA V100",
            4,
            "p3.8xlarge",
            6_605_504,
            "images/hour",
        ),
    }


def test_a_figure_is_priced_on_the_named_instance_else_the_cheapest_with_its_device_and_count():
    by_id = {f.id: f for f in figures.load_shipped()}
    today = load_catalog()
    named = published_row(by_id["wilson-2022-naive64-p3.2xlarge"], today, 1_200_000)
    assert named["instance"] == "p3.2xlarge" and named["usd_per_hour"] == 3.06
    assert named["images_per_usd"] == pytest.approx(5_830_000 / 3.06)  # the article's 1,905,229
    assert named["spot_images_per_usd"] == pytest.approx(5_830_000 / 0.668)
    # p3 is retired: the seed's figure is still priced (its last listed price), marked on the row.
    assert named["retired"] == "2025-12-20" and "RETIRED: p3.2xlarge is no longer rented" in " ".join(
        named["notes"]
    )
    assert "price of p3.2xlarge as of 2025" in " ".join(named["notes"]) and named["prices_as_of"] == "2025"
    cheapest = published_row(by_id["nvidia-rn50-v100-16gb-x8-amp"], today, 1_200_000)
    assert cheapest["instance"] == "p3.16xlarge" and cheapest["images_per_hour"] == 8322 * 3600
    assert cheapest["retired"]  # the only 8 × V100 row left
    # An A100 80GB is not an A100 40GB: priced as the 80 GB instance, never as p4d's 40 GB.
    a100 = published_row(by_id["nvidia-rn50-a100-80gb-x8-amp"], today, 1_200_000)
    assert a100["instance"] == "p4de.24xlarge" and a100["usd_per_hour"] == 27.44705 and not a100["retired"]
    old = published_row(by_id["nvidia-rn50-a100-80gb-x8-amp"], load_catalog("skypilot-2025"), 1_200_000)
    assert old["usd_per_hour"] is None and "no 8 × NVIDIA A100 80GB instance" in " ".join(old["notes"])
    assert not same_device("NVIDIA A100 80GB", "NVIDIA A100 40GB") and same_device("NVIDIA V100", "V100 16GB")


def v100_records(rates, batch=256):
    recs = []
    for i, rate in enumerate(rates):
        rec = record(
            rate, f"v{batch}-{i}", workload="resnet50", backend="cuda", batch_size=batch, precision="amp"
        )
        rec["config"]["instance"] = "n1-standard-8+1xV100"
        rec["device"] = {"name": "Tesla V100-SXM2-16GB", "count": 1}
        recs.append(rec)
    return recs


def test_a_published_row_is_never_merged_into_a_measured_row():
    mine = figures.parse_figure("mine", GOOD, "test")
    records = v100_records([900, 920, 910])
    measured = build_rows(records, load_catalog(), pool=("context.torch",))
    rows = with_published(measured, [mine], load_catalog(), 1_200_000, records)
    assert len(rows) == 2
    kept, published = rows
    assert not kept["published"] and kept["runs"] == 3 and kept["images_per_hour"] == 910 * 3600
    assert published["published"] and published["runs"] == 0 and published["run_ids"] == []
    assert set(kept) == set(published)  # one schema: every format renders both alike
    assert kept["published_ratios"] == {"mine": pytest.approx(0.91)}
    assert kept["recipe_group"] == published["recipe_group"] == "resnet50 amp, synthetic data"
    other_records = v100_records([900], batch=64)
    other_batch = build_rows(other_records, load_catalog())
    (unmatched, _) = with_published(other_batch, [mine], load_catalog(), 1_200_000, other_records)
    assert unmatched["published_ratios"] == {}  # batch 64 is not the figure's 256


@pytest.fixture
def report_inputs(tmp_path):
    for rec in v100_records([900, 920, 910]):
        run_record.write_record(rec, str(tmp_path / "runs"))
    return str(tmp_path / "runs"), write_figures(tmp_path / "mine.yaml", mine=GOOD)


def report(capsys, inputs, fmt):
    runs, mine = inputs
    assert main(["report", runs, "--published", "--published-from", mine, "--format", fmt]) == 0
    return capsys.readouterr().out


def test_the_markdown_report_marks_published_rows_prices_them_and_shows_the_ratio(report_inputs, capsys):
    runs, mine = report_inputs
    assert main(["report", runs, "--published", "--published-from", mine, "--wide"]) == 0
    text = capsys.readouterr().out
    lines = text.split("## The table")[1].splitlines()
    header = next(line for line in lines if line.startswith("| # |"))
    assert "Measured ÷ published" in header
    measured = next(line for line in lines if line.startswith("| 1 |"))
    assert "[PUBLISHED]" not in measured and "0.91× published (mine)" in measured
    mine = next(
        line
        for line in lines
        if line.startswith("| ") and "published figure" not in line and "3,600,000 (published)" in line
    )
    assert "resnet50 [PUBLISHED]" in mine and "| 2.86 |" in mine and "n1-standard-8+1xV100" in mine
    assert "| published |" in mine
    assert "Published figures (marked [PUBLISHED]" in text
    assert "- A test table:" in text and "(mine): 1,000 images/s; Table 1 (read 2026-11-20)" in text
    assert "Dustin Wilson" in text and "DeepLearningExamples" in text


def test_csv_and_json_mark_published_rows_with_their_source_and_price(report_inputs, capsys):
    rows = list(csv.DictReader(io.StringIO(report(capsys, report_inputs, "csv"))))
    mine = next(r for r in rows if r["published_id"] == "mine")
    assert (
        mine["published"] == "True" and mine["status"] == "published" and float(mine["usd_per_hour"]) == 2.86
    )
    assert "A test table" in mine["published_source"]
    measured = next(r for r in rows if r["published"] == "False")
    # the measured V100 at batch 256 is of the recipe of Lambda's V100 figure too (833 img/s at batch 256)
    assert measured["published_ratio"] == "lambda-rn50-v100-16gb-x1-amp=1.092 mine=0.91"
    assert measured["runs"] == "3" and measured["recipe_group"] == "resnet50 amp, synthetic data"
    data = json.loads(report(capsys, report_inputs, "json"))
    published = [r for r in data["rows"] if r["published"]]
    # 16 + 15 shipped in images (NVIDIA's, the article's; Lambda's), 5 in tokens (Gaudi 2), and mine
    assert len(published) == 37 and all(r["published_source"] for r in published)
    (measured,) = [r for r in data["rows"] if not r["published"]]
    assert measured["published_ratios"]["mine"] == pytest.approx(0.91)


def test_the_plot_labels_a_published_bar():
    pytest.importorskip("matplotlib")
    from suite.reporting import plots

    assert plots._caveats({"published": True, "published_id": "mine"}) == ["PUBLISHED: mine"]


CSV_HEADER = "id,model,batch,precision,device,count,throughput,unit,citation,url,table,read,caveat\n"


def test_a_csv_of_figures_imports_to_a_file_the_report_loads(tmp_path, capsys):
    source = tmp_path / "mine.csv"
    source.write_text(
        CSV_HEADER + "a,resnet50,256,amp,NVIDIA T4,1,400,images/s,My post,,Table 2,2026-11-01,\n"
    )
    out = tmp_path / "mine.yaml"
    assert main(["published", "import", str(source), "--out", str(out)]) == 0
    (figure,) = figures.load_file(str(out))
    assert (figure.id, figure.batch, figure.throughput, figure.source.url, figure.caveat) == (
        "a",
        256,
        400,
        None,
        None,
    )


@pytest.mark.parametrize(
    "line, says",
    [
        (
            "a,resnet50,many,amp,NVIDIA T4,1,400,images/s,My post,,T,2026-11-01,",
            "line 2, entry 'a': field 'batch'",
        ),
        (
            "a,resnet50,8,amp,NVIDIA T4,1,fast,images/s,My post,,T,2026-11-01,",
            "entry 'a': field 'throughput'",
        ),
        ("a,resnet50,8,amp,NVIDIA T4,1,400,images/s,,,T,2026-11-01,", "entry 'a': field 'source.citation'"),
        (",resnet50,8,amp,NVIDIA T4,1,400,images/s,c,,T,2026-11-01,", "line 2: field 'id' is empty"),
    ],
)
def test_a_bad_csv_row_is_refused_in_one_line_exit_2(tmp_path, capsys, line, says):
    source = tmp_path / "bad.csv"
    source.write_text(CSV_HEADER + line + "\n")
    assert main(["published", "import", str(source)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("suite: error: ") and "\n" not in err and says in err


def test_a_csv_without_a_needed_column_names_it(tmp_path):
    source = tmp_path / "short.csv"
    source.write_text("id,model\na,resnet50\n")
    with pytest.raises(UserError, match=r"column\(s\) batch, precision, device"):
        import_csv(str(source))
