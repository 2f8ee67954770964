"""`suite diagnose`'s arms as a strategy of the grid engine: the loader alone, the model on synthetic
data (compute only) and the real run, each in fresh processes, interleaved (loader, compute, end to end,
loader, ...) so that every arm meets the same host load; the compute and end-to-end arms are grid points
(`grid.run_point`), the loader's a fresh process of its own (`loader_only.measure_in_fresh_process`)."""

from __future__ import annotations

import time

from suite import run_record
from suite.data import progress
from suite.diagnosis import repeated
from suite.exploring import grid
from suite.launching import child
from suite.measurement import loader_only


def measure_interleaved(plan, point, out_dir: str, processes: int) -> dict[str, list[dict]]:
    """Each arm in PROCESSES fresh processes, interleaved (loader, compute, end to end, loader, ...): the
    loader alone, the model on synthetic data and the real run, each said as it starts and ends, with
    the time the rest should take from the second round on."""
    config = point.config
    compute_point = grid.Point(
        0, {"data": "synthetic"}, [*point.argv, "--data", "synthetic"], {**config, "data": "synthetic"}
    )

    def loader(_round: int) -> dict:
        record = loader_only.measure_in_fresh_process(
            config,
            # None where the backend grows a training window from warm-up timing (or fits its windows to
            # a time box): the loader grows its own windows from the backend's default schedule
            # (suite/data/loader_bench.py).
            batches=config["steps_per_window"] or plan.backend.schedule.steps_per_window,
            windows=config["windows"] or plan.backend.schedule.windows,
            warmup=config["warmup_steps"],
            origin="diagnose",
        )
        run_record.write_record_or_stop(record, out_dir)
        return record

    measure = {
        "loader": loader,
        "compute": lambda _round: grid.run_point(compute_point, out_dir, origin="diagnose"),
        "end_to_end": lambda _round: grid.run_point(point, out_dir, origin="diagnose"),
    }
    total, started = processes * len(measure), time.monotonic()
    done = [0]
    names = repeated.ARM_NAMES

    def said(round_: int, arm: str, record: dict) -> None:
        done[0] += 1
        took = time.monotonic() - started
        left = f"; {progress.about(took / done[0] * (total - done[0]))} left" if done[0] < total else ""
        child.log(
            f"{done[0]}/{total} {names[arm]} (round {round_ + 1}/{processes}): {child.describe(record)} "
            f"({progress.seconds(took)} so far{left})"
        )

    child.log(
        f"{total} fresh processes: {', '.join(names.values())}, interleaved, {processes} round(s); a verdict "
        "only where their run-to-run intervals separate"
    )
    return repeated.measure_interleaved(
        measure, processes, ok=lambda record: record.get("status") == "ok", said=said
    )
