"""JSON Patch / Merge Patch on lazy documents: qjson vs passthrough and vs
jsonpatch + orjson, in Python and in LuaJIT (lupa).

Workloads (one op = the whole request rewrite, from the input bytes to the
output bytes):

- pass:       qjson.dumps(qjson.decode(b))                        (the baseline)
- patch:      decode + qjson.patch(3 ops: replace, remove, add) + dumps
- patch_text: the same with the patch given as JSON text
- merge:      decode + qjson.merge_patch(a small object) + dumps
- jsonpatch:  orjson.loads + jsonpatch.apply_patch(in_place=True) + orjson.dumps
- Lua:        qjson.encode(qjson.decode(s)) vs decode + qjson.patch (text and
              tables) / qjson.merge_patch + encode, timed inside Lua.

Payloads: the chat ladder 2 KB - 10 MB (ops: replace /model, remove /stream,
add /messages/0) and github-100k (an array of issues: replace /0/title,
remove /1/body, add /2/labels/0). Rates are ops per second of process CPU
time (time.process_time in Python, os.clock in Lua: on a shared machine
wall time mostly measures the neighbours), medians of interleaved rounds
(each round times every workload in turn, in one process).

    python benchmarks/patch_bench.py [--quick] [--json benchmarks/results/patch.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from typing import Any, Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import payloads  # type: ignore[import-not-found]  # noqa: E402
import qjson  # noqa: E402

CHAT_OPS = [
    {"op": "replace", "path": "/model", "value": "gpt-4o-mini"},
    {"op": "remove", "path": "/stream"},
    {"op": "add", "path": "/messages/0", "value": {"role": "system", "content": "Be brief."}},
]
GITHUB_OPS = [
    {"op": "replace", "path": "/0/title", "value": "A better title"},
    {"op": "remove", "path": "/1/body"},
    {"op": "add", "path": "/2/labels/0", "value": {"name": "triage", "color": "ededed"}},
]
MERGE = {"metadata": {"tenant": "acme"}, "logprobs": None, "temperature": 0.2}


def rate(f: Callable[[], Any], seconds: float) -> float:
    """ops/s of `f` over about `seconds` of this process's CPU time (the
    machine is shared: wall time there measures the neighbours)."""
    n, t0 = 0, time.process_time()
    reps = 1
    while True:
        for _ in range(reps):
            f()
        n += reps
        dt = time.process_time() - t0
        if dt >= seconds:
            return n / dt
        reps = min(reps * 2, 1000)


def payload(name: str) -> tuple[bytes, list[dict[str, Any]]]:
    if name == "github-100k":
        return payloads.github_issues(), GITHUB_OPS
    return payloads.chat_request(payloads.LADDER[name]), CHAT_OPS


def python_row(name: str, rounds: int, seconds: float) -> dict[str, Any]:
    import jsonpatch
    import orjson

    b, ops = payload(name)
    ops_text = json.dumps(ops).encode()
    merge_text = json.dumps(MERGE).encode()

    def passthrough() -> bytes:
        return qjson.dumps(qjson.decode(b))

    def patch() -> bytes:
        return qjson.dumps(qjson.patch(qjson.decode(b), ops))

    def patch_text() -> bytes:
        return qjson.dumps(qjson.patch(qjson.decode(b), ops_text))

    def merge() -> bytes:
        return qjson.dumps(qjson.merge_patch(qjson.decode(b), MERGE))

    def merge_text_f() -> bytes:
        return qjson.dumps(qjson.merge_patch(qjson.decode(b), merge_text))

    def peer() -> bytes:
        return orjson.dumps(jsonpatch.apply_patch(orjson.loads(b), ops, in_place=True))

    # Same answers, before timing.
    want = jsonpatch.apply_patch(json.loads(b), ops)
    assert json.loads(patch()) == want == json.loads(patch_text()) == json.loads(peer())
    fs: dict[str, Callable[[], Any]] = {
        "pass": passthrough,
        "patch": patch,
        "patch_text": patch_text,
        "jsonpatch_orjson": peer,
    }
    if name != "github-100k":
        fs["merge"] = merge
        fs["merge_text"] = merge_text_f
    samples: dict[str, list[float]] = {k: [] for k in fs}
    for _ in range(rounds):
        for k, f in fs.items():
            samples[k].append(rate(f, seconds))
    med = {k: statistics.median(v) for k, v in samples.items()}
    row: dict[str, Any] = {"payload": name, "bytes": len(b), "ops_per_s": med}
    row["patch_vs_pass"] = med["patch"] / med["pass"]
    row["patch_text_vs_pass"] = med["patch_text"] / med["pass"]
    row["patch_vs_jsonpatch"] = med["patch"] / med["jsonpatch_orjson"]
    # What the patch adds to a passthrough, in CPU microseconds per request:
    # about the same at every size (the ops, the overlay, the splice), so the
    # share of pass is set by how long the passthrough itself takes.
    row["patch_extra_us"] = 1e6 / med["patch"] - 1e6 / med["pass"]
    line = (
        f"{name:>12} {len(b):>9} B  pass {med['pass']:>9.0f}/s"
        f"  patch {row['patch_vs_pass']:.2f} (text {row['patch_text_vs_pass']:.2f}) of pass"
        f" (+{row['patch_extra_us']:.2f} us),"
        f" {row['patch_vs_jsonpatch']:.1f}x jsonpatch"
    )
    if "merge" in med:
        row["merge_vs_pass"] = med["merge"] / med["pass"]
        row["merge_text_vs_pass"] = med["merge_text"] / med["pass"]
        line += f"  merge {row['merge_vs_pass']:.2f} (text {row['merge_text_vs_pass']:.2f})"
    print(line, flush=True)
    return row


LUA_SETUP = r"""
local qjson = require("qjson")
local B = {}
local clock = os.clock
function B.rate(kind, s, ops_text, ops_tables, merge_text, seconds)
    local f
    if kind == "pass" then
        f = function() return qjson.encode(qjson.decode(s)) end
    elseif kind == "patch_text" then
        f = function() return qjson.encode(qjson.patch(qjson.decode(s), ops_text)) end
    elseif kind == "patch" then
        f = function() return qjson.encode(qjson.patch(qjson.decode(s), ops_tables)) end
    else
        f = function() return qjson.encode(qjson.merge_patch(qjson.decode(s), merge_text)) end
    end
    local n, reps, t0 = 0, 1, clock()
    while true do
        for _ = 1, reps do f() end
        n = n + reps
        local dt = clock() - t0
        if dt >= seconds then return n / dt end
        reps = math.min(reps * 2, 1000)
    end
