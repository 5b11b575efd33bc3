"""Large inputs are scanned with the GIL released.

A second thread records timestamps in a loop while the main thread parses a
dense 32 MB array. If the GIL were held for the whole parse, the other
thread could not run and its timestamps would show one gap as long as the
parse itself; with the GIL released its largest gap stays far shorter.
"""

from __future__ import annotations

import threading
import time

import qjson


def _largest_gap_during(fn) -> tuple[float, float]:
    stamps: list[float] = []
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            stamps.append(time.perf_counter())

    t = threading.Thread(target=spin)
    t.start()
    try:
        time.sleep(0.02)
        start = time.perf_counter()
        fn()
        end = time.perf_counter()
    finally:
        stop.set()
        t.join()
    inside = [s for s in stamps if start <= s <= end]
    edges = [start, *inside, end]
    gap = max(b - a for a, b in zip(edges, edges[1:]))
    return gap, end - start


def test_large_parse_releases_the_gil() -> None:
    body = b"[" + b"1," * (16 * 1024 * 1024) + b"1]"
    qjson.parse(body)  # warm up
    # With the GIL held the gap equals the parse every time; with it
    # released, one attempt out of three suffices (a loaded machine may
    # deschedule the other thread for a while in any one attempt).
    seen = []
    for _ in range(3):
        gap, took = _largest_gap_during(lambda: qjson.parse(body))
        assert took > 0.005, "the parse is too fast for this check to mean anything"
        seen.append(f"largest gap {gap * 1e3:.1f} ms of a {took * 1e3:.1f} ms parse")
        if gap < 0.5 * took:
            return
    raise AssertionError("; ".join(seen))
