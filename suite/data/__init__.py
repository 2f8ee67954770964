"""Data paths for a run. Each yields ready batches `(images, labels)` on the backend's device.

`synthetic` makes one batch on the device and hands it out again and again: the compute-only ceiling,
with no loader and no host-to-device copy in the measurement.
"""

from __future__ import annotations

from suite.errors import UserError


class DataSource:
    """An endless supply of device batches, and a description of itself for the record."""

    kind = "base"

    def __iter__(self):
        raise NotImplementedError

    def describe(self) -> dict:
        return {"source": self.kind}

    def close(self) -> None:
        pass


class SyntheticData(DataSource):
    kind = "synthetic"

    def __init__(self, workload, backend, batch_size: int, seed: int = 0):
        self.batch = workload.synthetic_batch(batch_size, backend.device, seed=seed)

    def __iter__(self):
        batch = self.batch
        while True:
            yield batch

    def describe(self) -> dict:
        return {"source": self.kind, "note": "one batch made on the device and reused (compute-only ceiling)"}


def open_data(config, workload, backend, batch_size: int) -> DataSource:
    if config.data == "synthetic":
        return SyntheticData(workload, backend, batch_size, seed=config.seed)
    raise UserError(f"unknown data source {config.data!r} (accepted: synthetic)")
