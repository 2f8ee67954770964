"""`--per-device`: each copy pinned to its own device by the backend, one record with each rate and the
sum, and a report that prices the whole instance from it (and shows measured ÷ extrapolated scaling)."""

from __future__ import annotations

import os

import pytest
from suite.backends import backend_class

from suite import run_record
from suite.inputs.errors import UserError
from suite.launching import per_device
from suite.prices.catalog import load_catalog
from suite.reporting.render import render
from suite.rows.build import build_rows
from suite.spec import RunSpec

SEED = load_catalog("seed-2022")


# -- pinning, a backend verb ------------------------------------------------------------------------


def test_cpu_pins_each_copy_to_its_own_core_group(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3, 4})
    cpu = backend_class("cpu")(RunSpec().replace(backend="cpu"))
    assert cpu.pin_envs(2) == [
        {"SUITE_CPU_CORES": "0,1", "OMP_NUM_THREADS": "2"},
        {"SUITE_CPU_CORES": "2,3", "OMP_NUM_THREADS": "2"},
    ]
    assert [env["SUITE_CPU_CORES"] for env in cpu.pin_envs(5)] == ["0", "1", "2", "3", "4"]
    with pytest.raises(UserError, match=r"--per-device 6: only 5 core\(s\) to divide"):
        cpu.pin_envs(6)


def test_cpu_copy_runs_one_thread_per_core_of_its_group(monkeypatch):
    monkeypatch.setenv("SUITE_CPU_CORES", "0")
    assert backend_class("cpu")(RunSpec().replace(backend="cpu")).spec.threads == 1  # recorded as what ran
    assert backend_class("cpu")(RunSpec().replace(backend="cpu", threads=3)).spec.threads == 3  # asked for
    monkeypatch.delenv("SUITE_CPU_CORES")
    assert backend_class("cpu")(RunSpec().replace(backend="cpu")).spec.threads is None


def test_cuda_pin_wiring_one_visible_gpu_each(fake_gpu, monkeypatch):
    fake_gpu.count = 4
    cuda = backend_class("cuda")(RunSpec().replace(backend="cuda"))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert cuda.pin_envs(4) == [{"CUDA_VISIBLE_DEVICES": str(i)} for i in range(4)]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "5,7")  # what this process may use is divided, not widened
    assert cuda.pin_envs(2) == [{"CUDA_VISIBLE_DEVICES": "5"}, {"CUDA_VISIBLE_DEVICES": "7"}]
    with pytest.raises(UserError, match=r"--per-device 3: only 2 GPU\(s\) visible \(5, 7\)"):
        cuda.pin_envs(3)
    with pytest.raises(UserError, match="--device-index cannot be combined with --per-device"):
        backend_class("cuda")(RunSpec().replace(backend="cuda", device_index=0)).pin_envs(2)


def test_hpu_pin_wiring_one_module_each(monkeypatch, tmp_path):
    from suite.backends import hpu, presence

    for i in range(8):
        (tmp_path / f"hl{i}").touch()  # stand-in device nodes, counted without importing the bridge
    monkeypatch.setattr(presence, "DEVICE_NODE_GLOBS", (str(tmp_path / "hl[0-9]*"),))
    monkeypatch.delenv("HABANA_VISIBLE_MODULES", raising=False)
    gaudi = hpu.HPUBackend(RunSpec().replace(backend="hpu", hpu_mode="eager"))
    assert gaudi.pin_envs(8) == [{"HABANA_VISIBLE_MODULES": str(i)} for i in range(8)]
    monkeypatch.setenv("HABANA_VISIBLE_MODULES", "4,5,6,7")
    assert gaudi.pin_envs(2) == [{"HABANA_VISIBLE_MODULES": "4"}, {"HABANA_VISIBLE_MODULES": "5"}]
    with pytest.raises(UserError, match=r"only 4 Gaudi module\(s\) visible"):
        gaudi.pin_envs(5)


