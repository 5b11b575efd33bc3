"""Two threads parsing separate 10 MB payloads vs one thread.

qjson.parse releases the GIL while it indexes inputs of 64 KiB or more, so
on a machine with two free cores two threads should parse about twice as
many bytes per second as one. The target is >= 1.6x.

    python benchmarks/threads_bench.py            # 10 MB payloads, best of 5
    python benchmarks/threads_bench.py --mb 20 --repeat 9
    python benchmarks/threads_bench.py --quick    # a short smoke run

Each measurement parses every payload `rounds` times; one thread does it
sequentially, N threads each take their own payload at the same time.
Throughput is total bytes / wall time; the best of `repeat` runs is kept
(other load on the machine only ever makes a run slower). `--read` adds a
few path reads per parse, `--loads` measures qjson.loads instead (which
holds the GIL while it builds Python objects, so it does not scale).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import threading
import time
from collections.abc import Callable

import qjson


def payload(mb: float, seed: int) -> bytes:
    """A chat-completions-like body of about `mb` MB: messages with text,
    numbers, nested objects and a few long strings."""
    rng = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "é", "ünï", "日本", "\\n", "x" * 40]
    msgs = []
    size = 0
    target = int(mb * 1024 * 1024)
    i = 0
    while size < target:
        text = " ".join(rng.choice(words) for _ in range(rng.randint(5, 60)))
        m = {
            "role": rng.choice(["user", "assistant", "system"]),
            "content": text,
            "n": i,
            "score": rng.random(),
            "tags": [rng.randint(0, 1000) for _ in range(rng.randint(0, 8))],
            "meta": {"ok": rng.random() < 0.5, "none": None, "id": f"id-{i:08d}"},
        }
        if i % 500 == 0:
            m["blob"] = "QUJD" * 2000
        s = json.dumps(m)
        size += len(s) + 2
        msgs.append(m)
        i += 1
    body = {"model": "gpt-4o", "temperature": 0.7, "messages": msgs}
    return json.dumps(body, indent=1).encode()


def work_parse(data: bytes, read: bool) -> None:
    doc = qjson.parse(data)
    if read:
        doc.get("model")
        doc.get_float("temperature")
        doc.get("messages[-1].content")


def run_threads(fns: list[Callable[[], None]]) -> float:
    barrier = threading.Barrier(len(fns) + 1)

    def target(fn: Callable[[], None]) -> None:
        barrier.wait()
        fn()

    threads = [threading.Thread(target=target, args=(f,)) for f in fns]
    for t in threads:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--mb", type=float, default=10.0, help="payload size in MB (default 10)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=10, help="parses of each payload per run")
    ap.add_argument("--repeat", type=int, default=5, help="runs; the best is kept")
    ap.add_argument("--read", action="store_true", help="read a few paths after each parse")
    ap.add_argument("--loads", action="store_true", help="measure qjson.loads instead")
    ap.add_argument("--quick", action="store_true", help="2 MB, 3 rounds, 3 repeats")
    a = ap.parse_args()
    if a.quick:
        a.mb, a.rounds, a.repeat = 2.0, 3, 3

    payloads = [payload(a.mb, seed) for seed in range(a.threads)]
    total = sum(len(p) for p in payloads) * a.rounds

    def one(data: bytes) -> Callable[[], None]:
        if a.loads:
            return lambda: [qjson.loads(data) for _ in range(a.rounds)] and None
        return lambda: [work_parse(data, a.read) for _ in range(a.rounds)] and None

    for p in payloads:  # warm up (page faults, caches, backend detection)
        one(p)()

    def single() -> float:
        t0 = time.perf_counter()
        for p in payloads:
            one(p)()
        return time.perf_counter() - t0

    def multi() -> float:
        return run_threads([one(p) for p in payloads])

    best_single = min(single() for _ in range(a.repeat))
    best_multi = min(multi() for _ in range(a.repeat))
    r1 = total / best_single / 1e9
    r2 = total / best_multi / 1e9
    what = "loads" if a.loads else ("parse+read" if a.read else "parse")
    print(
        f"qjson {qjson.__version__} ({qjson.backend()}), {what}, "
        f"{a.threads} payloads of {len(payloads[0]) / 1e6:.1f} MB x {a.rounds} rounds, "
        f"best of {a.repeat}, cpus={os.cpu_count()}"
    )
    print(f"  1 thread : {r1:6.2f} GB/s")
    print(f"  {a.threads} threads: {r2:6.2f} GB/s")
    print(f"  speedup  : {r2 / r1:6.2f}x  (target >= 1.6x on 2 free cores)")


if __name__ == "__main__":
    main()
