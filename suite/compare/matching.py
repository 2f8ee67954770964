"""Which baseline runs meet which candidate runs in `suite compare`: configurations are matched by the
report's own row key, so `suite compare` and `suite report` agree on what "the same configuration" means.
`--by FIELD` matches them with that one field left out of the key (threads 1 against threads 2, one
instance against another). Also the words a configuration is named by, and the command that adds runs.
"""

from __future__ import annotations

import functools
import os
import shlex
from collections import Counter
from dataclasses import dataclass, field

from suite import run_options, stats
from suite.compare import closest_pair
from suite.inputs.errors import UserError
from suite.rows import labels

# The one place compare learns what makes two runs the same configuration: the report's row key.
from suite.rows.identity import LOADER_FIELDS, row_identity, row_key
from suite.rows.numerics_mark import standing
from suite.run_record.facts import (
    data_path,
    images_per_hour,
    log_images_per_hour,
    numerics_failed,
    profiled,
)

# Where `--by FIELD` looks: a field of the record's config is there; these few are elsewhere or mean
# more than one value ("*": the whole section). An instance comes with its hardware and its machine, so
# comparing instances leaves the backend, the device and the machine's context out of the match too
# (a V100 instance against a Gaudi one). Model overrides change the model, so its parameter counts too.
BY_PARTS = {
    "device": [("device", "name"), ("device", "*")],
    "instance": [
        ("config", "instance"),
        ("config", "backend"),
        ("config", "accelerators_used"),
        ("device", "*"),
        ("context", "*"),
    ],
    "data": [("config", "data"), ("data", "source")],
    "threads": [("config", "threads"), ("device", "threads")],  # as asked, and as the backend ran it
    "model_overrides": [("config", "model_overrides"), ("workload", "parameters")],
    # fp16 autocast runs with a GradScaler, the other precisions without: the backend records that it used one
    "precision": [("config", "precision"), ("device", "grad_scaler")],
    **{name: [("data", name)] for name in LOADER_FIELDS},  # what the loader actually used
}


def by_fields() -> list[str]:
    return sorted(set(_record_defaults()) | set(BY_PARTS))


def parse_by(text: str | None) -> tuple[str, ...] | None:
    """`instance` or `threads,precision` -> the fields compared across (None: all must match)."""
    if text is None:
        return None
    fields = tuple(name.strip() for name in str(text).split(",") if name.strip())
    for name in fields or ("",):
        if name not in by_fields():
            raise UserError(f"--by {name!r} is not a field of a run (known: {', '.join(by_fields())})")
    return fields


def _parts(field_name: str) -> list[tuple[str, str]]:
    """Where FIELD_NAME is in a record: its config field, and the device section's record of what the
    backend did with it where that repeats the field (tf32, channels_last, compile), which would otherwise
    keep runs apart after the config field was left out of the match."""
    return BY_PARTS.get(field_name, [("config", field_name), ("device", field_name)])


def by_value(record: dict, by: tuple[str, ...]) -> str:
    """What a side is, in the fields compared across: `p3.2xlarge`, `threads=2`."""
    values = []
    for name in by:
        section, key = _parts(name)[0]
        value = (record.get(section) or {}).get(key)
        values.append(str(value) if len(by) == 1 and name == "instance" else f"{name}={value}")
    return ", ".join(values)


def _without(record: dict, by: tuple[str, ...]) -> dict:
    """The record with the compared-across fields blanked, so the row key no longer tells runs apart by
    them (the key's own definition is never repeated here)."""
    blanked = {**record}
    for name in by:
        for section, key in _parts(name):
            blanked[section] = {} if key == "*" else {**(blanked.get(section) or {}), key: None}
    return blanked


def match_key(record: dict, by: tuple[str, ...] | None) -> tuple:
    return row_key(record if not by else _without(record, by))


# -- when nothing matched: why, and the `--by` that would pair them ------------------------------------


