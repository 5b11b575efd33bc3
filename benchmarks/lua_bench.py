"""qjson vs lua-cjson inside lupa's LuaJIT (one runtime, one process).

Workloads (each op is timed inside Lua; payload strings are created in Lua
once, outside the timed loops):

- access:  parse, then get_str(model), get_f64(temperature), len(messages) and
           every messages[i].content (doc:get), against cjson.decode + the
           same table reads. github-100k: parse, len, every [i].title.
- passthrough: qjson.decode + qjson.encode unmodified, against cjson.decode +
           cjson.encode.
- edits:   qjson.decode, one edit (modify top / add field / modify nested),
           qjson.encode; reported as a fraction of the passthrough rate.
- small:   the small-object marshal/unmarshal loop ({key="hello", conf={4 x
           {name, value}}}): encode, and decode + read `key`.
- fleece:  encode of the Fleece tables (1000 elements): ns per element.

Median ops/s over 5 rounds after a warm-up; ratios are qjson / cjson.

    python benchmarks/lua_bench.py [--quick] [--json PATH] [--payloads 2k,100k,...]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import sys

try:
    import payloads  # type: ignore[import-not-found]
except ImportError:  # python -m benchmarks.lua_bench
    from benchmarks import payloads  # type: ignore[no-redef]

import qjson.luajit

CJSON_GLOBS = [
    "/usr/lib/*/lua/5.1/cjson.so",
    "/usr/lib/lua/5.1/cjson.so",
    "/usr/local/lib/lua/5.1/cjson.so",
]

LUA_SETUP = r"""
local qjson = require("qjson")
local ok, cjson = pcall(require, "cjson")
if not ok then cjson = nil end

local B = {payloads = {}, cjson = cjson ~= nil}

function B.set_payload(name, s) B.payloads[name] = s end

-- Workloads: each is function(s) doing one op.
local W = {}

W.qjson_chat = function(s)
    local d = qjson.parse(s)
    local m = d:get_str("model")
    local t = d:get_f64("temperature")
    local n = d:len("messages")
    for i = 0, n - 1 do
        local c = d:get("messages[" .. i .. "].content")
    end
end

W.cjson_chat = function(s)
    local d = cjson.decode(s)
    local m = d.model
    local t = d.temperature
    local msgs = d.messages
    local n = #msgs
    for i = 1, n do
        local c = msgs[i].content
    end
end

W.qjson_github = function(s)
    local d = qjson.parse(s)
    local n = d:len()
    for i = 0, n - 1 do
        local t = d:get_str("[" .. i .. "].title")
    end
end

W.cjson_github = function(s)
    local d = cjson.decode(s)
    for i = 1, #d do
        local t = d[i].title
    end
end

W.qjson_pass = function(s) return qjson.encode(qjson.decode(s)) end
W.cjson_pass = function(s) return cjson.encode(cjson.decode(s)) end

W.qjson_edit_top = function(s)
    local t = qjson.decode(s)
    t.model = "gpt-4o-mini"
    return qjson.encode(t)
end
W.qjson_edit_add = function(s)
    local t = qjson.decode(s)
    t.user = "user-1234"
    return qjson.encode(t)
end
W.qjson_edit_nested = function(s)
    local t = qjson.decode(s)
    t.messages[1].role = "developer"
    return qjson.encode(t)
end

local small = {key = "hello", conf = {
    {name = "a", value = 1}, {name = "b", value = 2},
    {name = "c", value = 3}, {name = "d", value = 4}}}
local small_s = cjson and cjson.encode(small) or qjson.encode(small)
W.qjson_small_encode = function() return qjson.encode(small) end
W.cjson_small_encode = function() return cjson.encode(small) end
W.qjson_small_decode = function() return qjson.decode(small_s).key end
W.cjson_small_decode = function() return cjson.decode(small_s).key end

local fleece = {}
do
    math.randomseed(7)
    local function rnd()
        local b = {}
        for j = 1, math.random(4, 16) do b[j] = string.char(math.random(97, 122)) end
        return table.concat(b)
    end
    local N = 1000
    local t1, t2, t3, t4 = {}, {}, {}, {}
    for i = 1, N do t1[i] = i end
    for i = 1, N do t2["x" .. i] = i end
    for i = 1, N do t3[i] = rnd() end
    for i = 1, N do t4[rnd()] = rnd() end
    fleece = {["t[i]=i"] = t1, ['t["x"..i]=i'] = t2,
              ["t[i]=random string"] = t3, ["t[random string]=random string"] = t4}
end
B.fleece_names = {"t[i]=i", 't["x"..i]=i', "t[i]=random string", "t[random string]=random string"}
for name, t in pairs(fleece) do
    W["qjson_fleece " .. name] = function() return qjson.encode(t) end
    W["cjson_fleece " .. name] = function() return cjson.encode(t) end
end

-- Run workload `w` on payload `p` n times; seconds elapsed.
local clock = os.clock
function B.time(w, p, n)
    local f, s = W[w], B.payloads[p]
    local t0 = clock()
    for _ = 1, n do f(s) end
    return clock() - t0
end

function B.check(w, p)
    return W[w](B.payloads[p])
end

