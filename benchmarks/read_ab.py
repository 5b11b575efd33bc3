"""A/B of two builds of qjson's extension on the read rows, native CPU time.

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

The clock is the calling thread's CPU time, as targets.py's (clock.py;
``--clock wall`` for wall time). Session 20 compared this script with the
bench (targets.py, the same closures from workloads.py): the difference that
mattered was the clock (the others: ~3 ms batches against ~60 ms, the median
of the fastest third of rounds against the median). With wall time, a cell's
batches count the slices the process spends descheduled while other work
runs on the 2 shared cores; a 3-round run (its fastest third: the one
fastest round) then reports a cell whose three batches were all cut as 3-10x
slower (seen, load 6-8: 2k fastsimdjson 5.8 us against 0.58, github views
83.6 us against 21.7; one earlier run, load 1.2: 2k fastsimdjson 1.78 us,
fastsimdjson/qjson 2.47), which is how a short run printed 1.40 for 2k views
where the bench said 0.89x. With the thread's CPU time (and the call count
fixed before the rounds: see interleave.py), five 3-round runs at load 7-8
agreed with the bench: 2k views 0.76-0.86 (LTO build of main; the bench's
0.89 is on the PGO build). fastsimdjson is timed twice, on the scenario's
payload and on a copy of it at another address, and both times are printed:
its time depends on the payload's place (2k: about 10% slower when the bytes
end within about 64 bytes of a page end, measured over 300 copies; the
padding simdjson reads past the end, which the binding then presumably
copies for), and the ratios use the scenario's payload, as the bench does.
"""

from __future__ import annotations

import argparse
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import clock  # type: ignore[import-not-found]  # noqa: E402
import workloads  # type: ignore[import-not-found]  # noqa: E402
from encode_ab import load  # type: ignore[import-not-found]  # noqa: E402
from interleave import fast_third, interleaved  # type: ignore[import-not-found]  # noqa: E402


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
    ap.add_argument("--clock", choices=sorted(clock.CLOCKS), default="thread", help="see clock.py")
    args = ap.parse_args()
    clock.use(args.clock)
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
    times = interleaved([cells], args.rounds, batch_s=0.003)
    for name in args.scenarios.split(","):
        peer = fast_third(times[(name, "views", "fsj")])
        copy = fast_third(times[(name, "views", "fsj-copy")])
        print(f"{name:14s} fastsimdjson {peer * 1e6:9.3f} us  on a copy {copy * 1e6:9.3f} us")
        if abs(peer / copy - 1) > 0.05:
            print(
                f"{name:14s} note: fastsimdjson's two cells differ by {abs(peer / copy - 1):.0%}: "
                "its time depends on where the payload ends (see the module doc)"
            )
        for row in ("views", "getters"):
            a = fast_third(times[(name, row, "A")])
            b = fast_third(times[(name, row, "B")])
            print(
                f"{name:14s} {row:8s} A {a * 1e6:9.3f} us  B {b * 1e6:9.3f} us  "
                f"A/B {a / b:.3f}  fastsimdjson/A {peer / a:.2f}  fastsimdjson/B {peer / b:.2f}"
            )


if __name__ == "__main__":
    main()
