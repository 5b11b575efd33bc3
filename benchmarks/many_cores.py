"""Where parse_many's CPU goes with its splitting thread on another core,
on the caller's core, or not at all (many_bench.py's read row: custom_id
and body.model of every line of a generated batch file, in memory).

    python benchmarks/many_cores.py              # 20 MB, 9 rounds
    python benchmarks/many_cores.py --mb 100 --rounds 5

Modes (each policy forced with qjson._qjson._many_thread; Linux, 2+ cores):
- thread: the splitting thread from the first window, placed by the OS;
- thread_same: the thread and the caller pinned to core 0;
- thread_other: the caller on core 0, the thread on core 1;
- inline: no thread (the caller splits every window), caller on core 0;
- auto: the default policy (the thread once the caller lags);
- auto_light, inline_light: a caller that reads nothing (a loop that only
  iterates) under the default policy and with no thread: the default
  should keep it inline (the same process CPU as inline_light);
- fastsimdjson, fastsimdjson_same: its parse_many (stage 1 on a thread of
  its own) placed by the OS, or pinned with the caller to core 0.

Prints the medians of interleaved rounds (each starting one mode later):
the whole process's CPU time (every thread), the calling thread's, and
wall time. The gap between
thread_other and thread_same is the cost of the two cores trading the
index's cache lines (the work is the same); see src/python/many/worker.rs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import qjson  # noqa: E402
from qjson import _qjson  # noqa: E402

from benchmarks.payloads import batch_file  # noqa: E402

ALL = set(range(os.cpu_count() or 1))


def reads(it) -> int:
    n = 0
    for d in it:
        n += len(d.get_str("custom_id")) + len(d.get_str("body.model"))
    return n


def fs_reads(it) -> int:
    n = 0
    for d in it:
        n += len(d["custom_id"]) + len(d["body"]["model"])
    return n


def light(it) -> int:
    n = 0
    for _ in it:
        n += 1
    return n


def run(mode: str, data: bytes) -> int:
    if mode.startswith("fastsimdjson"):
        import fastsimdjson

        if mode.endswith("_same"):
            os.sched_setaffinity(0, {0})
        try:
            return fs_reads(fastsimdjson.parse_many(data))
        finally:
            os.sched_setaffinity(0, ALL)
    policy = {"inline": "never", "auto": "auto"}.get(mode.removesuffix("_light"), "always")
    old = _qjson._many_thread(policy)
    try:
        if mode.endswith("_light"):
            return light(qjson.parse_many(data))
        if mode in ("thread", "auto"):
            return reads(qjson.parse_many(data))
        if mode == "inline":
            os.sched_setaffinity(0, {0})
            return reads(qjson.parse_many(data))
        # The thread inherits the caller's affinity when the first next()
        # starts it; the caller then moves to core 0.
        os.sched_setaffinity(0, {0 if mode == "thread_same" else 1})
        it = qjson.parse_many(data)
        first = next(it)
        os.sched_setaffinity(0, {0})
        return len(first.get_str("custom_id")) + len(first.get_str("body.model")) + reads(it)
    finally:
        os.sched_setaffinity(0, ALL)
        _qjson._many_thread(old)


MODES = [
    "thread",
    "thread_same",
    "thread_other",
    "inline",
    "auto",
    "fastsimdjson",
    "fastsimdjson_same",
    "auto_light",
    "inline_light",
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=20)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--modes", default=",".join(MODES))
    a = ap.parse_args()
    if len(ALL) < 2:
        raise SystemExit("needs two cores")
    modes = a.modes.split(",")
    data = batch_file(int(a.mb * 1024 * 1024), seed=3)
    want = {False: run("inline", data), True: run("inline_light", data)}
    for m in modes:
        assert run(m, data) == want[m.endswith("_light")], m
    cpu: dict[str, list[float]] = {m: [] for m in modes}
    thr: dict[str, list[float]] = {m: [] for m in modes}
    wall: dict[str, list[float]] = {m: [] for m in modes}
    for r in range(a.rounds):
        # a rotating start: in a fixed order a mode timed later came out
        # 2-4% faster than the same code timed first
        k0 = r % len(modes)
        for m in modes[k0:] + modes[:k0]:
            p, t, w = time.process_time(), time.thread_time(), time.perf_counter()
            run(m, data)
            cpu[m].append(time.process_time() - p)
            thr[m].append(time.thread_time() - t)
            wall[m].append(time.perf_counter() - w)
    print(
        f"{len(data) / 1e6:.1f} MB, {a.rounds} rounds, load {os.getloadavg()[0]:.1f}, "
        f"{qjson.__file__}"
    )
    print(f"{'mode':18} {'process ms':>10} {'caller ms':>10} {'wall ms':>10}  (medians)")
    for m in modes:
        print(
            f"{m:18} {statistics.median(cpu[m]) * 1e3:10.2f} "
            f"{statistics.median(thr[m]) * 1e3:10.2f} {statistics.median(wall[m]) * 1e3:10.2f}"
        )


if __name__ == "__main__":
    main()
