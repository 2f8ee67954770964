"""The run record: one JSON file per run, schema-versioned, written atomically. Every view (terminal
summary, report tables, plots, compare) is rendered from these records.

    schema.py   what a record is, and `check_record`: the one check every reader applies
    record.py   the record as a type: `RunRecord.from_json` (checked) and `to_json`; its parts in parts.py
    read.py     files -> checked records (`read_record`, `iter_record_paths`; `unique_runs`: a run id once)
    write.py    a new record, its id, strict JSON, atomic writes with a fallback folder
    windows.py  the timed windows' rate fields, built by one constructor, and the warnings their spread calls for

Readers ignore fields they do not know; a record of another schema version is refused, never misread.
Callers use the names below (`from suite import run_record; run_record.read_record(path)`).
"""

from suite.run_record.read import iter_record_paths, read_record, unique_runs
from suite.run_record.record import TUNE_ENV, RunRecord
from suite.run_record.schema import (
    SCHEMA,
    SCHEMA_VERSION,
    STATUSES,
    STEPS_CHOSEN_BY,
    THROUGHPUT_FIGURES,
    BadRecord,
    NotARecord,
    OtherSuiteRecord,
    check_record,
    printable,
)
from suite.run_record.write import (
    EXIT_RECORD_NOT_WRITTEN,
    FALLBACK_ENV,
    ORIGIN_ENV,
    RUN_ID_LENGTH,
    RecordNotWritten,
    Saved,
    check_out_dir,
    check_run_id,
    error_of,
    fallback_dir,
    finite_json,
    is_plain_name,
    new_record,
    new_run_id,
    note_written,
    record_json,
    save_record,
    write_record,
    write_record_or_stop,
    write_text,
    written_since,
)

__all__ = [
    "BadRecord",
    "EXIT_RECORD_NOT_WRITTEN",
    "FALLBACK_ENV",
    "NotARecord",
    "ORIGIN_ENV",
    "TUNE_ENV",
    "OtherSuiteRecord",
    "RUN_ID_LENGTH",
    "RecordNotWritten",
    "RunRecord",
    "SCHEMA",
    "SCHEMA_VERSION",
    "STATUSES",
    "STEPS_CHOSEN_BY",
    "Saved",
    "THROUGHPUT_FIGURES",
    "check_out_dir",
    "check_record",
    "check_run_id",
    "error_of",
    "fallback_dir",
    "finite_json",
    "is_plain_name",
    "iter_record_paths",
    "new_record",
    "new_run_id",
    "note_written",
    "printable",
    "read_record",
    "record_json",
    "save_record",
    "unique_runs",
    "write_record",
    "write_record_or_stop",
    "write_text",
    "written_since",
]
