"""The corpus table: decode, encode and validate throughput (MB/s) on the
simdjson corpus, qjson against json and every peer (orjson, pysimdjson,
fastsimdjson, cysimdjson, ssrjson, msgspec), with the collector on and paused.

    python benchmarks/corpus.py               # full run (~3-5 min), writes docs/corpus.md
    python benchmarks/corpus.py --quick       # 3 rounds, shorter batches, no memory
    python benchmarks/corpus.py --out x.md --json y.json

Rows: the 14 large files of ``../shared/data/jsonexamples`` and the small
ones of ``jsonexamples/small``, then the aggregate of each group (total
bytes / total median time, so a big file weighs by its size, as in the
fastjson report's tables). Operations:

- decode: bytes -> Python objects (``json.loads``, ``orjson.loads``,
  ``simdjson.loads``, ``fastsimdjson.loads``, cysimdjson's reused
  ``JSONParser().parse(b).export()`` (its ``loads`` takes str only),
  ``ssrjson.loads``, ``msgspec.json.Decoder().decode``, ``qjson.loads``),
  with the collector on (a user's default);
- decode, gc paused: the same calls with the collector paused by the caller
  (``gc.disable()`` around the timed batch, as pytest-benchmark's
  ``--benchmark-disable-gc`` does);
- encode: the decoded object -> JSON (``json.dumps`` (str, compact
  separators), ``orjson.dumps``, ``fastsimdjson.dumpb`` (orjson's output),
  ``ssrjson.dumps_to_bytes`` (with its default UTF-8 cache: the str objects
  of the reused input keep their UTF-8 form after the first call),
  ``msgspec.json.Encoder().encode``, ``qjson.dumps``); the collector stays on
  (no call here creates objects it tracks);
- validate: ``qjson.validate`` against simdjson's parse without Python objects:
  pysimdjson's and cysimdjson's ``Parser.parse`` (one parser reused; they build
  simdjson's tape and a root proxy only) and fastsimdjson's ``_parse_only``
  (private, but the closest operation it has), the closest peer operations.

Method: every (file, operation, library) cell is timed in batches of calls
long enough to last ~2 ms (~0.5 ms with --quick); the cells are interleaved
(round r runs every cell once, in an order shuffled anew each round with a
fixed seed, so no library always follows the same neighbour: a cell run
right after json.loads of the same file measured orjson ~25% faster than
in isolation) and each cell reports the median over the rounds. Memory:
the peak of Python allocations during one call (``tracemalloc``; native
allocations such as qjson's index or orjson's yyjson tree are not seen by
it), and the growth of the process's peak RSS
during one call (``/proc/self/clear_refs`` resets the peak; allocator
caches make this a lower bound).
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

try:
    import clock  # type: ignore[import-not-found]
    from progress import Progress, fmt_duration  # type: ignore[import-not-found]
except ImportError:  # python -m benchmarks.corpus
    from benchmarks import clock  # type: ignore[no-redef]
    from benchmarks.progress import Progress, fmt_duration  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "jsonexamples"
LARGE = [
    "apache_builds.json",
    "canada.json",
    "citm_catalog.json",
    "github_events.json",
    "gsoc-2018.json",
    "instruments.json",
    "marine_ik.json",
    "mesh.json",
    "mesh.pretty.json",
    "numbers.json",
    "random.json",
    "twitter.json",
    "twitterescaped.json",
    "update-center.json",
]
SMALL = [
    "small/adversarial.json",
    "small/demo.json",
    "small/flatadversarial.json",
    "small/repeat.json",
    "small/smalldemo.json",
    "small/truenull.json",
    "small/twitter_timeline.json",
]
LIBS = ["json", "orjson", "pysimdjson", "fastsimdjson", "cysimdjson", "ssrjson", "msgspec", "qjson"]
# The best peer of a row is the fastest of these (DESIGN.md "Performance targets").
PEERS = ["orjson", "fastsimdjson", "pysimdjson", "cysimdjson", "ssrjson", "msgspec"]
OPS = ["decode", "decode_gc_paused", "encode", "validate"]
OP_TITLE = {
    "decode": "decode (collector on)",
    "decode_gc_paused": "decode (collector paused by the caller)",
    "encode": "encode",
    "validate": "validate",
}


CLOCK_TEXT = {
    "thread": "CPU time of the thread (benchmarks/clock.py: the machine is shared)",
    "wall": "wall clock",
}


def peers() -> dict[str, Any]:
    mods: dict[str, Any] = {"json": json}
    for name, mod in [
        ("orjson", "orjson"),
        ("pysimdjson", "simdjson"),
        ("fastsimdjson", "fastsimdjson"),
        ("cysimdjson", "cysimdjson"),
        ("ssrjson", "ssrjson"),
        ("msgspec", "msgspec"),
    ]:
        try:
            mods[name] = __import__(mod)
        except ImportError:
            print(f"note: {name} is not installed; its columns stay empty", file=sys.stderr)
    import qjson

    mods["qjson"] = qjson
    return mods


def functions(mods: dict[str, Any], data: bytes, obj: Any) -> dict[tuple[str, str], Callable]:
    """(op, lib) -> a zero-argument call doing that operation on this file."""
    f: dict[tuple[str, str], Callable] = {}
    f["decode", "json"] = lambda: json.loads(data)
    f["encode", "json"] = lambda: json.dumps(obj, separators=(",", ":"))
    if "orjson" in mods:
        oj = mods["orjson"]
        f["decode", "orjson"] = lambda: oj.loads(data)
        f["encode", "orjson"] = lambda: oj.dumps(obj)
    if "pysimdjson" in mods:
        sj = mods["pysimdjson"]
        parser = sj.Parser()

        def parse_only() -> None:
            doc = parser.parse(data)
            del doc

        f["decode", "pysimdjson"] = lambda: sj.loads(data)
        f["validate", "pysimdjson"] = parse_only
    if "fastsimdjson" in mods:
        fs = mods["fastsimdjson"]
        f["decode", "fastsimdjson"] = lambda: fs.loads(data)
        f["encode", "fastsimdjson"] = lambda: fs.dumpb(obj)
        f["validate", "fastsimdjson"] = lambda: fs._parse_only(data)
    if "cysimdjson" in mods:
        cy_parse = mods["cysimdjson"].JSONParser().parse

        def cy_loads() -> Any:
            root = cy_parse(data)
            return root.export() if hasattr(root, "export") else root

        def cy_parse_only() -> None:
            doc = cy_parse(data)
            del doc

        f["decode", "cysimdjson"] = cy_loads
        f["validate", "cysimdjson"] = cy_parse_only
    if "ssrjson" in mods:
        sr = mods["ssrjson"]
        f["decode", "ssrjson"] = lambda: sr.loads(data)
        f["encode", "ssrjson"] = lambda: sr.dumps_to_bytes(obj)
    if "msgspec" in mods:
        ms = mods["msgspec"].json
        dec, enc = ms.Decoder(), ms.Encoder()
        f["decode", "msgspec"] = lambda: dec.decode(data)
        f["encode", "msgspec"] = lambda: enc.encode(obj)
    qj = mods["qjson"]
    f["decode", "qjson"] = lambda: qj.loads(data)
    f["encode", "qjson"] = lambda: qj.dumps(obj)
    f["validate", "qjson"] = lambda: qj.validate(data)
    for (op, lib), fn in list(f.items()):
        if op == "decode":  # the same call, timed with the collector paused
            f["decode_gc_paused", lib] = fn
    return f


def calibrate(fn: Callable, target: float) -> int:
    """Calls per batch so that one batch lasts about `target` seconds."""
    n = 1
    while True:
        t = clock.now()
        for _ in range(n):
            fn()
        dt = clock.now() - t
        if dt >= target / 4 or n >= 1 << 20:
            return max(1, int(n * target / max(dt, 1e-9)))
        n *= 4


def rss_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def memory(fn: Callable) -> tuple[int, int | None]:
    """(tracemalloc peak bytes, peak-RSS growth bytes or None) of one call."""
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    before, _ = tracemalloc.get_traced_memory()
    out = fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del out
    rss: int | None = None
    try:
        gc.collect()
        Path("/proc/self/clear_refs").write_text("5")
        base = rss_kib("VmRSS")
        out = fn()
        rss = max(0, rss_kib("VmHWM") - base) * 1024
        del out
    except OSError:
        pass
    return peak - before, rss


def run(rounds: int, target: float, with_memory: bool = True) -> dict[str, Any]:
    mods = peers()
    files = [(name, (DATA / name).read_bytes()) for name in LARGE + SMALL]
    cells: list[tuple[str, str, str, Callable, int]] = []
    mem: dict[str, dict[str, Any]] = {}
    progress = Progress(len(files), "corpus: check, calibrate, memory", every=3.0)
    for name, data in files:
        progress.step(name)
        obj = json.loads(data)
        # The decoded files stay alive (the encode cells hold them): freezing them
        # keeps every later gc.collect() from walking them again and again.
        gc.freeze()
        fns = functions(mods, data, obj)
        # Every library must give the same answer, else its cell is dropped.
        for (op, lib), fn in list(fns.items()):
            if op == "decode_gc_paused":
                if ("decode", lib) not in fns:
                    del fns[op, lib]
                continue
            got = fn()
            ok = (
                (op == "decode" and got == obj)
                or (op == "encode" and json.loads(got) == obj)
                or op == "validate"
            )
            if not ok:
                print(f"note: {lib} {op} {name}: wrong result, skipped", file=sys.stderr)
                del fns[op, lib]
        for (op, lib), fn in fns.items():
            cells.append((name, op, lib, fn, calibrate(fn, target)))
            if with_memory and op != "decode_gc_paused":  # the same call as decode
                mem.setdefault(name, {})[f"{op}/{lib}"] = memory(fn)
    # The decoded files stay alive for the encode cells; freezing them keeps
    # full garbage collections from walking them, so the GC cost in a cell
    # is that of the objects its own call creates, the same for every library.
    gc.collect()
    gc.freeze()
    times: dict[tuple[str, str, str], list[float]] = {}
    t_rounds = time.perf_counter()
    shuffle = random.Random(20261123)
    for r in range(rounds):
        order = cells[:]
        shuffle.shuffle(order)
        for name, op, lib, fn, n in order:
            paused = op == "decode_gc_paused"
            if paused:
                gc.disable()
            t = clock.now()
            for _ in range(n):
                fn()
            dt = clock.now() - t
            if paused:
                gc.enable()
            times.setdefault((name, op, lib), []).append(dt / n)
        print(
            f"[corpus] timing round {r + 1}/{rounds} done, "
            f"{fmt_duration(time.perf_counter() - t_rounds)} elapsed",
            file=sys.stderr,
            flush=True,
        )
    sizes = dict((n, len(d)) for n, d in files)
    med = {k: statistics.median(v) for k, v in times.items()}
    results: dict[str, Any] = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "versions": {k: _version(k, m) for k, m in mods.items()},
        "qjson_backend": mods["qjson"].backend(),
        "rounds": rounds,
        "clock": clock.name(),
        "files": {n: {"bytes": sizes[n]} for n in sizes},
        "seconds": {f"{n}|{op}|{lib}": t for (n, op, lib), t in med.items()},
        "memory": mem,
    }
    agg: dict[str, dict[str, float]] = {}
    for group, names in (("large", LARGE), ("small", SMALL)):
        for op in OPS:
            for lib in LIBS:
                if all((n, op, lib) in med for n in names):
                    total = sum(med[n, op, lib] for n in names)
                    agg.setdefault(group, {})[f"{op}/{lib}"] = (
                        sum(sizes[n] for n in names) / total / 1e6
                    )
    results["aggregate_mb_s"] = agg
    return results


def _version(lib: str, mod: Any) -> str:
    if lib == "json":
        return ""
    try:
        from importlib.metadata import version

        return version(lib)
    except Exception:
        return str(getattr(mod, "__version__", ""))


def best_peer(row: dict[str, float], op: str) -> tuple[str, float] | None:
    """(library, MB/s) of the fastest peer in an aggregate row, or None."""
    cands = [(row[f"{op}/{lib}"], lib) for lib in PEERS if f"{op}/{lib}" in row]
    if not cands:
        return None
    mbs, lib = max(cands)
    return lib, mbs


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def markdown(res: dict[str, Any]) -> str:
    sec = res["seconds"]
    sizes = {n: v["bytes"] for n, v in res["files"].items()}
    agg = res["aggregate_mb_s"]
    v = res["versions"]
    libs = [lib for lib in LIBS if lib in v]
    out = [
        "# Corpus table: decode, encode, validate",
        "",
        "Generated by `python benchmarks/corpus.py` (see its docstring for the method). "
        f"Python {res['python']}, {res['cpu']}, qjson backend `{res['qjson_backend']}`; "
        + ", ".join(f"{k} {v[k]}" for k in v if v[k])
        + f". Median of {res['rounds']} interleaved rounds, timed with the "
        f"{CLOCK_TEXT[res.get('clock', 'wall')]}. MB/s = 10^6 bytes of JSON per "
        "second (input bytes for decode and validate, the same file's size for encode). "
        "Best peer = the fastest of " + ", ".join(PEERS) + " on that row; x best = qjson's "
        "throughput / the best peer's. Decode runs twice: with the collector on (a user's "
        "default) and with it paused by the caller (`gc.disable()` around the timed calls).",
        "",
        "## Aggregates (total bytes / total median time per group)",
        "",
        "| group | op | " + " | ".join(libs) + " | best peer | qjson x best | qjson x orjson |",
        "|---|---|" + "---:|" * len(libs) + "---|---:|---:|",
    ]
    for group in ("large", "small"):
        for op in OPS:
            row = agg.get(group, {})
            cells = [f"{row[f'{op}/{lib}']:,.0f}" if f"{op}/{lib}" in row else "" for lib in libs]
            q, o = row.get(f"{op}/qjson"), row.get(f"{op}/orjson")
            bp = best_peer(row, op)
            out.append(
                f"| {group} | {OP_TITLE[op]} | "
                + " | ".join(cells)
                + f" | {bp[0] if bp else ''}"
                + f" | {f'{q / bp[1]:.2f}x' if q and bp else ''}"
                + f" | {f'{q / o:.2f}x' if q and o else ''} |"
            )
    for op in OPS:
        out += [
            "",
            f"## {OP_TITLE[op]} (MB/s)",
            "",
            "| file | bytes | " + " | ".join(libs) + " | best peer | qjson x best |",
            "|---|---:|" + "---:|" * len(libs) + "---|---:|",
        ]
        for n in sizes:
            mbs = {}
            for lib in libs:
                t = sec.get(f"{n}|{op}|{lib}")
                if t:
                    mbs[lib] = sizes[n] / t / 1e6
            cells = [f"{mbs[lib]:,.0f}" if lib in mbs else "" for lib in libs]
            bp = best_peer({f"{op}/{k}": x for k, x in mbs.items()}, op)
            q = mbs.get("qjson")
            out.append(
                f"| {n} | {sizes[n]} | "
                + " | ".join(cells)
                + f" | {bp[0] if bp else ''} | {f'{q / bp[1]:.2f}x' if q and bp else ''} |"
            )
    out += [
        "",
        "## Peak memory of one call (KiB): tracemalloc / peak-RSS growth",
        "",
        "tracemalloc sees Python allocations only (the objects built, the output "
        "bytes); native buffers (qjson's index, orjson's and simdjson's trees) show "
        "only in the RSS column, which allocator caching makes a lower bound.",
        "",
        "| file | op | " + " | ".join(libs) + " |",
        "|---|---|" + "---:|" * len(libs),
    ]
    if not res["memory"]:
        out.append("| (not measured: --quick) | | " + " | ".join("" for _ in libs) + " |")
    for n in sizes:
        for op in OPS:
            m = res["memory"].get(n, {})
            cells = []
            for lib in libs:
                pair = m.get(f"{op}/{lib}")
                if pair is None:
                    cells.append("")
                else:
                    tm, rss = pair
                    cells.append(f"{tm / 1024:.0f} / {'' if rss is None else f'{rss / 1024:.0f}'}")
            if any(cells):
                out.append(f"| {n} | {op} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3 rounds, short batches")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--clock", choices=sorted(clock.CLOCKS), default="thread", help="see clock.py")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "corpus.md")
    ap.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results" / "corpus.json")
    args = ap.parse_args()
    clock.use(args.clock)
    if not DATA.is_dir():
        sys.exit(f"test data not found: {DATA} (see shared/data/README.md)")
    rounds = args.rounds or (3 if args.quick else 9)
    res = run(rounds, 0.0005 if args.quick else 0.002, with_memory=not args.quick)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(res, indent=1) + "\n")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(markdown(res))
    print(markdown(res).split("## decode")[0])  # the aggregates
    print(f"wrote {args.out} and {args.json}")


if __name__ == "__main__":
    main()
