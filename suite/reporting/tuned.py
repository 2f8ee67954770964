"""`suite tune`'s searches in a report: which runs are a search's default and which its tuned best (the
search's own record, `suite.tune-search`, written beside its trials, says: suite/exploring/tune/table.py),
which records a report shows, and the marks its rows carry.

Shown by default: each search's default and tuned best (the runs of those two configurations, however many
trials measured them); the search's other trials are sub-runs, left out unless `--include tune`, as a
sweep's points are. `--tuned-best` shows, per workload and device, only the tuned best where a search
found one (a device without a search keeps its rows). A tuning trial whose search left no record of its
own (killed before its first trial ended) is a sub-run like the others.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SEARCH_SCHEMA = "suite.tune-search"
ORIGIN = "tune"
# A row's part in a search, and its mark in the default table (narrow.MARKS says what each means).
BEST, DEFAULT, TRIAL = "best", "default", "trial"


@dataclass
class Searches:
    """What the searches' own records say, by run id: the default's runs and the tuned best's."""

    default_of: dict[str, str] = field(default_factory=dict)  # run id -> search id
    best_of: dict[str, str] = field(default_factory=dict)
    gain: dict[str, dict] = field(default_factory=dict)  # search id -> the best against its default
    best_setting: dict[str, str] = field(default_factory=dict)  # search id -> the best's options

    def shown(self, record: dict) -> bool:
        """A tuning trial a report shows whatever `--include` says: its search's default or tuned best."""
        return _origin(record) == ORIGIN and self.role(str(record.get("run_id"))) is not None

    def role(self, run_id: str) -> str | None:
        if run_id in self.best_of:
            return BEST
        if run_id in self.default_of:
            return DEFAULT
        return None


def read_searches(paths: list[str]) -> Searches:
    """The searches' records under PATHS (each read by the one bounded reader; anything else is skipped:
    the record readers say what they skip)."""
    from suite import run_record
    from suite.inputs.files import read_text
    from suite.run_record.read import RECORD_LIMIT, parse_json

    found = Searches()
    for path in run_record.iter_record_paths(paths):
        try:
            data = parse_json(read_text(path, RECORD_LIMIT))
        except Exception:  # noqa: BLE001 - not ours to judge here: gather names what it skips
            continue
        if isinstance(data, dict) and data.get("schema") == SEARCH_SCHEMA:
            _add(found, data)
    return found


def _add(found: Searches, data: dict) -> None:
    search = str(data.get("search_id"))
    for part, into in (("default", found.default_of), ("best", found.best_of)):
        for run_id in (data.get(part) or {}).get("run_ids") or []:
            into[str(run_id)] = search
    if isinstance(data.get("gain"), dict):
        found.gain[search] = data["gain"]
    found.best_setting[search] = str((data.get("best") or {}).get("setting") or "")


def best_only(loaded: list, searches: Searches) -> list:
    """`--tuned-best`: the (path, record) pairs less, per workload and device that has a search's tuned
    best, every record but the best's."""
    tuned = {_place(r) for _, r in loaded if searches.role(str(r.get("run_id"))) == BEST}
    return [
        (p, r) for p, r in loaded if _place(r) not in tuned or searches.role(str(r.get("run_id"))) == BEST
    ]


def _origin(record: dict) -> str:
    return str(record.get("origin") or "run")


def _place(record: dict) -> tuple:
    """A workload on a device: where `--tuned-best` keeps one search's best."""
    config, device = record.get("config") or {}, record.get("device") or {}
    return (config.get("workload"), config.get("backend"), device.get("name"))


def mark(rows: list[dict], searches: Searches, records: list[dict]) -> None:
    """Each row's part in a search (`tuned`: best, default or trial), and a note saying which search and,
    for the best, its gain over the default."""
    trial_runs = {str(r.get("run_id")) for r in records if _origin(r) == ORIGIN}
    for row in rows:
        runs = [str(run_id) for run_id in row.get("run_ids") or []]
        best = next((searches.best_of[i] for i in runs if i in searches.best_of), None)
        default = next((searches.default_of[i] for i in runs if i in searches.default_of), None)
        if best:
            row["tuned"] = BEST
            row["notes"].append(_best_note(best, searches, default == best))
        elif default:
            row["tuned"] = DEFAULT
            row["notes"].append(f"the default of `suite tune` search {default}")
        elif trial_runs.intersection(runs):
            row["tuned"] = TRIAL
            row["notes"].append("a trial of a `suite tune` search (not its best)")


def _best_note(search: str | None, searches: Searches, is_default: bool) -> str:
    if is_default:
        return f"the tuned best of `suite tune` search {search} is its default: nothing was faster beyond the noise"
    gain = searches.gain.get(search or "") or {}
    ratio = gain.get("ratio")
    said = (
        f"the tuned best of `suite tune` search {search} ({searches.best_setting.get(search or '') or '?'})"
    )
    if ratio is None:
        return said
    if gain.get("ci_low") is not None:
        return said + f": ×{ratio:.2f} its default (95% interval {gain['ci_low']:.2f}–{gain['ci_high']:.2f})"
    return said + f": ×{ratio:.2f} its default by the medians ({gain.get('verdict') or 'no interval'})"
