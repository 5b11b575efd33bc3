"""Per-access cost: nanoseconds for one read of a short key, with the loop's own cost removed.

    python benchmarks/access.py [--quick] [--json PATH]

The document is an object of 20 members with short keys (``k00`` ...), the key
read (``id``, an int) sitting in the middle; a second document nests three such
objects for ``doc.get("a.b.c")`` (``a``, ``b`` and ``c`` also in the middle).
Each cell is a generated function that runs ``for _ in range(n):`` around ten
copies of one read, exactly as a user writes it (``cur.get_int("id")`` includes
the attribute lookup). Its empty twin (the same loop around ten ``pass``
statements) is timed in the same round, and

    ns per access = (time of the loop - time of the empty loop) / (10 n)

Rows: qjson's cursor getter, view subscript, ``Doc.get`` with a one-key path
and ``doc.get("a.b.c")``; CPython's dict subscript; the subscripts of
fastsimdjson's, pysimdjson's and cysimdjson's lazy objects. The same key of
the same object is read again and again, so a per-object cache or key table
is at its best here; the dense workloads in targets.py read each object once.
Cells run interleaved with a rotating start, the collector on; median of the
rounds. DESIGN.md's target: <= 40 ns for the cursor getter and the view
subscript.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
from pathlib import Path
from typing import Any, Callable

try:
    import clock  # type: ignore[import-not-found]
    import workloads  # type: ignore[import-not-found]
except ImportError:
    from benchmarks import clock, workloads  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[1]
UNROLL = 10


def wide(inner: Any = None, key: str = "id") -> dict[str, Any]:
    """20 members, short keys; `key` (holding `inner`, or an int) is the 11th."""
    d: dict[str, Any] = {f"k{i:02d}": (i * 7919 if i % 2 else f"v{i}") for i in range(10)}
    d[key] = 123456789 if inner is None else inner
    d.update({f"k{i:02d}": (i * 7919 if i % 2 else f"v{i}") for i in range(10, 19)})
    return d


FLAT = json.dumps(wide(), separators=(",", ":")).encode()
NESTED = json.dumps(wide(wide(wide(None, "c"), "b"), "a"), separators=(",", ":")).encode()


def _loop(stmt: str) -> Callable[[int, Any], None]:
    """def run(n, o): for _ in range(n): <stmt> x UNROLL  (stmt reads `o`)."""
    body = "\n".join(f"        {stmt}" for _ in range(UNROLL))
    src = f"def run(n, o):\n    for _ in range(n):\n{body}\n"
    ns: dict[str, Any] = {}
    exec(compile(src, f"<access: {stmt}>", "exec"), ns)
    return ns["run"]


EMPTY = _loop("pass")
_PARSERS: list[Any] = []  # the peers' parsers, alive as long as their documents


def cells() -> tuple[dict[str, tuple[str, Any]], list[dict[str, str]]]:
    """label -> (statement, the object it reads); and the skipped rows with reasons."""
    out: dict[str, tuple[str, Any]] = {}
    skipped: list[dict[str, str]] = []
    out["dict d['id']"] = ("o['id']", json.loads(FLAT))
    qj = workloads.qjson
    if qj is not None:
        doc = qj.parse(b'{"o":' + FLAT + b"}")
        out["qjson cursor cur.get_int('id')"] = ("o.get_int('id')", doc.open("o"))
        if hasattr(qj, "decode"):
            out["qjson view v['id']"] = ("o['id']", qj.decode(FLAT))
        else:
            skipped.append({"row": "qjson view v['id']", "reason": "no qjson.decode"})
        out["qjson doc.get('id')"] = ("o.get('id')", qj.parse(FLAT))
        out["qjson doc.get('a.b.c')"] = ("o.get('a.b.c')", qj.parse(NESTED))
    else:
        skipped.append({"row": "qjson", "reason": workloads.missing("qjson") or "absent"})
    for lib in ("fastsimdjson", "pysimdjson", "cysimdjson"):
        mod = workloads.MODULES.get(lib)
        if mod is None:
            skipped.append({"row": lib, "reason": workloads.missing(lib) or "absent"})
            continue
        if lib == "fastsimdjson":
            obj = mod.parse(FLAT)
        else:
            # A cysimdjson element must not outlive its parser (it points into the
            # parser's tape): the parsers live in _PARSERS for the whole run.
            parser = mod.Parser() if lib == "pysimdjson" else mod.JSONParser()
            _PARSERS.append(parser)
            obj = parser.parse(FLAT)
        out[f"{lib} o['id']"] = ("o['id']", obj)
    # Each statement must read 123456789 (else the row is wrong work).
    for label, (stmt, obj) in list(out.items()):
        got = eval(stmt, {}, {"o": obj})
        if got != 123456789:
            skipped.append({"row": label, "reason": f"read {got!r}, not 123456789"})
            del out[label]
    return out, skipped


def _calibrate(fn: Callable[[int, Any], None], obj: Any, target_s: float) -> int:
    n = 1
    while True:
        t0 = clock.now()
        fn(n, obj)
        dt = clock.now() - t0
        if dt >= target_s / 4 or n >= 1 << 24:
            return max(1, round(n * target_s / max(dt, 1e-9)))
        n *= 4


def measure(rounds: int = 15, target_s: float = 0.02) -> dict[str, Any]:
    """ns per access for every cell: median over interleaved rounds."""
    table, skipped = cells()
    loops = {label: (_loop(stmt), obj) for label, (stmt, obj) in table.items()}
    iters = {label: _calibrate(fn, obj, target_s) for label, (fn, obj) in loops.items()}
    ns: dict[str, list[float]] = {label: [] for label in loops}
    empty_ns: list[float] = []
    order = list(loops)
    for r in range(rounds):
        k = r % len(order)
        for label in order[k:] + order[:k]:
            fn, obj = loops[label]
            n = iters[label]
            gc.collect()
            t0 = clock.now()
            EMPTY(n, obj)
            t1 = clock.now()
            fn(n, obj)
            t2 = clock.now()
            empty = (t1 - t0) / (n * UNROLL)
            empty_ns.append(empty * 1e9)
            ns[label].append(((t2 - t1) / (n * UNROLL) - empty) * 1e9)
    rows = []
    for label, xs in ns.items():
        q = statistics.quantiles(xs, n=4)
        rows.append(
            {
                "row": label,
                "ns": statistics.median(xs),
                "q1_ns": q[0],
                "q3_ns": q[2],
                "iterations": iters[label] * UNROLL,
            }
        )
    return {
        "rounds": rounds,
        "clock": clock.name(),
        "unroll": UNROLL,
        "empty_loop_ns_per_access": statistics.median(empty_ns),
        "rows": rows,
        "skipped": skipped,
    }


def print_table(res: dict[str, Any]) -> None:
    print(f"per access, loop cost ({res['empty_loop_ns_per_access']:.1f} ns) subtracted:")
    for r in res["rows"]:
        print(f"  {r['row']:<34} {r['ns']:7.1f} ns  (q1 {r['q1_ns']:.1f}, q3 {r['q3_ns']:.1f})")
    for s in res["skipped"]:
        print(f"  {s['row']:<34} skipped: {s['reason']}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="7 rounds of ~10 ms")
    ap.add_argument("--json", type=Path, default=None, help="write the results here")
    ap.add_argument("--clock", choices=sorted(clock.CLOCKS), default="thread", help="see clock.py")
    args = ap.parse_args(argv)
    clock.use(args.clock)
    res = measure(7, 0.01) if args.quick else measure()
    print_table(res)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