def _identity(record: dict, by: tuple[str, ...] | None) -> dict:
    """The row key's fields of RECORD as {"section.field": value}, less the compared-across fields."""
    return {k: repr(v) for k, v in row_identity(record if not by else _without(record, by)).items()}


def _covers(name: str, key: str) -> bool:
    """`--by NAME` leaves the row key's field KEY ("config.precision", "device.name") out of the match."""
    section, _, rest = key.partition(".")
    return any(part == section and field in ("*", rest.split(".")[0]) for part, field in _parts(name))


def _pairing_by(differ: list[str], base: dict, cand: dict, by: tuple[str, ...] | None) -> str | None:
    """The `--by` under which BASE and CAND are one configuration: for each field they differ in, the
    narrowest `--by` field that leaves it out (precision rather than instance), checked by matching them."""
    names = list(by or ())
    for key in differ:
        if not any(_covers(name, key) for name in names):
            choices = [name for name in by_fields() if _covers(name, key)]
            if not choices:
                return None
            names.append(min(choices, key=lambda name: (len(_parts(name)), name)))
    for tried in (names, [n for n in names if n not in ("backend", "device")] + ["instance"]):
        tried = tuple(dict.fromkeys(tried))
        if match_key(base, tried) == match_key(cand, tried):
            return ",".join(tried)
    return None


def why_unpaired(base_groups: dict, cand_groups: dict, by: tuple[str, ...] | None, same_runs: int) -> dict:
    """Why no configuration is on both sides: the same runs given as both (SAME_RUNS configurations), or
    the fields the closest baseline and candidate configurations differ in, and the `--by` that pairs them."""
    if same_runs:
        return {"same_runs": same_runs}
    if not base_groups or not cand_groups:
        return {}
    bases, cands = list(base_groups.values()), list(cand_groups.values())
    ours = [_identity(group.first, by) for group in bases]
    theirs = [_identity(group.first, by) for group in cands]
    i, j = closest_pair.closest(ours, theirs)  # not every pair: thousands a side are millions of pairs
    base, cand = bases[i], cands[j]
    differ = sorted(k for k in ours[i].keys() | theirs[j].keys() if ours[i].get(k) != theirs[j].get(k))
    values = row_identity(base.first), row_identity(cand.first)
    return {
        "differs": [
            {"field": k, "baseline": values[0].get(k), "candidate": values[1].get(k)} for k in differ
        ],
        "by": _pairing_by(differ, base.first, cand.first, by),
    }


def unpaired_note(why: dict, by: tuple[str, ...] | None) -> str:
    """Why no configuration is on both sides (WHY from `why_unpaired`), in one line for a person; empty
    when there is nothing to say (a side with no runs)."""
    if why.get("same_runs"):
        return (
            "the baseline and the candidate are the same runs (one set of records given twice): give the "
            "runs of one setting as the baseline and those of the other as the candidate"
        )
    if not why.get("differs"):
        return ""
    shown = [
        f"{d['field'].removeprefix('config.')} ({d['baseline']} / {d['candidate']})"
        for d in why["differs"][:4]
    ]
    more = len(why["differs"]) - len(shown)
    text = (
        "the closest pair differs in " + ", ".join(shown) + (f" and {more} more field(s)" if more > 0 else "")
    )
    if why.get("by"):
        return text + f"; `--by {why['by']}` compares across " + ("them" if len(why["differs"]) > 1 else "it")
    return text + (f" beyond --by {','.join(by)}" if by else "") + "; no --by pairs them"


def counted(record: dict) -> bool:
    """A run that is one sample: it finished ok, has a throughput, was not slowed by a profiler and did
    not fail its numerics check."""
    return (
        record.get("status") == "ok"
        and bool(images_per_hour(record))
        and not profiled(record)
        and not numerics_failed(record)
    )


