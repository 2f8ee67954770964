"""Every CUDA result the README needs, from one command on a bare GPU machine; `--dry-run` runs the same plan
on the CPU at tiny sizes (what CI proves).

    benchmarks/gpu_matrix.sh OUT [--part quick|more|extra|tune|best|best-more|all] [--only STEP,...] [--skip STEP,...] [--budget S]
                                 [--dry-run [--as-gpu NAME]] [--plan] [--work DIR]

The plan (benchmarks/gpu_matrix_plan.py) is a list of `suite` command lines, plus the bare loop, the timm
peer and `pytest -m gpu`, in parts sized for a 15-minute lease: `quick` fills the README's cuda row in one
10-minute command, `more` follows at once (`best` and `best-more`, each workload at its best-known
configuration, are a lease's other pair of commands). Before any step a fresh interpreter checks that it has torch and
sees a CUDA device (exit 2 in one line if not) and names the GPU, which chooses the instance every run is
priced as. Then each step runs in a fresh process (in a dry run, a suite step is a fork of one interpreter
that has imported torch: benchmarks/warm_start.py), in order of value, each only where its estimate fits
the time left, the estimate's start-up figure replaced by what the finished runs measured. `--budget` is
the wall time of the whole command; `suite report` of every record runs last, in time kept back for it.

After every step it rewrites, into OUT: matrix.tar.gz (every step file, log, record and bench result in
the work folder, this command's and earlier ones'), report.md (every step's outcome, the measured start,
suite ÷ bare, the peer, and `suite report`) and summary.log (what was printed), so a command killed from
outside still returns what it measured. `--only` reruns the named steps and adds them to what the work
folder holds (default /tmp/suite-gpu-matrix on the GPU, OUT/work in a dry run); `--skip` leaves the named
steps out, each recorded as skipped with that reason.

Installing: the checkout runs from its own folder with PYTHONPATH set to it (suite/__init__.py finds
backends/ and workloads/ beside suite/), so nothing is pip-installed and the machine's torch is untouched.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)

import gpu_matrix_plan as plan_module  # noqa: E402
import gpu_matrix_report  # noqa: E402
from warm_start import WarmStarter  # noqa: E402

from suite.inputs import errors, numbers  # noqa: E402 - plain Python: a bare interpreter imports them

DEFAULT_BUDGET_S = 540.0  # a command may run 10 minutes there: 60 s are left for the start and the copies
REPORT_S = 15.0  # kept back for `suite report` (no torch import: about a second), after the last step
PACK_S = 5.0  # kept back for the last report.md and archive
MIN_BUDGET_S = REPORT_S + PACK_S + 5
MAX_BUDGET_S = 24 * 3600.0  # a lease is minutes; a budget of days is a typo, and nan or inf no deadline
# A fresh interpreter's start as the steps pay it: torch imported, and on the GPU a CUDA context and the
# device's name (also: is this the machine the matrix is for).
PREFLIGHT = {
    "gpu": "import torch; torch.cuda.init(); print(torch.__version__); print(torch.cuda.get_device_name(0))",
    "dry": "import torch; print(torch.__version__)",
}


class Stopped(Exception):
    """SIGTERM or Ctrl-C: stop the running step, keep what was measured."""


def _stop(signum, frame):
    raise Stopped(signal.Signals(signum).name)


class Log:
    """Prints and keeps every line: OUT/summary.log (this command) and the work folder's (every command)."""

    def __init__(self, *paths: str):
        self.handles = [open(path, "a") for path in paths]

    def __call__(self, text: str = "", stream=None) -> None:
        print(text, file=stream or sys.stdout, flush=True)  # sys.stdout as it is now, not at import
        for handle in self.handles:
            handle.write(text + "\n")
            handle.flush()

    def keep(self, error: str) -> None:
        """An error: on stderr, and kept."""
        self(error, stream=sys.stderr)


