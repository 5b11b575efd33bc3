"""A progress display for long benchmark runs: plain lines on stderr.

    p = Progress(total=120, label="pytest")
    p.step("100k parse_get orjson")   # prints at most every `every` seconds, and on the last step

Each line says what runs now, how many steps are done and left, the elapsed
time and an estimate of the time left (from the mean step time so far). No
terminal control codes, so CI logs stay readable.
"""

from __future__ import annotations

import sys
import time


def fmt_duration(s: float) -> str:
    s = max(0, int(round(s)))
    return f"{s // 60}:{s % 60:02d}"


class Progress:
    def __init__(self, total: int, label: str, every: float = 2.0) -> None:
        self.total = max(0, total)
        self.label = label
        self.every = every
        self.done = 0
        self.t0 = time.perf_counter()
        self._last = -1e9

    def step(self, now: str, force: bool = False) -> None:
        """Announce that step `done + 1` (described by `now`) starts."""
        t = time.perf_counter()
        first_or_last = self.done == 0 or self.done + 1 >= self.total
        if force or first_or_last or t - self._last >= self.every:
            self._last = t
            elapsed = t - self.t0
            left = ""
            if self.done:
                rest = elapsed / self.done * (self.total - self.done)
                left = f", ~{fmt_duration(rest)} left"
            pct = 100 * self.done / self.total if self.total else 100.0
            print(
                f"[{self.label} {self.done + 1}/{self.total} {pct:3.0f}% "
                f"{fmt_duration(elapsed)} elapsed{left}] {now}",
                file=sys.__stderr__,
                flush=True,
            )
        self.done += 1

    def finish(self, what: str = "done") -> None:
        print(
            f"[{self.label}] {what} in {fmt_duration(time.perf_counter() - self.t0)}",
            file=sys.__stderr__,
            flush=True,
        )
