"""`suite compare` reads the runs `suite report` reads (sub-runs out unless included), `--by` pairs on a
config field that the device section repeats, and a folder of sub-runs alone is reported as what it is."""

from __future__ import annotations

import os
import statistics

from test_compare import record, write_side

from suite import run_record
from suite.cli import main
from suite.compare import comparison as compare
from suite.rows.gather import chosen_records, load_records

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(os.path.dirname(HERE), "results")


def gpu_side(rates, prefix, *, origin="run", **config) -> list[tuple[str, dict]]:
    """Runs as the CUDA backend records them: the device section repeats the knobs it applied."""
    loaded = []
    for i, rate in enumerate(rates):
        rec = record(rate, f"{prefix}{i}", backend="cuda", **config)
        rec["device"] = {
            "name": "NVIDIA H200",
            "count": 1,
            "tf32": bool(config.get("tf32")),
            "channels_last": bool(config.get("channels_last")),
            "compile": False,
            "grad_scaler": config.get("precision") == "amp",
        }
        rec["origin"] = origin
        loaded.append((f"{prefix}/{i}.json", rec))
    return loaded


def test_by_pairs_a_setting_the_device_section_repeats():
    base = gpu_side([100, 101, 99], "a", channels_last=False)
    cand = gpu_side([190, 192, 189], "c", channels_last=True)
    assert compare.compare(base, cand)["comparisons"] == []  # another setting, another configuration
    (comparison,) = compare.compare(base, cand, by="channels_last")["comparisons"]
    values = comparison["baseline"]["value"], comparison["candidate"]["value"]
    assert values == ("channels_last=False", "channels_last=True")
    assert comparison["metrics"]["images_per_second"]["verdict"] == "faster"
    (comparison,) = compare.compare(
        gpu_side([100, 101, 99], "a", tf32=False), gpu_side([300, 302, 299], "c", tf32=True), by="tf32"
    )["comparisons"]
    assert comparison["candidate"]["value"] == "tf32=True"


def test_by_precision_pairs_amp_whose_grad_scaler_the_device_section_records():
    base = gpu_side([100, 101, 99], "a", precision="bf16")
    cand = gpu_side([110, 111, 109], "c", precision="amp")
    (comparison,) = compare.compare(base, cand, by="precision")["comparisons"]
    assert (comparison["baseline"]["value"], comparison["candidate"]["value"]) == (
        "precision=bf16",
        "precision=amp",
    )


def test_compare_leaves_out_the_sub_runs_report_leaves_out(tmp_path, capsys):
    base, cand = tmp_path / "base", tmp_path / "cand"
    write_side(base, [100, 101, 99], "a")
    diagnose = record(10, "d")  # a diagnose run of the same configuration, 10× slower on purpose
    diagnose["origin"] = "diagnose"
    run_record.write_record(diagnose, str(base))
    write_side(cand, [100, 102, 98], "c")
    assert main(["compare", str(base), str(cand), "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert "baseline: left out 1 sub-run record(s) (1 diagnose): --include diagnose" in captured.err
    assert '"runs": 3' in captured.out and "run-d" not in captured.out
    assert main(["compare", str(base), str(cand), "--format", "json", "--include", "diagnose"]) == 0
    assert "run-d" in capsys.readouterr().out
    assert main(["compare", str(base), str(cand), "--include", "nope"]) == 2
    assert "--include 'nope' is not a kind of sub-run" in capsys.readouterr().err


def test_the_committed_h200_baseline_is_the_reports_two_runs():
    """Found 5 of issue 51: compare counted a `suite diagnose` run in the dcgan64 amp baseline (3 runs,
    median 21,853 img/s) where report leaves it out (2 runs, 24,004)."""
    said = []
    base = chosen_records([os.path.join(RESULTS, "gpu")], None, said.append)
    cand = chosen_records([os.path.join(RESULTS, "gpu-2026-11-27")], None, said.append)
    assert said == ["left out 2 sub-run record(s) (2 diagnose): --include diagnose reports them"]
    result = compare.compare(base, cand)
    (dcgan_amp,) = [
        c
        for c in result["comparisons"]
        if c["configuration"].startswith("dcgan64 · cuda (NVIDIA H200) · batch 256 · amp ·")
    ]
    assert dcgan_amp["baseline"]["runs"] == 2
    assert round(statistics.median(dcgan_amp["baseline"]["images_per_second"])) == 24_004
    by_channels_last = compare.compare(base, cand, by="channels_last")["comparisons"]
    assert any(
        c["baseline"]["value"] == "channels_last=False" and c["candidate"]["value"] == "channels_last=True"
        for c in by_channels_last
    )
    by_tf32 = compare.compare(base, cand, by="tf32")["comparisons"]
    assert any(
        c["baseline"]["value"] == "tf32=False" and c["candidate"]["value"] == "tf32=True" for c in by_tf32
    )


def test_a_folder_of_sub_runs_alone_is_reported_as_such(tmp_path, capsys):
    folder = tmp_path / "sweep"
    for batch, rate in ((2, 1.0), (4, 2.0)):
        point = record(rate, f"b{batch}", batch_size=batch)
        point["origin"] = "sweep"
        run_record.write_record(point, str(folder))
    assert main(["report", str(folder)]) == 0
    captured = capsys.readouterr()
    assert "only sub-run records here (2 sweep): reported as such" in captured.err
    assert "run-b2" in captured.out and "run-b4" in captured.out
    assert "sub-runs: 1 sweep point(s) made by `suite sweep`" in captured.out
    # compare of such folders reads them too (the same runs both sides: nothing to compare, not exit 2)
    assert main(["compare", str(folder), str(folder)]) == 0
    assert "only sub-run records here (2 sweep)" in capsys.readouterr().err
    # --include given: the person chose, and a sweep's points are not what was chosen
    assert main(["report", str(folder), "--include", "probes"]) == 2
    assert "no suite run records found" in capsys.readouterr().err
    assert len(load_records([str(folder)])) == 2