def environment(work: str) -> dict:
    """This environment, importing the checkout (PYTHONPATH), with every cache in the work folder: the
    suite's, and the compilers' (Triton, TorchInductor), so nothing is written outside it."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, env.get("PYTHONPATH")) if p)
    env.setdefault("SUITE_CACHE_DIR", os.path.join(work, "suite-cache"))
    env.setdefault("TRITON_CACHE_DIR", os.path.join(work, "triton-cache"))
    env.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(work, "inductor-cache"))
    return env


def preflight(dry: bool, env: dict) -> dict:
    """A fresh interpreter imports torch (and on the GPU starts CUDA and names the device): the start every
    step pays, measured; and the check that this is the machine the matrix is for."""
    started = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-c", PREFLIGHT["dry" if dry else "gpu"]],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    except subprocess.TimeoutExpired:
        return {"ok": False, "why": "importing torch did not finish in 300 s"}
    wall_s = round(time.monotonic() - started, 2)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"ok": False, "why": last, "wall_s": wall_s}
    lines = done.stdout.split("\n")
    return {"ok": True, "torch": lines[0], "gpu": lines[1] if not dry else None, "wall_s": wall_s}


def choose_instance(gpu_name: str) -> tuple[str | None, str]:
    """The instance runs on GPU_NAME are priced as, if a shipped catalog has it; and what was decided."""
    instance = plan_module.instance_for(gpu_name)
    if instance is None:
        return None, f"no cloud instance has {gpu_name!r}: runs are not priced"
    from suite.inputs.errors import UserError
    from suite.prices.catalog import find_instance

    try:
        found, catalog = find_instance(instance)
    except UserError:
        return None, f"{gpu_name} would be priced as {instance}, which no shipped catalog has: not priced"
    return instance, (
        f"{gpu_name}: priced as {instance} ({found.accelerator_count} × {found.accelerator}; one of its "
        f"accelerators runs, the report says so on every row), catalog {catalog.name}"
    )


def run_step(step, argv, work: str, deadline: float, env: dict, starter=None) -> dict:
    """Run one step in its own process group; its output goes to logs/NAME.log. With a warm starter (the
    dry run), a suite command is a fork of an interpreter that has imported torch."""
    out_dir = os.path.join(work, "records", step.name)
    shutil.rmtree(out_dir, ignore_errors=True)  # a step run again replaces its own records
    if step.records:
        argv = [*argv, "--out", out_dir]
    if step.bench:
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
            result.update(rc=None, status="interrupted", wall_s=round(time.monotonic() - started, 1))
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
    """ok when the step did what it is for: exit 0 and its records ok, or, for the OOM step, an oom record.
    A finished run's start-up (its wall time less its timed windows) is kept for the estimates."""
    records = gpu_matrix_report.run_records(os.path.join(work, "records", step.name))
    statuses = [r["status"] for r in records]
    result["record_statuses"] = statuses
    timed = [r["metrics"].get("time_timed_s") for r in records if r["status"] == "ok" and r.get("metrics")]
    if len(records) == 1 and timed and timed[0] is not None and result.get("wall_s"):
        result["start_s"] = round(result["wall_s"] - timed[0], 1)
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


