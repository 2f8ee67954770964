"""A person's own model is code the suite does not control: whatever it does (a thread left running, a fork,
sys.exit(), a BaseException, a debugger, the suite's own variables changed), `suite run` writes one record,
exits with a documented status and never hangs.

Each case writes a tiny module to tmp_path and runs it as a real `suite run --backend cpu` child, in a
session of its own, with stdin an open pipe (a debugger would wait on it) and a deadline: a run that hangs
is killed with its whole session and the test fails; it is never left to run. Those are slow (each starts
a fresh Python that imports torch and trains); the guard's own parts are checked in this process at the end.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest
from conftest import ROOT, records, suite_env

DEADLINE_S = 180  # a tiny run takes 10-30 s on a loaded 2-core machine; a hang never ends

# A tiny classifier whose forward calls HOOK(n) on its n-th real (not meta) call: planning's shape check
# runs on the meta device, so the hook fires only in training.
NET = """
import os, sys, threading, time
import torch
from torch import nn

class Net(nn.Module):
    def __init__(self, hook=None):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 3, 1), nn.AdaptiveAvgPool2d(2), nn.Flatten(), nn.Linear(12, 4))
        self.hook, self.calls = hook, 0

    def forward(self, images):
        if self.hook is not None and images.device.type != "meta":
            self.calls += 1
            self.hook(self.calls)
        return self.body(images)

class Escape(BaseException):
    pass
