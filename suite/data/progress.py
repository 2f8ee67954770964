"""One progress line on stderr, rewritten in place at a terminal, a few plain lines otherwise; and the
words long commands say how long something took or is left with (`seconds`, `about`)."""

from __future__ import annotations

import sys
import time


def seconds(value: float) -> str:
    """A duration as a person reads it: `42 s`, `3 min 20 s`, `1 h 05 min`."""
    value = max(0.0, float(value))
    if value < 60:
        return f"{value:.0f} s" if value >= 10 else f"{value:.1f} s"
    if value < 3600:
        minutes, rest = divmod(round(value), 60)
        return f"{minutes} min {rest:02d} s"
    hours, rest = divmod(round(value / 60), 60)
    return f"{hours} h {rest:02d} min"


def about(value: float) -> str:
    """A rough time left: `about 40 s`, `about 3 min`, `about 1.5 h` (an estimate claims no more digits)."""
    value = max(0.0, float(value))
    if value < 60:
        return f"about {max(1, round(value, -1) if value >= 10 else round(value)):.0f} s"
    if value < 3600:
        return f"about {value / 60:.0f} min"
    return f"about {value / 3600:.1f} h"


class Progress:
    """`Progress("prepare", total)`; call `update(done, **extra)`; `close()` prints the last line."""

    def __init__(self, label: str, total: int, stream=None, every_s: float = 0.5):
        self.label, self.total = label, total
        self.stream = stream if stream is not None else sys.stderr
        self.interactive = getattr(self.stream, "isatty", lambda: False)()
        # Off a terminal (logs, CI) a line every few seconds is enough.
        self.every_s = every_s if self.interactive else max(every_s, 10.0)
        self.start = time.perf_counter()
        self.last = 0.0
        self.done = 0
        self.extra: dict = {}

    def text(self) -> str:
        elapsed = time.perf_counter() - self.start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        extra = "".join(f", {key} {value}" for key, value in self.extra.items())
        return f"{self.label}: {self.done:,}/{self.total:,} images ({rate:,.0f} img/s{extra})"

    def update(self, done: int, **extra) -> None:
        self.done, self.extra = done, extra
        now = time.perf_counter()
        if now - self.last >= self.every_s:
            self.last = now
            self._write(self.text())

    def _write(self, text: str) -> None:
        if self.interactive:
            self.stream.write(f"\r\033[K{text}")
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        self._write(self.text())
        if self.interactive:
            self.stream.write("\n")
        self.stream.flush()