end
function B.tables(text) return qjson.materialize(qjson.decode(text)) end
return B
"""


def lua_rows(names: list[str], rounds: int, seconds: float) -> list[dict[str, Any]]:
    try:
        import qjson.luajit
    except ImportError as e:  # pragma: no cover
        print(f"Lua rows skipped: {e}")
        return []
    lua = qjson.luajit.runtime(lua_modules=True)
    bench = lua.execute(LUA_SETUP)
    rows = []
    for name in names:
        b, ops = payload(name)
        ops_text = json.dumps(ops).encode()
        tables = bench.tables(ops_text)
        merge_text = json.dumps(MERGE).encode()
        kinds = ["pass", "patch", "patch_text"] + ([] if name == "github-100k" else ["merge"])
        samples: dict[str, list[float]] = {k: [] for k in kinds}
        for _ in range(rounds):
            for k in kinds:
                samples[k].append(bench.rate(k, b, ops_text, tables, merge_text, seconds))
        med = {k: statistics.median(v) for k, v in samples.items()}
        row = {"payload": name, "bytes": len(b), "ops_per_s": med}
        for k in kinds[1:]:
            row[f"{k}_vs_pass"] = med[k] / med["pass"]
        rows.append(row)
        print(
            f"lua {name:>12}  pass {med['pass']:>9.0f}/s  "
            + "  ".join(f"{k} {row[f'{k}_vs_pass']:.2f}" for k in kinds[1:]),
            flush=True,
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds, shorter")
    ap.add_argument(
        "--json", default=os.path.join(os.path.dirname(__file__), "results", "patch.json")
    )
    ap.add_argument("--payloads", default=",".join([*payloads.LADDER, "github-100k"]))
    ap.add_argument("--no-lua", action="store_true")
    args = ap.parse_args()
    names = args.payloads.split(",")
    rounds, seconds = (3, 0.1) if args.quick else (7, 0.3)
    print(f"qjson backend {qjson.backend()}, {platform.processor() or platform.machine()}, gc on")
    out: dict[str, Any] = {
        "backend": qjson.backend(),
        "python": platform.python_version(),
        "rounds": rounds,
        "seconds_per_sample": seconds,
        "python_rows": [python_row(n, rounds, seconds) for n in names],
    }
    if not args.no_lua:
        out["lua_rows"] = lua_rows(names, rounds, seconds)
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(out, f, indent=2)
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
