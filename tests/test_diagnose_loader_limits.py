"""An input-bound verdict's evidence and advice agree with it: what its own figures say limits the loader
(epochs too short for its workers, the host's CPUs, its workers' cores, or neither), and worker advice
only where the measured figures (cores used of the cores there, each worker's rate) support it. Built
from numbers, and from the committed H200 diagnosis (results/gpu), whose verdict follows from its
figures while its old evidence ("neither is busy") and advice (`--workers 15`) did not."""

from __future__ import annotations

import json
import os

import pytest
from conftest import ROOT

from suite.diagnosis import loader_limits
from suite.diagnosis.rules import BottleneckEvidence, from_records, render, verdict

GPU = os.path.join(ROOT, "results", "gpu")
H200_RECORDS = {  # the diagnosis of 1,024 JPEGs on one H200, 8 workers: one record an arm
    "end_to_end": "20261126T210345Z-dcgan64-cuda-565bac.json",
    "compute": "20261126T210327Z-dcgan64-cuda-7b0be4.json",
    "loader": "20261126T210314Z-loader-dcgan64-cuda-81d951.json",
}
# An input-bound GPU run: compute 5x the loader; each case below changes only what it names.
RATES = {"loader_ips": 4000.0, "compute_ips": 20000.0, "end_to_end_ips": 3500.0}
TIGHT = {"loader_cv": 0.02, "compute_cv": 0.02, "end_to_end_cv": 0.02}
DEVICE = {"copies_to_device": True, "precisions": ("fp32", "amp", "bf16"), "cores": 16}


def judged(**given) -> dict:
    settings = {"workers": 8, "batches_per_epoch": 400, "images": 102_400, "telemetry_samples": 100}
    return verdict(BottleneckEvidence(**{**RATES, **TIGHT, **DEVICE, **settings, **given}))


def options(found: dict) -> dict:
    return {c["option"]: c["value"] for c in found["changes"]}


def said(found: dict) -> str:
    return "\n".join(found["evidence"] + found["suggestions"])


def h200_diagnosis() -> tuple[dict, dict]:
    records = {}
    for arm, name in H200_RECORDS.items():
        with open(os.path.join(GPU, name), encoding="utf-8") as handle:
            records[arm] = json.load(handle)
    end_to_end = records["end_to_end"]
    found = from_records(
        end_to_end,
        records["compute"],
        records["loader"],
        cores=end_to_end["context"]["cpu_cores_logical"],
        copies_to_device=True,
        precisions=("fp32", "amp", "bf16"),
    )
    return found, end_to_end


def test_the_h200_diagnosis_says_epoch_edges_and_the_folder_needed_not_more_workers():
    found, record = h200_diagnosis()
    # the verdict and its figures are the recorded ones
    assert found["verdict"] == record["diagnosis"]["verdict"] == "input-bound"
    assert found["message"] == record["diagnosis"]["message"]
    text = said(found)
    # the evidence agrees with the verdict: the CPUs measured idle, so something else limits the loader
    assert "neither is busy" not in text and "synchronisations" not in text
    assert found["evidence"][0].startswith(
        "device utilisation 10% and host CPUs 19% busy (3.1 of 16 cores, with 8 loader workers): "
        "the loader is limited by something other than the CPUs: its epochs are too short for its workers"
    )
    # 1,024 images at batch 256: 4 batches an epoch for 8 workers
    assert found["evidence"][1].startswith("4 batches an epoch for 8 workers (fewer than 10 a worker)")
    assert "hands its 4 batches to 4 of the 8 workers" in found["evidence"][1]
    assert "at most 50% of what the 8 could decode" in found["evidence"][1]
    # no worker advice; the folder that would measure the loader itself (10 batches of 256 a worker)
    assert "--workers" not in options(found)
    assert (
        "to measure the loader itself, a folder of at least 20,480 images (it holds 1,024): 10 batches an "
        "epoch for each of the 8 workers; 4 of the 8 workers never get a batch, so more workers cannot help"
    ) in found["suggestions"]
    assert options(found) == {"--data": "cache"}
    assert "next: to measure the loader itself" in render(found)


@pytest.mark.parametrize(
    "batches_per_epoch, edges", [(79, True), (80, False)], ids=["under 10 a worker", "10 a worker"]
)
def test_epochs_are_too_short_under_ten_batches_a_worker(batches_per_epoch, edges):
    found = judged(batches_per_epoch=batches_per_epoch, host_cpu_percent=50.0)
    text = said(found)
    assert ("epochs' edges" in text) is edges
    assert ("--workers" in options(found)) is not edges
    if edges:  # every worker gets batches here: the edges take a share, up to 8 / (79 + 8)
        assert "includes its epochs' edges" in text and "up to about 9% of the loader's time" in text


def test_the_folder_needed_keeps_the_images_per_batch_of_the_one_measured():
    # 1,030 images at batch 256: 4 batches (drop_last); 80 batches need 80/4 of the folder
    assert loader_limits.epoch_edges("imagefolder", 8, 4, 1030).images_needed == 20_600
    unknown = loader_limits.epoch_edges("imagefolder", 8, 4, None).advice()  # the count not recorded
    assert unknown.startswith("to measure the loader itself, a folder of 10 batches an epoch a worker")


