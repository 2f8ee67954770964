"""Reading run records back: a record file through the one bounded reader (suite/inputs/files.py, which says
what it refuses and why), its JSON through `parse_json`, every record through `schema.check_record`; a
run id counted once however many files hold it (`unique_runs`); the record files of a folder or a list of
paths (`iter_record_paths`).
"""

from __future__ import annotations

import json
import os

from suite.inputs.errors import UserError
from suite.inputs.files import NotAFile, read_text
from suite.run_record.schema import NotARecord, check_record, printable

# A record is a few KiB; a file a thousand times larger is not one (and would be read into memory).
RECORD_LIMIT = 16 * 1024 * 1024


def parse_json(text: str):
    """json.loads, with what Python's parser raises on hostile input named as "not a record"."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise NotARecord(f"not valid JSON ({error.msg} at line {error.lineno})") from None
    except RecursionError:  # the parser recurses once per level: thousands of [[[[ exhaust the stack
        raise NotARecord("nested too deeply to be a record") from None
    except ValueError as error:  # an integer of more digits than sys.get_int_max_str_digits()
        raise NotARecord(f"not a record ({str(error).split(';')[0]})") from None


def read_record(path: str) -> dict:
    try:
        text = read_text(path, RECORD_LIMIT)
    except NotAFile as error:
        raise NotARecord(str(error)) from None
    except UnicodeDecodeError as error:
        raise NotARecord(f"not UTF-8 text (byte {error.start}: {error.reason})") from None
    return check_record(parse_json(text))


def _content(record: dict) -> str:
    """A record's content, comparable: key order ignored, NaN equal to NaN (json.loads reads it)."""
    return json.dumps(record, sort_keys=True)


def unique_runs(loaded: list[tuple[str, dict]], warn) -> list[tuple[str, dict]]:
    """`loaded` ((path, checked record) pairs) with each run once: a run id is one run, however many files
    hold it (a copied folder, a record kept in two places). Copies of one record are dropped, the first
    kept, and `warn` says how many; two different records under one run id are both refused, named, since
    which one is the run cannot be told. Every reader that gathers records for a table or a comparison
    goes through here, so a run is never counted twice."""
    by_id: dict[str, list[tuple[str, dict]]] = {}
    for path, record in loaded:
        by_id.setdefault(record["run_id"], []).append((path, record))
    kept, copies, example = [], 0, None
    for run_id, found in by_id.items():
        if len(found) == 1:
            kept.append(found[0])
            continue
        if len({_content(record) for _, record in found}) > 1:
            files = ", ".join(printable(path) for path, _ in found)
            warn(
                f"skipped {len(found)} files: run id {printable(run_id)} has different records in {files} "
                "(one run id is one run; which of them it is cannot be told)"
            )
            continue
        kept.append(found[0])
        copies += len(found) - 1
        example = example or (run_id, [path for path, _ in found])
    if copies:
        run_id, paths = example
        warn(
            f"dropped {copies} duplicate record(s): a run id counts once (e.g. {printable(run_id)} in "
            f"{', '.join(printable(path) for path in paths)})"
        )
    return kept  # in the order read: each run where its first file was


def iter_record_paths(paths: list[str]):
    """JSON files named directly, or found (recursively) in named folders, in a stable order."""
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs.sort()
                for name in sorted(files):
                    # hidden names include atomic writes' leftovers (.tmp-*): never records
                    if name.endswith(".json") and not name.startswith("."):
                        yield os.path.join(root, name)
        elif os.path.lexists(path):  # a dangling link or a loop is named and skipped by the reader, with why
            yield path
        else:
            raise UserError(f"no such file or folder: {path!r}")