class Matrix:
    """One command: its steps, its deadline, the start-up it has measured, and what it leaves in OUT."""

    def __init__(self, args, work: str, out: str, log: Log, env: dict, gpu: str, instance, commit):
        self.args, self.work, self.out, self.log, self.env = args, work, out, log, env
        self.dry = args.dry_run
        self.gpu, self.instance, self.commit = gpu, instance, commit
        self.started = time.monotonic()
        self.command_deadline = self.started + args.budget - PACK_S
        self.steps_deadline = self.command_deadline - REPORT_S
        self.plan = plan_module.Planner(
            gpu,
            os.path.join(work, "data"),
            os.path.join(work, "records"),
            os.path.join(work, "suite-report.md"),
            instance,
        ).steps()
        self.starter = None
        self.stopped = ""

    def measured_start_s(self) -> tuple[float, str]:
        """The start-up of a fresh run: the median of what the finished runs in the work folder measured
        (wall time less timed windows), else the plan's assumption. A run whose wall time holds other work
        outside its windows (compiling, the host's FLOP count) measures that too, not a fresh start."""
        measured = [
            done["start_s"]
            for done in (
                gpu_matrix_report.read_json(os.path.join(self.work, "steps", f"{s.name}.json"))
                for s in self.plan
                if not s.outside_windows_s
            )
            if done and done.get("start_s") is not None and not self.dry
        ]
        if measured:
            return statistics.median(measured), f"measured: median of {len(measured)} runs"
        return plan_module.START_S, "assumed"

    def chosen(self) -> list:
        if self.args.only:
            wanted = set(self.args.only)
            return [s for s in self.plan if s.name in wanted and s.name != "report"]
        parts = plan_module.ALL if self.args.part == "all" else (self.args.part,)
        return [s for s in self.plan if s.part in parts]

    def print_plan(self, steps) -> None:
        steps = [*steps, self.plan[-1]]  # the report, last
        start_s, how = self.measured_start_s()
        self.log(
            f"plan for {self.gpu} ({'dry run on the CPU; ' if self.dry else ''}estimates are GPU seconds: "
            f"{start_s:.0f} s a fresh process, {how}, plus the work; gpu_matrix_plan.py):"
        )
        for s in steps:
            extra = ""
            if self.dry:
                extra = (
                    f"  [CPU: skipped: {s.cpu_note}]"
                    if s.cpu is None
                    else (f"  [CPU: {s.cpu_note}]" if s.cpu_note else "")
                )
            self.log(
                f"  {s.estimate_s(start_s):5.0f} s  {s.part:5}  {s.name}: python {' '.join(s.gpu)}{extra}"
            )
        self.log(
            f"  total estimate {sum(s.estimate_s(start_s) for s in steps):.0f} s (budget {self.args.budget:.0f} s)"
        )

    def skip_reason(self, step) -> str:
        if step.name in self.args.skip:
            return "left out by --skip"
        if plan_module.command(step, self.dry) is None:
            return step.cpu_note
        if step.needs_module and importlib.util.find_spec(step.needs_module) is None:
            return f"needs the Python package {step.needs_module!r}, which {sys.executable} does not have"
        if step.name == "report" and not gpu_matrix_report.run_records(os.path.join(self.work, "records")):
            return "no run record in the work folder yet"
        if step.needs_step:
            done = gpu_matrix_report.read_json(os.path.join(self.work, "steps", f"{step.needs_step}.json"))
            if not done or done.get("status") != "ok":
                return f"needs {step.needs_step} to have run ok in this work folder ({self.work})"
        return ""

    def run(self, steps) -> int:
        """Every chosen step, then the report; the outputs rewritten after each. Exit status: 0 every step
        did what it is for (or was skipped with a reason), 1 some failed or did not fit, 3 stopped."""
        all_ok = True
        for step in [*steps, self.plan[-1]]:
            try:
                summary = self.one(step)
            except Stopped as why:  # between steps: this one is recorded as not run, like the rest
                self.stopped = self.stopped or f"stopped by {why}"
                summary = self.one(step)
            all_ok &= summary["status"] in ("ok", "skipped")
            self.leave()
        return 3 if self.stopped else (0 if all_ok else 1)

    def one(self, step) -> dict:
        start_s, how = self.measured_start_s()
        summary = {
            "name": step.name,
            "part": step.part,
            "command": "only" if self.args.only else self.args.part,
            "commit": self.commit,
            "gpu": self.gpu,
            "instance": self.instance,
            "estimate_s": step.estimate_s(start_s),
            "estimate_start_s": f"{start_s:.1f} ({how})",
            "expect": step.expect,
            "cpu_note": step.cpu_note if self.dry else "",
            "gpu_command": " ".join(step.gpu),
        }
        deadline = self.command_deadline if step.name == "report" else self.steps_deadline
        left = deadline - time.monotonic()
        skip = self.skip_reason(step)
        if self.stopped:
            summary.update(status="not-run", reason=self.stopped)
        elif skip:
            summary.update(status="skipped", reason=skip)
        elif not self.dry and step.name != "report" and summary["estimate_s"] > left:
            # GPU seconds decide on the GPU only: a dry run's tiny steps take seconds, and its deadline alone
            # stops it
            summary.update(
                status="not-run",
                reason=f"needs about {summary['estimate_s']:.0f} s, {max(left, 0):.0f} s left",
            )
        elif left < 1:
            summary.update(status="not-run", reason=f"budget of {self.args.budget:.0f} s reached")
        else:
            self.log(
                f"[{step.part}] {step.name}: started (estimate {summary['estimate_s']:.0f} s on the GPU, {left:.0f} s left)"
            )
            try:
                result = run_step(
                    step, plan_module.command(step, self.dry), self.work, deadline, self.env, self.starter
                )
                summary.update(judge(step, result, self.work))
            except Stopped as why:
                self.stopped = f"stopped by {why}"
                summary.update(status="interrupted", reason=self.stopped)
        write_json(os.path.join(self.work, "steps", f"{step.name}.json"), summary)
        self.log(
            f"[{step.part}] {step.name}: {summary['status']}"
            + (f" in {summary['wall_s']} s" if "wall_s" in summary else "")
            + (f", start-up {summary['start_s']} s" if "start_s" in summary else "")
            + (f" ({summary.get('reason')})" if summary.get("reason") else "")
        )
        return summary

    def leave(self) -> None:
        """report.md and matrix.tar.gz in OUT, as they stand now."""
        gpu_matrix_report.write(
            self.work,
            self.plan,
            self.dry,
            os.path.join(self.work, "report.md"),
            {"gpu": self.gpu, "instance": self.instance, "commit": self.commit},
        )
        shutil.copy(os.path.join(self.work, "report.md"), os.path.join(self.out, "report.md"))
        archive(self.work, self.out)


