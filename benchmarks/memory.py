"""Memory per operation and per scenario: retained and peak bytes.

For every (scenario, operation, library) row of workloads.py, plus a
``parse`` row (qjson.parse -> Doc, pysimdjson Parser.parse -> document,
loads for the eager libraries: the structure a caller holds), one call is
measured twice, after a warm-up call:

- tracemalloc: the peak of Python allocations during the call and what is
  still allocated while the result is held (``retained``), both relative to
  before the call. Native allocations are invisible to it: qjson's index
  (Rust), orjson's and simdjson's internal buffers.
- RSS: the growth of the peak RSS during the call (``/proc/self/clear_refs``
  resets the peak) and of the RSS while the result is held. Allocators keep
  freed pages, so these are lower bounds and can be 0 for small payloads.
- qjson's index: ``Doc.index_nbytes`` right after ``parse`` and after the
  scenario's reads (child tables are built lazily on a second lookup).

    python benchmarks/memory.py [--quick] [--json PATH] [--scenarios 2k,100k,...]

Results go to benchmarks/results/memory.json; the DESIGN.md memory target
(index <= 1x the input on dense JSON, <= 5% on the chat ladder) is judged
from the index sizes, including the jsonexamples corpus when it is present.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import sys
import tracemalloc
from pathlib import Path
from typing import Any, Callable

try:
    import workloads  # type: ignore[import-not-found]
    from progress import Progress  # type: ignore[import-not-found]
except ImportError:
    from benchmarks import workloads  # type: ignore[no-redef]
    from benchmarks.progress import Progress  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
CORPUS = ROOT.parent / "shared" / "data" / "jsonexamples"
QUICK = ["2k", "100k", "1m", "small_request", "github_issues"]
FULL = [*workloads.payloads.LADDER, "small_request", "github_issues"]
PARSE_LIBS = ["qjson", "orjson", "pysimdjson", "msgspec", "json"]


def _status_kib(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_peak_rss() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _trim() -> None:
    """Hand the allocator's free pages back, so RSS growth shows (glibc only)."""
    global _malloc_trim
    if _malloc_trim is None:
        try:
            _malloc_trim = ctypes.CDLL(None).malloc_trim
        except (OSError, AttributeError):
            _malloc_trim = False
    if _malloc_trim:
        _malloc_trim(0)


_malloc_trim: Any = None


def measure(fn: Callable[[], Any]) -> dict[str, int | None]:
    """tracemalloc peak / retained and RSS peak / retained growth of one call."""
    gc.collect()
    tracemalloc.start()
    before, _ = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    res = fn()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del res
    out: dict[str, int | None] = {
        "traced_peak": peak - before,
        "traced_retained": current - before,
        "rss_peak": None,
        "rss_retained": None,
    }
    gc.collect()
    _trim()
    if _reset_peak_rss():
        base = _status_kib("VmRSS")
        res = fn()
        hwm, now = _status_kib("VmHWM"), _status_kib("VmRSS")
        del res
        if base is not None and hwm is not None and now is not None:
            out["rss_peak"] = max(0, hwm - base) * 1024
            out["rss_retained"] = max(0, now - base) * 1024
    return out


def _parse_fn(lib: str, scen: workloads.Scenario) -> Callable[[], Any]:
    why = workloads.missing(lib)
    if why:
        raise workloads.Skip(why)
    if lib == "json" and max(len(p) for p in scen.parts) > workloads.STDLIB_MAX:
        raise workloads.Skip("json (stdlib) runs on payloads <= 1 MiB only")
    parts = scen.parts
    if lib == "qjson":
        parse = workloads.qjson.parse
        return lambda: [parse(b) for b in parts]
    if lib == "pysimdjson":
        sj = workloads.simdjson
        return lambda: [sj.Parser().parse(b) for b in parts]  # one parser per held document
    loads = workloads._decoder(lib)
    return lambda: [loads(b) for b in parts]


def _index_sizes(scen: workloads.Scenario) -> dict[str, int] | None:
    qjson = workloads.qjson
    if qjson is None:
        return None
    after_parse = after_reads = 0
    for b in scen.parts:
        doc = qjson.parse(b)
        after_parse += doc.index_nbytes
        if scen.kind == "github":
            for i in range(doc.len()):
                doc.get(f"[{i}].title")
        else:
            doc.get("model")
            doc.get("temperature")
            for i in range(doc.len("messages")):
                doc.get(f"messages[{i}].content")
        after_reads += doc.index_nbytes
    return {"after_parse": after_parse, "after_reads": after_reads}


def run(names: list[str]) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    index: dict[str, Any] = {}
    plan = []
    for name in names:
        scen = workloads.scenario(name)
        plan += [(scen, "parse", lib) for lib in PARSE_LIBS]
        plan += [
            (scen, op, lib)
            for op in workloads.ops_for(scen)
            for lib in workloads.libs_for(op)
            if lib != "copy"
        ]
    progress = Progress(len(plan), "memory", every=3.0)
    for scen, op, lib in plan:
        progress.step(f"{scen.name} {op} {lib}")
        if scen.name not in index:
            sizes = _index_sizes(scen)
            if sizes is not None:
                index[scen.name] = {"bytes": scen.size, **sizes}
        try:
            fn = _parse_fn(lib, scen) if op == "parse" else workloads.make(op, lib, scen)
            fn()  # warm-up
        except workloads.Skip as e:
            skipped.append({"scenario": scen.name, "op": op, "library": lib, "reason": str(e)})
            continue
        m = measure(fn)
        rows.append({"scenario": scen.name, "bytes": scen.size, "op": op, "library": lib, **m})
        del fn
    corpus: dict[str, Any] = {}
    if workloads.qjson is not None and CORPUS.is_dir():
        for path in sorted(CORPUS.glob("*.json")):
            b = path.read_bytes()
            corpus[path.name] = {
                "bytes": len(b),
                "after_parse": workloads.qjson.parse(b).index_nbytes,
            }
    progress.finish()
    return {"rows": rows, "skipped": skipped, "qjson_index": index, "corpus_index": corpus}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the quick scenario set")
    ap.add_argument("--scenarios", default=None, help="comma list (default: all, or quick's)")
    ap.add_argument("--json", type=Path, default=RESULTS / "memory.json")
    args = ap.parse_args(argv)
    names = (
        [s.strip() for s in args.scenarios.split(",") if s.strip()]
        if args.scenarios
        else (QUICK if args.quick else FULL)
    )
    res = run(names)
    res["mode"] = "quick" if args.quick else "full"
    print(
        f"{'scenario':<14} {'op':<13} {'library':<11} "
        f"{'traced peak':>12} {'retained':>10} {'RSS peak':>10}"
    )
    for r in res["rows"]:
        rss = "" if r["rss_peak"] is None else f"{r['rss_peak'] / 1024:.0f}"
        print(
            f"{r['scenario']:<14} {r['op']:<13} {r['library']:<11} "
            f"{r['traced_peak'] / 1024:>10.0f}Ki {r['traced_retained'] / 1024:>8.0f}Ki {rss:>8}Ki"
        )
    for name, ix in res["qjson_index"].items():
        print(
            f"qjson index {name:<14} {ix['after_parse']:>10} B after parse, "
            f"{ix['after_reads']:>10} B after reads "
            f"({ix['after_reads'] / ix['bytes']:.2%} of input)"
        )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(res, indent=1) + "\n")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
