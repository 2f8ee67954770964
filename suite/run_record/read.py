"""Reading run records from files: every record read goes through `schema.check_record`."""

from __future__ import annotations

import json
import os

from suite.errors import UserError
from suite.run_record.schema import NotARecord, check_record


def read_record(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except json.JSONDecodeError as error:
        raise NotARecord(f"not valid JSON ({error.msg} at line {error.lineno})") from None
    except UnicodeDecodeError as error:
        raise NotARecord(f"not UTF-8 text (byte {error.start}: {error.reason})") from None
    return check_record(data)


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
        elif os.path.exists(path):
            yield path
        else:
            raise UserError(f"no such file or folder: {path!r}")
