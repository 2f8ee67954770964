"""`suite scale`'s process counts as a strategy of the grid engine: one point per count, each a fresh
`suite run --nproc N` (its own torchrun: nothing carries over between counts) under a run id chosen here,
`…-<backend>-n<N>-…`, so that each count's record is named by its count.

Every count is checked before the first runs (`grid.resolve`: bad input is one line, exit 2). Every count
runs, none is taken from the folder: a scaling table compares counts measured one after another on one
machine. A count whose child left no record is said on stderr with its last words and is no file in the
folder, which holds only the runs' own records.
"""

from __future__ import annotations

import os

from suite import run_record
from suite.exploring import grid
from suite.inputs import errors
from suite.launching import child

# The variable a `suite run --nproc` parent takes its run id from (distributed.launcher_run_id).
RUN_ID_ENV = "SUITE_RUN_ID"
# `suite run`'s status for bad input: the same at every count, so the command stops with it.
EXIT_USER_ERROR = 2


def count_points(counts: list[int], argv_of, workload: str, backend: str, utc_time: str) -> list[grid.Point]:
    """One point per process count, resolved: `argv_of(count)` gives its `suite run` options; its run id
    names the workload, the backend as given and the count, stamped with UTC_TIME (one for every count)."""
    points = []
    for index, count in enumerate(counts):
        run_id = run_record.new_run_id(workload, f"{backend}-n{count}", utc_time)
        points.append(grid.Point(index, {"nproc": str(count)}, argv_of(count), env={RUN_ID_ENV: run_id}))
    grid.resolve(points, name_points=False)
    return points


def run_counts(points: list[grid.Point], out_dir: str) -> dict[int, dict] | None:
    """Run each count in turn; count -> its record (a failure record, not written, for a child that left
    none). None where a child refused its input: the command then stops with exit 2."""
    records = {}
    for point in points:
        count = int(point.knobs["nproc"])
        child.log(f"suite scale: {count} process{'es' if count > 1 else ''} …")
        record = grid.run_point(point, out_dir, origin="scale", keep_failure=False)
        if refused_input(record):
            return None
        records[count] = record
        run_id = point.env[RUN_ID_ENV]
        if record.get("run_id") == run_id:  # the run's own record (a failure made here has an id of its own)
            path = os.path.join(out_dir, f"{run_id}.json")
            child.log(f"  {record['status']}, record {errors.shown_path(path)}")
    return records


def refused_input(record: dict) -> bool:
    """The child ended with `suite run`'s status for bad input, leaving no record."""
    error = record.get("error") or {}
    return error.get("type") == "ChildFailed" and error.get("exit_status") == EXIT_USER_ERROR
