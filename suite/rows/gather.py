"""Stage 1 of a report, gather: the run records under the paths given, each checked on read
(`run_record.read_record`), filtered to the training runs asked for, a record made before its MFU's peak
was known completed (efficiency.py); and, for `--instance A,B`, copies of them priced as if run on other
instances.

    gather (records) -> identity (which runs are one row) -> rows (median, prices, notes) -> render
"""

from __future__ import annotations

from collections import Counter

from suite import run_record
from suite.inputs import errors
from suite.rows import efficiency
from suite.run_record import printable
from suite.run_record.facts import accelerators_used, other_device
from suite.run_record.record import GatheredRecord

# Records made by a command's own sub-runs (run_record.ORIGIN_ENV), left out of a report unless included:
# a sweep's points, a batch-size search's probes (some out of memory on purpose), diagnose's three runs,
# a tuning search's trials (but its default and tuned best: reporting/tuned.py).
SUB_RUN_ORIGINS = ("sweep", "batch-size", "diagnose", "scale", "tune")
INCLUDE_GROUPS = {"probes": ("batch-size", "diagnose"), "all": SUB_RUN_ORIGINS}
# What a sub-run is, in the words a row's note says it with.
SUB_RUN_WORDS = {
    "sweep": "sweep point(s)",
    "batch-size": "batch-size probe(s)",
    "tune": "tuning trial run(s)",
}


def include_origins(text: str | None) -> set[str]:
    """`--include sweep,probes` as the set of origins to report beside `suite run`'s own records."""
    from suite.inputs.errors import UserError

    chosen = {"run"}
    for name in filter(None, (part.strip() for part in (text or "").split(","))):
        if name in INCLUDE_GROUPS:
            chosen.update(INCLUDE_GROUPS[name])
        elif name in SUB_RUN_ORIGINS:
            chosen.add(name)
        else:
            known = ", ".join((*SUB_RUN_ORIGINS, *INCLUDE_GROUPS))
            raise UserError(f"--include {name!r} is not a kind of sub-run (known: {known})")
    return chosen


def origin(record: dict) -> str:
    """The command whose run made this record ("run" for `suite run` itself, and for older records)."""
    return str(record.get("origin") or ("sweep" if record.get("sweep_point") else "run"))


def chosen_records(
    paths: list[str], include_text: str | None, say, warn=None, always=None
) -> list[tuple[str, dict]]:
    """The records `suite report` and `suite compare` read alike: `suite run`'s own and the sub-runs
    `--include` names; the sub-runs left out counted in one line to `say`. Where the paths hold sub-runs
    only (the folder `suite sweep` or `suite diagnose` just wrote) and `--include` was not given, those
    sub-runs, and `say` tells that they are sub-runs (each row's notes name its kind too). ALWAYS(record):
    a sub-run shown whatever `--include` says (a tuning search's default and tuned best: tuned.py)."""
    include = include_origins(include_text)
    every = load_records(paths, warn)

    def shown(record) -> bool:
        return origin(record) in include or (always is not None and always(record))

    kept = [(path, record) for path, record in every if shown(record)]
    left_out = Counter(origin(record) for _, record in every if not shown(record))
    if not left_out:
        return kept
    kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(left_out.items()))
    if not kept and include_text is None:
        say(f"only sub-run records here ({kinds}): reported as such, each row saying what its runs are")
        return every
    say(
        f"left out {sum(left_out.values())} sub-run record(s) ({kinds}): "
        f"--include {','.join(sorted(left_out))} reports them"
    )
    return kept


def sub_runs_note(records: list[dict]) -> str | None:
    """A row's note naming the sub-runs among its runs ("sub-runs: 2 sweep point(s) made by `suite
    sweep`"), None where all are `suite run`'s own."""
    kinds = Counter(origin(record) for record in records)
    kinds.pop("run", None)
    if not kinds:
        return None
    return "sub-runs: " + ", ".join(
        f"{n} {SUB_RUN_WORDS.get(kind, f'{kind} run(s)')} made by `suite {kind}`"
        for kind, n in sorted(kinds.items())
    )


def load_records(
    paths: list[str], warn=None, include: set[str] | None = None, left_out: Counter | None = None
) -> list[tuple[str, dict]]:
    """Every readable run record under `paths`, each run once (`run_record.unique_runs`); anything else is
    skipped with a warning naming it. Records of sub-runs whose origin is not in `include` are counted in
    `left_out`, not returned."""
    warn = warn or errors.warn
    include = include if include is not None else {"run", *SUB_RUN_ORIGINS}
    read = []
    for path in run_record.iter_record_paths(paths):
        try:
            read.append((path, run_record.read_record(path)))
        except run_record.OtherSuiteRecord:
            continue  # the suite's own non-run records (batch-size searches) share results folders
        except run_record.NotARecord as error:
            warn(f"skipped {printable(path)}: {error}")
        except (OSError, UnicodeDecodeError) as error:
            warn(f"skipped {printable(path)}: cannot be read ({error})")
    loaded = []
    for path, record in run_record.unique_runs(read, warn):  # a run counts once, however many files hold it
        if record.get("kind", "train") != "train":
            continue  # loader-only and other non-training records are not rows of a training table
        if not isinstance(record.get("config"), dict) or not record["config"].get("workload"):
            warn(f"skipped {printable(path)}: a suite.run record without its config (damaged?)")
            continue
        if origin(record) not in include:
            if left_out is not None:
                left_out[origin(record)] += 1
            continue
        loaded.append((path, GatheredRecord(record)))  # its type built once, for every stage that follows
    completed = efficiency.complete([record for _, record in loaded])  # MFU where a peak is now known
    return [(path, record) for (path, _), record in zip(loaded, completed)]


def repriced(
    records: list[dict], candidates: list, price_as_if: bool = False
) -> tuple[list[dict], list[str]]:
    """`suite report --instance A,B`: each record priced again as if it ran on each candidate instance
    (an Instance), without re-running. Only candidates whose accelerator is the run's device (or any, with
    price_as_if), with at least the accelerators the run used. Returns the copies and what was left out."""
    copies, left_out = [], []
    for record in records:
        device = (record.get("device") or {}).get("name")
        matched = False
        for instance in candidates:
            if other_device(device, instance.accelerator) and not price_as_if:
                continue
            if accelerators_used(record) > instance.accelerator_count:
                continue
            matched = True
            copies.append(
                GatheredRecord({**record, "config": {**record["config"], "instance": instance.name}})
            )
        if not matched:
            left_out.append(str(record.get("run_id")))
    return copies, left_out
