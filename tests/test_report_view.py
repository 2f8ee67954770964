"""What a person reads first: the answer (per workload the fastest and the cheapest configuration, by how
much, and whether the runs decide it), a default table that fits 120 characters a row for the shipped
workloads, every column with --wide, and published figures one row per source and configuration."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml
from test_report import make_record, write_json

from suite.cli import main
from suite.prices.catalog import load_catalog
from suite.reporting.published import figures
from suite.reporting.published.rows import with_published
from suite.reporting.render import render
from suite.rows.build import build_rows
from suite.rows.cells import COLUMNS

TODAY = load_catalog()  # skypilot-2026
SHIPPED_WORKLOADS = (
    "dcgan64",
    "dcgan64-safe",
    "dcgan128",
    "dcgan128-safe",
    "resnet50",
    "resnet50-inat",
    "resnet18-cifar",
)
# (instance, the device name its runs record, precision): today's instances of H100, H200 and Gaudi.
MACHINES = [
    ("p5.48xlarge", "NVIDIA H100 80GB HBM3", "bf16"),
    ("p5en.48xlarge", "NVIDIA H200", "amp"),
    ("dl1.24xlarge", "GAUDI", "bf16"),
]


def shipped_records() -> list[dict]:
    """Every shipped workload on each instance, the whole instance and part of it, with every mark a
    row can carry: warnings, repeated and single runs, a failure, a diagnosis and a numerics check."""
    records = []
    for w, workload in enumerate(SHIPPED_WORKLOADS):
        for m, (instance, device, precision) in enumerate(MACHINES):
            for used, runs in ((8, 3), (1, 1)):
                for n in range(runs):
                    record = make_record(
                        123_456_789 / (w + m + 1) * (1 + n / 50),
                        workload=workload,
                        instance=instance,
                        device=device,
                        precision=precision,
                        batch=1024,
                        used=used,
                        run=f"{workload}-{instance}-{used}-{n}",
                        diagnosis="host-contention" if n == 0 else None,
                    )
                    record["warnings"] = ["windows vary widely (cv 25.3%)"] if n == 0 else []
                    record["numerics"] = {"verdict": "pass"}
                    records.append(record)
        records.append(make_record(None, status="oom", workload=workload, batch=16384, run=f"{workload}-oom"))
    # a CPU run named as a GPU instance, priced as if on it
    records.append(
        make_record(
            59_000,
            workload="dcgan64",
            backend="cpu",
            device="Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz",
            instance="p5en.48xlarge",
            precision="fp32",
            batch=16,
            used=1,
            data="synthetic",
            run="cpu",
        )
    )
    return records


def table_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("|")]


def test_the_default_table_of_the_shipped_workloads_fits_120_characters_a_row():
    rows = build_rows(shipped_records(), TODAY, price_as_if=True)
    assert len(rows) > 40 and any(r["hypothetical"] for r in rows) and any(r["status"] == "oom" for r in rows)
    lines = table_lines(render(rows, TODAY, "md"))
    assert len(lines) == len(rows) + 2
    too_wide = [line for line in lines if len(line) > 120]
    assert not too_wide, (
        f"{len(too_wide)} row(s) over 120 characters, e.g. {too_wide[0]!r} ({len(too_wide[0])})"
    )
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    assert header == [
        "#", "Workload", "Instance", "Device", "Precision", "Batch", "img/s", "$/h", "img/$", "Spot img/$", "Marks"
    ]  # fmt: skip


def test_the_published_rows_fit_too_and_collapse_their_sources(tmp_path, capsys):
    empty = tmp_path / "none"
    empty.mkdir()
    assert main(["report", str(empty), "--published"]) == 0
    text = capsys.readouterr().out
    # The figures of the workload's own recipe (Lambda's 15 GPUs) are rows of this table; the others
    # (NVIDIA's 12 on real ImageNet, no batch stated; the article's 4; Gaudi 2's 5 in tokens) have theirs.
    opening, tables = text.split("## The table")
    images, others = tables.split("## Published figures on other bases")
    lines = table_lines(images)
    assert len(lines) == 2 + 15 and all(len(line) <= 120 for line in lines), max(lines, key=len)
    lines = table_lines(others)
    assert len(lines) == 2 + 21 and all(len(line) <= 120 for line in lines), max(lines, key=len)
    assert "Language models, in tokens" not in text
    # The source is named once, its figures under it: NVIDIA's README once, not once per figure.
    assert (
        text.count("NVIDIA DeepLearningExamples, PyTorch/Classification/ConvNets/resnet50v1.5/README.md") == 1
    )
    assert text.count('Dustin Wilson, "DCGAN - Model Training Infrastructure Choices"') == 1
    assert "(nvidia-rn50-a100-80gb-x8-amp): 16,621 images/s (ResNet50 v1.5); Training performance" in text


def test_wide_has_every_column_and_the_default_its_marks_and_notes():
    rows = build_rows(shipped_records(), TODAY, price_as_if=True)
    wide = table_lines(render(rows, TODAY, "md", wide=True))[0]
    for _, _, name, _ in COLUMNS:
        assert f"| {name} |" in wide
    for conditional in ("Bottleneck", "Numerics", "Notes"):
        assert f"| {conditional} |" in wide
    text = render(rows, TODAY, "md")
    default = table_lines(text)[0]
    assert "Bottleneck" not in default and "Epoch" not in default and "Notes" not in default
    cpu = next(line for line in table_lines(text) if "Xeon" in line)
    assert "| Intel Xeon 8375C ×1 |" in cpu and "| hyp synth 1/8 " in cpu
    assert "hyp: hypothetical, measured on another device" in text and "\nNotes:\n" in text
    assert "bottleneck: host-contention" in text and "numerics check: pass" in text  # columns in --wide


def test_published_figures_are_one_row_per_source_and_configuration(tmp_path):
    source = {"citation": "A test table", "url": None, "table": "Table 1", "read": "2026-11-20"}
    figure = {
        "model": "resnet50",
        "batch": 256,
        "precision": "amp",
        "device": "NVIDIA V100 16GB",
        "count": 1,
        "throughput": 1000,
        "unit": "images/s",
        "source": source,
    }
    entries = {
        "mine": figure,
        "mine-again": {**figure, "throughput": 3_600_000, "unit": "images/hour"},  # the same figure
        "mine-fp32": {**figure, "precision": "fp32", "throughput": 400},
        "theirs": {**figure, "source": {**source, "citation": "Another table"}},
    }
    path = tmp_path / "mine.yaml"
    # written out as a person would (the reader refuses YAML aliases, which safe_dump makes of shared dicts)
    path.write_text(yaml.safe_dump(json.loads(json.dumps({"name": "mine", "figures": entries}))))
    rows = with_published([], figures.load_file(str(path)), TODAY, 1_200_000)
    assert sorted(r["published_id"] for r in rows) == ["mine, mine-again", "mine-fp32", "theirs"]
    (both,) = [r for r in rows if r["published_id"] == "mine, mine-again"]
    assert "the same figure under 2 ids: mine, mine-again" in both["notes"]
    listed = render(rows, TODAY, "md")
    assert listed.count("- A test table:") == 1 and listed.count("- Another table:") == 1


def machine_record(per_second: float, instance: str, device: str, run: str) -> dict:
    return make_record(per_second * 3600, instance=instance, device=device, precision="bf16", used=8, run=run)


def answer_text(report: str) -> str:
    """The answer section, its wrapped lines joined."""
    return " ".join(report.split("## The table")[0].split())


def row_numbers(report: str, column: int) -> dict[str, int]:
    """The table's row number by the text of one of its columns (1: Workload, 2: Instance, 5: Batch)."""
    return {line.split("|")[column + 1].strip(): int(line.split("|")[1]) for line in table_lines(report)[2:]}


