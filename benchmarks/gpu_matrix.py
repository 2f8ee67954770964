"""Every CUDA result the README needs, from one command on a bare GPU machine; `--dry-run` runs the same plan
on the CPU at tiny sizes (what CI proves).

    benchmarks/gpu_matrix.sh OUT [--dry-run] [--part 1|2|3] [--budget S] [--work DIR]

The plan (benchmarks/gpu_matrix_plan.py) is a list of `suite` command lines, plus the bare loop, the timm
peer and `pytest -m gpu`, in three parts of under 9 minutes each. This script prints the plan with its
estimates, runs the asked part(s) step by step in fresh processes (in a dry run, a suite step is a fork of
one interpreter that has imported torch: benchmarks/warm_start.py), and stops cleanly at the part's time
budget, on a failing step (recorded, the next step goes on) or on SIGTERM / Ctrl-C. On every exit it
writes, into OUT: partN.tar.gz (the part's records, logs and step files), report.md (every step's outcome,
suite ÷ bare, the peer, and `suite report`) and summary.log (what was printed): few flat files, as the GPU
machine hands back at most 8 files from OUT. Work files live in --work (default /tmp/suite-gpu-matrix on
the GPU, OUT/work in a dry run), so a later part on the same machine reports the earlier parts' records too.

Installing: the checkout runs from its own folder with PYTHONPATH set to it (suite/__init__.py finds
backends/ and workloads/ beside suite/), so nothing is pip-installed and the machine's torch is untouched.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import gpu_matrix_plan as plan_module  # noqa: E402
import gpu_matrix_report  # noqa: E402
from warm_start import WarmStarter  # noqa: E402

DEFAULT_BUDGET_S = 530.0  # a command may run 10 minutes there; 70 s are left for start-up and packing
RESERVE_S = 15.0  # kept back from the last step for the report and the archive


class Stopped(Exception):
    """SIGTERM or Ctrl-C: stop the running step, keep what was measured."""


def _stop(signum, frame):
    raise Stopped(signal.Signals(signum).name)


class Log:
    """Prints and keeps every line, for OUT/summary.log."""

    def __init__(self, path: str):
        self.handle = open(path, "a")

    def __call__(self, text: str = "") -> None:
        print(text, flush=True)
        self.handle.write(text + "\n")
        self.handle.flush()


def environment(work: str) -> dict:
    """This environment, importing the checkout (PYTHONPATH), with the suite's cache in the work folder."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, env.get("PYTHONPATH")) if p)
    env.setdefault("SUITE_CACHE_DIR", os.path.join(work, "suite-cache"))
    return env


def run_step(step, argv, work: str, deadline: float, env: dict, starter=None) -> dict:
    """Run one step in its own process group; its output goes to logs/NAME.log. With a warm starter (the
    dry run), a suite command is a fork of an interpreter that has imported torch."""
    out_dir = os.path.join(work, "records", step.name)
    shutil.rmtree(out_dir, ignore_errors=True)  # a part run again replaces its own records
    if step.records:
        argv = [*argv, "--out", out_dir]
    if step.bench:
        os.makedirs(os.path.join(work, "bench"), exist_ok=True)
        argv = [*argv, "--json", os.path.join(work, "bench", f"{step.name}.json")]
    log_path = os.path.join(work, "logs", f"{step.name}.log")
    started = time.monotonic()
    result = {"argv": argv, "log": os.path.relpath(log_path, work)}
    with open(log_path, "w") as log:
        log.write("$ " + " ".join(argv) + "\n")
        forked = starter is not None and starter.handles(argv)
        if forked:
            log.write("(forked from an interpreter that has imported torch: benchmarks/warm_start.py)\n")
        log.flush()
        if forked:
            child = starter.start(argv, log, env)
        else:
            child = subprocess.Popen(
                argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )
        try:
            rc = child.wait(timeout=max(1.0, deadline - time.monotonic()))
            result["status"] = "done"
        except subprocess.TimeoutExpired:
            rc, result["status"] = _end(child), "timeout"
        except BaseException:
            _end(child)
            result.update(rc=None, status="interrupted", wall_s=time.monotonic() - started)
            raise
        finally:
            result["wall_s"] = round(time.monotonic() - started, 1)
    result["rc"] = rc
    return result