return B
"""


def cjson_dir() -> str | None:
    if os.environ.get("QJSON_CJSON_SO"):
        return os.path.dirname(os.environ["QJSON_CJSON_SO"])
    for g in CJSON_GLOBS:
        found = sorted(glob.glob(g))
        if found:
            return os.path.dirname(found[0])
    return None


class Bench:
    def __init__(self, quick: bool) -> None:
        self.lua = qjson.luajit.runtime(lua_modules=True, encoding=None)
        d = cjson_dir()
        if d:
            self.lua.execute(f'package.cpath = "{d}/?.so;" .. package.cpath')
        self.B = self.lua.execute(LUA_SETUP)
        self.has_cjson = bool(self.B.cjson)
        self.target = 0.02 if quick else 0.06  # seconds per round
        self.rounds = 3 if quick else 5

    def ops_per_s(self, w: str, p: str = "") -> float:
        t = self.B.time
        w, p = w.encode(), p.encode()  # the runtime has encoding=None
        t(w, p, 3)  # warm-up (JIT)
        n = 1
        while True:
            el = t(w, p, n)
            if el >= self.target / 4:
                break
            n *= 4
        n = max(1, int(n * self.target / max(el, 1e-9)))
        runs = [t(w, p, n) / n for _ in range(self.rounds)]
        return 1.0 / statistics.median(runs)


def fmt(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.2f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", help="write results to this file")
    ap.add_argument("--payloads", help="comma-separated ladder rungs (default: 2k..1m)")
    args = ap.parse_args()

    b = Bench(args.quick)
    if not b.has_cjson:
        print("lua-cjson not found (scripts/install-lua-deps.sh): qjson numbers only")
    rungs = (
        args.payloads.split(",") if args.payloads else ["2k", "60k", "100k", "200k", "500k", "1m"]
    )
    if args.quick and not args.payloads:
        rungs = ["2k", "100k", "1m"]
    loads = [(r, payloads.chat_request(payloads.LADDER[r]), "chat") for r in rungs]
    loads.append(("small-2k", payloads.small_request(), "chat"))
    loads.append(("github-100k", payloads.github_issues(), "github"))
    for name, data, _ in loads:
        b.B.set_payload(name.encode(), data)

    results: dict = {
        "backend": qjson.backend(),
        "access": {},
        "passthrough": {},
        "small": {},
        "fleece": {},
    }
    print(
        f"qjson {qjson.__version__} ({qjson.backend()}), lupa LuaJIT; "
        f"median ops/s of {b.rounds} rounds"
    )
    print("\n== parse + access ==")
    print(f"{'payload':>12} {'bytes':>9} {'qjson ops/s':>13} {'cjson ops/s':>13} {'ratio':>8}")
    for name, data, kind in loads:
        q = b.ops_per_s(f"qjson_{kind}", name)
        c = b.ops_per_s(f"cjson_{kind}", name) if b.has_cjson else float("nan")
        results["access"][name] = {"bytes": len(data), "qjson": q, "cjson": c, "ratio": q / c}
        print(f"{name:>12} {len(data):>9} {fmt(q):>13} {fmt(c):>13} {q / c:>7.1f}x")

    print("\n== decode + encode (passthrough) and edits ==")
    print(
        f"{'payload':>12} {'qjson pass':>11} {'cjson pass':>11} {'ratio':>7} "
        f"{'top':>6} {'add':>6} {'nested':>6}  (edits: fraction of passthrough)"
    )
    for name, _data, kind in loads:
        if kind != "chat":
            continue
        q = b.ops_per_s("qjson_pass", name)
        c = b.ops_per_s("cjson_pass", name) if b.has_cjson else float("nan")
        edits = {e: b.ops_per_s(f"qjson_edit_{e}", name) / q for e in ("top", "add", "nested")}
        results["passthrough"][name] = {"qjson": q, "cjson": c, "ratio": q / c, "edits": edits}
        print(
            f"{name:>12} {fmt(q):>11} {fmt(c):>11} {q / c:>6.1f}x "
            f"{edits['top']:>6.2f} {edits['add']:>6.2f} {edits['nested']:>6.2f}"
        )

    print("\n== small object marshal / unmarshal ==")
    for op in ("encode", "decode"):
        q = b.ops_per_s(f"qjson_small_{op}")
        c = b.ops_per_s(f"cjson_small_{op}") if b.has_cjson else float("nan")
        results["small"][op] = {"qjson": q, "cjson": c, "ratio": q / c}
        print(f"{op:>12} qjson {fmt(q):>11}/s  cjson {fmt(c):>11}/s  {q / c:.2f}x")

    print("\n== Fleece tables, encode (1000 elements) ==")
    for name in (n.decode() for n in b.B.fleece_names.values()):
        q = b.ops_per_s(f"qjson_fleece {name}")
        c = b.ops_per_s(f"cjson_fleece {name}") if b.has_cjson else float("nan")
        qn, cn = 1e9 / q / 1000, 1e9 / c / 1000
        results["fleece"][name] = {"qjson_ns_per_elem": qn, "cjson_ns_per_elem": cn}
        print(f"{name:>32}  qjson {qn:6.1f} ns/elem  cjson {cn:6.1f} ns/elem  {cn / qn:.2f}x")

    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
