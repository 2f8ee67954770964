"""Result records: one JSON file per run, schema-versioned, written atomically.

Every view (terminal summary, report tables, plots) is rendered from these records. Readers ignore
fields they do not know; a record of another schema version is refused, never misread.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import uuid

from suite.errors import UserError

SCHEMA = "suite.run"
SCHEMA_VERSION = 1

STATUSES = ("ok", "diverged", "oom", "error")

# Set by a command for the runs it starts (`suite sweep` -> "sweep"): the record says which command made
# it, so a report can leave sub-runs out unless asked for.
ORIGIN_ENV = "SUITE_ORIGIN"


def new_run_id(workload: str, backend: str, utc_time: str) -> str:
    stamp = re.sub(r"[^0-9TZ]", "", utc_time)
    return f"{stamp}-{workload}-{backend}-{uuid.uuid4().hex[:6]}"


def new_record(run_id: str, context: dict, config: dict) -> dict:
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "status": "error",  # until the run says otherwise
        "error": None,
        "warnings": [],
        "origin": os.environ.get(ORIGIN_ENV) or "run",
        "context": context,
        "config": config,
        "device": {},
        "data": {},
        "metrics": {},
        "memory": {},
        "telemetry": {},
    }


def error_of(error: BaseException) -> dict:
    """An exception as a record's `error`: its type and one line of message. The first line, unless the
    message carries a traceback from another process (a loader worker's), whose last line is the cause."""
    lines = [line for line in str(error).strip().splitlines() if line.strip()]
    if not lines:
        return {"type": type(error).__name__, "message": type(error).__name__}
    carries_traceback = any(line.startswith("Traceback (most recent call last)") for line in lines)
    return {"type": type(error).__name__, "message": (lines[-1] if carries_traceback else lines[0]).strip()}


def check_out_dir(path: str) -> str:
    """Make sure records can be written to `path` before anything is measured."""
    try:
        os.makedirs(path, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=path, prefix=".suite-probe-", delete=True)
        probe.close()
    except OSError as error:
        raise UserError(f"--out {path!r} cannot be written: {error.strerror or error}") from None
    return path


def write_text(path: str, text: str, option: str = "--out") -> None:
    """Write a report or catalog the user asked for; a path that cannot be written is their error."""
    try:
        with open(path, "w") as handle:
            handle.write(text)
    except OSError as error:
        raise UserError(f"{option} {path!r} cannot be written: {error.strerror or error}") from None


def write_record(record: dict, out_dir: str) -> str:
    """Write atomically: a temporary file in the same folder, then rename over the final name."""
    os.makedirs(out_dir, exist_ok=True)
    final = os.path.join(out_dir, f"{record['run_id']}.json")
    fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as handle:
            json.dump(record, handle, indent=2, sort_keys=False, default=str)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, final)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return final


class NotARecord(ValueError):
    """A JSON file that is not a suite run record of a version this suite reads."""


class OtherSuiteRecord(NotARecord):
    """A record the suite wrote that is not a run (a batch-size search's summary, say)."""


def parse_record(data) -> dict:
    if (
        isinstance(data, dict)
        and str(data.get("schema", "")).startswith("suite.")
        and data["schema"] != SCHEMA
    ):
        raise OtherSuiteRecord(f"a {data['schema']} record, not a run record")
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise NotARecord('not a suite run record (no "schema": "suite.run")')
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise NotARecord(f"schema version {version!r}, this suite reads version {SCHEMA_VERSION}")
    return data


def read_record(path: str) -> dict:
    try:
        with open(path) as handle:
            data = json.load(handle)
    except json.JSONDecodeError as error:
        raise NotARecord(f"not valid JSON ({error.msg} at line {error.lineno})") from None
    return parse_record(data)


def iter_record_paths(paths: list[str]):
    """JSON files named directly, or found (recursively) in named folders, in a stable order."""
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs.sort()
                for name in sorted(files):
                    if name.endswith(".json") and not name.startswith("."):
                        yield os.path.join(root, name)
        elif os.path.exists(path):
            yield path
        else:
            raise UserError(f"no such file or folder: {path!r}")
