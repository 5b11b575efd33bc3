"""The timer of the interleaved benchmarks (targets.py, access.py, corpus.py).

The machine these run on is shared: with more runnable processes than cores,
wall time counts the slices a benchmark spends descheduled, and that share
changes from one round to the next. The default clock is therefore the CPU
time of the calling thread (``time.thread_time``: user + system time, page
faults included, nanosecond resolution), which only counts the work done;
every library compared runs its calls on the calling thread. ``--clock
wall`` (``time.perf_counter``) gives wall time, the number a user sees on an
idle machine. Caches and memory bandwidth are still shared either way:
compare ratios from one run.
"""

from __future__ import annotations

import time
from typing import Callable

CLOCKS: dict[str, Callable[[], float]] = {"thread": time.thread_time, "wall": time.perf_counter}
_now: Callable[[], float] = time.thread_time
_name = "thread"


def use(name: str) -> None:
    """Select the clock by name: "thread" (default) or "wall"."""
    global _now, _name
    _now, _name = CLOCKS[name], name


def now() -> float:
    return _now()


def name() -> str:
    return _name