def test_the_answer_names_the_fastest_and_the_cheapest_with_the_ratio_and_the_verdict(tmp_path, capsys):
    # Three runs each of an H200 and an H100 instance (Welch's test decides), one run of a Gaudi one.
    for n, noise in enumerate((1.0, 1.01, 0.99)):
        write_json(
            tmp_path / f"h200-{n}.json",
            machine_record(14_000 * noise, "p5en.48xlarge", "NVIDIA H200", f"e{n}"),
        )
        write_json(
            tmp_path / f"h100-{n}.json",
            machine_record(10_000 * noise, "p5.48xlarge", "NVIDIA H100 80GB HBM3", f"h{n}"),
        )
    write_json(tmp_path / "gaudi.json", machine_record(3_000, "dl1.24xlarge", "GAUDI", "g"))
    assert main(["report", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("## Fastest and cheapest, per workload")
    answer, number = answer_text(text), row_numbers(text, 2)
    h200, h100, gaudi = number["p5en.48xlarge"], number["p5.48xlarge"], number["dl1.24xlarge"]
    assert (
        f"Fastest: #{h200} p5en.48xlarge (H200 ×8, bf16, batch 256) at 14,000 img/s, 1.40× the next, "
        f"#{h100} (10,000 img/s): faster (Welch's t-test, 3 vs 3 runs, p = " in answer
    )
    # images per $: Gaudi 3,000 × 3600 ÷ 13.10904 = 823,859; H200 14,000 × 3600 ÷ 63.296 = 796,259
    assert (
        f"Cheapest on demand: #{gaudi} dl1.24xlarge (GAUDI ×8, bf16, batch 256) at 823,859 images per $, 1.03× "
        f"the next, #{h200} (796,259): 1 vs 3 runs: no verdict (≥ 3 a side needed)." in answer
    )
    # spot: H200 14,000 × 3600 ÷ 17.337233 = 2,907,038; Gaudi 3,000 × 3600 ÷ 4.1917 = 2,576,520
    assert f"Cheapest on spot: #{h200} at 2,907,038 images per $ on spot, 1.13× the next, #{gaudi}" in answer
    assert "Verdicts: `suite compare`'s test" in answer and "Holm's step-down correction" in answer


def test_one_run_each_gives_no_verdict_and_an_unpriced_report_says_how_to_price(tmp_path, capsys):
    write_json(tmp_path / "a.json", make_record(7_200_000, instance=None, run="a"))
    write_json(tmp_path / "b.json", make_record(3_600_000, instance=None, batch=64, run="b"))
    assert main(["report", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    answer, number = answer_text(out), row_numbers(out, 5)
    assert (
        f"Fastest: #{number['256']} no instance (V100 16GB ×1, amp, batch 256) at 2,000 img/s, 2.00× the next, "
        f"#{number['64']} batch 64 (1,000 img/s): one run each: no verdict." in answer  # named by its batch
    )
    assert (
        "Cheapest: no row is priced — no row has an instance the catalog prices: name it on the run" in answer
    )
    assert "Verdicts: none made — a verdict needs ≥ 3 runs" in answer
    assert "2 row(s) have no instance, so no prices: name it on the run (`suite run --instance NAME`" in err


def test_a_markdown_report_links_its_plots_after_the_answer(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    (tmp_path / "runs").mkdir()
    write_json(tmp_path / "runs" / "a.json", make_record(5_830_000))
    out = tmp_path / "out" / "report.md"
    out.parent.mkdir()
    assert main(["report", str(tmp_path / "runs"), "--plot", str(tmp_path / "plots"), "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert text.index("## Fastest") < text.index("![images per dollar](../plots/images_per_dollar.png)")
    assert text.index("![throughput over run](../plots/throughput_over_run.png)") < text.index("## The table")


@pytest.mark.slow  # a fresh Python
def test_the_report_imports_no_torch(tmp_path):
    write_json(tmp_path / "a.json", make_record(5_830_000))
    script = (
        "import sys; from suite.cli import main; "
        f"main(['report', {str(tmp_path)!r}, '--format', 'html', '--out', {str(tmp_path / 'p.html')!r}]); "
        f"main(['report', {str(tmp_path)!r}, '--out', {str(tmp_path / 'p.md')!r}]); "
        "print('torch' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "False"
    assert (tmp_path / "p.md").read_text(encoding="utf-8").startswith("## Fastest and cheapest")


def test_a_single_configuration_is_the_answer_alone(tmp_path, capsys):
    write_json(tmp_path / "a.json", machine_record(14_000, "p5en.48xlarge", "NVIDIA H200", "a"))
    assert main(["report", str(tmp_path)]) == 0
    answer = answer_text(capsys.readouterr().out)
    assert "at 14,000 img/s, the only configuration measured." in answer
    assert "Cheapest on demand: #1 at 796,259 images per $, the only row priced." in answer
