"""What a person's own code (a factory, its module's import, its forward) may not do to the run around it.

The suite runs a model's code in its own process: planning imports the module and calls the factory on the
meta device (so that a broken model is exit 2 before anything is built), and the run calls it again and
trains it. `Guard` is held for the whole of `suite run` and keeps these ways out closed:

- a fork: the copy that returns into the suite ends at its next check (`end_if_a_copy`: the end of a
  factory call, a warm-up step, a timed window, before a record is written) and writes nothing; the
  parent's record says where the fork was made;
- a debugger (`breakpoint()`, `pdb.set_trace()`, anything built on `bdb`): it does nothing and the record
  says where it was asked for; PYTHONBREAKPOINT=0 for the processes the run starts; stdin reads as empty,
  so nothing waits on a terminal;
- the suite's own variables (SUITE_*): as they were before the model's code ran, put back when its code
  returns, the change named in the record;
- a thread that is not a daemon: the suite waits for it at most THREAD_GRACE_S once the command is done,
  then exits without it, saying so (`exit_without_threads`).

A `sys.exit()`, a `BaseException` of any kind or a `GeneratorExit` becomes a failure the run records
(`escape_error`); only KeyboardInterrupt (Ctrl-C, SIGTERM) still stops the suite. What no Python code can
catch (`os._exit()`, a crash in native code) ends the process with no record of its own.
"""

from __future__ import annotations

import os
import sys
import threading
import time

# How long the suite waits for threads a model's code left running after the command is done: long enough
# for a logger to flush, short enough that a run never looks hung.
THREAD_GRACE_S = 5.0
SUITE_PREFIX = "SUITE_"
# Modules whose forks are the suite's or the standard library's own helpers (a child run, a loader worker),
# whose processes never return into the suite's code.
_OWN_FORKERS = ("subprocess", "multiprocessing", "concurrent.", "suite.", "torch.")

_active: Guard | None = None
_fork_hook_installed = False


def where(frame) -> str:
    """`file.py:12`, where FRAME is."""
    if frame is None:
        return "an unknown place"
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"