def _end(child) -> int:
    """SIGTERM to the step's process group (a suite run records what it measured on it), then SIGKILL."""
    for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 5)):
        try:
            os.killpg(child.pid, sig)
        except ProcessLookupError:
            break
        try:
            return child.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
    return child.wait()


def judge(step, result: dict, work: str) -> dict:
    """ok when the step did what it is for: exit 0 and its records ok, or, for the OOM step, an oom record."""
    statuses = gpu_matrix_report.record_statuses(os.path.join(work, "records", step.name))
    result["record_statuses"] = statuses
    if result["status"] != "done":
        return result
    if step.expect == "oom":
        result["status"] = "ok" if "oom" in statuses else "failed"
    elif step.expect == "search":
        result["status"] = "ok" if result["rc"] == 0 and statuses else "failed"
    elif result["rc"] != 0 or (step.records and (not statuses or set(statuses) - {"ok"})):
        result["status"] = "failed"
    else:
        result["status"] = "ok"
    return result


def write_json(path: str, value) -> None:
    with open(path + ".tmp", "w") as handle:
        json.dump(value, handle, indent=1)
    os.replace(path + ".tmp", path)


def run_part(
    part: int, steps, dry: bool, work: str, budget_s: float, log: Log, env: dict, starter=None
) -> bool:
    """Run the part's steps in order until the budget; every step leaves steps/NAME.json."""
    deadline = time.monotonic() + budget_s
    all_ok = True
    stopped = None
    for step in steps:
        summary = {
            "name": step.name,
            "part": part,
            "estimate_s": step.estimate_s,
            "expect": step.expect,
            "cpu_note": step.cpu_note if dry else "",
            "gpu_command": " ".join(step.gpu),
        }
        argv = plan_module.command(step, dry)
        left = deadline - RESERVE_S - time.monotonic()
        if stopped:
            summary.update(status="not-run", reason=stopped)
        elif argv is None:
            summary.update(status="skipped", reason=step.cpu_note)
        elif left < 5:
            stopped = f"part budget of {budget_s:.0f} s reached"
            summary.update(status="not-run", reason=stopped)
        else:
            log(f"[part {part}] {step.name}: started (estimate {step.estimate_s:.0f} s on the GPU)")
            try:
                result = run_step(step, argv, work, deadline - RESERVE_S, env, starter)
                summary.update(judge(step, result, work))
            except Stopped as why:
                stopped = f"stopped by {why}"
                summary.update(status="interrupted", reason=stopped)
        all_ok &= summary["status"] in ("ok", "skipped")
        write_json(os.path.join(work, "steps", f"{step.name}.json"), summary)
        log(
            f"[part {part}] {step.name}: {summary['status']}"
            + (f" in {summary['wall_s']} s" if "wall_s" in summary else "")
            + (f" ({summary.get('reason')})" if summary.get("reason") else "")
        )
    if stopped and stopped.startswith("stopped"):
        raise Stopped(stopped)
    return all_ok


def archive(part: int, work: str, out: str) -> str:
    """OUT/partN.tar.gz: this part's step files, logs, records and bench results (never the image data)."""
    path = os.path.join(out, f"part{part}.tar.gz")
    with tarfile.open(path + ".tmp", "w:gz") as tar:
        for folder in ("steps", "logs", "records", "bench"):
            for name in (
                sorted(os.listdir(os.path.join(work, folder)))
                if os.path.isdir(os.path.join(work, folder))
                else []
            ):
                if _part_of(work, name) == part:
                    tar.add(os.path.join(work, folder, name), arcname=f"part{part}/{folder}/{name}")
        for name in ("report.md", "suite-report.md", "plan.json"):
            if os.path.exists(os.path.join(work, name)):
                tar.add(os.path.join(work, name), arcname=f"part{part}/{name}")
    os.replace(path + ".tmp", path)
    return path


