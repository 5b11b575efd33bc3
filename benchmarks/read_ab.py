"""A/B of two builds of qjson's extension on the read rows, native wall time.

    python benchmarks/read_ab.py A.so B.so [--scenarios 2k,small_request,github_issues,twitter]
        [--rounds 21]

Why: on the 2 KB rungs callgrind's counts and the clock disagree. qjson's
``decode_access 2k`` runs about 5% fewer instructions than fastsimdjson's
(AVX2 kernels under callgrind) yet takes about 1.3x its time on the AVX-512
machine, and the first subscript of a fresh document costs about twice what
the same subscript costs again (same instruction count): on these rows an
instruction-count win is a hypothesis until the clock confirms it.

Both builds (copies of ``python/qjson/_qjson*.so``, e.g. the unzipped LTO
packages ``/tmp/base19_pkg`` and a branch's) are loaded into one process
next to fastsimdjson. Each row is the workload of ``workloads.py`` as the
benchmark runs it: ``decode_access`` (views: ``decode`` and subscripts) and
``parse_get`` (``parse`` and the getters, ``doc.get(f"messages[{i}].content")``
on the chat rungs, a cursor per record on the dense ones), built with the
build's own ``parse`` / ``decode``. Every (row, build) cell is timed in ~3 ms
batches, in an order shuffled anew each round, the collector on; each cell
reports the median of its fastest third of rounds (interference on a shared
machine only adds time). Printed per row: A's and B's time, A / B (> 1: B
is faster) and fastsimdjson's time over each (the targets' ratio). Loading A
against itself shows the noise floor (about +-2% here).

fastsimdjson is timed twice, on the scenario's payload and on a copy of it
at another address, and both times are printed. Session 20 compared this
script with the bench (targets.py, same closures from workloads.py): on 2k
views, 25 runs of this script gave fastsimdjson/qjson 0.77-0.88 (LTO build
of main; the bench's 0.89 is on the PGO build), but one run gave 2.47: in
that process fastsimdjson's 2k cell took 1.78 us in every round against
0.55-0.62 us in all others (the cause was not found; not the collector, the
order of the cells, a previous larger parse, a live document, or the
payload's offset in its page, which moves it by <= 10%). The lead's 1.40 of
a 3-round run was most likely such a run: the printed absolute times make
one visible (fastsimdjson 2k views ~0.57 us on this machine), and the copy
tells an address effect from a process-wide one.
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import workloads  # type: ignore[import-not-found]  # noqa: E402
from encode_ab import fast_third, load  # type: ignore[import-not-found]  # noqa: E402


def rows(mod: Any, scen: Any) -> dict[str, Callable[[], Any]]:
    """The views row and the getters row of `scen` with build `mod`."""
    b = scen.parts[0]
    views = workloads._reads_mapping(scen.kind, mod.decode)(b)
    # `_reads_qjson_doc` takes `parse` from the module global `qjson` when
    # called: point it at this build for the call.
    saved = workloads.qjson
    workloads.qjson = types.SimpleNamespace(parse=mod.parse)
    try:
        getters = workloads._reads_qjson_doc(scen.kind)(b)
    finally:
        workloads.qjson = saved
    return {"views": views, "getters": getters}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--scenarios", default="2k,small_request,github_issues,twitter")
    ap.add_argument("--rounds", type=int, default=21)
    args = ap.parse_args()
    mods = {"A": load(args.a), "B": load(args.b)}
    import fastsimdjson

    cells: list[tuple[tuple[str, str, str], Callable[[], Any]]] = []
    for name in args.scenarios.split(","):
        scen = workloads.scenario(name)
        for side, mod in mods.items():
            for row, fn in rows(mod, scen).items():
                assert workloads._plain(fn()) == workloads._plain(rows(mods["A"], scen)[row]())
                cells.append(((name, row, side), fn))
        peer = workloads._reads_mapping(scen.kind, fastsimdjson.parse)
        cells.append(((name, "views", "fsj"), peer(scen.parts[0])))
        # The same reads on a copy of the payload at another address: a check
        # on the peer's cell (see the module doc).
        cells.append(((name, "views", "fsj-copy"), peer(bytes(bytearray(scen.parts[0])))))
    times: dict[tuple[str, str, str], list[float]] = {key: [] for key, _ in cells}
    gc.collect()
    for _ in range(args.rounds):
        random.shuffle(cells)
        for key, fn in cells:
            n = 0
            t0 = time.perf_counter()
            while True:
                for _ in range(10):
                    fn()
                n += 10
                t = time.perf_counter() - t0
                if t > 0.003:
                    break
            times[key].append(t / n)
    for name in args.scenarios.split(","):
        peer = fast_third(times[(name, "views", "fsj")])
        copy = fast_third(times[(name, "views", "fsj-copy")])
        print(f"{name:14s} fastsimdjson {peer * 1e6:9.3f} us  on a copy {copy * 1e6:9.3f} us")
        if abs(peer / copy - 1) > 0.1:
            print(f"{name:14s} WARNING: fastsimdjson's two cells differ by > 10%; rerun")
        for row in ("views", "getters"):
            a = fast_third(times[(name, row, "A")])
            b = fast_third(times[(name, row, "B")])
            print(
                f"{name:14s} {row:8s} A {a * 1e6:9.3f} us  B {b * 1e6:9.3f} us  "
                f"A/B {a / b:.3f}  fastsimdjson/A {peer / a:.2f}  fastsimdjson/B {peer / b:.2f}"
            )


if __name__ == "__main__":
    main()
