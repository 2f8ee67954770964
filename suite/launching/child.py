"""Child `suite run`s: hands a child its run as a RunSpec in JSON (`suite run --spec FILE`), starts it in
a fresh process (with a timeout), and turns a child that left no record into one. What the child's
record will hold as its config is planned where every run is (suite.measurement.plan.resolve_plan).

Sweep, scale, diagnose, batch-size, `--repeat`, `--per-device` and the launcher all start runs through
here. What a caller asks for as `suite run` options (a sweep point's) is parsed once, with `suite run`'s
own parser, into a RunSpec; the child reads that spec and never parses the run's options again, so an
option reaches a child (or a torchrun worker) exactly as the parent understood it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from suite import context, limits, run_options, run_record
from suite.run_options import option_argv, run_argv  # noqa: F401 - callers reach them here too
from suite.run_record.parts import RATE_LABELS, Error, rate_label  # noqa: F401 - RATE_LABELS: its old home
from suite.run_record.record import RunRecord, metrics_of
from suite.spec import RunSpec
from suite.spec.run_spec import FLAT

# Options every child is given by the one starting it, never taken from a caller's list.
RESERVED = {"out", "json", "help"}
INTERRUPTED = 130  # a `suite run` stopped by Ctrl-C exits with this status (a record only of windows timed)
# The end of a failed child's stderr shown where no failure record keeps its last words (enough for a
# traceback's last frames, not a whole log).
STDERR_SHOWN = 3000


def log(line: str) -> None:
    """Progress of a command that starts runs: on stderr, so that stdout stays the command's result."""
    print(line, file=sys.stderr, flush=True)


# -- configuration -------------------------------------------------------------------------------


def resolved_config(what) -> dict:
    """What the record of a child run will hold as its config (JSON types): WHAT is its RunSpec, a
    Request, or `suite run` options as typed (parsed once, as `spawn` would)."""
    from suite.measurement.plan import resolve_plan

    spec = what if isinstance(what, RunSpec) else request_of(what).spec
    return json.loads(json.dumps(resolve_plan(spec).record_config()))


