"""A/B of builds of qjson's extension on the eager corpus rows (loads, validate), per file.

    python benchmarks/eager_ab.py A.so [B.so ...] [--op loads|loads_paused|validate|dumps]
        [--group small|large] [--rounds 21] [--files a.json,b.json]

Why: the corpus table's eager rows (``corpus.py``: decode with the collector
on and paused by the caller, validate) are aggregates weighted by bytes, and
their gaps sit on the AVX-512 kernels callgrind cannot run (it runs the AVX2
ones) and in fixed costs per call; this shows which file of a group loses, by
how much, and whether a build moves it, on the clock of the machine itself.

Each build (a copy of ``python/qjson/_qjson*.so``, e.g. from the unzipped LTO
packages ``/tmp/base20_pkg`` and a branch's) is loaded into one process next
to the row's peers as ``corpus.py`` calls them: fastsimdjson and ssrjson
``loads`` for the decode rows, pysimdjson's reused ``Parser().parse``,
fastsimdjson's ``_parse_only`` and cysimdjson's reused ``JSONParser().parse``
for validate; for ``dumps`` (the encode row's "plain objects": each file
as ``json.loads`` makes it) orjson's ``dumps`` and ssrjson's
``dumps_to_bytes`` (with its default UTF-8 cache, as ``corpus.py``: the
objects are shared, so its cache is filled once for everyone). Every
(file, library) cell is
timed in batches of a call count fixed before the rounds (~2 ms, CPU time of
the thread: ``interleave.py``); each round takes the files in order and, for
each file, the libraries in an order shuffled anew; the collector is
collected before each batch and stays on, except for ``loads_paused``
(paused around the batch).
Each cell reports the median of its fastest third of rounds. Printed: MB/s
per file and library, then each group's aggregate (total bytes over total
time, as the corpus table). Non-LTO builds do not rank like the shipped
ones (a fast build's ``loads`` is ~25% slower): compare LTO packages.
Loading two copies of one build shows the noise floor.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

try:
    from corpus import LARGE, SMALL  # type: ignore[import-not-found]
    from encode_ab import DATA, load  # type: ignore[import-not-found]
    from interleave import fast_third, interleaved  # type: ignore[import-not-found]
except ImportError:  # python -m benchmarks.eager_ab
    from benchmarks.corpus import LARGE, SMALL
    from benchmarks.encode_ab import DATA, load
    from benchmarks.interleave import fast_third, interleaved


def peers(op: str) -> dict[str, Callable[[bytes], Any]]:
    """The row's peers, called as ``corpus.py`` calls them."""
    import fastsimdjson  # type: ignore[import-not-found]

    if op == "dumps":
        import orjson
        import ssrjson  # type: ignore[import-not-found]

        return {"orjson": orjson.dumps, "ssrjson": ssrjson.dumps_to_bytes}
    if op == "validate":
        import cysimdjson  # type: ignore[import-not-found]
        import simdjson  # type: ignore[import-not-found]

        return {
            "pysimdjson": simdjson.Parser().parse,
            "fastsimdjson": fastsimdjson._parse_only,
            "cysimdjson": cysimdjson.JSONParser().parse,
        }
    import ssrjson  # type: ignore[import-not-found]

    return {"fastsimdjson": fastsimdjson.loads, "ssrjson": ssrjson.loads}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("builds", nargs="+")
    ap.add_argument("--op", choices=["loads", "loads_paused", "validate", "dumps"], default="loads")
    ap.add_argument("--group", choices=["small", "large"], default="small")
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--files", default="")
    args = ap.parse_args()
    files = args.files.split(",") if args.files else (SMALL if args.group == "small" else LARGE)
    name = args.op if args.op in ("validate", "dumps") else "loads"
    libs: dict[str, Callable[[bytes], Any]] = {
        f"Q{i}": getattr(load(b), name) for i, b in enumerate(args.builds)
    }
    libs.update(peers(args.op))
    data = {f: (DATA / f).read_bytes() for f in files}
    size = {f: len(b) for f, b in data.items()}
    if name == "dumps":
        import json

        # (Sizes stay the files': MB/s of the same bytes as the loads rows.)
        objs = {f: json.loads(data[f]) for f in files}
        for f in files:
            assert all(json.loads(fn(objs[f])) == objs[f] for fn in libs.values()), f
        data = objs
    if name == "loads":
        for f in files:
            want = libs["fastsimdjson"](data[f])
            assert all(libs[f"Q{i}"](data[f]) == want for i in range(len(args.builds))), f
    # One group per file: each round takes the files in order and each
    # file's libraries in a new order (interleave.py).
    groups = [[((f, lib), libs[lib], data[f]) for lib in libs] for f in files]
    times = interleaved(groups, args.rounds, paused=args.op == "loads_paused")
    total = dict.fromkeys(libs, 0.0)
    for f in files:
        med = {lib: fast_third(times[f, lib]) for lib in libs}
        for lib in libs:
            total[lib] += med[lib]
        cells = "  ".join(f"{lib} {size[f] / med[lib] / 1e6:7,.0f}" for lib in libs)
        print(f"{f:28s} {cells}")
    nbytes = sum(size.values())
    cells = "  ".join(f"{lib} {nbytes / total[lib] / 1e6:7,.0f}" for lib in libs)
    print(f"{'aggregate MB/s':28s} {cells}")
    for i in range(1, len(args.builds)):
        ratio = total["Q0"] / total[f"Q{i}"]
        print(f"aggregate Q0 time / Q{i} time: {ratio:.3f} (> 1: Q{i} is faster)")


if __name__ == "__main__":
    main()
