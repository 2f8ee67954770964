"""`python -m suite ...` and `python SCRIPT ...` for the GPU matrix's dry run, without importing torch again
for every step.

A dry-run step is a suite command (or the bare loop, the timm peer) at tiny sizes on the CPU: ~4 s
of it is importing torch, torch._dynamo (which torch's optimizers import) and torchvision, ~0.3 s is the
work. The warm starter imports them once; each step is then a fork of that interpreter: a process of its
own (pid, session, environment, working folder, output, exit status, its own children) that runs the
module or script as `python` does (runpy). What a fresh interpreter adds (the imports, and `suite run`
presetting device variables before torch is imported) is exercised by the GPU run, which never forks, and
by the test suite's child-process tests.
"""

from __future__ import annotations

import multiprocessing
import os
import runpy
import signal
import subprocess
import sys
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


class WarmStarter:
    def __init__(self):
        """Import what every step imports. Where that fails, or leaves a thread running (fork copies only
        the calling thread, and its locks would stay held in every step), each step is a fresh interpreter
        after all (`usable` False, `why` says why)."""
        self.usable, self.why = False, ""
        sys.path.insert(0, ROOT)  # the checkout's suite, as the steps' PYTHONPATH gives it to them
        try:
            from suite.vendors import optional_modules

            optional_modules.quarantine_broken()  # as `suite` does before torch is imported
            import torch._dynamo  # noqa: F401 - nothing here runs a torch op
            import torchvision  # noqa: F401

            import suite.cli  # noqa: F401
        except Exception as error:  # noqa: BLE001 - any import failure: fresh interpreters
            self.why = f"importing torch here failed ({type(error).__name__}: {error})"
            return
        try:
            import timm  # noqa: F401 - the timm steps'
        except ImportError:
            pass
        self.usable = threading.active_count() == 1
        self.why = "" if self.usable else "an import left a thread running"

    def handles(self, argv: list[str]) -> bool:
        """A suite command or a script; pytest (the GPU tests' step) keeps a fresh interpreter: it loads
        its plugins as a person's pytest does, not from modules already imported."""
        return (
            self.usable
            and argv[0] == sys.executable
            and (argv[1:3] == ["-m", "suite"] or argv[1].endswith(".py"))
        )

    def start(self, argv: list[str], log, env: dict) -> Forked:
        """Start ARGV (as for subprocess: this python, then -m suite or a script) with output to `log`.
        Returns once the step has its own session and signal handlers: SIGINT and SIGTERM wait until
        then, so the matrix's stop always finds a process group to stop."""
        ready_read, ready_write = os.pipe()
        held = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            process = multiprocessing.get_context("fork").Process(
                target=_step, args=(argv[1:], log.fileno(), env, ready_write), name=" ".join(argv[1:4])
            )
            try:
                process.start()
            finally:
                os.close(ready_write)  # the step has its own copy
            os.read(ready_read, 1)  # b"" if the step died first: then there is nothing to wait for
        finally:
            os.close(ready_read)
            signal.pthread_sigmask(signal.SIG_SETMASK, held)  # a stop that came meanwhile lands now
        return Forked(process)


def _step(args: list[str], log_fd: int, env: dict, ready_fd: int) -> None:
    os.setsid()  # its own process group, as start_new_session gives a fresh process
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the matrix's handlers
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    os.write(ready_fd, b"1")
    os.close(ready_fd)
    os.chdir(ROOT)
    os.environ.clear()
    os.environ.update(env)
    for fd in (1, 2):
        os.dup2(log_fd, fd)
    # As `python -m MODULE ARGS` / `python SCRIPT ARGS` set them up; a SystemExit from the module ends the
    # process with its status, as it would end python.
    if args[0] == "-m":
        sys.argv = [args[1], *args[2:]]  # runpy puts the module's file in argv[0]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(args)
        sys.path.insert(0, os.path.dirname(os.path.abspath(args[0])))
        runpy.run_path(args[0], run_name="__main__")


class Forked:
    """A forked step with the part of subprocess.Popen's interface the matrix uses."""

    def __init__(self, process):
        self.process = process
        self.pid = process.pid

    def wait(self, timeout: float | None = None) -> int:
        self.process.join(timeout)
        if self.process.exitcode is None:
            raise subprocess.TimeoutExpired(self.process.name, timeout)
        return self.process.exitcode