def test_per_device_refuses_collectives_and_too_many_copies():
    with pytest.raises(UserError, match="cannot be combined with --nproc"):
        per_device.check(RunSpec().replace(nproc=2), 2)
    with pytest.raises(UserError, match=r"--per-device 4: p3.2xlarge has 1 accelerator\(s\)"):
        per_device.check(RunSpec().replace(instance="p3.2xlarge", prices="seed-2022"), 4)
    with pytest.raises(UserError, match="--per-device must be 2 or more"):
        per_device.check(RunSpec(), 1)
    per_device.check(RunSpec().replace(instance="p3.8xlarge", prices="seed-2022"), 4)  # four V100s: fine


# -- one record from the copies ------------------------------------------------------------------------


def copy_record(rate, run, status="ok", timed_s=10.0, **config) -> dict:
    values = {"workload": "dcgan64", "backend": "cuda", "batch_size": 64, "precision": "amp", **config}
    record = run_record.new_record(f"copy-{run}", {"utc_time": "2026-01-01T00:00:00Z"}, values)
    record.update(
        status=status, device={"name": "Tesla V100-SXM2-16GB", "count": 1}, data={"source": "synthetic"}
    )
    if status == "ok":
        record["metrics"] = {
            "images_per_second": rate,
            "images_per_hour": rate * 3600,
            "time_timed_s": timed_s,
        }
    else:
        record["error"] = {"type": "OutOfMemoryError", "message": "CUDA out of memory"}
    return record


CTX = {"utc_time": "2026-01-01T00:00:00Z"}


def test_combine_records_each_rate_and_their_sum():
    copies = [
        (copy_record(100.0, 0), {"CUDA_VISIBLE_DEVICES": "0"}, 1000.0),
        (copy_record(90.0, 1), {"CUDA_VISIBLE_DEVICES": "1"}, 1000.5),
    ]
    record = per_device.combine({}, copies, CTX)
    assert record["status"] == "ok"
    assert record["metrics"]["images_per_second"] == pytest.approx(190.0)
    assert record["metrics"]["images_per_second_per_device"] == [100.0, 90.0]
    assert record["config"]["per_device"] == 2 and record["config"]["accelerators_used"] == 2
    assert [d["pin"] for d in record["per_device"]["devices"]] == [
        {"CUDA_VISIBLE_DEVICES": "0"},
        {"CUDA_VISIBLE_DEVICES": "1"},
    ]
    assert record["per_device"]["timed_overlap"] == pytest.approx(0.95)
    assert not record["warnings"]
    run_record.check_record(record)  # a valid run record


def test_combine_warns_when_copies_were_not_timed_side_by_side():
    copies = [
        (copy_record(100.0, 0, timed_s=10.0), {}, 1000.0),
        (copy_record(100.0, 1, timed_s=10.0), {}, 1006.0),  # timed 996 … 1006: overlaps 4 s of 10
    ]
    record = per_device.combine({}, copies, CTX)
    assert per_device.timed_overlap([(1000.0, 10.0), (1006.0, 10.0)]) == pytest.approx(0.4)
    assert any("overlapped for only 40%" in w for w in record["warnings"])


def test_a_failed_copy_fails_the_record_and_names_the_copy():
    copies = [(copy_record(100.0, 0), {}, 1.0), (copy_record(None, 1, status="oom"), {}, 1.0)]
    record = per_device.combine({}, copies, CTX)
    assert record["status"] == "oom"
    assert record["error"]["message"] == "copy 1 of 2: CUDA out of memory"
    assert record["metrics"] == {} and record["per_device"]["images_per_second_sum"] is None


# -- the report: measured, not extrapolated ------------------------------------------------------------