@dataclass
class Group:
    """The runs of one configuration on one side."""

    records: list[dict]
    paths: list[str] = field(default_factory=list)

    @property
    def first(self) -> dict:
        return self.records[0]

    @functools.cached_property  # read once the group is whole: it consults the numerics ledger
    def numerics_standing(self) -> dict:
        """The configuration's numerics standing, from its records' checks and the ledger's."""
        return standing(self.records)

    @property
    def numerics_failed(self) -> bool:
        """The configuration's latest numerics check (its records' or the ledger's) failed: none of its
        runs is a sample."""
        return self.numerics_standing["verdict"] == "fail"

    def samples(self) -> list[dict]:
        return [] if self.numerics_failed else [r for r in self.records if counted(r)]

    def rates(self) -> list[float]:
        return [images_per_hour(r) / stats.SECONDS_PER_HOUR for r in self.samples()]

    def log_rates(self) -> list[float]:
        """The logs of `rates`, exact where a rate per second is no float (5e-324 img/h is 0.0 img/s)."""
        return [log_images_per_hour(r) - stats.LOG_SECONDS_PER_HOUR for r in self.samples()]

    def not_counted(self) -> dict:
        samples = {id(r) for r in self.samples()}
        left_out = [r for r in self.records if id(r) not in samples]
        return dict(Counter(_why_not(r, self.numerics_failed) for r in left_out))

    def run_ids(self) -> set:
        return {r.get("run_id") for r in self.records}


def _why_not(record: dict, configuration_failed: bool) -> str:
    if record.get("status") != "ok":
        return record.get("status") or "error"
    if profiled(record):
        return "profiled"
    if numerics_failed(record):
        return "numerics failed"
    if configuration_failed:
        return "unchecked after a numerics failure"
    return "no throughput"


def group_records(loaded: list[tuple[str, dict]]) -> dict[tuple, Group]:
    groups: dict[tuple, Group] = {}
    for path, record in loaded:
        group = groups.setdefault(row_key(record), Group([]))
        group.records.append(record)
        group.paths.append(path)
    return groups


def describe(record: dict, by: tuple[str, ...] | None = None) -> str:
    """A configuration in words, without the fields compared across:
    `dcgan64 · cpu (Intel Xeon) · batch 8 · fp32 · synthetic · 2 threads`."""
    config, device = record["config"], record.get("device") or {}
    left_out = {f"{section}.{key}" for name in by or () for section, key in _parts(name)}
    overrides = config.get("model_overrides") or {}
    # A modified model is said as the report's rows say it (dcgan64 (modified: ndf=8, ngf=8)), never a dict.
    modified = ", ".join(f"{k}={v}" for k, v in sorted(overrides.items()))
    parts = [f"{config.get('workload')} (modified: {modified})" if overrides else config.get("workload")]
    if "config.backend" not in left_out:
        parts.append(f"{config.get('backend')} ({device.get('name')})")
    # The precision as it ran (fp32+TF32), unless TF32 is what the sides are compared across
    precision = config.get("precision") if "tf32" in (by or ()) else labels.precision(config)
    parts += [f"batch {config.get('batch_size')}", precision, data_path(record)]
    if config.get("instance") and "config.instance" not in left_out:
        parts.append(config["instance"])
    # Every other setting in the report's words (channels-last, 8 workers), not `name=value`.
    skipped = (*(by or ()), *labels.IN_PRECISION, labels.CHECK)
    parts += [found.words for found in labels.settings([record]) if found.field not in skipped]
    return " · ".join(str(p) for p in parts if p not in (None, ""))


# Options a rerun leaves out: a profiled run is not a sample, and where ranks meet is the caller's.
NOT_RERUN = ("profile", "node-rank", "rdzv-endpoint")
ALWAYS_RERUN = ("workload", "backend", "batch-size", "precision")  # named even at their defaults


def _rerun_argv(group: Group) -> list[str]:
    """Every option the group's record holds (model overrides and the timing schedule included), so new
    runs match it."""
    return run_options.config_argv(group.first["config"], leave_out=NOT_RERUN, always=ALWAYS_RERUN)


