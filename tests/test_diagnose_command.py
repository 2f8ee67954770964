"""`suite diagnose`'s command around its measurements: the processes' records in, the last end-to-end
record written with its verdict and the arms' run ids, or no verdict when a process failed. The
measurements and the backend's plan are stand-ins: only the command's own steps run."""

from __future__ import annotations

import types

import pytest

from suite.cli import main
from suite.commands import diagnose as diagnose_command
from suite.exploring import diagnose_arms

RATES = {"loader": [50.0, 52.0, 49.0], "compute": [100.0, 101.0, 99.0], "end_to_end": [48.0, 47.0, 49.0]}


def fake_records(failed: str | None = None) -> dict[str, list[dict]]:
    return {
        arm: [
            {
                "status": "error" if arm == failed and i == 2 else "ok",
                "run_id": f"{arm}-{i}",
                "metrics": {"images_per_second": rate},
                "data": {"workers": 1, "source": "imagefolder"},
                "config": {"precision": "fp32", "threads": 2},
            }
            for i, rate in enumerate(rates)
        ]
        for arm, rates in RATES.items()
    }


@pytest.fixture
def photos(tmp_path):
    from PIL import Image

    for label in ("a", "b"):
        (tmp_path / "photos" / label).mkdir(parents=True)
        Image.new("RGB", (40, 40), (10, 20, 30)).save(tmp_path / "photos" / label / "0.png")
    return tmp_path / "photos"


def diagnosed(monkeypatch, tmp_path, photos, records):
    from suite import run_record
    from suite.measurement import plan as planning

    written = []
    backend = types.SimpleNamespace(copies_to_device=True, precisions=("fp32", "bf16"))
    planned = planning.resolve_plan  # every value still checked; only the backend's capabilities are set here

    def plan(spec):
        real = planned(spec)
        return types.SimpleNamespace(spec=real.spec, record_config=real.record_config, backend=backend)

    monkeypatch.setattr(planning, "resolve_plan", plan)
    monkeypatch.setattr(diagnose_arms, "measure_interleaved", lambda plan, point, out, n: records)
    monkeypatch.setattr(diagnose_command.os, "cpu_count", lambda: 8)
    monkeypatch.setattr(
        run_record, "write_record_or_stop", lambda record, out: written.append(record) or f"{out}/r.json"
    )
    argv = ["diagnose", "--backend", "cpu", "--batch-size", "2", "--data", str(photos)]
    argv += ["--out", str(tmp_path / "out")]
    return main(argv), written


def test_the_last_end_to_end_record_gains_the_verdict_and_every_run_id(monkeypatch, tmp_path, photos, capsys):
    code, written = diagnosed(monkeypatch, tmp_path, photos, fake_records())
    out = capsys.readouterr().out
    assert code == 0
    [record] = written
    diagnosis = record["diagnosis"]
    assert record["run_id"] == "end_to_end-2"
    assert diagnosis["verdict"] == "input-bound"
    assert diagnosis["loader_images_per_second"] == 50.0 and diagnosis["end_to_end_images_per_second"] == 48.0
    assert diagnosis["copies_to_device"] is True
    assert diagnosis["processes"] == {"loader": 3, "compute": 3, "end_to_end": 3}
    assert diagnosis["process_images_per_second"] == RATES
    assert diagnosis["records"] == {
        "loader_only": "loader-2",
        "compute_only": "compute-2",
        "end_to_end": "end_to_end-2",
    }
    assert diagnosis["runs"] == {
        "loader_only": ["loader-0", "loader-1", "loader-2"],
        "compute_only": ["compute-0", "compute-1", "compute-2"],
        "end_to_end": ["end_to_end-0", "end_to_end-1", "end_to_end-2"],
    }
    assert set(diagnosis["ratios"]) >= {"loader_over_compute"}
    assert diagnosis["suggestions"] == [
        "try --workers 2: more decoding in parallel (these runs put the need at 2 to 3): 1 worker delivered "
        "50.0 img/s each (cores its workers kept busy not measured: this assumes decoding is CPU-bound), and "
        "compute takes 100.0 img/s",
        "try --data cache: a prepared cache skips decoding (`suite data prepare`)",
    ]
    assert out.splitlines()[0].startswith("loader only   50.0 img/s (median of 3 processes, cv")
    assert "verdict: input-bound: the loader delivers 50.0 img/s" in out
    assert out.endswith(f"record: {tmp_path / 'out'}/r.json\n")


def test_a_failed_process_gives_no_verdict(monkeypatch, tmp_path, photos, capsys):
    code, written = diagnosed(monkeypatch, tmp_path, photos, fake_records(failed="compute"))
    out = capsys.readouterr().out
    assert code == 1 and written == []
    assert out.startswith("compute only measurement failed: ")
    assert out.endswith("no verdict: every measurement must complete\n")
