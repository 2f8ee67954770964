"""What limits a loader slower than compute, read from the run's own figures: epochs too short for its
workers (the loader's figure is then its epochs' edges, not its decoding), its workers keeping their cores
busy (decoding is CPU-bound), or neither (the CPUs do not limit it). An input-bound verdict's evidence and
its worker advice (suite.diagnosis.cases) rest on this reading, never on the rates alone.

Everything here is a function of recorded numbers, so the rules are tested with numbers.
"""

from __future__ import annotations

import math
from typing import NamedTuple

# Batches an epoch per worker below which the loader's figure is partly or wholly its epochs' edges.
# PyTorch's DataLoader (torch/utils/data/dataloader.py, `_MultiProcessingDataLoaderIter._reset` and
# `_try_put_index`, persistent workers included; read in torch 2.14.1) hands an epoch's B batches out one a
# task, from worker 0 again each epoch, and nothing past the epoch's last: W workers take about
# ceil(B ÷ W) rounds of one batch's decoding an epoch, those that finish their share early wait for the
# epoch's end, and where B < W, W − B of them never get a batch (the figure is then at most B ÷ W of what
# the W decode). Against B ÷ W rounds if they ran on across epochs, the edges take up to about one round
# in B ÷ W + 1, W ÷ (B + W) of the loader's time: under a tenth, the margin of the verdict's 90 % lines,
# from B = 10 W on. The 10 is this suite's line, derived so. One worker decodes every batch in turn and
# loses no round (only the restart's round trip), so its epochs are never too short.
EPOCH_BATCHES_PER_WORKER = 10
# The data sources whose loader ends each epoch so: an image folder's DataLoader. A prepared cache's gather
# threads and a token file's sampler run on across epochs (suite/data/cache.py, token_loader.py).
EPOCH_EDGE_SOURCES = ("imagefolder",)
# Workers keep their cores busy when the host's busy cores (its CPU gauge × its logical CPUs, during the
# end-to-end run) reach this share of the workers' count: each decodes as fast as one core lets it. The
# same 80 % as a busy host (suite.diagnosis.rules's BUSY_HOST_CPU), counted on the workers' cores.
WORKERS_BUSY_SHARE = 0.80


class EpochEdges(NamedTuple):
    """An epoch too short for the loader's workers, and the folder that would measure the workers."""

    batches_per_epoch: int
    workers: int
    images: int | None  # the folder's, where recorded
    images_needed: int | None  # a folder of that many gives EPOCH_BATCHES_PER_WORKER batches a worker

    @property
    def idle_workers(self) -> int:
        """Workers that never get a batch: an epoch's batches go out from worker 0 each epoch."""
        return max(0, self.workers - self.batches_per_epoch)

    def evidence(self) -> str:
        b, w = self.batches_per_epoch, self.workers
        batches = f"{b} batch" + ("" if b == 1 else "es")
        said = f"{batches} an epoch for {w} workers (fewer than {EPOCH_BATCHES_PER_WORKER} a worker): "
        if self.idle_workers:
            return said + (
                f"the loader's figure is its epochs' edges, not its decoding: each epoch hands its {batches} to "
                f"{b} of the {w} workers and ends with them, so the figure is at most {b / w:.0%} of what "
                f"the {w} could decode"
            )
        return said + (
            "the loader's figure includes its epochs' edges: each epoch hands its batches out from the first "
            f"worker again and drains at its end, up to about {w / (b + w):.0%} of the loader's time"
        )

    def advice(self) -> str:
        needed = (
            f"at least {self.images_needed:,} images"
            if self.images_needed
            else f"{EPOCH_BATCHES_PER_WORKER} batches an epoch a worker"
        )
        held = f" (it holds {self.images:,})" if self.images else ""
        why = (
            f"{self.idle_workers} of the {self.workers} workers never get a batch, so more workers cannot help"
            if self.idle_workers
            else "worker advice from this figure would rest on the edges, not on decoding"
        )
        return (
            f"to measure the loader itself, a folder of {needed}{held}: {EPOCH_BATCHES_PER_WORKER} batches an "
            f"epoch for each of the {self.workers} workers; {why}"
        )


def epoch_edges(
    data_kind: str, workers: int, batches_per_epoch: int | None, images: int | None
) -> EpochEdges | None:
    """The run's epochs, where they are too short for its workers (None where they are not, where the
    source has no such edges, or where the record does not say its batches an epoch)."""
    if data_kind not in EPOCH_EDGE_SOURCES or workers < 2 or not batches_per_epoch:
        return None
    wanted = EPOCH_BATCHES_PER_WORKER * workers
    if batches_per_epoch >= wanted:
        return None
    # The folder grown in proportion: its images per batch (all ranks', drop_last's remainder) kept.
    needed = math.ceil(images * wanted / batches_per_epoch) if images else None
    return EpochEdges(batches_per_epoch, workers, images, needed)


def workers_busy(cores_busy: float | None, workers: int) -> bool | None:
    """Whether the workers keep their cores busy (None: no measured CPU figure, or no worker processes)."""
    if cores_busy is None or workers < 1:
        return None
    return cores_busy >= WORKERS_BUSY_SHARE * workers
