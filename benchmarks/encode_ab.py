"""A/B of two builds of qjson's extension on ``dumps`` (jsonexamples, large files).

    python benchmarks/encode_ab.py A.so B.so [--rounds 15] [--files a.json,b.json]

Both builds (copies of ``python/qjson/_qjson*.so``, e.g. one from main's tree and
one from a branch) are loaded into one process next to orjson, and every
(file, library) cell is timed in ~5 ms batches of a call count fixed before the
rounds, on the calling thread's CPU time, the files in order and each file's
libraries in an order shuffled anew each round (``interleave.py``). Each cell
reports the median of its fastest third of rounds: on a machine shared with
other jobs, interference only ever adds time, so the fast rounds are the
stable part. Printed: per file qjson/orjson for A and B and A's time over
B's (> 1: B is faster), then the aggregate (total time over the files, so big
files weigh by their cost). Loading A.so against itself shows the noise floor
(about +-3% on the aggregate on a busy 2-core machine).
"""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "jsonexamples"
sys.path.insert(0, str(ROOT / "python"))

try:
    from corpus import LARGE  # type: ignore[import-not-found]
    from interleave import fast_third, interleaved  # type: ignore[import-not-found]
except ImportError:  # python -m benchmarks.encode_ab
    from benchmarks.corpus import LARGE
    from benchmarks.interleave import fast_third, interleaved


def load(path: str) -> Any:
    """The extension module built at `path` (another copy of ``qjson._qjson``)."""
    loader = importlib.machinery.ExtensionFileLoader("qjson._qjson", path)
    spec = importlib.util.spec_from_file_location("qjson._qjson", path, loader=loader)
    assert spec is not None
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--files", default=",".join(LARGE))
    args = ap.parse_args()
    import orjson

    libs = {"orjson": orjson.dumps, "A": load(args.a).dumps, "B": load(args.b).dumps}
    files = args.files.split(",")
    objs = {f: json.loads((DATA / f).read_bytes()) for f in files}
    for f in files:
        want = orjson.dumps(objs[f])
        assert libs["A"](objs[f]) == want and libs["B"](objs[f]) == want, f
    groups = [[((f, lib), libs[lib], objs[f]) for lib in libs] for f in files]
    times = interleaved(groups, args.rounds, batch_s=0.005)
    total = dict.fromkeys(libs, 0.0)
    for f in files:
        m = {lib: fast_third(times[f, lib]) for lib in libs}
        for lib in libs:
            total[lib] += m[lib]
        print(
            f"{f:22s} A/orjson {m['orjson'] / m['A']:.2f}  B/orjson {m['orjson'] / m['B']:.2f}"
            f"  B vs A {m['A'] / m['B']:.3f}"
        )
    print(
        f"aggregate: A/orjson {total['orjson'] / total['A']:.3f}"
        f"  B/orjson {total['orjson'] / total['B']:.3f}  B vs A {total['A'] / total['B']:.3f}"
    )


if __name__ == "__main__":
    main()
