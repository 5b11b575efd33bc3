"""The DESIGN.md comparisons, timed side by side: libraries interleaved per round.

For each scenario, every (operation, library) cell a performance target
needs is calibrated (~60 ms per round, ~20 ms with --quick), warmed up, and
then timed in rounds; each round runs every cell once, with a rotating
start, the garbage collector collected before each cell and left ON during
it (DESIGN.md: ratios are taken with the collector on, as in a user's
process; ``--gc-off`` disables it during a cell, as ``timeit`` does). A
cell's time is the median over rounds of the per-iteration time. The
pytest-benchmark suites time the same callables (workloads.py) one row
after the other; this run is the one the targets in docs/benchmarks.md are
judged on.

    python benchmarks/targets.py [--quick] [--gc-off] [--json PATH] [--scenarios 2k,...]

Cells, on every scenario: parse_get (qjson and every peer: orjson,
fastsimdjson, pysimdjson, cysimdjson, ssrjson, msgspec; copy), decode_access
and get_all (qjson; a peer's read row is its parse_get), decode_dumps (qjson,
the peers that can encode: orjson, fastsimdjson, ssrjson, msgspec; copy);
on the chat scenarios also the three edits (qjson) and edit_top (orjson).
"Best peer" of a row = the fastest peer on it (DESIGN.md, "Performance
targets"). Then the per-access cost (access.py). Cells that cannot run are
listed as skipped with the reason.
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
    import access  # type: ignore[import-not-found]
    import clock  # type: ignore[import-not-found]
    import workloads  # type: ignore[import-not-found]
    from progress import Progress  # type: ignore[import-not-found]
except ImportError:
    from benchmarks import access, clock, workloads  # type: ignore[no-redef]
    from benchmarks.progress import Progress  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"

FULL = ["2k", "small_request", "60k", "100k", "200k", "500k", "1m", "2m", "5m", "10m"]
FULL += ["interleaved", "github_issues", "twitter"]
QUICK = ["2k", "small_request", "100k", "1m", "github_issues", "twitter"]

PEERS = workloads.PEERS  # the best peer of a row is the fastest of these on it
READ_CELLS = [
    *[("parse_get", lib) for lib in ["qjson", *PEERS, "copy"]],
    ("decode_access", "qjson"),
    ("get_all", "qjson"),
]
PASS_CELLS = [("decode_dumps", lib) for lib in ["qjson", *workloads.WRITERS, "copy"]]
EDIT_CELLS = [
    ("edit_top", "qjson"),
    ("edit_add", "qjson"),
    ("edit_nested", "qjson"),
    ("edit_top", "orjson"),
]
CHAT_CELLS = READ_CELLS + PASS_CELLS + EDIT_CELLS
DENSE_CELLS = READ_CELLS + PASS_CELLS  # github_issues, twitter: the root is no request

# The peers' read code is the same for parse_get, decode_access and get_all:
# qjson's rows of these three ops are compared with the peers' parse_get rows.
PEER_OP = {"parse_get": "parse_get", "decode_access": "parse_get", "get_all": "parse_get"}


def best_peer(rows: list[dict[str, Any]], scenario: str, op: str) -> tuple[str, float] | None:
    """(library, median_s) of the fastest peer on (scenario, op), or None."""
    peer_op = PEER_OP.get(op, op)
    times = [
        (r["median_s"], r["library"])
        for r in rows
        if r["scenario"] == scenario and r["op"] == peer_op and r["library"] in PEERS
    ]
    if not times:
        return None
    t, lib = min(times)
    return lib, t


def calibrate(fn: Callable[[], Any], target_s: float) -> int:
    """Warm up, then the iterations that make one round last ~target_s."""
    deadline = clock.now() + min(0.05, target_s)
    fn()
    while clock.now() < deadline:
        fn()
    n = 1
    while True:
        t0 = clock.now()
        for _ in range(n):
            fn()
        dt = clock.now() - t0
        if dt >= target_s / 4 or n >= 1 << 22:
            return max(1, round(n * target_s / max(dt, 1e-9)))
        n *= 4


def interleave(
    cells: dict[Any, Callable[[], Any]], rounds: int, target_s: float, gc_off: bool = False
) -> dict[Any, dict[str, float]]:
    """Time every cell in `rounds` interleaved rounds; median and quartiles per cell.
    The collector is collected before each cell and stays on during it unless
    `gc_off`."""
    iters = {k: calibrate(fn, target_s) for k, fn in cells.items()}
    times: dict[Any, list[float]] = {k: [] for k in cells}
    order = list(cells)
    gc_was = gc.isenabled()
    try:
        for r in range(rounds):
            k0 = r % len(order) if order else 0
            for k in order[k0:] + order[:k0]:
                fn, n = cells[k], iters[k]
                loop = range(n)
                gc.collect()
                if gc_off:
                    gc.disable()
                t0 = clock.now()
                for _ in loop:
                    fn()
                times[k].append((clock.now() - t0) / n)
                if gc_was:
                    gc.enable()
    finally:
        if gc_was:
            gc.enable()
    out = {}
    for k, ts in times.items():
        q = statistics.quantiles(ts, n=4) if len(ts) >= 2 else [ts[0]] * 3
        out[k] = {
            "median_s": statistics.median(ts),
            "q1_s": q[0],
            "q3_s": q[2],
            "rounds": len(ts),
            "iterations": iters[k],
        }
    return out


def run(names: list[str], rounds: int, target_s: float, gc_off: bool = False) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    progress = Progress(len(names), "targets", every=0.0)
    for name in names:
        try:
            scen = workloads.scenario(name)
        except workloads.Skip as e:
            skipped.append({"scenario": name, "op": "*", "library": "*", "reason": str(e)})
            print(f"  skipped {name}: {e}", file=sys.stderr)
            progress.step(f"{name} (skipped)")
            continue
        progress.step(f"{name} ({scen.size:,} B)")
        cells: dict[tuple[str, str], Callable[[], Any]] = {}
        for op, lib in CHAT_CELLS if scen.kind == "chat" else DENSE_CELLS:
            try:
                cells[op, lib] = workloads.make(op, lib, scen)
            except workloads.Skip as e:
                skipped.append({"scenario": name, "op": op, "library": lib, "reason": str(e)})
                print(f"  skipped {name} {op} {lib}: {e}", file=sys.stderr)
        for (op, lib), st in interleave(cells, rounds, target_s, gc_off).items():
            rows.append({"scenario": name, "bytes": scen.size, "op": op, "library": lib, **st})
        del cells
    progress.finish()
    return {
        "rounds": rounds,
        "round_s": target_s,
        "gc": "off during a cell" if gc_off else "on",
        "peers": PEERS,
        "rows": rows,
        "skipped": skipped,
    }


def print_table(res: dict[str, Any]) -> None:
    rows = res["rows"]
    by = {(r["scenario"], r["op"], r["library"]): r["median_s"] for r in rows}
    print(
        f"{'scenario':<14} {'op':<13} {'library':<12} {'median us':>11} {'MB/s':>8} "
        f"{'best peer':>13} {'x best':>7} {'x orjson':>8}"
    )
    for r in rows:
        best, xb, xo = "", "", ""
        if r["library"] == "qjson":
            bp = best_peer(rows, r["scenario"], r["op"])
            if bp:
                best, xb = bp[0], f"{bp[1] / r['median_s']:.2f}x"
            o = by.get((r["scenario"], PEER_OP.get(r["op"], r["op"]), "orjson"))
            xo = f"{o / r['median_s']:.2f}x" if o else ""
        print(
            f"{r['scenario']:<14} {r['op']:<13} {r['library']:<12} {r['median_s'] * 1e6:>11.2f} "
            f"{r['bytes'] / r['median_s'] / 1e6:>8.0f} {best:>13} {xb:>7} {xo:>8}"
        )
    for s in res["skipped"]:
        print(f"{s['scenario']:<14} {s['op']:<13} {s['library']:<12} skipped: {s['reason']}")
    if "access" in res:
        access.print_table(res["access"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer scenarios, shorter rounds")
    ap.add_argument("--rounds", type=int, default=None, help="default 11, quick 5")
    ap.add_argument("--scenarios", default=None, help="comma list (default: all, or quick's)")
    ap.add_argument("--gc-off", action="store_true", help="collector disabled during a cell")
    ap.add_argument("--clock", choices=sorted(clock.CLOCKS), default="thread", help="see clock.py")
    ap.add_argument("--no-access", action="store_true", help="skip the per-access cost")
    ap.add_argument("--json", type=Path, default=RESULTS / "targets.json")
    args = ap.parse_args(argv)
    clock.use(args.clock)
    names = (
        [s.strip() for s in args.scenarios.split(",") if s.strip()]
        if args.scenarios
        else (QUICK if args.quick else FULL)
    )
    rounds = args.rounds or (5 if args.quick else 11)
    res = run(names, rounds, 0.02 if args.quick else 0.06, args.gc_off)
    if not args.no_access:
        print("per-access cost (access.py)", file=sys.stderr, flush=True)
        res["access"] = access.measure(7, 0.01) if args.quick else access.measure()
    res["mode"] = "quick" if args.quick else "full"
    res["clock"] = clock.name()
    print_table(res)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(res, indent=1) + "\n")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