def rerun_hint(group: Group, runs: int) -> str:
    """The command that would add `runs` runs of this configuration next to its records. Runs added to
    one side after the fact meet another host load than the other side's: `interleaved_hint` is the
    better advice wherever both sides can run on one machine."""
    out = os.path.dirname(group.paths[0]) if group.paths else "results"
    return f"suite run {shlex.join(_rerun_argv(group))} --repeat {runs} --out {out or '.'}"


def _by_option(argv: list[str]) -> dict[str, list[str]]:
    """`suite run` options as typed -> {name: the words typed for it}: `--no-pin-memory` is pin-memory's."""
    known = run_options.run_options()
    options: dict[str, list[str]] = {}
    name = None
    for word in argv:
        if word.startswith("--"):
            name = word[2:]
            if name not in known and name.startswith("no-") and name[3:] in known:
                name = name[3:]
        if name is not None:
            options.setdefault(name, []).append(word)
    return options


def _default(action) -> object:
    """What a run has when the option is not given: the option's default, else the config field's."""
    if action.default is not None:
        return action.default
    return _record_defaults().get(action.dest)


@functools.cache
def _record_defaults() -> dict:
    """The record's `config` of a run asked for nothing: every field, at its default."""
    from suite.spec import RunSpec

    return RunSpec().to_record_config()


def _against(name: str, words: list[str] | None) -> str | None:
    """One `--against NAME=VALUE` that gives the candidate the option as typed (WORDS; None: the option at
    its default); None where one such entry cannot say it (a repeated option, a default with no value, a
    flag that cannot be turned off)."""
    from suite.inputs.option_types import Switch

    action = run_options.run_options()[name]
    if words is None:  # the candidate has the default where the baseline names a value
        default = _default(action)
        if isinstance(action, Switch) and isinstance(default, bool):
            return f"{name}={'on' if default else 'off'}"
        if default is None or action.nargs == 0 or isinstance(default, (bool, dict, list, tuple)):
            return None
        return f"{name}={default}"
    if len(words) == 1:  # a switch or a flag: --name or --no-name
        return f"{name}={'off' if words[0].startswith('--no-') else 'on'}"
    return f"{name}={words[1]}" if len(words) == 2 else None


# Runs of two instances are made on two machines: there is no one host to interleave them on.
ONE_HOST_ONLY = ("instance",)


def interleaved_hint(baseline: Group, candidate: Group, runs: int) -> str | None:
    """The command that measures both configurations again, `runs` each, interleaved A B B A … in one
    invocation (`suite run --repeat N --against OPTION=VALUE`), so that both sides meet the same host
    load, and the comparison of those runs alone; None where `--against` cannot make the candidate from
    the baseline (a repeated option changed, an option the candidate leaves at an unnamed default) or
    the sides ran on different instances."""
    base, cand = _by_option(_rerun_argv(baseline)), _by_option(_rerun_argv(candidate))
    changed = [name for name in dict.fromkeys([*base, *cand]) if base.get(name) != cand.get(name)]
    if any(name in ONE_HOST_ONLY for name in changed):
        return None
    against = [_against(name, cand.get(name)) for name in changed]
    if None in against:
        return None
    # The same configuration on both sides (they differ in no option): an A/A pair, interleaved all the same.
    against = against or [f"workload={baseline.first['config'].get('workload')}"]
    folder = os.path.dirname(baseline.paths[0]) if baseline.paths else ""
    out = os.path.join(os.path.dirname(folder.rstrip(os.sep)), "interleaved")
    options = [*_rerun_argv(baseline), "--repeat", str(runs)]
    options += [word for entry in against for word in ("--against", entry)] + ["--out", out]
    compared = shlex.join(["suite", "compare", os.path.join(out, "baseline"), os.path.join(out, "candidate")])
    return (
        f"measure both sides again, interleaved (both meet the same host load): suite run {shlex.join(options)}, "
        f"then {compared}"
    )
