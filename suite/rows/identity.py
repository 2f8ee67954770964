"""Which runs are one row of a report: a row's identity, built from a record by rule (every field
that can change a rate is keyed unless its reason for not mattering is written here), the key made from
it, `--pool` fields to pool across, and the non-default settings a row names. `suite compare` matches a
baseline with a candidate by the same `row_key`.
"""

from __future__ import annotations

import functools

from suite.backends import declared
from suite.run_record.facts import accelerators_used, data_path

# Knobs beyond the table's columns that change a number (fields of the record's config; the loader's three are read
# from what actually ran, in record["data"]). Runs that differ in any of them are not one configuration.
# They are the suite's own, and every backend option declared as changing one.
SETTING_FIELDS = (
    "threads",
    *declared.setting_fields(),
    "nnodes",
    "model_overrides",
    "num_classes",
    "image_size",
    "per_device",
    "grad_accum",  # a step of N micro-batches: an optimizer step per N batches changes the rate
    "activation_checkpointing",  # a recomputed forward costs time for memory
    "fsdp",  # sharded parameters are gathered for each block's forward and backward: communication for memory
)
LOADER_FIELDS = ("workers", "pin_memory", "prefetch")

# -- what a row is ------------------------------------------------------------------------------------
#
# Two runs are one row only when nothing that can change their number differs. The key is built from the
# record by rule, not by picking fields: every field of the `context`, `device`, `data` and `workload`
# sections is in the key unless it is listed below with the reason it cannot change a rate, so a field a
# later version adds splits rows (the safe side) until someone says why it may not. From `config`, the
# fields in the key are the table's columns, SETTING_FIELDS and CONFIG_KEYED; every other field of the record's config
# is in CONFIG_NOT_KEYED with its reason (tests check that the two cover it: RunSpec.to_record_config).

# The table's own columns, and what decides a price (a row is priced as one instance).
CONFIG_KEYED = (
    "workload",
    "backend",
    "precision",
    "batch_size",
    "world_size",
    "instance",
    "accelerators_used",
    "hpu_bf16_ops",
    "hpu_fp32_ops",
)
CONFIG_NOT_KEYED = {
    "seed": "the random seed changes the numbers drawn, not the work per image",
    "warmup_steps": "the measurement's schedule, not the configuration (its noise shows as within-run spread)",
    "steps_per_window": "the measurement's schedule, not the configuration",
    "windows": "the measurement's schedule, not the configuration",
    "data": "as typed; what ran is in the data section (path, images, sizes)",
    "workers": "as typed; what ran is data.workers",
    "pin_memory": "as typed; what ran is data.pin_memory",
    "prefetch": "as typed; what ran is data.prefetch",
    "prices": "the catalog a run was checked against prices it, it does not change its rate",
    "device_index": "which of identical devices ran it",
    "profile_dir": "a profiled run is shown apart, never pooled",
    "max_memory_bytes": "a ceiling that turns a run into an out-of-memory failure, not a rate",
    "nproc": "processes per node: world_size and nnodes hold what ran",
    "node_rank": "this node's rank, not the configuration",
    "rdzv_endpoint": "where ranks meet, not what they compute",
    "dist_timeout_s": "a bound on waiting, not on computing",
    "global_batch_size": "batch_size × world_size, both in the key",
    "check_numerics": "the check runs after the timed windows and changes no figure; its verdict is a column",
    "reference_backend": "where the numerics reference ran, after the timed windows",
}
# Per section: the fields that cannot change a rate, and why. Everything else in the section is keyed.
NOT_KEYED = {
    "context": {
        "host": "the machine's name: two machines alike are one configuration (the CPU model and cores are keyed)",
        "python_executable": "where Python is installed",
        "utc_time": "when it ran: what changes over time (versions, hardware) is keyed itself",
        "git_commit": "a checkout's commit; the suite's version is keyed",
        "ram_bytes": "memory size decides what fits, not the rate of what ran",
        "os": "the kernel seldom changes a training rate; devices and library versions are keyed",
        "platform": "the kernel seldom changes a training rate; devices and library versions are keyed",
        "instance_source": "what the machine says it is (its DMI product name): the instance priced is keyed "
        "from config, the hardware from device and context",
        # The host's load as the run started: a condition of the measurement, not the configuration
        # (`suite compare` weighs it beside its verdicts).
        **{
            f"load.{name}": "the host's load as the run started, not the configuration"
            for name in (
                "logical_cpus",
                "sample_s",
                "load_average_1m",
                "load_average_5m",
                "others_cpu_percent",
                "cpu_mhz",
                "cpu_max_mhz",
            )
        },
        # The CPU this run got in its timed windows (suite.measurement.cpu_share): a condition too.
        **{
            f"load.{name}": "the CPU the run got in its windows, a condition of the measurement"
            for name in ("own_cpu_cores", "own_cpu_percent")
        },
    },
    "device": {
        "backend": "the backend is keyed from config",
        "index": "which of identical devices ran it",
        "peak_tflops": "a datasheet figure derived from the device name and precision",
        "peak_tflops_note": "where the datasheet figure came from",
        "optimizers": "which optimizer classes were built: follows from the backend and its settings",
        "execution_mode_source": "where the execution mode came from; the mode itself is keyed",
        "threads_reason": "why the thread count; the count itself is keyed",
        "cores": "which of the machine's cores the process may use; how many it computes on is keyed (threads)",
    },
    "data": {
        "rank": "this process's share, not the data set",
        "world_size": "keyed from config",
        "batches_per_epoch": "images ÷ batch, both keyed",
        "note": "a description",
        "ignored": "the warning about loader options given to synthetic data: they change nothing that ran",
        "cache.created_utc": "when the cache was made; its source and fingerprint are keyed",
    },
    "workload": {
        "description": "a description; the name is keyed from config",
        "name": "keyed from config",
    },
}
# Sections of a record that hold results, never identity.
RESULT_SECTIONS = (
    "schema",
    "schema_version",
    "run_id",
    "status",
    "error",
    "warnings",
    "metrics",
    "memory",
    "telemetry",
    "diagnosis",
    "ranks",
    "profile",
    "backend_choice",
    "kind",
    "origin",
    "sweep_point",
    "tune",
)


