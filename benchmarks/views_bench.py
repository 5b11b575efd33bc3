"""Views benchmark: decode + passthrough dumps, edits + dumps, decode + access.

    python benchmarks/views_bench.py            # full run (~2-3 min)
    python benchmarks/views_bench.py --quick    # fewer rounds, shorter batches
    python benchmarks/views_bench.py --json out.json

Payloads: the chat ladder (``payloads.LADDER``, 2 KB to 10 MB, >99% base64
string bytes) and the dense ``github_issues()`` array (~100 KB).

Workloads (each a full request cycle on the bytes):

- ``pass``: ``qjson.dumps(qjson.decode(b))``, unmodified (output == b),
  against ``orjson.dumps(orjson.loads(b))`` and a plain copy ``bytearray(b)``;
- ``edit-set``: set ``model`` and ``temperature``, then dumps;
  ``edit-add``: add a top-level field; ``edit-msg``: replace
  ``messages[0].content``. On github_issues (an array) the same three are
  set ``[0].state`` and ``[0].title`` / add a field to ``[0]`` / replace
  ``[0].body``. Against orjson loads + the same edit + dumps;
- ``access``: decode, read ``model``, ``temperature`` and every
  ``messages[i].content`` through the views, against the same reads through
  ``Doc`` path getters (``parse`` + ``get_str`` / ``get_float`` / ``get``).

Method: every (payload, workload, library) cell runs in batches of calls
lasting ~20 ms (~5 ms with --quick); cells are interleaved (round r runs
every cell once, in a rotated order) after a warm-up round, and each cell
reports the median time per call over the rounds.

Targets (DESIGN.md, "Performance targets"): pass >= 5x orjson from 100 KB up and <= 3x the
copy time; each edit >= 70% of the pass rate at every size and >= 4x orjson
from 100 KB up; access within 1.5x of the Doc path-getter time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
import payloads  # noqa: E402
import qjson  # noqa: E402

KB100 = 100 * 1024


def chat_cells(b: bytes) -> dict[str, Callable[[], Any]]:
    def q_set() -> bytes:
        v = qjson.decode(b)
        v["model"] = "gpt-4o-mini"
        v["temperature"] = 0.2
        return qjson.dumps(v)

    def o_set() -> bytes:
        v = orjson.loads(b)
        v["model"] = "gpt-4o-mini"
        v["temperature"] = 0.2
        return orjson.dumps(v)

    def q_add() -> bytes:
        v = qjson.decode(b)
        v["user"] = "user-1234"
        return qjson.dumps(v)

    def o_add() -> bytes:
        v = orjson.loads(b)
        v["user"] = "user-1234"
        return orjson.dumps(v)

    def q_msg() -> bytes:
        v = qjson.decode(b)
        v["messages"][0]["content"] = "You are terse."
        return qjson.dumps(v)

    def o_msg() -> bytes:
        v = orjson.loads(b)
        v["messages"][0]["content"] = "You are terse."
        return orjson.dumps(v)

    def q_access() -> int:
        v = qjson.decode(b)
        n = len(v["model"]) + int(v["temperature"])
        for m in v["messages"]:
            n += len(m["content"])
        return n

    def doc_access() -> int:
        d = qjson.parse(b)
        n = len(d.get_str("model")) + int(d.get_float("temperature"))
        for i in range(d.len("messages")):
            n += len(d.get(f"messages[{i}].content"))
        return n

    return {
        "pass/qjson": lambda: qjson.dumps(qjson.decode(b)),
        "pass/orjson": lambda: orjson.dumps(orjson.loads(b)),
        "pass/copy": lambda: bytearray(b),
        "edit-set/qjson": q_set,
        "edit-set/orjson": o_set,
        "edit-add/qjson": q_add,
        "edit-add/orjson": o_add,
        "edit-msg/qjson": q_msg,
        "edit-msg/orjson": o_msg,
        "access/qjson": q_access,
        "access/doc": doc_access,
    }


def github_cells(b: bytes) -> dict[str, Callable[[], Any]]:
    def q_set() -> bytes:
        v = qjson.decode(b)
        v[0]["state"] = "closed"
        v[0]["title"] = "fixed"
        return qjson.dumps(v)

    def o_set() -> bytes:
        v = orjson.loads(b)
        v[0]["state"] = "closed"
        v[0]["title"] = "fixed"
        return orjson.dumps(v)

    def q_add() -> bytes:
        v = qjson.decode(b)
        v[0]["triaged"] = True
        return qjson.dumps(v)

    def o_add() -> bytes:
        v = orjson.loads(b)
        v[0]["triaged"] = True
        return orjson.dumps(v)

    def q_msg() -> bytes:
        v = qjson.decode(b)
        v[0]["body"] = "replaced"
        return qjson.dumps(v)

    def o_msg() -> bytes:
        v = orjson.loads(b)
        v[0]["body"] = "replaced"
        return orjson.dumps(v)

    def q_access() -> int:
        v = qjson.decode(b)
        return sum(len(issue["title"]) for issue in v)

    def doc_access() -> int:
        d = qjson.parse(b)
        return sum(len(d.get_str(f"[{i}].title")) for i in range(d.len()))

    return {
        "pass/qjson": lambda: qjson.dumps(qjson.decode(b)),
        "pass/orjson": lambda: orjson.dumps(orjson.loads(b)),
        "pass/copy": lambda: bytearray(b),
        "edit-set/qjson": q_set,
        "edit-set/orjson": o_set,
        "edit-add/qjson": q_add,
        "edit-add/orjson": o_add,
        "edit-msg/qjson": q_msg,
        "edit-msg/orjson": o_msg,
        "access/qjson": q_access,
        "access/doc": doc_access,
    }


def check_outputs(name: str, b: bytes, cells: dict[str, Callable[[], Any]]) -> None:
    """The qjson edits produce what orjson produces (semantically)."""
    assert qjson.dumps(qjson.decode(b)) == b, name
    for w in ("edit-set", "edit-add", "edit-msg"):
        assert json.loads(cells[f"{w}/qjson"]()) == json.loads(cells[f"{w}/orjson"]()), (name, w)
    assert cells["access/qjson"]() == cells["access/doc"](), name


def batch_size(fn: Callable[[], Any], target: float) -> int:
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt >= target / 4 or n >= 1 << 20:
            return max(1, int(n * target / max(dt, 1e-9)))
        n *= 4


def run(quick: bool) -> dict[str, dict[str, float]]:
    target = 0.005 if quick else 0.02
    rounds = 5 if quick else 9
    cells: list[tuple[str, str, Callable[[], Any], int]] = []
    sets = [(n, payloads.chat_request(size), chat_cells) for n, size in payloads.LADDER.items()]
    sets.append(("github-100k", payloads.github_issues(), github_cells))
    sizes: dict[str, int] = {}
    for name, b, make in sets:
        cs = make(b)
        check_outputs(name, b, cs)
        sizes[name] = len(b)
        for w, fn in cs.items():
            fn()  # warm-up
            cells.append((name, w, fn, batch_size(fn, target)))
    times: dict[tuple[str, str], list[float]] = {(n, w): [] for n, w, _, _ in cells}
    for r in range(rounds):
        k = r % len(cells)
        for name, w, fn, n in cells[k:] + cells[:k]:
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            times[(name, w)].append((time.perf_counter() - t0) / n)
    out: dict[str, dict[str, float]] = {}
    for (name, w), ts in times.items():
        out.setdefault(name, {"bytes": sizes[name]})[w] = statistics.median(ts)
    return out


def report(res: dict[str, dict[str, float]]) -> tuple[str, int]:
    lines = [
        "| payload | pass µs | pass vs orjson | pass / copy time | "
        "edit-set | edit-add | edit-msg (rate vs pass; vs orjson) | access / doc time |",
        "|---|---|---|---|---|---|---|---|",
    ]
    unmet = 0

    def mark(ok: bool) -> str:
        nonlocal unmet
        unmet += not ok
        return "" if ok else " **unmet**"

    for name, r in res.items():
        big = r["bytes"] >= KB100
        p = r["pass/qjson"]
        vs_o = r["pass/orjson"] / p
        vs_copy = p / r["pass/copy"]
        cells = [
            name,
            f"{p * 1e6:.1f}",
            f"{vs_o:.1f}x" + (mark(vs_o >= 5) if big else ""),
            f"{vs_copy:.2f}x" + mark(vs_copy <= 3),
        ]
        for w in ("edit-set", "edit-add", "edit-msg"):
            e = r[f"{w}/qjson"]
            rate = p / e
            eo = r[f"{w}/orjson"] / e
            cells.append(
                f"{rate:.0%}{mark(rate >= 0.7)}; {eo:.1f}x" + (mark(eo >= 4) if big else "")
            )
        acc = r["access/qjson"] / r["access/doc"]
        cells.append(f"{acc:.2f}x{mark(acc <= 1.5)}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines), unmet


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    res = run(args.quick)
    table, unmet = report(res)
    print(f"qjson {qjson.__version__}, backend {qjson.backend()}, orjson {orjson.__version__}")
    print(table)
    print(f"\n{unmet} target(s) unmet")
    if args.json:
        args.json.write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
