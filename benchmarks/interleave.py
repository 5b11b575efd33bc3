"""The timing loop of the A/B scripts (read_ab.py, eager_ab.py, encode_ab.py).

An A/B of two builds on a shared 2-core machine only means something when
both builds (and the peers beside them) are timed in the same rounds, in an
order that changes from round to round, and when the timer itself costs
nothing per call. So:

- every cell's call count is fixed before the rounds (``targets.calibrate``:
  enough calls to last ``batch_s``), and a round times that many calls
  between two readings of the clock (``clock.py``: the calling thread's CPU
  time by default; one reading costs about 1 us here, which read every few
  calls added ~0.1 us to every call of a 2 KB row);
- a cell is ``(key, fn)``, called as ``fn()``, or ``(key, fn, arg)``,
  called as ``fn(arg)`` straight from the timing loop (a wrapping lambda
  would add a Python call, ~50 ns, to every call of a 0.1 us cell);
- cells come in groups (one per file, or one for everything): each round
  runs the groups in order and the cells of a group in an order shuffled
  anew (seeded, so two runs shuffle alike);
- the collector is collected before each batch and left as the caller
  set it, or paused around the batch (``paused=True``: the "collector
  paused by the caller" rows; turned back on after the batch, also when
  the batch raises, if it was on).

The result is every cell's per-call times, one per round; ``fast_third`` is
the usual summary on a noisy machine (interference only ever adds time).
"""

from __future__ import annotations

import gc
import random
import statistics
from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

try:
    import clock  # type: ignore[import-not-found]
    from targets import calibrate  # type: ignore[import-not-found]
except ImportError:  # python -m benchmarks.<script>
    from benchmarks import clock
    from benchmarks.targets import calibrate

K = TypeVar("K", bound=Hashable)
_NOARG: Any = object()


def _bound(fn: Callable[..., Any], arg: Any) -> Callable[[], Any]:
    """`fn` as a no-argument callable (for the calibration only)."""
    return fn if arg is _NOARG else (lambda: fn(arg))


Cell = tuple[K, Callable[[], Any]] | tuple[K, Callable[[Any], Any], Any]


def interleaved(
    groups: Sequence[Sequence[Cell[K]]],
    rounds: int,
    *,
    batch_s: float = 0.002,
    paused: bool = False,
    seed: int | None = 1,
) -> dict[K, list[float]]:
    """Per-call times of every cell of `groups` over `rounds` rounds (see
    the module doc); ``seed=None`` shuffles from the global generator."""
    orders = [[(c[0], c[1], c[2] if len(c) == 3 else _NOARG) for c in group] for group in groups]
    cells = [cell for order in orders for cell in order]
    if len({key for key, _, _ in cells}) != len(cells):
        raise ValueError("interleaved: a cell key appears twice")
    counts = {key: calibrate(_bound(fn, arg), batch_s) for key, fn, arg in cells}
    was_on = gc.isenabled()
    times: dict[K, list[float]] = {key: [] for key in counts}
    shuffle = random.Random(seed) if seed is not None else random
    for _ in range(rounds):
        for order in orders:
            shuffle.shuffle(order)
            for key, fn, arg in order:
                n = counts[key]
                gc.collect()
                if paused:
                    gc.disable()
                try:
                    if arg is _NOARG:
                        t0 = clock.now()
                        for _ in range(n):
                            fn()
                        t = clock.now() - t0
                    else:
                        t0 = clock.now()
                        for _ in range(n):
                            fn(arg)
                        t = clock.now() - t0
                finally:
                    if paused and was_on:
                        gc.enable()
                times[key].append(t / n)
    return times


def fast_third(times: list[float]) -> float:
    """The median of the fastest third of `times`."""
    ordered = sorted(times)
    return statistics.median(ordered[: max(1, len(ordered) // 3)])
