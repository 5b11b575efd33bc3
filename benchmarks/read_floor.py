"""The interpreter's floor of the read rows: what a row's body costs with the
library taken out, next to qjson's and fastsimdjson's times.

    python benchmarks/read_floor.py [--scenarios 2k,small_request,github_issues,twitter]
        [--rounds 21]

Why: a row's target is a ratio of whole-body times (DESIGN.md, "Performance
targets"), and the body is Python: the views row's subscripts, tuple and list
comprehension, the getters row's f-string paths (``f"messages[{i}].content"``,
``f"[{i}]"``), method calls and ``range``. That part costs the same whatever
the library does, and bounds what qjson can reach: a row whose floor already
takes more than fastsimdjson's time / 1.5 cannot meet a 1.5x target, however
cheap parse and reads become.

The floor of a row is its code in ``workloads.py``, run as the benchmark runs
it, with the document replaced by what costs least: the views row reads a
dict ``json.loads`` built once (no parse), the getters row calls ``dict.get``
of the answers where qjson's getters and ``Doc.open`` / ``Doc.len`` were (no
parse, no path parsing; its f-strings and loops unchanged). The cells
(floors, qjson's views and getters, fastsimdjson's views) are timed as
read_ab.py times its cells (``interleaved``: ~3 ms of calls per cell and
round, the thread's CPU time, shuffled anew each round, the collector on);
each prints the median of its fastest third of rounds and fastsimdjson's
time over it.

Session 20, CPython 3.11.7 (pyenv build: no PGO, no LTO), Zen 4, LTO build of
main: the 2k getters row's floor was 0.58 us against fastsimdjson's whole row
0.57 us (0.99x), small_request's 1.12 us against 1.33 us (1.19x).
"""

from __future__ import annotations

import argparse
import json
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import clock  # type: ignore[import-not-found]  # noqa: E402
import workloads  # type: ignore[import-not-found]  # noqa: E402
from encode_ab import fast_third  # type: ignore[import-not-found]  # noqa: E402
from read_ab import interleaved  # type: ignore[import-not-found]  # noqa: E402


def stub_doc(kind: str, d: Any) -> Any:
    """What the getters row's body calls, as ``dict.get`` of the answers."""
    ns = types.SimpleNamespace
    if kind == "chat":
        return ns(
            get_str={"model": d["model"]}.get,
            get_float={"temperature": d["temperature"]}.get,
            len={"messages": len(d["messages"])}.get,
            get={f"messages[{i}].content": m["content"] for i, m in enumerate(d["messages"])}.get,
        )
    records = d if kind == "github" else d["statuses"]
    prefix = "" if kind == "github" else "statuses"
    cursors = {}
    for i, r in enumerate(records):
        if kind == "github":
            strs = {"title": r["title"], "user.login": r["user"]["login"]}
        else:
            strs = {"user.screen_name": r["user"]["screen_name"]}
        cursors[f"{prefix}[{i}]"] = ns(get_int={"id": r["id"]}.get, get_str=strs.get)
    n = len(records)
    length = (lambda *_: n) if kind == "github" else {"statuses": n}.get
    return ns(open=cursors.get, len=length)


def cells(name: str) -> list[tuple[str, Callable[[], Any]]]:
    scen = workloads.scenario(name)
    b, kind = scen.parts[0], scen.kind
    plain = json.loads(b)
    import fastsimdjson
    import qjson

    out = [
        ("views floor", workloads._reads_mapping(kind, lambda _b: plain)(b)),
        ("qjson views", workloads._reads_mapping(kind, qjson.decode)(b)),
        ("fastsimdjson views", workloads._reads_mapping(kind, fastsimdjson.parse)(b)),
        ("qjson getters", workloads._reads_qjson_doc(kind)(b)),
    ]
    stub = stub_doc(kind, plain)
    # `_reads_qjson_doc` takes `parse` from the module global `qjson` when
    # called: point it at the stub for the call.
    saved = workloads.qjson
    workloads.qjson = types.SimpleNamespace(parse=lambda _b: stub)
    try:
        floor = workloads._reads_qjson_doc(kind)(b)
    finally:
        workloads.qjson = saved
    assert workloads._plain(floor()) == workloads._plain(out[3][1]())
    assert workloads._plain(out[0][1]()) == workloads._plain(out[1][1]())
    out.append(("getters floor", floor))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenarios", default="2k,small_request,github_issues,twitter")
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--clock", choices=sorted(clock.CLOCKS), default="thread", help="see clock.py")
    args = ap.parse_args()
    clock.use(args.clock)
    for name in args.scenarios.split(","):
        row = cells(name)
        times = interleaved(row, args.rounds)
        best = {k: fast_third(v) for k, v in times.items()}
        peer = best["fastsimdjson views"]
        for key in ["views floor", "qjson views", "getters floor", "qjson getters"]:
            print(
                f"{name:14s} {key:14s} {best[key] * 1e6:9.3f} us  "
                f"fastsimdjson {peer * 1e6:9.3f} us  fastsimdjson/this {peer / best[key]:.2f}"
            )


if __name__ == "__main__":
    main()
