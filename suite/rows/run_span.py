"""The days, commits and hosts a row's runs come from. They are not part of a configuration (identity.py
says why: what changes over time, a checkout or a machine is keyed itself), so runs of several pool into one
row; the row says so, in a note and in its fields `run_days`, `run_commits` and `run_hosts`, so that a
reader sees when a median spans two days, three commits or two machines.
"""

from __future__ import annotations

SHORT_COMMIT = 7


def _known(values) -> list[str]:
    return list(dict.fromkeys(str(v) for v in values if v not in (None, "")))


def spans(runs: list[dict]) -> dict[str, list[str]]:
    """{"run_days": [...], "run_commits": [...], "run_hosts": [...]}: each distinct value the runs record
    (a day as YYYY-MM-DD), in the order the runs were made; a run that records none adds nothing."""
    contexts = sorted((r.get("context") or {} for r in runs), key=lambda c: str(c.get("utc_time") or ""))
    return {
        "run_days": _known(str(c.get("utc_time") or "")[:10] for c in contexts),
        "run_commits": _known(c.get("git_commit") for c in contexts),
        "run_hosts": _known(c.get("host") for c in contexts),
    }


def _counted(values: list[str], word: str) -> str:
    return f"{len(values)} {word}{'' if len(values) == 1 else 's'} ({', '.join(values)})"


def note(found: dict[str, list[str]]) -> str | None:
    """The row's note where its runs span more than one day, commit or host; None where they do not."""
    days, hosts = found["run_days"], found["run_hosts"]
    commits = [c[:SHORT_COMMIT] for c in found["run_commits"]]
    if max(len(days), len(commits), len(hosts)) < 2:
        return None
    parts = [
        _counted(values, word)
        for values, word in ((days, "day"), (commits, "commit"), (hosts, "host name"))
        if values
    ]
    said = ", ".join(parts[:-1]) + f" and {parts[-1]}" if len(parts) > 1 else parts[0]
    return (
        f"Pools runs of {said}: the day, the commit and the host are not part of a configuration, so "
        "their runs share this row's median."
    )