def test_report_prices_the_whole_instance_from_the_per_device_record_and_shows_scaling():
    single = [copy_record(rate, f"s{rate}", instance="p3.8xlarge") for rate in (100.0, 101.0, 99.0)]
    for record in single:
        record["device"]["count"] = 4  # a one-GPU run on the four-GPU instance
    copies = [
        (copy_record(rate, i, instance="p3.8xlarge"), {}, 1000.0) for i, rate in enumerate((95, 90, 92, 93))
    ]
    whole = per_device.combine({}, copies, CTX)
    rows = build_rows([*single, whole], SEED, extrapolate=True)
    by_kind = {bool(r["measured_scaling"]): r for r in rows}
    measured, one = by_kind[True], by_kind[False]
    assert measured["images_per_hour"] == pytest.approx(370 * 3600)
    assert measured["extrapolated_factor"] is None  # used all 4 of 4: nothing to extrapolate
    assert measured["images_per_usd"] == pytest.approx(370 * 3600 / 12.24)
    assert measured["measured_scaling"] == pytest.approx(370 / (100 * 4))
    assert "MEASURED on 4 devices at once" in "; ".join(measured["notes"])
    # the one-device row is not extrapolated when the whole instance was measured
    assert one["extrapolated_factor"] is None and one["images_per_hour"] == pytest.approx(100 * 3600)
    assert "not extrapolated: the --per-device row measured the whole instance" in one["notes"]
    text = render(rows, SEED, "md", wide=True)
    assert "| Measured scaling |" in text.splitlines()[0]
    assert "| 92% |" in text


def test_report_without_a_twin_extrapolates_as_before_and_has_no_scaling_column():
    single = copy_record(100.0, "s", instance="p3.8xlarge")
    rows = build_rows([single], SEED, extrapolate=True)
    assert rows[0]["extrapolated_factor"] == 4 and rows[0]["measured_scaling"] is None
    assert "Measured scaling" not in render(rows, SEED, "md")


# -- for real, on the CPU --------------------------------------------------------------------------------


@pytest.mark.slow  # trains in child processes
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 cores to pin two copies apart")
def test_per_device_2_on_the_cpu_records_two_pinned_rates_and_their_sum(tmp_path, capsys):
    from conftest import TINY_RUN, only_record

    from suite.cli import main

    # No --threads: each copy's thread count must come from its own group of cores (one core: one thread).
    i = TINY_RUN.index("--threads")
    unthreaded = TINY_RUN[:i] + TINY_RUN[i + 2 :]
    assert main([*unthreaded, "--per-device", "2", "--out", str(tmp_path)]) == 0
    record = only_record(tmp_path)  # the copies' own records are not in the results folder
    devices = record["per_device"]["devices"]
    assert record["status"] == "ok" and len(devices) == 2
    cores = [d["device"]["cores"] for d in devices]
    assert len(cores[0]) == len(cores[1]) == 1 and cores[0] != cores[1]  # each copy on its own core
    assert [d["device"]["threads"] for d in devices] == [1, 1]
    rates = record["metrics"]["images_per_second_per_device"]
    assert all(rate > 0 for rate in rates)
    assert record["metrics"]["images_per_second"] == pytest.approx(sum(rates))
    assert record["config"]["per_device"] == 2 and record["config"]["threads"] == 1
    assert "copy 1" in capsys.readouterr().out
    (row,) = build_rows([record], SEED, extrapolate=True)
    assert row["extrapolated_factor"] is None and row["images_per_hour"] == pytest.approx(sum(rates) * 3600)
    assert "MEASURED on 2 devices at once" in "; ".join(row["notes"])


def test_per_device_more_copies_than_cores_is_one_line_exit_2(tmp_path, capsys):
    from suite.cli import main

    too_many = str(len(os.sched_getaffinity(0)) + 1)
    assert main(["run", "--backend", "cpu", "--per-device", too_many, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"suite: error: --per-device {too_many}: only") and "Traceback" not in err
    assert not os.listdir(tmp_path)  # nothing started, nothing written
