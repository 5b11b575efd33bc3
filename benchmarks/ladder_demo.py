"""Side-by-side ladder benchmark: parse + read a few fields, qjson vs peers.

Workload (chat payloads): parse the bytes, read "model", "temperature" and
every messages[i].content. For github_issues: parse, read every "[i].title".
All libraries run in ONE process, interleaved per round (the order rotates
each round), after a warm-up; each round runs an auto-calibrated number of
iterations (~75 ms, ~40 ms with --quick) and the reported time is the median
per-iteration time over the rounds.

    python benchmarks/ladder_demo.py [--quick] [--json PATH] [--payloads 2k,100k,...]

Missing libraries are reported as "skipped" rows; no number is ever invented.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time
from typing import Callable

try:  # python benchmarks/ladder_demo.py
    import payloads  # type: ignore[import-not-found]
except ImportError:  # python -m benchmarks.ladder_demo
    from benchmarks import payloads  # type: ignore[no-redef]

# --------------------------------------------------------------------------- libraries

_MISSING: dict[str, str] = {}


def _try_import(name: str, label: str):
    try:
        return __import__(name)
    except Exception as e:  # ImportError, or a broken build
        _MISSING[label] = f"{label} not installed ({type(e).__name__}: {e})"
        return None


qjson = _try_import("qjson", "qjson")
orjson = _try_import("orjson", "orjson")
simdjson = _try_import("simdjson", "pysimdjson")
msgspec = _try_import("msgspec", "msgspec")
if msgspec is not None:
    import msgspec.json  # noqa: E402

STDLIB_MAX = 1024 * 1024  # json (stdlib) only for payloads <= 1 MB


# Each factory takes the payload bytes and returns a zero-argument callable that
# performs ONE iteration of the workload, or raises to mark the row as skipped.
# The bytes object is created once and closed over; nothing is copied per call
# except by the library itself.


def _chat_qjson(b: bytes) -> Callable[[], None]:
    parse = qjson.parse

    def run() -> None:
        doc = parse(b)
        doc.get_str("model")
        doc.get_float("temperature")
        n = doc.len("messages")
        get = doc.get
        for i in range(n):
            get(f"messages[{i}].content")

    return run


def _chat_qjson_cursor(b: bytes) -> Callable[[], None]:
    parse = qjson.parse

    def run() -> None:
        doc = parse(b)
        doc.get_str("model")
        doc.get_float("temperature")
        msgs = doc.open("messages")
        get = msgs.get
        for i in range(msgs.len()):
            get(f"[{i}].content")

    return run


def _chat_orjson(b: bytes) -> Callable[[], None]:
    loads = orjson.loads

    def run() -> None:
        d = loads(b)
        d["model"]
        d["temperature"]
        for m in d["messages"]:
            m["content"]

    return run


def _chat_simdjson(b: bytes) -> Callable[[], None]:
    parser = simdjson.Parser()  # reused across iterations

    def run() -> None:
        # every proxy is a local: all are gone when run() returns, so the
        # next parser.parse() is allowed.
        doc = parser.parse(b)
        doc["model"]
        doc["temperature"]
        for m in doc["messages"]:  # iteration is O(1)/step; DOM indexing is O(i)
            m["content"]

    return run


def _chat_msgspec(b: bytes) -> Callable[[], None]:
    decode = msgspec.json.Decoder().decode  # reused decoder

    def run() -> None:
        d = decode(b)
        d["model"]
        d["temperature"]
        for m in d["messages"]:
            m["content"]

    return run


def _chat_stdlib(b: bytes) -> Callable[[], None]:
    if len(b) > STDLIB_MAX:
        raise _Skip("json (stdlib) only runs on payloads <= 1 MB")
    loads = json.loads

    def run() -> None:
        d = loads(b)
        d["model"]
        d["temperature"]
        for m in d["messages"]:
            m["content"]

    return run


def _copy(b: bytes) -> Callable[[], None]:
    def run() -> None:
        bytearray(b)

    return run


def _gh_qjson(b: bytes) -> Callable[[], None]:
    parse = qjson.parse

    def run() -> None:
        doc = parse(b)
        n = doc.len()
        get = doc.get
        for i in range(n):
            get(f"[{i}].title")

    return run


def _gh_qjson_cursor(b: bytes) -> Callable[[], None]:
    parse = qjson.parse

    def run() -> None:
        doc = parse(b)
        root = doc.open("")
        get = root.get
        for i in range(root.len()):
            get(f"[{i}].title")

    return run


def _gh_plain(loads: Callable) -> Callable[[bytes], Callable[[], None]]:
    def factory(b: bytes) -> Callable[[], None]:
        def run() -> None:
            for it in loads(b):
                it["title"]

        return run

    return factory


def _gh_simdjson(b: bytes) -> Callable[[], None]:
    parser = simdjson.Parser()

    def run() -> None:
        for it in parser.parse(b):
            it["title"]

    return run


class _Skip(Exception):
    pass


_FATAL = (KeyboardInterrupt, SystemExit)


def _short(e: BaseException, n: int = 120) -> str:
    s = str(e).splitlines()[0] if str(e) else ""
    return s if len(s) <= n else s[: n - 3] + "..."


# label -> (module-or-None, chat factory, github factory)
LIBS: list[tuple[str, object, Callable, Callable]] = [
    ("qjson", qjson, _chat_qjson, _gh_qjson),
    ("qjson (cursor)", qjson, _chat_qjson_cursor, _gh_qjson_cursor),
    ("orjson", orjson, _chat_orjson, lambda b: _gh_plain(orjson.loads)(b)),
    ("pysimdjson", simdjson, _chat_simdjson, _gh_simdjson),
    ("msgspec", msgspec, _chat_msgspec, lambda b: _gh_plain(msgspec.json.Decoder().decode)(b)),
    ("json", json, _chat_stdlib, lambda b: _gh_plain(json.loads)(b)),
    ("copy", True, _copy, _copy),
]
_MODULE_LABEL = {"qjson": "qjson", "qjson (cursor)": "qjson", "pysimdjson": "pysimdjson"}


# --------------------------------------------------------------------------- checks


def _expected(kind: str, b: bytes):
    d = json.loads(b)
    if kind == "github":
        return [it["title"] for it in d]
    return (d["model"], d["temperature"], [m["content"] for m in d["messages"]])


def _as_plain(v):
    """Turn a qjson view / simdjson proxy into plain Python for comparison."""
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if hasattr(v, "as_list"):  # pysimdjson Array
        return v.as_list()
    if hasattr(v, "as_dict"):  # pysimdjson Object
        return v.as_dict()
    if (
        qjson is not None
        and hasattr(qjson, "materialize")
        and type(v).__module__.startswith("qjson")
    ):
        return qjson.materialize(v)
    if hasattr(v, "keys"):
        return {k: _as_plain(v[k]) for k in v.keys()}
    return [_as_plain(x) for x in v]


def _check(label: str, kind: str, b: bytes, expected) -> str | None:
    """Verify the library reads the same values the workload touches (untimed)."""
    try:
        if label.startswith("qjson"):
            doc = qjson.parse(b)
            if kind == "github":
                cur = doc.open("") if "cursor" in label else doc
                got = [cur.get(f"[{i}].title") for i in range(cur.len())]
            else:
                model, temp = doc.get_str("model"), doc.get_float("temperature")
                if "cursor" in label:
                    c = doc.open("messages")
                    contents = [_as_plain(c.get(f"[{i}].content")) for i in range(c.len())]
                else:
                    n = doc.len("messages")
                    contents = [_as_plain(doc.get(f"messages[{i}].content")) for i in range(n)]
                got = (model, temp, contents)
        elif label == "pysimdjson":
            p = simdjson.Parser()
            doc = p.parse(b)
            if kind == "github":
                got = [it["title"] for it in doc]
            else:
                got = (
                    doc["model"],
                    doc["temperature"],
                    [_as_plain(m["content"]) for m in doc["messages"]],
                )
            del doc
        else:
            return None
    except _FATAL:
        raise
    except BaseException as e:  # also pyo3's PanicException (a BaseException)
        return f"{type(e).__name__}: {_short(e)}"
    if got != expected:
        return "result mismatch against json.loads"
    return None


# --------------------------------------------------------------------------- timing


def _calibrate(fn: Callable[[], None], target_s: float) -> int:
    """Warm up, then pick iterations so that one round takes ~target_s."""
    deadline = time.perf_counter() + min(0.05, target_s)
    fn()
    while time.perf_counter() < deadline:  # warm-up
        fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt >= target_s / 4 or n >= 1 << 22:
            break
        n *= 4
    return max(1, round(n * target_s / max(dt, 1e-9)))


def _run_round(fn: Callable[[], None], iters: int) -> float:
    rng = range(iters)
    t0 = time.perf_counter()
    for _ in rng:
        fn()
    return (time.perf_counter() - t0) / iters


def bench_payload(name: str, kind: str, b: bytes, rounds: int, target_s: float):
    """Return (timings, skipped) for one payload: {label: [per-iter seconds...]}."""
    expected = _expected(kind, b)
    fns: dict[str, tuple[Callable[[], None], int]] = {}
    skipped: dict[str, str] = {}
    for label, mod, chat_f, gh_f in LIBS:
        if mod is None:
            skipped[label] = "skipped: " + _MISSING.get(
                _MODULE_LABEL.get(label, label), label + " not installed"
            )
            continue
        try:
            err = _check(label, kind, b, expected)
            if err:
                raise _Skip(err)
            fn = (gh_f if kind == "github" else chat_f)(b)
            fn()
        except _Skip as e:
            skipped[label] = f"skipped: {e}"
            continue
        except _FATAL:
            raise
        except BaseException as e:
            skipped[label] = f"skipped: {label} failed: {type(e).__name__}: {_short(e)}"
            continue
        fns[label] = (fn, _calibrate(fn, target_s))

    times: dict[str, list[float]] = {label: [] for label in fns}
    order = list(fns)
    gc_was = gc.isenabled()
    try:
        for r in range(rounds):
            k = r % len(order) if order else 0
            for label in order[k:] + order[:k]:  # rotate who goes first
                fn, iters = fns[label]
                gc.collect()
                gc.disable()  # like timeit: no collector pauses inside a round
                try:
                    times[label].append(_run_round(fn, iters))
                finally:
                    if gc_was:
                        gc.enable()
    finally:
        if gc_was:
            gc.enable()
    return times, skipped, {label: it for label, (_, it) in fns.items()}


# --------------------------------------------------------------------------- report


_ROW = "{:<14} {:>10}  {:<15} {:>12} {:>12} {:>9} {:>7}"
_RATIO = "{:<14} {:>10}  {:<15} {:>20} {:>20} {:>18}"


def _size(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n / 1024 / 1024:.1f} MiB"
    if n >= 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n} B"


def _fmt_us(s: float) -> str:
    us = s * 1e6
    if us >= 100:
        return f"{us:.0f}"
    if us >= 10:
        return f"{us:.1f}"
    return f"{us:.2f}"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _version(dist: str, mod) -> str:
    if mod is None:
        return "not installed"
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:
        return getattr(mod, "__version__", "unknown")


def _backend() -> str:
    if qjson is None:
        return "n/a (qjson not installed)"
    for getter in (
        lambda: qjson._qjson.backend(),
        lambda: qjson.__backend__,
        lambda: qjson.backend(),
        lambda: qjson._qjson.__backend__,
    ):
        try:
            v = getter()
            if v:
                return str(v)
        except Exception:
            pass
    return "unknown"


def _flags() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    fl = set(line.split(":", 1)[1].split())
                    want = [
                        "sse4_2",
                        "avx2",
                        "pclmulqdq",
                        "bmi2",
                        "avx512f",
                        "avx512bw",
                        "avx512vbmi2",
                        "vpclmulqdq",
                    ]
                    return " ".join(w for w in want if w in fl)
    except OSError:
        pass
    return "?"


def _targets(payload: str, size: int):
    """(x orjson, x pysimdjson, max t/copy) targets for the qjson rows; None = no target."""
    if payload == "github_issues":
        return None, None, None
    if payload == "interleaved":
        return 5.0, 2.0, 2.0  # 100k..1m rungs
    size = payloads.LADDER.get(payload, size)  # nominal rung size (the 100k rung is 102399 B)
    if size <= 4 * 1024:  # 2k rung and small_request ("same at 2 KB")
        return 1.5, None, None
    if size >= 100 * 1024:
        return 5.0, 2.0, 2.0
    return None, None, None


def _mark(ok: bool | None) -> str:
    return "" if ok is None else (" PASS" if ok else " FAIL")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="fewer, shorter rounds (< 1 min)")
    ap.add_argument(
        "--rounds", type=int, default=None, help="rounds per payload (default 15, quick 5)"
    )
    ap.add_argument("--json", metavar="PATH", help="write result rows as JSON")
    ap.add_argument(
        "--payloads",
        default="2k,100k,1m,10m,small_request,github_issues",
        help="comma list of ladder names, small_request, github_issues, interleaved",
    )
    args = ap.parse_args(argv)
    rounds = args.rounds or (5 if args.quick else 15)
    target_s = 0.04 if args.quick else 0.075

    print("qjson ladder demo: parse + read model, temperature, every messages[i].content")
    print(f"CPU      : {_cpu_model()} ({os.cpu_count() or 0} cpus; {_flags()})")
    print(f"Python   : {platform.python_implementation()} {sys.version.split()[0]}")
    print(
        "versions : qjson {}, orjson {}, pysimdjson {}, msgspec {}".format(
            _version("qjson", qjson),
            _version("orjson", orjson),
            _version("pysimdjson", simdjson),
            _version("msgspec", msgspec),
        )
    )
    print(f"backend  : {_backend()}")
    quick = " (--quick)" if args.quick else ""
    print(
        f"timing   : {rounds} rounds x ~{target_s * 1000:.0f} ms, median per iteration,"
        f" libraries interleaved{quick}"
    )
    print()

    results = []
    ratio_rows = []
    hdr = _ROW.format("payload", "size", "library", "median us", "ops/s", "MB/s", "spread")
    print(hdr)
    print("-" * len(hdr))
    t_start = time.perf_counter()
    for pname in [p.strip() for p in args.payloads.split(",") if p.strip()]:
        if pname == "small_request":
            items = [(pname, "chat", payloads.small_request())]
        elif pname == "github_issues":
            items = [(pname, "github", payloads.github_issues())]
        elif pname == "interleaved":
            items = [(n, "chat", b) for n, b in payloads.interleaved()]
        elif pname in payloads.LADDER:
            items = [(pname, "chat", payloads.chat_request(payloads.LADDER[pname]))]
        else:
            print(f"unknown payload {pname!r}", file=sys.stderr)
            return 2
        if pname == "interleaved":
            # one "iteration" runs the workload on 100k, 200k, 500k and 1m in turn
            size = sum(len(b) for _, _, b in items)
            times, skipped, _ = _bench_interleaved(items, rounds, target_s)
        else:
            _, kind, b = items[0]
            size = len(b)
            times, skipped, _ = bench_payload(pname, kind, b, rounds, target_s)
        med = {}
        for label, _, _, _ in LIBS:
            if label in times:
                ts = times[label]
                m = statistics.median(ts)
                med[label] = m
                q = statistics.quantiles(ts, n=4) if len(ts) >= 2 else [m, m, m]
                spread = (q[2] - q[0]) / m * 100 if m else 0.0
                print(
                    _ROW.format(
                        pname,
                        _size(size),
                        label,
                        _fmt_us(m),
                        f"{1 / m:,.0f}",
                        f"{size / m / 1e6:.0f}",
                        f"{spread:.1f}%",
                    )
                )
                results.append(
                    {
                        "payload": pname,
                        "size": size,
                        "library": label,
                        "median_s": m,
                        "ops_per_s": 1 / m,
                        "rounds": len(ts),
                    }
                )
            elif label in skipped:
                print(f"{pname:<14} {_size(size):>10}  {label:<15} {skipped[label]}")
        ratio_rows.append((pname, size, med))
        print()
        sys.stdout.flush()

    # ratios
    print("Ratios (speedup = peer time / qjson time; copy = qjson time / bytearray(b) time)")
    rh = _RATIO.format("payload", "size", "qjson row", "x orjson", "x pysimdjson", "t / copy")
    print(rh)
    print("-" * len(rh))
    fails = []
    for pname, size, med in ratio_rows:
        t_or, t_sj, t_cp = _targets(pname, size)
        for q in ("qjson", "qjson (cursor)"):
            if q not in med:
                continue
            tq = med[q]
            cells = []
            for peer, tgt, inverse in (
                ("orjson", t_or, False),
                ("pysimdjson", t_sj, False),
                ("copy", t_cp, True),
            ):
                if peer not in med:
                    cells.append("n/a")
                    continue
                r = tq / med[peer] if inverse else med[peer] / tq
                ok = None if tgt is None else (r <= tgt if inverse else r >= tgt)
                tgt_s = "" if tgt is None else (f" (<={tgt:g}x)" if inverse else f" (>={tgt:g}x)")
                cells.append(f"{r:.2f}x{tgt_s}{_mark(ok)}")
                if ok is False:
                    fails.append(f"{pname} {q} {peer}: {r:.2f}x, target {tgt_s.strip()}")
            print(_RATIO.format(pname, _size(size), q, *cells))
    if not any(q in med for _, _, med in ratio_rows for q in ("qjson", "qjson (cursor)")):
        print("(no qjson rows: {})".format(_MISSING.get("qjson", "qjson failed on every payload")))
    print()
    if fails:
        print("targets missed:")
        for f in fails:
            print("  " + f)
    print(f"total time {time.perf_counter() - t_start:.1f} s")

    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
        print(f"wrote {args.json} ({len(results)} rows)")
    return 0


def _bench_interleaved(items, rounds: int, target_s: float):
    """Like bench_payload, but one iteration runs the workload on each payload in turn."""
    per: list[dict[str, Callable[[], None]]] = []
    skipped: dict[str, str] = {}
    for _name, kind, b in items:
        expected = _expected(kind, b)
        fns = {}
        for label, mod, chat_f, _ in LIBS:
            if mod is None:
                skipped[label] = "skipped: " + _MISSING.get(
                    _MODULE_LABEL.get(label, label), label + " not installed"
                )
                continue
            if label in skipped:
                continue
            try:
                err = _check(label, kind, b, expected)
                if err:
                    raise _Skip(err)
                fns[label] = chat_f(b)
                fns[label]()
            except _FATAL:
                raise
            except _Skip as e:
                skipped[label] = f"skipped: {e}"
            except BaseException as e:
                skipped[label] = f"skipped: {type(e).__name__}: {_short(e)}"
        per.append(fns)
    labels = [lab for lab, *_ in LIBS if lab not in skipped and all(lab in f for f in per)]

    def combo(label: str) -> Callable[[], None]:
        fs = [f[label] for f in per]

        def run() -> None:
            for f in fs:
                f()

        return run

    fns = {lab: (combo(lab), 0) for lab in labels}
    fns = {lab: (fn, _calibrate(fn, target_s)) for lab, (fn, _) in fns.items()}
    times: dict[str, list[float]] = {lab: [] for lab in fns}
    for r in range(rounds):
        k = r % len(labels) if labels else 0
        for lab in labels[k:] + labels[:k]:
            fn, iters = fns[lab]
            gc.collect()
            gc.disable()
            try:
                times[lab].append(_run_round(fn, iters))
            finally:
                gc.enable()
    return times, skipped, {lab: it for lab, (_, it) in fns.items()}


if __name__ == "__main__":
    sys.exit(main())