"""


def run_user_model(tmp_path, code: str, factory: str = "make") -> tuple[int, str, str, list[dict]]:
    """`suite run` on usermodel:FACTORY, CODE being the module after NET: (status, stdout, stderr, records)."""
    (tmp_path / "usermodel.py").write_text(NET + textwrap.dedent(code))
    out = tmp_path / "out"
    command = [
        sys.executable, "-m", "suite", "run", "--backend", "cpu", "--workload", f"usermodel:{factory}",
        "--batch-size", "2", "--image-size", "16", "--warmup", "1", "--steps", "1", "--windows", "1",
        "--threads", "1", "--out", str(out),
    ]  # fmt: skip
    env = suite_env(tmp_path, PYTHONPATH=ROOT)
    with open(tmp_path / "stdout", "w+") as stdout, open(tmp_path / "stderr", "w+") as stderr:
        child = subprocess.Popen(
            command, cwd=tmp_path, env=env, stdin=subprocess.PIPE, stdout=stdout, stderr=stderr,
            start_new_session=True,
        )  # fmt: skip
        try:
            status = child.wait(timeout=DEADLINE_S)
        except subprocess.TimeoutExpired:
            status = None
        finally:
            _end_session(child.pid)  # the run and anything it left (a forked copy, a hung process)
            child.stdin.close()
            child.wait()
        stdout.seek(0), stderr.seek(0)
        said, errors = stdout.read(), stderr.read()
    assert status is not None, f"suite run hung (killed after {DEADLINE_S} s); stderr:\n{errors[-3000:]}"
    return status, said, errors, list(records(out).values()) if out.is_dir() else []


def _end_session(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def only(found: list[dict]) -> dict:
    assert len(found) == 1, json.dumps(found, indent=1)[:3000]
    return found[0]


# -- a thread that is not a daemon ---------------------------------------------------------------------


@pytest.mark.slow
def test_a_thread_the_model_leaves_running_does_not_keep_the_suite_from_exiting(tmp_path):
    status, said, errors, found = run_user_model(
        tmp_path,
        """
        threading.Thread(target=time.sleep, args=(3600,), name="model-sleeper").start()  # at import

        def make():
            return Net()
        """,
    )
    record = only(found)
    assert status == 0 and record["status"] == "ok", errors
    assert any("model-sleeper" in line and "exits without them" in line for line in record["warnings"])
    assert "still running 5 s after the run (model-sleeper): exiting without them, status 0" in errors


@pytest.mark.slow
def test_a_thread_left_by_a_model_that_fails_planning_does_not_keep_the_error_waiting(tmp_path):
    status, said, errors, found = run_user_model(
        tmp_path,
        """
        threading.Thread(target=time.sleep, args=(3600,), name="model-sleeper").start()

        def make():
            raise ValueError("no weights here")
        """,
    )
    assert status == 2 and not found
    assert "the factory raised ValueError: no weights here" in errors
    assert "exiting without them, status 2" in errors


# -- a fork --------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "code",
    [
        """
        def make():
            os.fork()  # both processes return into the suite
            return Net()
        """,
        """
        def make():
            return Net(hook=lambda call: call == 1 and os.fork())  # in the first training step
        """,
    ],
    ids=["in-the-factory", "in-forward"],
)
def test_a_fork_in_the_model_writes_one_record_from_the_suites_own_process(tmp_path, code):
    status, said, errors, found = run_user_model(tmp_path, code)
    record = only(found)  # the copy wrote nothing
    assert status == 0 and record["status"] == "ok", errors
    assert any("forked the suite's process (os.fork at usermodel.py:" in line for line in record["warnings"])
    assert said.count("  record  ") == 1 and errors.count("record written to") == 1


# -- ways out of Python: sys.exit(), BaseException, GeneratorExit ------------------------------------


@pytest.mark.slow
def test_sys_exit_in_forward_is_a_failed_run_with_its_record(tmp_path):
    status, said, errors, found = run_user_model(
        tmp_path,
        """
        def make():
            return Net(hook=lambda call: sys.exit(3))
        """,
    )
    record = only(found)
    assert status == 1, errors
    assert record["status"] == "error" and record["error"]["type"] == "SystemExit"
    assert "called sys.exit(3)" in record["error"]["message"]
    assert "called sys.exit(3)" in said


@pytest.mark.slow
@pytest.mark.parametrize(
    "code,kind",
    [
        ("def make():\n    return Net(hook=lambda call: (_ for _ in ()).throw(Escape('left early')))", "Escape"),
        ("def make():\n    return Net(hook=lambda call: (_ for _ in ()).throw(GeneratorExit('closed')))", "GeneratorExit"),
    ],
    ids=["BaseException", "GeneratorExit"],
)  # fmt: skip
def test_a_base_exception_in_forward_is_a_failed_run_with_its_record(tmp_path, code, kind):
    status, said, errors, found = run_user_model(tmp_path, code)
    record = only(found)
    assert status == 1 and "Traceback" not in errors, errors
    assert record["status"] == "error" and record["error"]["type"] == kind
    assert f"raised {kind}, a BaseException" in record["error"]["message"]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["Escape", "GeneratorExit"])
def test_a_base_exception_in_the_factory_is_one_line_and_exit_2(tmp_path, kind):
    status, said, errors, found = run_user_model(tmp_path, f"def make():\n    raise {kind}('no model')\n")
    assert status == 2 and not found and "Traceback" not in errors, errors
    assert f"workload 'usermodel:make': the factory raised {kind}: no model" in errors


# -- a debugger ----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_debugger_in_the_model_neither_waits_on_stdin_nor_ends_the_run(tmp_path):
    status, said, errors, found = run_user_model(
        tmp_path,
        """
        def make():
            import pdb

            pdb.set_trace()
            return Net(hook=lambda call: breakpoint())
        """,
    )
    record = only(found)
    assert status == 0 and record["status"] == "ok", errors
    assert "(Pdb)" not in said + errors
    said_of = [line for line in record["warnings"] if "debuggers are off" in line]
    assert any("pdb.set_trace()" in line and "usermodel.py:" in line for line in said_of), said_of
    assert any("breakpoint()" in line for line in said_of), said_of


# -- the suite's own variables -------------------------------------------------------------------------


@pytest.mark.slow
def test_a_model_that_changes_the_suites_variables_cannot_hide_its_run(tmp_path):
    status, said, errors, found = run_user_model(
        tmp_path,
        """
        def make():
            os.environ["SUITE_ORIGIN"] = "sweep"  # would hide the run from `suite report`
            return Net(hook=lambda call: os.environ.__setitem__("SUITE_FALLBACK_DIR", "/nowhere"))
        """,
    )
    record = only(found)
    assert status == 0 and record["status"] == "ok", errors
    assert record["origin"] == "run"
    assert any("set SUITE_ORIGIN to 'sweep': undone" in line for line in record["warnings"])
    assert any("set SUITE_FALLBACK_DIR to '/nowhere': undone" in line for line in record["warnings"])


# -- the guard's parts, in this process -----------------------------------------------------------------


def test_the_guard_puts_the_suites_variables_back_and_names_the_change(monkeypatch):
    from suite.workloads import user_code

    monkeypatch.setenv("SUITE_ORIGIN", "run")
    monkeypatch.delenv("SUITE_FALLBACK_DIR", raising=False)
    with user_code.Guard() as guard:
        os.environ["SUITE_ORIGIN"] = "sweep"
        os.environ["SUITE_FALLBACK_DIR"] = "/nowhere"
        user_code.restore_environment()
        assert os.environ["SUITE_ORIGIN"] == "run" and "SUITE_FALLBACK_DIR" not in os.environ
    assert guard.notes == [
        "the model's code set SUITE_FALLBACK_DIR to '/nowhere': undone, the suite keeps its own variables as "
        "they were before the model's code ran",
        "the model's code set SUITE_ORIGIN to 'sweep': undone, the suite keeps its own variables as they were "
        "before the model's code ran",
    ]


def test_the_guard_turns_debuggers_off_and_puts_everything_back():
    import bdb
    import pdb

    hook, set_trace, variable = sys.breakpointhook, bdb.Bdb.set_trace, os.environ.get("PYTHONBREAKPOINT")
    with user_code_guard() as guard:
        breakpoint()  # noqa: T100 - the point: it must do nothing here
        pdb.Pdb().set_trace()  # noqa: T100 - pdb.set_trace() itself, which pytest replaces, builds one of these
        assert os.environ["PYTHONBREAKPOINT"] == "0" and os.read(0, 1) == b""  # stdin: end-of-file at once
    assert (sys.breakpointhook, bdb.Bdb.set_trace) == (hook, set_trace)
    assert os.environ.get("PYTHONBREAKPOINT") == variable
    assert [note.split(" at ")[0] for note in guard.notes] == [
        "the model's code called breakpoint()",
        "the model's code called a debugger (pdb.set_trace() or the like)",
    ]
    assert all("test_user_code.py:" in note for note in guard.notes)


def user_code_guard():
    from suite.workloads import user_code

    return user_code.Guard()


def test_a_record_error_names_a_sys_exit_or_a_base_exception():
    from suite.workloads import user_code

    assert user_code.escape_error(SystemExit(3)) == {
        "type": "SystemExit",
        "message": "the run's code called sys.exit(3): code the suite runs must return or raise, not end the "
        "process",
    }
    assert user_code.escape_error(GeneratorExit("closed\nmore")) == {
        "type": "GeneratorExit",
        "message": "the run's code raised GeneratorExit, a BaseException, not an Exception: closed",
    }


def test_the_guard_counts_only_threads_started_under_it_that_are_not_daemons():
    import threading

    from suite.workloads import user_code

    stop = threading.Event()
    with user_code.Guard() as guard:
        threads = [threading.Thread(target=stop.wait, name=name, daemon=daemon) for name, daemon in
                   (("kept", False), ("daemon", True))]  # fmt: skip
        for thread in threads:
            thread.start()
        try:
            assert guard.left_threads() == threads[:1]
            assert guard.thread_note().startswith(
                "1 thread(s) started during the run still running at its end (kept)"
            )
        finally:
            stop.set()
            for thread in threads:
                thread.join()
    assert guard.thread_note() is None
