"""Tests that stop or change a running command synchronise on something they can see — a run holding at
a known point (tests/faults/sitecustomize.py writes DIR/held), a line of its progress — never on a sleep
that a busy machine can outlast or a fast one can overtake."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time

from conftest import ROOT, SAFETY_NET_S, suite_env

FAULTS = os.path.join(ROOT, "tests", "faults")


def start_stoppable(command: list[str], env: dict[str, str]) -> subprocess.Popen:
    """COMMAND started as a terminal's foreground job would be, for a test that stops it with a signal: in a
    session of its own (so SIGINT can go to it and its children together, as Ctrl-C does), its output kept,
    and SIGINT's default action restored. Tests started from a background job inherit SIGINT ignored (a
    non-interactive shell's `&` ignores SIGINT and SIGQUIT for its job, as POSIX says), and Python then
    installs no KeyboardInterrupt handler: the test's Ctrl-C would reach a command that ignores it."""
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def hold_env(tmp_path, at: int = 1, **extra) -> tuple[dict[str, str], object]:
    """An environment whose AT-th `suite run` (counting every one started with it) holds as its run
    starts, until released or stopped; and the folder where it says so."""
    folder = tmp_path / "hold"
    folder.mkdir()
    env = suite_env(tmp_path, SUITE_FAULT_HOLD_DIR=str(folder), SUITE_FAULT_HOLD_AT=str(at), **extra)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (FAULTS, env.get("PYTHONPATH")) if p)
    return env, folder


def wait_held(folder, process, timeout_s: float = SAFETY_NET_S) -> None:
    """Until a run holds (FOLDER/held exists); an error at once if PROCESS ends first."""
    deadline = time.monotonic() + timeout_s
    while not (folder / "held").exists():
        if process.poll() is not None:
            _, err = process.communicate()
            raise AssertionError(
                f"ended with {process.returncode} before any run held: {(err or '')[-2000:]}"
            )
        if time.monotonic() > deadline:
            raise AssertionError(f"no run held within {timeout_s:g} s")
        time.sleep(0.05)  # polls for the file; the wait is for it, not for a length of time


def release(folder) -> None:
    """Let the held run go on."""
    (folder / "release").touch()


class Lines:
    """A process's stderr read as it comes (a thread), so that a test can wait for a line of it."""

    def __init__(self, stream):
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._done = False
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()
        with self._changed:
            self._done = True
            self._changed.notify_all()

    def wait_for(self, text: str, timeout_s: float) -> bool:
        """Until a line holds TEXT (True), or the stream ends or TIMEOUT_S passes without one (False)."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while not any(text in line for line in self.lines):
                left = deadline - time.monotonic()
                if self._done or left <= 0:
                    return False
                self._changed.wait(left)
            return True

    def text(self, timeout_s: float = SAFETY_NET_S) -> str:
        """Everything read, once the stream has ended (the process has exited)."""
        self._thread.join(timeout_s)
        return "".join(self.lines)
