"""The gauge reader a backend hands the runner's telemetry (`Backend.telemetry_samplers`).

It lives with the backends, below the measurement that drives it, so that a backend's sampler
(NVML, pyhlml) never imports the measuring code."""

from __future__ import annotations


class Sampler:
    """Reads gauges. `open()` once (SDK init), `sample()` many times, `close()` once."""

    name = "sampler"

    def open(self) -> None:
        pass

    def sample(self) -> dict[str, float]:
        raise NotImplementedError

    def counters(self) -> dict[str, float]:
        """Cumulative counters (e.g. energy in J), read at each window edge; names carry units."""
        return {}

    def close(self) -> None:
        pass
