"""Does a module import here? Asked in a fresh process, so that nothing is imported into this one.

Some vendor modules change a process for good when imported (Habana's bridge fixes its execution mode);
asking in a child keeps detection side-effect free. The child sees this process's sys.path, so it finds
what this process would find. Answers are remembered for the life of the process.
"""

from __future__ import annotations

import os
import subprocess
import sys

_ANSWERS: dict[tuple, tuple[bool, str]] = {}


def check(code: str, timeout_s: float = 120.0) -> tuple[bool, str]:
    """(True, "") if `code` runs in a fresh interpreter, else (False, the last line it printed on stderr)."""
    key = (code, tuple(sys.path))  # another sys.path may find other modules
    if key not in _ANSWERS:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        try:
            done = subprocess.run(
                [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout_s
            )
            lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
            _ANSWERS[key] = (done.returncode == 0, lines[-1] if lines else f"exit status {done.returncode}")
        except subprocess.TimeoutExpired:
            _ANSWERS[key] = (False, f"no answer within {timeout_s:g} s")
        except OSError as error:
            _ANSWERS[key] = (False, str(error))
    return _ANSWERS[key]
