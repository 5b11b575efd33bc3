"""A/B of builds of qjson's extension on many_bench.py's read row, process CPU.

    python benchmarks/many_ab.py A.so B.so [C.so ...] [--mb 100] [--rounds 31]
        [--policy auto|always|never]

The read row (many_bench.py): ``parse_many`` of the generated batch-API
file in memory and ``get_str`` of ``custom_id`` and ``body.model`` of every
line. Its target is the CPU time of the whole process (``parse_many``
splits on a second thread, see ``src/python/many/worker.rs``), so that is
the clock here, with the calling thread's beside it.

Every build (copies of ``python/qjson/_qjson*.so``, e.g. the unzipped PGO
packages ``/tmp/base30_pgo_pkg`` and a branch's) is loaded into one process;
each round runs each build once, the order rotating by one build per round.
Printed per build: the median process and calling-thread CPU time and
their ratios to the first build's. For the noise floor (an A/A) list a
copy of the first build at another path: the same path twice loads one
module, whose statics (the thread policy among them) both entries share.

``--policy`` sets the splitting thread's policy in every build
(``_qjson._many_thread``) before the rounds: ``never`` by default. Set
``auto`` (as the bench runs) only to see what the bench would: the thread
starts once the caller is seen to lag, measured by the calling thread's
CPU clock, and on the shared machine that decision differs from run to
run, which makes the figures bimodal. Session 30, base PGO build, 100 MB,
load ~5, rounds of 41: the process CPU's median was 38.9, 25.8 and 26.7 ms
in three runs, a branch build's ratio to it 0.71, 0.99 and 1.01 and the
A/A's 0.98, 1.00 and 1.02. Forced, ``never`` (the work alone, split
inline, no core-to-core traffic) is steady: 24.2 and 24.9 ms, A/A
0.998-1.013 in every run; ``always`` (the thread's work and the
hand-over) mostly so (24.7 and 27.2 ms, A/A 0.990-0.995), but at a load
of about 6 some runs still came out bimodal (A/A 0.85 once, one build's
copies 0.79 apart). So list two copies of each build (A B A' B'), run
both orders, and decide on ``never`` first.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from encode_ab import load  # noqa: E402
from payloads import batch_file  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("builds", nargs="+", help="paths of _qjson*.so builds")
    ap.add_argument("--mb", type=float, default=100, help="size of the batch file")
    ap.add_argument("--rounds", type=int, default=31)
    ap.add_argument("--policy", choices=["auto", "always", "never"], default="never")
    a = ap.parse_args()
    mods = [load(b) for b in a.builds]
    for m in mods:
        m._many_thread(a.policy)
    data = batch_file(int(a.mb * (1 << 20)))

    def read(q):
        def run() -> int:
            n = 0
            for d in q.parse_many(data):
                n += len(d.get_str("custom_id")) + len(d.get_str("body.model"))
            return n

        return run

    fns = [read(m) for m in mods]
    assert len({f() for f in fns}) == 1, "the builds read different values"
    proc: list[list[float]] = [[] for _ in fns]
    thread: list[list[float]] = [[] for _ in fns]
    for r in range(a.rounds):
        k0 = r % len(fns)
        for i in list(range(k0, len(fns))) + list(range(k0)):
            p, t = time.process_time(), time.thread_time()
            fns[i]()
            proc[i].append(time.process_time() - p)
            thread[i].append(time.thread_time() - t)
    mp = [statistics.median(v) for v in proc]
    mt = [statistics.median(v) for v in thread]
    print(
        f"read row, {a.mb:g} MB, policy {a.policy}, {a.rounds} rounds, "
        f"load {os.getloadavg()[0]:.1f}; ratios to build 0"
    )
    for i, b in enumerate(a.builds):
        print(
            f"  {i}: process {mp[i] * 1e3:7.2f} ms ({mp[i] / mp[0]:.4f})  "
            f"calling thread {mt[i] * 1e3:6.2f} ms ({mt[i] / mt[0]:.4f})  {b}"
        )


if __name__ == "__main__":
    main()