def archive(work: str, out: str) -> str:
    """OUT/matrix.tar.gz: every step file, log, record and bench result in the work folder, with the report
    and the plan (never the image data or the caches)."""
    path = os.path.join(out, "matrix.tar.gz")
    with tarfile.open(path + ".tmp", "w:gz") as tar:
        for folder in ("steps", "logs", "records", "bench"):
            if os.path.isdir(os.path.join(work, folder)):
                tar.add(os.path.join(work, folder), arcname=f"matrix/{folder}")
        for name in ("report.md", "suite-report.md", "plan.json", "preflight.json", "summary.log"):
            if os.path.exists(os.path.join(work, name)):
                tar.add(os.path.join(work, name), arcname=f"matrix/{name}")
    os.replace(path + ".tmp", path)
    return path


def commit_of_checkout() -> str | None:
    try:
        from suite.context import git_commit
    except ImportError:  # an interpreter without the suite's requirements: the preflight says so
        return None
    return git_commit()


def _budget(text: str) -> float:
    """--budget S: plain decimal seconds, finite and at most MAX_BUDGET_S (`nan` ran with no deadline,
    `inf` ended in a traceback); its least is checked after parsing, with its own message."""
    value = numbers.decimal(text)
    if value is None or value > MAX_BUDGET_S:
        raise argparse.ArgumentTypeError(
            f"{errors.shown(text)}: seconds for the whole command, a plain number from {MIN_BUDGET_S:g} "
            f"to {MAX_BUDGET_S:,.0f}"
        )
    return value


def _check_names(parser, args) -> None:
    """--as-gpu, --only and --skip are printed in the plan and the log: a value holding control characters (an
    escape sequence) is refused, shown escaped, never echoed raw to a terminal."""
    for option, value in (("--as-gpu", args.as_gpu), ("--only", args.only), ("--skip", args.skip)):
        if value is not None and errors.CONTROL.search(value):
            parser.error(f"{option} {errors.shown(value)}: holds control characters (a name has none)")


def check_folders(*folders: str) -> None:
    """Each folder can be made and written (a small file written, synced and removed) before anything runs:
    one that is a file, lies under one, is read-only or full is one line and exit 2, not a traceback."""
    for folder in folders:
        try:
            os.makedirs(folder, exist_ok=True)
            probe = os.path.join(folder, f".gpu-matrix-probe-{os.getpid()}")
            try:
                with open(probe, "wb") as handle:
                    handle.write(b"\0" * 4096)
                    handle.flush()
                    os.fsync(handle.fileno())
            finally:
                if os.path.lexists(probe):
                    os.unlink(probe)
        except OSError as error:
            why = error.strerror or str(error)
            if os.path.lexists(folder) and not os.path.isdir(folder):
                why = "it is a file, not a folder"
            elif isinstance(error, NotADirectoryError):
                why = "it lies under a file, not a folder"
            print(f"gpu matrix: {errors.shown(folder)} cannot be written: {why}", file=sys.stderr)
            raise SystemExit(2) from None


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="folder for matrix.tar.gz, report.md and summary.log")
    parser.add_argument("--dry-run", action="store_true", help="the same plan on the CPU at tiny sizes")
    parser.add_argument(
        "--part",
        choices=(*plan_module.PARTS, "all"),
        default="quick",
        help="quick (default): the README's cuda row, <= 6 min on an H100; more: the rest of its detail, "
        "<= 4 min; extra: a longer lease's; all: the three in order; tune: `suite tune` of resnet50 and "
        "gpt2-small; best: the best-known configurations, <= 6 min on an H200; best-more: the rest of them",
    )
    parser.add_argument(
        "--only", help="STEP[,STEP...]: rerun just these, adding to what the work folder holds"
    )
    parser.add_argument(
        "--skip", help="STEP[,STEP...]: leave these out (each recorded as skipped, with that reason)"
    )
    parser.add_argument(
        "--budget",
        type=_budget,
        default=DEFAULT_BUDGET_S,
        help=f"seconds for the whole command, packing included (default {DEFAULT_BUDGET_S:.0f})",
    )
    parser.add_argument(
        "--as-gpu", metavar="NAME", help="plan and price for this GPU (with --dry-run or --plan)"
    )
    parser.add_argument("--plan", action="store_true", help="print the plan with its estimates and stop")
    parser.add_argument(
        "--work", help="work folder (default: /tmp/suite-gpu-matrix, or OUT/work in a dry run)"
    )
    args = parser.parse_args(argv)
    _check_names(parser, args)
    if args.budget < MIN_BUDGET_S:
        parser.error(f"--budget {args.budget:g}: must be at least {MIN_BUDGET_S:g} seconds")
    if args.as_gpu is not None and not (args.dry_run or args.plan):
        parser.error(
            "--as-gpu is for --dry-run or --plan: a GPU run is planned and priced for the GPU it finds"
        )
    if args.as_gpu is not None and not args.as_gpu.strip():
        parser.error("--as-gpu is empty: give a GPU's name as torch reports it, e.g. 'NVIDIA H200'")
    args.only = step_names(parser, "--only", args.only)
    args.skip = step_names(parser, "--skip", args.skip) or []
    return args


