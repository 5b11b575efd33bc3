"""Many documents (JSON Lines): qjson's parse_many / open_many / loads_many /
dumps_many against fastsimdjson, msgspec and orjson.

    python benchmarks/many_bench.py               # 100 MB batch file, 5 rounds (loads: 9)
    python benchmarks/many_bench.py --mb 20 --rounds 3
    python benchmarks/many_bench.py --quick       # a short smoke run
    python benchmarks/many_bench.py --gc-off      # the collector paused throughout
    python benchmarks/many_bench.py --rows loads --mb 20 --out /tmp/many.json  # some rows

Rows (ratio = peer time / qjson time, medians of interleaved rounds of the
calling thread's CPU time (benchmarks/clock.py), the collector on unless
--gc-off):

- read: custom_id and body.model of every line of a generated batch-API
  file in memory: qjson parse_many vs fastsimdjson parse_many and orjson
  per line (splitlines + loads); both parse_many split on a second thread
  (stage 1 ahead of the reads; qjson's from its third window on, once the
  caller is seen to lag, see src/python/many/worker.rs), so the row also
  gives the CPU time of the whole process ("process_ratio"), which counts
  that thread. The two
  clocks differ because the threads do different shares of the work:
  qjson's thread runs stage 1 *and* each document's stage 2 (the whole
  index), its calling thread only the reads, while fastsimdjson's thread
  runs only stage 1 and its calling thread stage 2 and the reads (20 MB
  batch file, CPU seconds: qjson 0.002 calling thread of 0.008 in all,
  fastsimdjson 0.008 of 0.010). So "ratio" (calling thread) flatters
  qjson: it is what a caller with a spare core sees, at best; the work
  done is "process_ratio", and on a machine without a spare core (or
  with as many busy threads as cores) that is the ratio that holds;
- file: the same reads from the file: qjson open_many vs fastsimdjson
  parse_many of the file's bytes; each in a fresh subprocess, with its
  peak RSS growth;
- loads_many of amazon_cellphones.ndjson and of the batch file vs
  fastsimdjson loads_many and msgspec decode_lines; with the collector on,
  also "steady": each library alone in a fresh process, rounds that keep
  the last result alive, so that collections a call leaves pending (as
  fastsimdjson's loads_many does: it returns with the collector's
  allocation count raised by every object it built) are charged to it
  rather than to whichever call runs next;
- rewrite: body.model of every line set, then dumps_many, vs orjson
  loads + dumps per line (also with the process's CPU time);
- threads: two threads each reading its own file with open_many (speedup
  over one thread doing both files; wall time, the only clock for this).

Results go to benchmarks/results/many.json.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import qjson  # noqa: E402

from benchmarks import clock  # noqa: E402
from benchmarks.payloads import batch_file, write_batch_file  # noqa: E402

AMAZON = HERE.parent / ".." / "shared" / "data" / "jsonexamples" / "amazon_cellphones.ndjson"


def interleave(
    fns: dict[str, Callable[[], object]],
    rounds: int,
    now: Callable[[], float] = clock.now,
    process: dict[str, float] | None = None,
) -> dict[str, float]:
    """Median seconds of each function, the functions taking turns, each
    round starting one function later (as targets.py does: a function timed
    right after another came out 2-4% faster than the same code timed first,
    so a fixed order favoured the later ones). With `process`, also the
    median CPU time of the whole process (every thread: fastsimdjson's
    parse_many and qjson's split on a second thread) into it."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    cpu: dict[str, list[float]] = {k: [] for k in fns}
    order = list(fns.items())
    for _, fn in order:  # warm-up
        fn()
    for r in range(rounds):
        k0 = r % len(order)
        for name, fn in order[k0:] + order[:k0]:
            p, t = time.process_time(), now()
            fn()
            times[name].append(now() - t)
            cpu[name].append(time.process_time() - p)
    if process is not None:
        process.update({k: statistics.median(v) for k, v in cpu.items()})
    return {k: statistics.median(v) for k, v in times.items()}


def ratios(t: dict[str, float], ours: str) -> dict[str, float]:
    return {k: round(v / t[ours], 2) for k, v in t.items() if k != ours}


# ------------------------------------------------------------------ rows


def read_row(data: bytes, rounds: int) -> dict:
    import fastsimdjson
    import orjson

    def q() -> int:
        n = 0
        for d in qjson.parse_many(data):
            n += len(d.get_str("custom_id")) + len(d.get_str("body.model"))
        return n

    def ql() -> int:
        n = 0
        for d in qjson.parse_many(data, lazy=True):
            n += len(d.get_str("custom_id")) + len(d.get_str("body.model"))
        return n

    def fs() -> int:
        n = 0
        for d in fastsimdjson.parse_many(data):
            n += len(d["custom_id"]) + len(d["body"]["model"])
        return n

    def oj() -> int:
        n = 0
        for line in data.splitlines():
            if line:
                d = orjson.loads(line)
                n += len(d["custom_id"]) + len(d["body"]["model"])
        return n

    assert q() == ql() == fs() == oj()
    cpu: dict[str, float] = {}
    fns = {"qjson": q, "qjson_lazy": ql, "fastsimdjson": fs, "orjson": oj}
    t = interleave(fns, rounds, process=cpu)
    lazy = {k: v for k, v in t.items() if k != "qjson"}
    return {
        "seconds": t,
        "ratio": ratios(t, "qjson"),
        "ratio_lazy": ratios(lazy, "qjson_lazy"),
        "process_seconds": cpu,
        "process_ratio": ratios(cpu, "qjson"),
    }


FILE_SCRIPT = """
import sys, time
sys.path.insert(0, {root!r})
def peak():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
import qjson, fastsimdjson
which, path = sys.argv[1], sys.argv[2]
base = peak()
t = time.thread_time()
w = time.perf_counter()
n = 0
if which.startswith("qjson"):
    for d in qjson.open_many(path, lazy=which == "qjson_lazy"):
        n += len(d.get_str("custom_id")) + len(d.get_str("body.model"))
else:
    with open(path, "rb") as f:
        data = f.read()
    for d in fastsimdjson.parse_many(data):
        n += len(d["custom_id"]) + len(d["body"]["model"])
dt = time.thread_time() - t
print(dt, peak() - base, n, time.perf_counter() - w)
"""


def file_row(path: Path, rounds: int) -> dict:
    script = FILE_SCRIPT.format(root=str(HERE.parent))
    runs: dict[str, list[tuple[float, int, int, float]]] = {
        "qjson": [],
        "qjson_lazy": [],
        "fastsimdjson": [],
    }
    for _ in range(rounds):
        for which in runs:
            out = subprocess.run(
                [sys.executable, "-c", script, which, str(path)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
            runs[which].append((float(out[0]), int(out[1]), int(out[2]), float(out[3])))
    assert runs["qjson"][0][2] == runs["fastsimdjson"][0][2]
    t = {k: statistics.median(r[0] for r in v) for k, v in runs.items()}
    wall = {k: statistics.median(r[3] for r in v) for k, v in runs.items()}
    rss = {k: max(r[1] for r in v) for k, v in runs.items()}
    return {
        "seconds": t,
        "ratio": ratios(t, "qjson"),
        "wall_seconds": wall,
        "wall_ratio": ratios(wall, "qjson"),
        "peak_rss_growth_bytes": rss,
        "file_bytes": path.stat().st_size,
    }


def loads_row(data: bytes, path: Path, rounds: int) -> dict:
    import fastsimdjson
    import msgspec

    want = qjson.loads_many(data)
    assert list(fastsimdjson.loads_many(data)) == want == msgspec.json.Decoder().decode_lines(data)
    fns = {
        "qjson": lambda: qjson.loads_many(data),
        "fastsimdjson": lambda: list(fastsimdjson.loads_many(data)),
        "msgspec": lambda: msgspec.json.Decoder().decode_lines(data),
    }
    t = interleave(fns, rounds)
    row = {"bytes": len(data), "seconds": t, "ratio": ratios(t, "qjson")}
    if gc.isenabled():
        steady = {k: steady_loads(k, path, rounds) for k in fns}
        row["steady_seconds"] = steady
        row["steady_ratio"] = ratios(steady, "qjson")
    return row


STEADY_SCRIPT = """
import sys, time
import qjson, fastsimdjson, msgspec
which, path, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(path, "rb").read()
f = {
    "qjson": lambda: qjson.loads_many(data),
    "fastsimdjson": lambda: list(fastsimdjson.loads_many(data)),
    "msgspec": lambda: msgspec.json.Decoder().decode_lines(data),
}[which]
keep = f()
t = time.thread_time()
for _ in range(rounds):
    keep = f()
    junk = [[] for _ in range(1000)]  # the caller's own next allocations
print((time.thread_time() - t) / rounds)
"""


def steady_loads(which: str, path: Path, rounds: int) -> float:
    """Seconds per loads_many call in steady state (see the module doc)."""
    out = subprocess.run(
        [sys.executable, "-c", STEADY_SCRIPT, which, str(path), str(max(rounds, 3))],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout)


def rewrite_row(data: bytes, rounds: int) -> dict:
    import orjson

    def q() -> bytes:
        roots = []
        for d in qjson.parse_many(data):
            r = d.root
            r["body"]["model"] = "gpt-5"
            roots.append(r)
        return qjson.dumps_many(roots)

    def oj() -> bytes:
        out = []
        for line in data.splitlines():
            if line:
                d = orjson.loads(line)
                d["body"]["model"] = "gpt-5"
                out.append(orjson.dumps(d))
        out.append(b"")
        return b"\n".join(out)

    assert [json.loads(x) for x in q().splitlines()] == [json.loads(x) for x in oj().splitlines()]
    cpu: dict[str, float] = {}
    t = interleave({"qjson": q, "orjson": oj}, rounds, process=cpu)
    return {
        "seconds": t,
        "ratio": ratios(t, "qjson"),
        "process_seconds": cpu,
        "process_ratio": ratios(cpu, "qjson"),
    }


def threads_row(paths: list[Path], rounds: int) -> dict:
    def read(path: Path) -> None:
        n = 0
        for d in qjson.open_many(path):
            n += len(d.get_str("custom_id")) + len(d.get_str("body.model"))

    def one() -> None:
        for p in paths:
            read(p)

    def two() -> None:
        ts = [threading.Thread(target=read, args=(p,)) for p in paths]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    t = interleave({"one_thread": one, "two_threads": two}, rounds, time.perf_counter)
    return {"seconds": t, "speedup": round(t["one_thread"] / t["two_threads"], 2)}


def machine() -> dict:
    cpu = ""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name"):
                cpu = line.split(":", 1)[1].strip()
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "backend": qjson.backend(),
        "python": platform.python_version(),
        "gc_enabled": gc.isenabled(),
        "clock": clock.name(),
    }


ROWS = ["read", "loads", "rewrite", "file", "threads"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=100)
    ap.add_argument(
        "--rounds",
        type=int,
        default=5,
        help="rounds per row (--quick: 1); loads_many takes at least 9 (batch), 20 (amazon)",
    )
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--gc-off", action="store_true", help="pause the collector throughout")
    ap.add_argument("--clock", choices=sorted(clock.CLOCKS), default="thread")
    ap.add_argument("--out", default=str(HERE / "results" / "many.json"))
    ap.add_argument(
        "--rows", default=",".join(ROWS), help=f"comma-separated, of {', '.join(ROWS)} (all)"
    )
    a = ap.parse_args()
    rows = set(a.rows.split(","))
    if rows - set(ROWS):
        ap.error(f"unknown rows: {', '.join(sorted(rows - set(ROWS)))}")
    if a.quick:
        a.mb, a.rounds = 5, 1
    clock.use(a.clock)
    if a.gc_off:
        gc.disable()
    size = int(a.mb * 1024 * 1024)
    res: dict = {"machine": machine()}
    print(json.dumps(res["machine"]), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        p1, p2 = Path(tmp) / "a.jsonl", Path(tmp) / "b.jsonl"
        write_batch_file(p1, size, seed=3)
        write_batch_file(p2, size, seed=4)
        data = p1.read_bytes()
        assert data == batch_file(size, seed=3)
        res["batch_bytes"], res["batch_lines"] = len(data), data.count(b"\n")
        if "read" in rows:
            res["read"] = read_row(data, a.rounds)
            print("read", json.dumps(res["read"]), flush=True)
        if "loads" in rows:
            # 9 rounds at least: each call builds and frees ~100 MB of objects
            # (page faults are 25-30% of its samples), and 5 rounds' medians
            # moved the ratio by 3-10% from run to run.
            res["loads_many_batch"] = loads_row(data, p1, max(a.rounds, 9))
            print("loads_many batch", json.dumps(res["loads_many_batch"]), flush=True)
            if AMAZON.exists():
                amazon = AMAZON.read_bytes()
                res["loads_many_amazon"] = loads_row(amazon, AMAZON, max(a.rounds, 20))
                print("loads_many amazon", json.dumps(res["loads_many_amazon"]), flush=True)
        if "rewrite" in rows:
            res["rewrite"] = rewrite_row(data, a.rounds)
            print("rewrite", json.dumps(res["rewrite"]), flush=True)
        del data
        if "file" in rows:
            res["file"] = file_row(p1, a.rounds)
            print("file", json.dumps(res["file"]), flush=True)
        if "threads" in rows:
            res["threads"] = threads_row([p1, p2], a.rounds)
            print("threads", json.dumps(res["threads"]), flush=True)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(res, indent=2) + "\n")
    print("written", a.out)


if __name__ == "__main__":
    main()