def _part_of(work: str, name: str) -> int | None:
    stem = name.split(".")[0]
    try:
        with open(os.path.join(work, "steps", f"{stem}.json")) as handle:
            return json.load(handle)["part"]
    except (OSError, ValueError, KeyError):
        return None


def print_plan(steps, parts, dry: bool, log: Log) -> None:
    log(
        f"plan ({'dry run on the CPU' if dry else 'GPU'}; estimates are GPU seconds, derived in gpu_matrix_plan.py):"
    )
    for part in parts:
        chosen = [s for s in steps if s.part == part]
        log(f"  part {part}: {len(chosen)} steps, estimate {sum(s.estimate_s for s in chosen):.0f} s")
        for s in chosen:
            extra = ""
            if dry:
                extra = (
                    "  [CPU: skipped: " + s.cpu_note + "]"
                    if s.cpu is None
                    else (f"  [CPU: {s.cpu_note}]" if s.cpu_note else "")
                )
            log(f"    {s.estimate_s:5.0f} s  {s.name}: python {' '.join(s.gpu)}{extra}")
    log(f"  total estimate {sum(s.estimate_s for s in steps if s.part in parts):.0f} s")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="folder for partN.tar.gz, report.md and summary.log")
    parser.add_argument("--dry-run", action="store_true", help="the same plan on the CPU at tiny sizes")
    parser.add_argument("--part", type=int, choices=(1, 2, 3), help="run one part (default: all three)")
    parser.add_argument(
        "--budget", type=float, default=DEFAULT_BUDGET_S, help="seconds per part (default 530)"
    )
    parser.add_argument(
        "--work", help="work folder (default: /tmp/suite-gpu-matrix, or OUT/work in a dry run)"
    )
    args = parser.parse_args(argv)
    if args.budget <= RESERVE_S + 5:
        parser.error(f"--budget {args.budget:g}: must be more than {RESERVE_S + 5:g} seconds")
    out = os.path.abspath(args.out)
    work = os.path.abspath(
        args.work or (os.path.join(out, "work") if args.dry_run else "/tmp/suite-gpu-matrix")
    )
    for folder in (
        out,
        work,
        *(os.path.join(work, f) for f in ("steps", "logs", "records", "bench", "data")),
    ):
        os.makedirs(folder, exist_ok=True)
    parts = [args.part] if args.part else [1, 2, 3]
    log = Log(os.path.join(out, "summary.log"))
    env = environment(work)
    steps = plan_module.plan(
        os.path.join(work, "data"), os.path.join(work, "records"), os.path.join(work, "suite-report.md")
    )
    write_json(os.path.join(work, "plan.json"), [s.__dict__ for s in steps])
    # The dry run's suite steps fork from one interpreter that has imported torch (~4 s a step saved);
    # the GPU run starts each step as a fresh interpreter, as a person would.
    starter = WarmStarter() if args.dry_run else None
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    started = time.monotonic()
    log(
        f"gpu matrix: {'dry run, CPU backend, tiny sizes' if args.dry_run else 'CUDA'}; parts {parts}; python {sys.executable}; "
        f"PYTHONPATH={ROOT}; work {work}"
    )
    print_plan(steps, parts, args.dry_run, log)
    if starter and not starter.usable:
        log(f"dry run: every step in a fresh interpreter: {starter.why}")
    status = 0
    for part in parts:
        try:
            chosen = [s for s in steps if s.part == part]
            ok = run_part(part, chosen, args.dry_run, work, args.budget, log, env, starter)
            status = status or (0 if ok else 1)
        except Stopped as why:
            log(f"[part {part}] {why}: packing what was measured")
            status = 3
        finally:
            gpu_matrix_report.write(work, steps, args.dry_run, os.path.join(work, "report.md"))
            shutil.copy(os.path.join(work, "report.md"), os.path.join(out, "report.md"))
            log(f"[part {part}] archive {archive(part, work, out)}")
        if status == 3:
            break
    log(
        f"gpu matrix: done in {time.monotonic() - started:.0f} s, exit {status}; report {os.path.join(out, 'report.md')}"
    )
    return status


if __name__ == "__main__":
    sys.exit(main())