def step_names(parser, option: str, value: str | None) -> list[str] | None:
    """The steps named by --only or --skip (STEP[,STEP...]), each a step of the plan; None where not given."""
    if value is None:
        return None
    names = [n.strip() for n in value.split(",") if n.strip()]
    known = [s.name for s in plan_module.plan("", "", "") if s.name != "report"]
    unknown = [n for n in names if n not in known]
    if not names or unknown:
        parser.error(
            f"{option} {value!r}: unknown step {', '.join(map(errors.printable, unknown)) or '(none given)'}; "
            f"steps: {', '.join(known)}"
        )
    return names


def main(argv=None) -> int:
    args = parse(argv)
    out = os.path.abspath(args.out)
    work = os.path.abspath(
        args.work or (os.path.join(out, "work") if args.dry_run else "/tmp/suite-gpu-matrix")
    )
    env = environment(work)
    commit = commit_of_checkout()
    if args.plan:  # printed only: nothing is written
        gpu = args.as_gpu or plan_module.DEFAULT_GPU
        instance, how = choose_instance(gpu)
        matrix = Matrix(args, work, out, Log(), env, gpu, instance, commit)
        matrix.log(how)
        matrix.print_plan(matrix.chosen())
        return 0
    check_folders(out, work)
    for folder in (
        out,
        work,
        *(os.path.join(work, f) for f in ("steps", "logs", "records", "bench", "data")),
    ):
        os.makedirs(folder, exist_ok=True)
    log = Log(os.path.join(out, "summary.log"), os.path.join(work, "summary.log"))
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    try:
        return _run(args, out, work, log, env, commit)
    except Stopped as why:  # before the steps began: nothing measured to keep
        log(f"gpu matrix: stopped by {why} before any step")
        return 3


def _run(args, out, work, log, env, commit) -> int:
    checked = preflight(args.dry_run, env)
    write_json(os.path.join(work, "preflight.json"), checked)
    if not checked["ok"]:  # one line, on stderr and in summary.log; nothing run
        needs = "torch" if args.dry_run else "torch and a CUDA device"
        log.keep(
            f"gpu matrix: PYTHON={sys.executable} cannot run the matrix, which needs {needs}: {checked['why']}"
        )
        return 2
    log(
        f"gpu matrix: {'dry run, CPU backend, tiny sizes' if args.dry_run else 'CUDA'}; "
        f"{'only ' + ','.join(args.only) if args.only else 'part ' + args.part}; python {sys.executable}; "
        f"commit {commit or 'unknown (no git, no .suite-commit: benchmarks/stamp_commit.sh)'}; work {work}"
    )
    gpu = checked["gpu"] or args.as_gpu or plan_module.DEFAULT_GPU
    instance, how = choose_instance(gpu)
    log(
        f"preflight: a fresh interpreter imported torch {checked['torch']}"
        f"{'' if args.dry_run else ' and started CUDA on ' + gpu} in {checked['wall_s']} s"
    )
    log(how)
    matrix = Matrix(args, work, out, log, env, gpu, instance, commit)
    steps = matrix.chosen()
    write_json(
        os.path.join(work, "plan.json"), [s.__dict__ | {"estimate_s": s.estimate_s()} for s in matrix.plan]
    )
    matrix.print_plan(steps)
    # The dry run's suite steps fork from one interpreter that has imported torch (~4 s a step saved); the
    # GPU run starts each step as a fresh interpreter, as a person would, so its start-up is measured.
    if args.dry_run:
        matrix.starter = WarmStarter()
        if not matrix.starter.usable:
            log(f"dry run: every step in a fresh interpreter: {matrix.starter.why}")
            matrix.starter = None
    status = matrix.run(steps)
    log(
        f"gpu matrix: done in {time.monotonic() - matrix.started:.0f} s, exit {status}; "
        f"report {os.path.join(out, 'report.md')}, archive {os.path.join(out, 'matrix.tar.gz')}"
    )
    return status


if __name__ == "__main__":
    sys.exit(main())
