"""One progress line on stderr, rewritten in place at a terminal, a few plain lines otherwise."""

from __future__ import annotations

import sys
import time


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