# -- what a child is asked to run ------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """What a parent asks of a child `suite run`: the run, as a RunSpec (handed over as JSON), and the
    options that are not part of a run, as typed (`--repeat N`, `--against OPTION=VALUE`)."""

    spec: RunSpec
    options: tuple[str, ...] = ()


def request_of(what) -> Request:
    """A Request as given, or the one `suite run ARGV` asks for: ARGV parsed once with `suite run`'s own
    parser (a bad value is one line, exit 2, before anything starts). The options every child is given
    by `spawn` itself (--out, --json, --quiet) are left out."""
    if isinstance(what, Request):
        return what
    args = run_options.run_parser().parse_args(list(what))
    return Request(run_options.spec_from_args(args), tuple(other_options(args, (*RESERVED, "quiet"))))


def other_options(args, leave_out: tuple[str, ...] = ()) -> list[str]:
    """The options of parsed `suite run` ARGS that are not part of a RunSpec (--out, --json, --quiet,
    --repeat, --against), those given, as typed; the names in LEAVE_OUT left out."""
    options = {}
    for name, action in run_options.run_options().items():
        value = getattr(args, action.dest, None)
        if action.dest in FLAT or name in leave_out or value is None or value == action.default:
            continue
        options[name] = value == action.const if action.nargs == 0 else value  # a store_true: given or not
    return run_argv(options)


def with_options(spec: RunSpec, argv: list[str]) -> RunSpec:
    """SPEC with `suite run` options ARGV typed after its own (`--against batch-size=16`'s): each one-value
    option replaces the spec's, a `--model-override` adds its key, as if typed after the spec's options."""
    from suite.inputs.errors import UserError

    parser = run_options.run_parser()
    args = parser.parse_args(list(argv), namespace=argparse.Namespace(**spec.flat()))
    for name, action in run_options.run_options().items():
        if action.dest not in FLAT and getattr(args, action.dest, None) not in (None, action.default):
            raise UserError(f"--{name} is not part of a run: it cannot change one ({' '.join(argv)})")
    return RunSpec().replace(**{name: getattr(args, name) for name in FLAT})


@contextlib.contextmanager
def spec_file(spec: RunSpec):
    """SPEC as JSON in a file of its own, for a child to read (`suite run --spec FILE`); removed when the
    block ends, however it ends. In the temporary folder, never the run's --out: a parent killed before
    it could remove the file leaves no `.json` where `suite report` reads records."""
    from suite import atomic
    from suite.spec.json_form import to_json

    fd, path = tempfile.mkstemp(prefix="suite-spec-", suffix=".json")
    os.close(fd)
    try:
        atomic.write_atomic(path, to_json(spec))
        yield path
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


# -- starting a child ------------------------------------------------------------------------------


@dataclass
class Child:
    """How a child `suite run` ended: its record (None if it left none), exit status and stderr; for a
    child that ran a group (`--repeat N`, with `--against`), the group's records instead, each with the
    folder under the child's --out it was written to ("", or "baseline" and "candidate")."""

    record: dict | None
    returncode: int | None
    stderr: str
    timed_out: bool = False
    group: list[tuple[str, dict]] | None = None


# The sides of `suite run --repeat N --against ...`, each a folder of its own under --out (commands/run.py).
GROUP_SIDES = ("baseline", "candidate")


def _is_record(value) -> bool:
    return isinstance(value, dict) and value.get("schema") == run_record.SCHEMA


def reported_runs(stdout: str) -> tuple[dict | None, list[tuple[str, dict]] | None]:
    """What `suite run ... --json` printed: one record (a run), or a group's records (`--repeat N`: a list
    of records; with `--against`: {"baseline": [...], "candidate": [...]}) with the folder of each.
    (None, None) for anything else: the child left no result."""
    try:
        value = json.loads(stdout)
    except json.JSONDecodeError:
        return None, None
    if _is_record(value):
        return value, None
    if isinstance(value, list) and value and all(_is_record(item) for item in value):
        return None, [("", item) for item in value]
    if (
        isinstance(value, dict)
        and set(value) == set(GROUP_SIDES)
        and all(
            isinstance(value[side], list) and all(_is_record(r) for r in value[side]) for side in GROUP_SIDES
        )
        and any(value[side] for side in GROUP_SIDES)
    ):
        return None, [(side, item) for side in GROUP_SIDES for item in value[side]]
    return None, None


def spawn(what, out_dir: str, timeout_s: float | None = None, **env) -> Child:
    """`suite run --spec FILE [OPTIONS] --json --quiet --out OUT_DIR` in a fresh process, FILE holding the
    run WHAT asks for (a Request, or `suite run` options as typed: see request_of); its stderr is kept for
    a failure's last words, not shown: the command that starts it says its own progress.
    KeyboardInterrupt stops the child too."""
    request = request_of(what)
    with spec_file(request.spec) as path:
        command = [sys.executable, "-m", "suite", "run", "--spec", path, *request.options]
        child = subprocess.Popen(
            [*command, "--json", "--quiet", "--out", out_dir],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=context.child_env(**env),
            preexec_fn=limits.end_with_parent(),  # SIGTERM when this process ends, however it ends
        )
        return _outcome(child, timeout_s)


def _outcome(child: subprocess.Popen, timeout_s: float | None) -> Child:
    """How the started CHILD ends: what it printed, or its timeout; an interrupt stops it and goes on."""
    try:
        stdout, stderr = child.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        child.kill()
        _, stderr = child.communicate()
        return Child(None, None, stderr, timed_out=True)
    except KeyboardInterrupt:
        # Ctrl-C at a terminal reaches the child as well; a SIGINT sent to this process alone is passed
        # on. Either way the child stops (with a record of its windows, if it timed one: status interrupted,
        # which a resume runs again).
        if child.poll() is None:
            child.send_signal(signal.SIGINT)
        try:
            child.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()
        raise
    if child.returncode in (INTERRUPTED, -signal.SIGINT):
        # Ctrl-C reached the child before this process: the same interrupt, not a failed run (a child
        # stopped after a timed window has written the record of its windows, status interrupted).
        raise KeyboardInterrupt
    record, group = reported_runs(stdout)
    return Child(record, child.returncode, stderr, group=group)


def failure_record(config: dict, kind: str, message: str, exit_status=None) -> dict:
    """The record of a run that left none of its own (crash, kill, timeout)."""
    ctx = context.collect()
    run_id = run_record.new_run_id(config.get("workload", "run"), config.get("backend", "?"), ctx["utc_time"])
    error = Error.from_json({"type": kind, "message": message, "exit_status": exit_status})
    return RunRecord.new(run_id, ctx, config).replaced(error=error).to_json()


def failure_of(child: Child, config: dict, timeout_s: float | None = None) -> dict:
    """The failure record of a child that left no record: its last words on stderr, or its exit."""
    if child.timed_out:
        return failure_record(config, "Timeout", f"no result within {timeout_s:g} s")
    last = [line for line in child.stderr.strip().splitlines() if line.strip()]
    message = last[-1] if last else f"exited with status {child.returncode} and no record"
    return failure_record(config, "ChildFailed", message, child.returncode)


def run(
    what,
    config: dict,
    out_dir: str,
    timeout_s: float | None = None,
    origin: str | None = None,
    env: dict[str, str] | None = None,
    keep_failure: bool = True,
    **extra,
) -> dict:
    """Run one configuration in a fresh process and return its record, tagged with the command (`origin`;
    by default the one this process runs for, else "run") that ran it; a child that left none gets a
    failure record, written to OUT_DIR with EXTRA fields (e.g. which sweep point it was). WHAT is a
    Request or `suite run` options as typed (see spawn); ENV, more of the child's environment (the run id
    a launcher names its record by). With KEEP_FAILURE false the failure record is returned but not
    written, and the child's last words go to stderr instead, the only place they are then kept. A child
    that ran a group (--repeat) returns the group's outcome (`group_outcome`), each of its records tagged
    alike."""
    origin = origin or os.environ.get(run_record.ORIGIN_ENV) or "run"
    child = spawn(what, out_dir, timeout_s, **(env or {}), **{run_record.ORIGIN_ENV: origin})
    if child.record is not None or child.group is not None:
        if child.returncode == run_record.EXIT_RECORD_NOT_WRITTEN:  # it said where the record went instead
            last = [line for line in child.stderr.strip().splitlines() if line.strip()]
            raise run_record.RecordNotWritten(last[-1].removeprefix("suite: error: ") if last else out_dir)
        if child.group is None:
            return child.record
        for folder, record in child.group:  # its runs wrote them; they say which command and point too
            record.update(origin=origin, **extra)
            run_record.write_record_or_stop(record, os.path.join(out_dir, folder))
        own = [record for folder, record in child.group if folder in ("", GROUP_SIDES[0])]
        return group_outcome([record for _, record in child.group], own)
    record = failure_of(child, config, timeout_s)
    record["origin"] = origin
    record.update(extra)
    if not keep_failure:
        sys.stderr.write(child.stderr[-STDERR_SHOWN:])
        return record
    run_record.write_record_or_stop(record, out_dir)  # the folder may have turned read-only meanwhile
    return record


# -- reading an outcome ----------------------------------------------------------------------------


def throughput(record: dict | None) -> float | None:
    if not record or record.get("status") != "ok":
        return None
    return metrics_of(record).images_per_second


def group_outcome(runs: list[dict], own: list[dict] | None = None) -> dict:
    """A group of runs as one outcome, from the records its runs wrote: the first run that did not end ok
    (the group failed, and that record says why), else, of the runs of the configuration asked for (OWN:
    an --against group's baseline side; by default all), the run of median throughput (of an even count,
    the lower of the middle two): a run that happened, never a figure made up."""
    failed = [record for record in runs if record.get("status") != "ok"]
    if failed:
        return failed[0]
    ordered = sorted(own or runs, key=lambda record: throughput(record) or 0.0)
    return ordered[(len(ordered) - 1) // 2]


def rate_in_unit(record: dict | None) -> tuple[float | None, str]:
    """A record's throughput in its own unit (images per second, or tokens per second for a workload that
    counts tokens) and that unit's label; the rate is None unless the run ended ok."""
    metrics = metrics_of(record or {})
    label = rate_label(metrics.unit_name)
    if throughput(record) is None:
        return None, label
    return metrics.throughput, label


def describe(record: dict) -> str:
    """A record's outcome in a few words: its throughput in its unit, or its status and error."""
    rate, label = rate_in_unit(record)
    if rate is not None:
        return f"{rate:,.1f} {label}"
    error = record.get("error") or {}
    return f"{record.get('status')}: {error.get('message', '')}".strip()
