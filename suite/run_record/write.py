"""Making and writing run records: a new record's skeleton, its id (a plain file name), strict JSON, and
atomic writes that lose nothing measured when the folder asked for cannot take them.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import sys
import tempfile
import uuid
from dataclasses import dataclass

from suite import atomic
from suite.inputs.errors import UserError
from suite.run_record.record import ORIGIN_ENV, RunRecord  # noqa: F401 - ORIGIN_ENV: its old home

# A run id is a file name (the record's): at most this many characters, so that the record's name and its
# writer's temporary file's stay well inside a file system's 255 bytes.
RUN_ID_LENGTH = 200
_NAME_DIGEST = 12  # hex digits of the name's sha256 that stand for what a long name's id leaves out


def new_run_id(workload: str, backend: str, utc_time: str) -> str:
    """`STAMP-WORKLOAD-BACKEND-RANDOM`, a plain name of at most RUN_ID_LENGTH characters: a name too long
    for it (a long `hf:` path, a `module:factory`) keeps its head and a digest of the whole name, so that
    two long names that share a head still get ids of their own; the record names the workload in full."""
    stamp = re.sub(r"[^0-9TZ]", "", utc_time)
    # The id is a file name: anything but letters, digits, '.', '_' and '-' becomes '_'.
    name = f"{workload}-{backend}"
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name)
    room = RUN_ID_LENGTH - len(stamp) - len("--") - 6
    if len(safe) > room:
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:_NAME_DIGEST]
        safe = f"{safe[: room - _NAME_DIGEST - 1]}-{digest}"
    return f"{stamp}-{safe}-{uuid.uuid4().hex[:6]}"


def new_record(run_id: str, context: dict, config: dict) -> dict:
    """A new record as a mapping that a run fills in as it goes (`RunRecord.new`'s JSON)."""
    return RunRecord.new(run_id, context, config).to_json()


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
    """Write a report or catalog the user asked for, atomically (an existing file stays whole if the
    write fails); a path that cannot be written is their error."""
    try:
        atomic.write_atomic(path, text)
    except OSError as error:
        raise UserError(f"{option} {path!r} cannot be written: {error.strerror or error}") from None


# A run id becomes a file name: letters, digits and . _ - only, never a path separator or a dot first.
_PLAIN_NAME = re.compile(rf"[A-Za-z0-9_][A-Za-z0-9._-]{{0,{RUN_ID_LENGTH - 1}}}")


def is_plain_name(text) -> bool:
    return isinstance(text, str) and bool(_PLAIN_NAME.fullmatch(text))


def check_run_id(run_id, where: str = "run id") -> str:
    if not is_plain_name(run_id):
        raise UserError(
            f"{where} {run_id!r} is not a plain name (accepted: letters, digits, '.', '_', '-'; "
            "no path separator, not starting with a dot)"
        )
    return run_id


def finite_json(value, where: str = "", found: dict | None = None, _open: frozenset = frozenset()):
    """`value` with every NaN or infinite float replaced by None (JSON has no NaN); what was replaced is
    added to `found` as {"metrics.final_loss[0]": "nan"}."""
    if isinstance(value, float) and not math.isfinite(value):
        if found is not None:
            found[where] = "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
        return None
    if isinstance(value, (dict, list, tuple)):
        if id(value) in _open:
            raise ValueError(f"circular reference at {where or 'the top'}")
        inner = _open | {id(value)}
        if isinstance(value, dict):
            return {
                k: finite_json(v, f"{where}.{k}" if where else str(k), found, inner) for k, v in value.items()
            }
        return [finite_json(v, f"{where}[{i}]", found, inner) for i, v in enumerate(value)]
    return value


def _mapping(record: RunRecord | dict) -> dict:
    return record.to_json() if isinstance(record, RunRecord) else record


def record_json(record: RunRecord | dict) -> str:
    """The record as strict JSON: non-finite numbers become null, and `non_finite` says which and why."""
    found: dict = {}
    data = finite_json(_mapping(record), "", found)
    if found:
        data["non_finite"] = {**(data.get("non_finite") or {}), **found}
    return json.dumps(data, indent=2, sort_keys=False, default=str, allow_nan=False) + "\n"


def write_record(record: RunRecord | dict, out_dir: str) -> str:
    """Write atomically: a temporary file in the same folder, fsync, then rename over the final name."""
    record = _mapping(record)
    check_run_id(record["run_id"])
    text = record_json(record)  # before any file exists: a record that cannot be serialised leaves none
    os.makedirs(out_dir, exist_ok=True)
    final = os.path.join(out_dir, f"{record['run_id']}.json")
    atomic.write_atomic(final, text)
    note_written(final)
    return final


_WRITTEN: list[str] = []  # the records this process has written (or seen written for it), in order


def note_written(path: str) -> None:
    """PATH is a record written for this command (by it, or by the rank 0 it launched)."""
    _WRITTEN.append(path)


def written_since(count: int) -> list[str]:
    """The records written for this process since it had written COUNT (`len(written_since(0))` now)."""
    return _WRITTEN[count:]


# A record that cannot be written where asked goes here (named in the message), else to stdout.
FALLBACK_ENV = "SUITE_FALLBACK_DIR"


def fallback_dir() -> str:
    return os.environ.get(FALLBACK_ENV) or os.path.join(tempfile.gettempdir(), "suite-unsaved-records")


@dataclass
class Saved:
    """Where a record went: `path` (None: printed on stdout), and why it is not in --out (None: it is)."""

    path: str | None
    failed: str | None = None

    def warning(self, out_dir: str) -> str:
        where = f"it was written to {self.path} instead" if self.path else "it is printed on stdout instead"
        return (
            f"suite: error: the record could not be written to {out_dir!r} ({self.failed}); {where}: "
            "copy it into your results folder"
        )


class RecordNotWritten(UserError):
    """A finished measurement whose record could not be written where it was asked to go (the message
    says where it went instead); the CLI exits with EXIT_RECORD_NOT_WRITTEN."""


# `suite run` and friends exit with this when the run finished but its record is not where it was asked
# to go (it is in the fallback folder or on stdout): 1 means a failed run, 2 bad input.
EXIT_RECORD_NOT_WRITTEN = 3


def save_record(record: RunRecord | dict, out_dir: str) -> Saved:
    """Write the record to `out_dir`; when that fails (full disk, read-only or vanished folder), to the
    fallback folder; when that fails too, Saved(None): the caller prints it on stdout. Nothing measured
    is lost to a bad disk."""
    try:
        return Saved(write_record(record, out_dir))
    except OSError as error:
        why = error.strerror or str(error)
    try:
        return Saved(write_record(record, fallback_dir()), failed=why)
    except OSError:
        return Saved(None, failed=why)


def write_record_or_stop(record: RunRecord | dict, out_dir: str) -> str:
    """For commands that write records as they go (sweeps, diagnoses, loader and batch-size searches):
    the path written, or, when `out_dir` cannot take it, the record saved as save_record does and a
    RecordNotWritten naming where it went (the command stops: later records would fail alike)."""
    saved = save_record(record, out_dir)
    if saved.failed:
        if saved.path is None:
            sys.stdout.write(record_json(record))
        raise RecordNotWritten(saved.warning(out_dir).removeprefix("suite: error: "))
    return saved.path