@functools.cache  # a report reads it for every field of every record
def _config_defaults() -> dict:
    from suite.spec import RunSpec

    return RunSpec().to_record_config()


def _normal_config(name: str, value, record: dict):
    """A config value as it ran, with defaults filled in, so that spelling a default or leaving it out
    gives one row (nnodes null and nnodes 1 are one node)."""
    if name == "threads":
        # What ran: the backend records the threads compute used (None: torch's default, the cores).
        ran = (record.get("device") or {}).get("threads")
        return ran if ran is not None else value
    if name == "nnodes":
        return int(value or 1)
    if name == "world_size":
        return int(value or 1)
    if name == "accelerators_used" and value is None:
        return accelerators_used(record)
    default = _config_defaults().get(name)
    if value in (None, {}) or value == default:
        return default if default not in (None, {}) else None
    return value


def _hashable(value):
    if isinstance(value, dict):
        return tuple(sorted((str(k), _hashable(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    return value


def row_identity(record: dict) -> dict:
    """Everything in a record that can change its number, as {"section.field": value}, defaults
    normalised. Two runs with the same identity are repeats of one configuration."""
    config = record.get("config") or {}
    identity = {}
    for name in dict.fromkeys((*CONFIG_KEYED, *SETTING_FIELDS)):
        if name not in CONFIG_NOT_KEYED:  # the reasons win: a setting that cannot change a rate is not keyed
            identity[f"config.{name}"] = _normal_config(name, config.get(name), record)
    identity["data.source"] = data_path(record)  # a record without a data section: what was asked for
    for section, not_keyed in NOT_KEYED.items():
        for name, value in sorted((record.get(section) or {}).items()):
            if name in not_keyed:
                continue
            if isinstance(value, dict):  # one level down (data.cache.source_fingerprint), same rule
                for sub, inner in sorted(value.items()):
                    if f"{name}.{sub}" not in not_keyed:
                        identity[f"{section}.{name}.{sub}"] = inner
            else:
                identity[f"{section}.{name}"] = value
    return identity


def row_key(record: dict, pool: tuple[str, ...] = ()) -> tuple:
    """What makes two runs the same configuration (one row). `pool` names identity fields
    ("context.torch") to pool across: runs that differ only there share a row, and the row says so."""
    return tuple((name, _hashable(value)) for name, value in row_identity(record).items() if name not in pool)


def pool_fields(names: list[str], records: list[dict]) -> tuple[str, ...]:
    """`--pool` names, full ("context.torch") or short ("torch"), as identity fields; unknown ones refused."""
    from suite.inputs.errors import UserError

    known = sorted({name for record in records for name in row_identity(record)})
    chosen = []
    for name in names:
        matches = [k for k in known if k == name or k.split(".", 1)[1] == name]
        if not matches:
            raise UserError(f"--pool {name!r} is not a field of the row key (known: {', '.join(known)})")
        chosen += matches
    return tuple(dict.fromkeys(chosen))


def setting_values(record: dict) -> list[tuple[str, object]]:
    """The non-default knobs of a run as (field, value): the config's SETTING_FIELDS that differ from a
    default run's, then the loader's three as they ran (the data section holds them for real data)."""
    defaults = _config_defaults()
    config, data = record["config"], record.get("data") or {}
    found = []
    for name in SETTING_FIELDS:
        value = _normal_config(name, config.get(name), record)
        if name == "threads":
            if config.get("threads") is not None:  # asked for: say so (torch's default is not a setting)
                found.append((name, value))
        elif name == "nnodes":
            if value != 1:
                found.append((name, value))
        elif value not in (defaults.get(name), None, {}):
            found.append((name, value))
    found += [(name, data[name]) for name in LOADER_FIELDS if data.get(name) is not None]
    return found


def settings(record: dict) -> tuple[str, ...]:
    """The non-default knobs of a run, as `name=value` (e.g. `workers=4`, `channels_last=True`): the form
    `suite compare --by` names them in. A report says them in words (labels.py)."""
    return tuple(f"{name}={value}" for name, value in setting_values(record))
