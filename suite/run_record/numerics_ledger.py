"""The numerics ledger: every numerics check's verdict, kept in the suite's cache folder and keyed by the
configuration it judged, so that a verdict outlives the folder its run was written to.

A check is usually made once (`suite run --check-numerics`) and the benchmark runs come afterwards, with
`--repeat`, into another folder: read alone, those records say nothing of the check, and a precision that
failed it would be ranked and compared as if it trained the same model. `suite report` and `suite compare`
therefore consult the ledger beside the records they are given (`standing`): a configuration whose latest
check failed, by the ledger or by a record, stays marked until a later check of it passes.

Where:  $SUITE_CACHE_DIR/numerics/<key>/<checked_utc>-<pid>-<random>.json, one small file per check
        (else $XDG_CACHE_HOME/suite or ~/.cache/suite, as the suite's other caches); one file per check
        and no read-modify-write, so checks made at once by several processes never lose each other.
Key:    what makes a configuration's arithmetic (`configuration`): every field of the record's config unless
        NOT_KEYED says why it cannot change what the check judges, the device's name and its software
        (driver, CUDA, cuDNN, Habana's release and bridge, the execution mode), the versions of torch,
        torchvision and the suite, and the workload's provenance (its class, a named model's library and
        version). A field a later version adds to RunSpec is keyed until someone says why not.

The key is computed from a record-shaped mapping, so the check (before its record is written) and every
reader compute it alike from the same fields. Lives in run_record/ because both the measuring side (which
writes it) and the reporting side (which reads it) may import it.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import json
import os
import secrets

from suite import atomic

FOLDER = "numerics"
VERDICTS = ("pass", "fail", "inconclusive", "error")
# A configuration's checks are few; a ledger that grew without bound is read to its newest this many.
MOST_READ = 200
ENTRY_LIMIT = 64 * 1024  # bytes: an entry is a few hundred

NOT_KEYED = {
    "batch_size": "the check trains at its own small batch (the run's, capped at the workload's check batch)",
    "warmup_steps": "the timing schedule: the check runs its own steps",
    "steps_per_window": "the timing schedule",
    "windows": "the timing schedule",
    "threads": "how many cores compute, not in what arithmetic",
    "seed": "the check's verdict is about the precision, not one seed's draws",
    "check_numerics": "whether this run checked; the ledger holds the checks",
    "reference_backend": "where the fp32 reference ran; the verdict judges the candidate",
    "data": "the check trains on synthetic batches",
    "workers": "the loader, not the arithmetic",
    "pin_memory": "the loader, not the arithmetic",
    "prefetch": "the loader, not the arithmetic",
    "instance": "the price; the device is keyed from the record's device",
    "prices": "the price catalog",
    "accelerators_used": "how many devices; the check runs on one",
    "per_device": "how many copies run at once; each computes alike",
    "device_index": "which of identical devices",
    "profile_dir": "a profiler slows steps, it does not change them",
    "max_memory_bytes": "a memory ceiling",
    "nproc": "the check runs in one process",
    "nnodes": "the check runs in one process",
    "node_rank": "the check runs in one process",
    "rdzv_endpoint": "the check runs in one process",
    "dist_timeout_s": "the check runs in one process",
    "world_size": "the check runs in one process",
    "global_batch_size": "the check runs in one process, at its own batch",
}
DEVICE_KEYED = ("name", "driver", "cuda", "cudnn", "habana_torch_plugin", "habana_release", "execution_mode")
CONTEXT_KEYED = ("torch", "torchvision", "suite_version")
WORKLOAD_KEYED = ("class", "source", "model", "library_version")


def cache_folder() -> str:
    """The suite's cache folder (the same one as suite/measurement/counts_cache.py)."""
    return os.environ.get("SUITE_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "suite"
    )


def folder() -> str:
    return os.path.join(cache_folder(), FOLDER)


@functools.cache
def _config_defaults() -> dict:
    from suite.spec import RunSpec

    return RunSpec().to_record_config()


def configuration(record: dict) -> dict:
    """The fields of RECORD that make its configuration's arithmetic, as {"section.field": value}."""
    config = {**_config_defaults(), **(record.get("config") or {})}
    found = {f"config.{k}": v for k, v in config.items() if k not in NOT_KEYED}
    for section, names in (
        ("device", DEVICE_KEYED),
        ("context", CONTEXT_KEYED),
        ("workload", WORKLOAD_KEYED),
    ):
        part = record.get(section) if isinstance(record.get(section), dict) else {}
        found.update({f"{section}.{name}": part.get(name) for name in names})
    return found


def key(record: dict) -> str:
    text = json.dumps(configuration(record), sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def now_utc() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def when(text) -> float:
    """A record's or an entry's UTC time as seconds since the epoch (with or without a fraction); an
    unreadable one is the oldest."""
    for form in ("%Y-%m-%dT%H:%M:%S.%fZ", "%Y-%m-%dT%H:%M:%SZ"):
        try:
            moment = datetime.datetime.strptime(str(text), form)
        except ValueError:
            continue
        return moment.replace(tzinfo=datetime.timezone.utc).timestamp()
    return float("-inf")


def remember(record: dict, numerics: dict) -> str:
    """Keep one check's verdict (NUMERICS, the record's `numerics` section) under RECORD's key. Returns
    the entry's path; OSError where the cache folder cannot be written (the caller says so)."""
    checked = now_utc()
    entry = {
        "key": key(record),
        "configuration": configuration(record),
        "verdict": numerics.get("verdict"),
        "reason": numerics.get("reason"),
        "worst": numerics.get("worst"),
        "checked_utc": checked,
        "run_id": record.get("run_id"),
    }
    where = os.path.join(folder(), entry["key"])
    os.makedirs(where, exist_ok=True)
    stamp = checked.replace(":", "").replace("-", "")
    path = os.path.join(where, f"{stamp}-{os.getpid()}-{secrets.token_hex(3)}.json")
    atomic.write_atomic(path, json.dumps(entry, indent=1, sort_keys=True, default=repr))
    return path


def checks(record: dict) -> list[dict]:
    """The ledger's checks of RECORD's configuration, oldest first (none where there is no ledger). An
    entry that cannot be read, or is not one, is passed over: the ledger only ever adds a mark."""
    from suite.inputs.files import read_text

    wanted = key(record)
    where = os.path.join(folder(), wanted)
    try:
        names = sorted(n for n in os.listdir(where) if n.endswith(".json") and not n.startswith("."))
    except OSError:
        return []
    found = []
    for name in names[-MOST_READ:]:
        try:
            entry = json.loads(read_text(os.path.join(where, name), ENTRY_LIMIT))
        except (OSError, ValueError, RecursionError):
            continue
        if isinstance(entry, dict) and entry.get("verdict") in VERDICTS and entry.get("key") == wanted:
            found.append(entry)
    return sorted(found, key=lambda e: when(e.get("checked_utc")))


def ledger_checks(records: list[dict]) -> list[dict]:
    """The ledger's checks of every configuration these records are runs of (each key read once)."""
    keys, found = {}, []
    for record in records:
        keys.setdefault(key(record), record)
    for record in keys.values():
        found += checks(record)
    return found