@pytest.mark.parametrize(
    "data_kind, workers", [("cache", 8), ("tokens", 8), ("imagefolder", 1), ("imagefolder", 0)]
)
def test_no_epoch_edges_where_the_loader_runs_on_across_epochs(data_kind, workers):
    """A cache's gather threads and a token file's sampler never end an epoch; one worker decodes every
    batch in turn; with none the training process loads each batch itself."""
    assert loader_limits.epoch_edges(data_kind, workers, 4, 1024) is None


def test_workers_that_keep_their_cores_busy_get_more_workers_from_the_figures():
    # 8 workers, 8.0 of 16 cores busy: decoding is CPU-bound; 500 img/s a worker, compute 20,000
    found = judged(host_cpu_percent=50.0, device_util=20.0)
    assert found["evidence"][0].endswith(
        "the loader's workers keep their cores busy: decoding is CPU-bound, with 7 idle core(s) for more "
        "workers"
    )
    assert "(8.0 of 16 cores, with 8 loader workers)" in found["evidence"][0]
    # 40 would be needed; 16 - 8 busy leaves 8 idle, and compute's feeding thread takes one of them
    assert options(found)["--workers"] == 15
    why = next(c["why"] for c in found["changes"] if c["option"] == "--workers")
    assert "8 workers delivered 500.0 img/s each, the host keeping 8.0 of 16 cores busy" in why
    assert "compute takes 20,000.0 img/s" in why and "about 40 would be needed" in why


def test_workers_that_leave_their_cores_idle_get_no_more_workers():
    # 8 workers, 3.1 of 16 cores busy, epochs long enough: not the CPUs, not the edges
    found = judged(host_cpu_percent=19.4, device_util=10.0)
    assert "--workers" not in options(found)
    assert "neither is busy" not in said(found)
    assert found["evidence"][0].endswith(
        "the loader is limited by something other than the CPUs: it waits on storage, or on handing "
        "batches to the training process"
    )
    assert "no more workers: 8 used 3.1 of 16 cores" in said(found)
    assert "`suite loader --workers 8,16` measures whether more help" in said(found)


def test_a_host_whose_cores_are_busy_gets_no_workers_it_has_no_cores_for():
    # 95 % of 16 cores busy with 8 workers: the cores compute and the workers do not take are not idle
    found = judged(host_cpu_percent=95.0, device_util=20.0)
    assert found["evidence"][0].endswith(
        "(15.2 of 16 cores, with 8 loader workers): the device waits on the host (input pipeline), and no "
        "core left for another worker"
    )
    assert "--workers" not in options(found)
    assert "about 40 workers would be needed, and the 16 cores are taken (15.2 were busy)" in said(found)


def test_without_a_cpu_figure_the_worker_advice_says_what_it_assumes():
    # too few telemetry samples: the host's CPU use is not evidence, and the advice says so
    found = judged(host_cpu_percent=19.4, device_util=10.0, telemetry_samples=3)
    why = next(c["why"] for c in found["changes"] if c["option"] == "--workers")
    assert "8 workers delivered 500.0 img/s each (cores its workers kept busy not measured" in why
    assert found["evidence"][0].startswith("telemetry: only 3 sample(s)")


def test_an_idle_host_of_unknown_cores_is_not_called_neither_busy_on_an_input_bound_run():
    found = judged(host_cpu_percent=19.4, device_util=10.0, cores=None)
    assert found["verdict"] == "input-bound"
    assert "neither is busy" not in said(found)
    assert "the host's CPUs as a whole are not what limits the loader" in found["evidence"][0]


def test_a_compute_bound_run_with_an_idle_device_blames_the_step_not_the_loader():
    """End to end reached compute-only: a busy host and an idle device are then the step's own doing."""
    found = judged(loader_ips=60000.0, end_to_end_ips=19500.0, host_cpu_percent=90.0, device_util=40.0)
    assert found["verdict"] == "compute-bound"
    assert "input pipeline" not in said(found)
    assert found["evidence"] == [
        "device utilisation 40% while end to end reaches compute-only: the step itself leaves the device "
        "idle (synchronisations, small kernels, or a batch too small; `suite run --profile` shows which)"
    ]


def test_repeated_evidence_follows_the_same_reading():
    """`suite diagnose`'s verdict from interleaved processes: its worker advice is held to the same
    figures (here the edges of a short epoch)."""
    from suite.compare.significance import welch
    from suite.diagnosis import repeated

    rates = {
        "loader": [4000.0, 4100.0, 3900.0],
        "compute": [20000.0, 20200.0, 19800.0],
        "end_to_end": [3500.0, 3550.0, 3450.0],
    }
    decided = repeated.decide(rates, welch)
    assert decided["case"] == "input-bound"
    found = verdict(
        BottleneckEvidence(**RATES, **DEVICE, workers=8, batches_per_epoch=4, images=1024, decided=decided)
    )
    assert "--workers" not in options(found) and "at least 20,480 images" in said(found)


@pytest.mark.filterwarnings("ignore:This DataLoader will create")  # 4 workers on a 2-core host: meant
def test_an_epoch_hands_its_batches_to_the_first_workers_only():
    """The DataLoader behaviour the edges rest on, on the torch installed: 2 batches an epoch, 4
    persistent workers, two epochs: only workers 0 and 1 ever decode a batch."""
    import torch

    class WhoDecodes(torch.utils.data.Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, index):
            return torch.tensor(torch.utils.data.get_worker_info().id)

    loader = torch.utils.data.DataLoader(
        WhoDecodes(), batch_size=1, num_workers=4, persistent_workers=True, prefetch_factor=2
    )
    seen = {int(batch) for _epoch in range(2) for batch in loader}
    assert seen == {0, 1}