class Guard:
    """The closed ways out of one `suite run`; `with Guard() as guard:` opens and undoes them."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.status = 1  # the command's exit status, once it is known (a failure until then)
        self.notes: list[str] = []
        self._threads = set(threading.enumerate())
        self._environment = self._suite_variables()
        self._undo: list = []

    # -- opening and closing -----------------------------------------------------------------------------

    def __enter__(self) -> Guard:
        global _active
        self._debuggers_off()
        self._stdin_empty()
        _install_fork_hook()
        previous = _active
        self._undo.append(lambda: _set_active(previous))
        _active = self
        return self

    def __exit__(self, *exc) -> None:
        while self._undo:
            self._undo.pop()()

    def _debuggers_off(self) -> None:
        import bdb

        previous_hook, previous_trace = sys.breakpointhook, bdb.Bdb.set_trace
        previous_env = os.environ.get("PYTHONBREAKPOINT")
        guard = self

        def breakpoint_asked(*_args, **_kwargs) -> None:
            guard.note_debugger("breakpoint()", sys._getframe(1))

        def set_trace_asked(_debugger, frame=None) -> None:
            guard.note_debugger("a debugger (pdb.set_trace() or the like)", frame or sys._getframe(1))

        sys.breakpointhook, bdb.Bdb.set_trace = breakpoint_asked, set_trace_asked
        os.environ["PYTHONBREAKPOINT"] = "0"  # read by the default hook at each call, here and in children

        def undo() -> None:
            sys.breakpointhook, bdb.Bdb.set_trace = previous_hook, previous_trace
            if previous_env is None:
                os.environ.pop("PYTHONBREAKPOINT", None)
            else:
                os.environ["PYTHONBREAKPOINT"] = previous_env

        self._undo.append(undo)

    def _stdin_empty(self) -> None:
        """Standard input reads as empty (a pipe with no writer) while the command runs: `suite run` reads none, and a
        debugger or an `input()` in the model's code must not wait on a terminal or a pipe."""
        try:
            saved = os.dup(0)
        except OSError:
            return  # no stdin at all: nothing can wait on it
        read_end, write_end = os.pipe()
        os.close(write_end)  # a pipe with no writer: every read is end-of-file at once
        os.dup2(read_end, 0)
        os.close(read_end)

        def undo() -> None:
            os.dup2(saved, 0)
            os.close(saved)

        self._undo.append(undo)

    # -- what the model's code did -------------------------------------------------------------------

    def end_if_a_copy(self) -> None:
        end_if_a_copy(self.pid)

    def note_debugger(self, what: str, frame) -> None:
        self._note(
            f"the model's code called {what} at {where(frame)}: debuggers are off while the suite runs "
            "(PYTHONBREAKPOINT=0, stdin empty); the run went on"
        )

    def note_fork(self, frame) -> None:
        self._note(
            f"the model's code forked the suite's process (os.fork at {where(frame)}): the copy was ended "
            "at the suite's next check, writing nothing; it may have slowed this run until then"
        )

    def _note(self, line: str) -> None:
        if line not in self.notes:
            self.notes.append(line)

    @staticmethod
    def _suite_variables() -> dict[str, str]:
        return {name: value for name, value in os.environ.items() if name.startswith(SUITE_PREFIX)}

    def restore_environment(self) -> None:
        """Put the suite's own variables back as they were before the model's code ran, naming each
        change: a factory that set SUITE_ORIGIN=sweep would otherwise hide its run from the report."""
        now = self._suite_variables()
        for name in sorted(set(now) | set(self._environment)):
            before, after = self._environment.get(name), now.get(name)
            if before == after:
                continue
            if before is None:
                del os.environ[name]
            else:
                os.environ[name] = before
            change = f"removed {name}" if after is None else f"set {name} to {after!r}"
            self._note(
                f"the model's code {change}: undone, the suite keeps its own variables as they were before "
                "the model's code ran"
            )

    def left_threads(self) -> list[threading.Thread]:
        """Threads started since the guard opened that are alive and would keep the process from ending."""
        return [
            thread
            for thread in threading.enumerate()
            if thread not in self._threads and not thread.daemon and thread.is_alive()
        ]

    def thread_note(self) -> str | None:
        """The record's line about threads the run leaves behind, or None."""
        left = self.left_threads()
        if not left:
            return None
        names = ", ".join(thread.name for thread in left)
        return (
            f"{len(left)} thread(s) started during the run still running at its end ({names}): the suite "
            f"waits at most {THREAD_GRACE_S:g} s for them once it is done, then exits without them"
        )

    def exit_without_threads(self) -> None:
        """When threads the model's code started are still alive, end the process at most THREAD_GRACE_S
        after now, once the command has said everything (the main thread has finished), with the command's
        own status: an interpreter would otherwise wait for them forever."""
        if not self.left_threads():
            return
        deadline = time.monotonic() + THREAD_GRACE_S
        threading.Thread(target=self._watch, args=(deadline,), name="suite-exit-watch", daemon=True).start()

    def _watch(self, deadline: float) -> None:
        main = threading.main_thread()
        while True:
            left = self.left_threads()
            if not left:
                return  # they ended: the interpreter exits as it would have
            if not main.is_alive() and time.monotonic() >= deadline:
                names = ", ".join(thread.name for thread in left)
                print(
                    f"suite: warning: thread(s) the model's code started still running {THREAD_GRACE_S:g} s "
                    f"after the run ({names}): exiting without them, status {self.status}",
                    file=sys.stderr,
                )
                _flush()
                os._exit(self.status)
            time.sleep(0.05)


# -- checks any module can make ----------------------------------------------------------------------


def end_if_a_copy(expected_pid: int | None = None) -> None:
    """In a process the model's code forked from the suite's, end at once, writing nothing: only the
    process that started the run measures and records it. EXPECTED_PID is the process that was running
    before the model's code; by default the one the open guard started in."""
    pid = expected_pid if expected_pid is not None else (_active.pid if _active else None)
    if pid is not None and os.getpid() != pid:
        os._exit(0)  # no flush either: what the original process had buffered is its own to print


def _set_active(guard: Guard | None) -> None:
    global _active
    _active = guard


def restore_environment() -> None:
    """The open guard's `restore_environment`, where one is open."""
    if _active is not None:
        _active.restore_environment()


def _install_fork_hook() -> None:
    """Once per process (a hook cannot be removed): note a fork made while a guard is open, where the code
    that forked is not one of the suite's or the standard library's helpers."""
    global _fork_hook_installed
    if _fork_hook_installed or not hasattr(os, "register_at_fork"):
        return
    os.register_at_fork(before=_before_fork)
    _fork_hook_installed = True


def _before_fork() -> None:
    if _active is None:
        return
    caller = sys._getframe(1)  # the Python frame that called os.fork (or started a subprocess)
    module = str(caller.f_globals.get("__name__", "")) if caller else ""
    if not module.startswith(_OWN_FORKERS):
        _active.note_fork(caller)


def escape_error(error: BaseException) -> dict:
    """A record's `error` for an exception that is not an Exception: a sys.exit() or a BaseException raised
    by the code a run trains."""
    if isinstance(error, SystemExit):
        return {
            "type": "SystemExit",
            "message": f"the run's code called sys.exit({error.code!r}): code the suite runs must return or "
            "raise, not end the process",
        }
    text = str(error).strip().splitlines()
    message = text[0] if text else type(error).__name__
    return {
        "type": type(error).__name__,
        "message": f"the run's code raised {type(error).__name__}, a BaseException, not an Exception: {message}",
    }


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
