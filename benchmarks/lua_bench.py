"""qjson vs lua-cjson inside lupa's LuaJIT (one runtime, one process).

Workloads (each op is timed inside Lua; payload strings are created in Lua
once, outside the timed loops):

- access:  parse, then get_str(model), get_f64(temperature), len(messages) and
           every messages[i].content (doc:get); the same reads on qjson.decode
           proxies; and cjson.decode + the same table reads (the three
           interleaved, each a ratio to cjson). github-100k: parse, len,
           every [i].title.
- passthrough: qjson.decode + qjson.encode unmodified, against cjson.decode +
           cjson.encode.
- edits:   decode, one edit (set model + temperature / add a top-level field /
           replace messages[1].content), encode; qjson proxies vs cjson tables.
- % of pass: decode + set model ([1].title on github) + encode, the same
           with a value that differs on every call (fresh: every result a
           new string, as in a gateway), the 3-op JSON Patch of
           patch_bench.py, and a small merge patch, each as a fraction of
           qjson's own passthrough (interleaved rounds); and the copy floor:
           decode + one ffi.string copy of the payload (what any edited
           result costs at least: LuaJIT makes a string only by copying).
- small:   the small-object marshal/unmarshal loop ({key="hello", conf={4 x
           {name, value}}}): encode, and decode + read `key`.
- fleece:  encode of the Fleece tables (1000 elements): ns per element.
- long-lived: parse + access in one LuaJIT state that cycles every payload
           (a gateway sees every size in turn) against a fresh state per
           payload, rounds interleaved; once as is, and once with the
           long-lived state holding --live-tables live tables (a gateway's
           own data, which makes each collector cycle cost more). Each
           LuaJIT state is one draw of the trace lottery, so --states
           independent draws (new fresh and long-lived states each) are made
           and the rate is median long-lived / median fresh ops/s.

Median ops/s over 5 rounds after a warm-up (qjson and cjson alternate round
by round); ratios are qjson / cjson. Per row, collectgarbage("count") deltas
of one call: KiB allocated with the collector stopped, and KiB the result
still holds after a full collection (qjson's index lives in Rust memory and
is not in these numbers). Without lua-cjson, its rows are skipped with the
reason. Results: benchmarks/results/lua.json (--json to change).

    python benchmarks/lua_bench.py [--quick] [--json PATH] [--payloads 2k,100k,...]
        [--live-tables N] [--states K] [--deterministic]

--deterministic: a fixed LuaJIT PRNG seed and no address randomisation (as
lua_ab.py --deterministic): runs of one build repeat their traces.
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
    from lua_ab import deterministic  # type: ignore[import-not-found]
    from lua_workloads import QJSON_READS  # type: ignore[import-not-found]
    from progress import Progress  # type: ignore[import-not-found]
except ImportError:  # python -m benchmarks.lua_bench
    from benchmarks import payloads  # type: ignore[no-redef]
    from benchmarks.lua_ab import deterministic  # type: ignore[no-redef]
    from benchmarks.lua_workloads import QJSON_READS  # type: ignore[no-redef]
    from benchmarks.progress import Progress  # type: ignore[no-redef]

import qjson.luajit

CJSON_GLOBS = [
    "/usr/lib/*/lua/5.1/cjson.so",
    "/usr/lib/lua/5.1/cjson.so",
    "/usr/local/lib/lua/5.1/cjson.so",
]

LUA_SETUP = (
    r"""
local qjson = require("qjson")
local ffi = require("ffi")
local ok, cjson = pcall(require, "cjson")
if not ok then cjson = nil end

local B = {payloads = {}, cjson = cjson ~= nil}

function B.set_payload(name, s) B.payloads[name] = s end

-- Workloads: each is function(s) doing one op.
local W = {}

"""
    + QJSON_READS
    + r"""
W.cjson_chat = function(s)
    local d = cjson.decode(s)
    local m = d.model
    local t = d.temperature
    local msgs = d.messages
    local n = #msgs
    for i = 1, n do
        local c = msgs[i].content
    end
    return d
end

W.cjson_github = function(s)
    local d = cjson.decode(s)
    for i = 1, #d do
        local t = d[i].title
    end
    return d
end

W.qjson_pass = function(s) return qjson.encode(qjson.decode(s)) end
W.cjson_pass = function(s) return cjson.encode(cjson.decode(s)) end

-- The same three edits as the Python suite (workloads.py).
local EDITS = {
    top = function(t) t.model = "gpt-4o-mini"; t.temperature = 0.2 end,
    add = function(t) t.user = "user-8f14e45f" end,
    nested = function(t) t.messages[1].content = "You are a terse assistant." end,
}
for name, edit in pairs(EDITS) do
    W["qjson_edit_" .. name] = function(s)
        local t = qjson.decode(s)
        edit(t)
        return qjson.encode(t)
    end
    W["cjson_edit_" .. name] = function(s)
        local t = cjson.decode(s)
        edit(t)
        return cjson.encode(t)
    end
end

-- Edits and patches as a fraction of the passthrough (the "% of pass" table).
W.qjson_edit_model = function(s)
    local t = qjson.decode(s)
    t.model = "gpt-4o-mini"
    return qjson.encode(t)
end
W.qjson_edit_github = function(s)
    local t = qjson.decode(s)
    t[1].title = "A better title"
    return qjson.encode(t)
end
-- The copy floor: decode, then a Lua string of the input less its last
-- byte (lua_ab.py's copy: equal on every call, as the set's result is, so
-- LuaJIT may find it in its string table and compare instead of copy).
W.qjson_copy = function(s)
    qjson.decode(s)
    return ffi.string(ffi.cast("const char *", s), #s - 1)
end
-- fresh: the set with a value that differs on every call (lua_ab.py's).
local n_fresh = 0
W.qjson_fresh_chat = function(s)
    local t = qjson.decode(s)
    n_fresh = n_fresh + 1
    t.model = "gpt-4o-mini-" .. n_fresh
    return qjson.encode(t)
end
W.qjson_fresh_github = function(s)
    local t = qjson.decode(s)
    n_fresh = n_fresh + 1
    t[1].title = "A better title " .. n_fresh
    return qjson.encode(t)
end
local PATCHES = {
    chat = {{op = "replace", path = "/model", value = "gpt-4o-mini"},
            {op = "remove", path = "/stream"},
            {op = "add", path = "/messages/0", value = {role = "system", content = "Be brief."}}},
    github = {{op = "replace", path = "/0/title", value = "A better title"},
              {op = "remove", path = "/1/body"},
              {op = "add", path = "/2/labels/0", value = {name = "triage", color = "ededed"}}},
}
for kind, ops in pairs(PATCHES) do
    W["qjson_patch_" .. kind] = function(s)
        return qjson.encode(qjson.patch(qjson.decode(s), ops))
    end
end
local MERGE = '{"metadata": {"tenant": "acme"}, "logprobs": null, "temperature": 0.2}'
W.qjson_merge_chat = function(s)
    return qjson.encode(qjson.merge_patch(qjson.decode(s), MERGE))
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
-- Each result is stored (LuaJIT would drop the making of a string nobody
-- uses: an encode result left unused costs nothing in a trace).
-- Each workload has a timing loop of its own (a chunk loaded once per
-- workload: a prototype, and so a root trace, of its own). With one loop
-- shared by every workload, the loop's trace is recorded for the first
-- workload that runs it and the others run through its side exits. (In
-- one run, the 2 KB passthrough timed alone after the edit workloads had
-- run went from 0.51M to 0.94M ops/s with this; on a loaded machine and
-- with LuaJIT's seeded PRNG that is one sample, see lua_ab.py
-- --deterministic. The "% of pass" table divides by the passthrough timed
-- in the same interleaved rounds, which is the right denominator; its
-- passthrough differs from the passthrough table's by the trace and GC
-- state the other workloads leave: run to run, from 0.3x to 1.6x.)
local TIMER = [[
local f, s, n, sink, clock = ...
local t0 = clock()
for _ = 1, n do sink[1] = f(s) end
return clock() - t0
]]
local timers = {}
local sink = {}
function B.time(w, p, n)
    local t = timers[w]
    if t == nil then
        t = assert(loadstring(TIMER, "=timer " .. w))
        timers[w] = t
    end
    local el = t(W[w], B.payloads[p], n, sink, os.clock)
    sink[1] = nil
    return el
end

function B.check(w, p)
    return W[w](B.payloads[p])
end

-- Lua-heap KiB allocated by one call (collector stopped) and still held by its
-- result after a full collection. FFI/Rust memory (qjson's index) is not counted.
function B.mem(w, p)
    local f, s = W[w], B.payloads[p]
    collectgarbage("collect"); collectgarbage("collect")
    local c0 = collectgarbage("count")
    collectgarbage("stop")
    local r = f(s)
    local c1 = collectgarbage("count")
    collectgarbage("restart")
    collectgarbage("collect"); collectgarbage("collect")
    local c2 = collectgarbage("count")
    local keep = r ~= nil
    r = nil
    return c1 - c0, c2 - c0, keep
end

return B
"""
)


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
        self.luajit = self.lua.eval("jit.version").decode()
        self.target = 0.02 if quick else 0.06  # seconds per round
        self.rounds = 5

    def _calibrate(self, w: bytes, p: bytes) -> int:
        t = self.B.time
        t(w, p, 3)  # warm-up (JIT)
        n = 1
        while True:
            el = t(w, p, n)
            if el >= self.target / 4:
                break
            n *= 4
        return max(1, int(n * self.target / max(el, 1e-9)))

    def ops_per_s(self, *ws: str, p: str = "") -> list[float]:
        """Median ops/s of each workload; the workloads alternate round by round."""
        pb = p.encode()  # the runtime has encoding=None
        wbs = [w.encode() for w in ws]
        iters = [self._calibrate(w, pb) for w in wbs]
        runs: list[list[float]] = [[] for _ in ws]
        for r in range(self.rounds):
            order = list(range(len(ws)))
            k = r % len(order)
            for i in order[k:] + order[:k]:
                runs[i].append(self.B.time(wbs[i], pb, iters[i]) / iters[i])
        return [1.0 / statistics.median(x) for x in runs]

    def mem(self, w: str, p: str = "") -> tuple[float, float]:
        """(KiB allocated during one call, KiB its result retains) in the Lua heap."""
        alloc, retained, _ = self.B.mem(w.encode(), p.encode())
        return alloc, retained


def fmt(x: float | None) -> str:
    if x is None:
        return "skipped"
    return f"{x:,.0f}" if x >= 100 else f"{x:.2f}"


def ratio(q: float | None, c: float | None) -> str:
    return f"{q / c:.1f}x" if q and c else "-"


LIVE_SETUP = """function(n)
    _G.gateway_data = {}
    for i = 1, n do gateway_data[i] = {i, tostring(i), x = {i}} end
    return collectgarbage("count") / 1024
end"""


def _long_lived_draw(
    quick: bool, loads: list[tuple[str, bytes, str]], live: int
) -> dict[str, tuple[float, float]]:
    """One draw: {payload: (fresh ops/s, long-lived ops/s)} of parse + access
    (Doc getters), from new LuaJIT states.

    A fresh state per payload holds only that payload; the long-lived state
    holds every payload (and, with `live`, that many live tables of its own)
    and times each payload in turn. Each round times every payload in both,
    so both see the same machine noise; medians of the rounds."""
    fresh = {}
    for name, data, _ in loads:
        fresh[name] = Bench(quick)
        fresh[name].B.set_payload(name.encode(), data)
    b = Bench(quick)
    for name, data, _ in loads:
        b.B.set_payload(name.encode(), data)
    if live:
        b.lua.eval(LIVE_SETUP)(live)
    work = {name: f"qjson_{kind}".encode() for name, _, kind in loads}
    iters = {name: b._calibrate(work[name], name.encode()) for name, _, _ in loads}
    for name, _, _ in loads:
        fresh[name]._calibrate(work[name], name.encode())
    runs: dict[str, tuple[list[float], list[float]]] = {n: ([], []) for n, _, _ in loads}
    for _ in range(b.rounds):
        for name, _, _ in loads:
            p, w, n = name.encode(), work[name], iters[name]
            runs[name][0].append(fresh[name].B.time(w, p, n) / n)
            runs[name][1].append(b.B.time(w, p, n) / n)
    return {
        name: (1.0 / statistics.median(f), 1.0 / statistics.median(long))
        for name, (f, long) in runs.items()
    }


def long_lived(
    quick: bool, loads: list[tuple[str, bytes, str]], live: int = 0, states: int = 3
) -> dict[str, tuple[float, float, list[float]]]:
    """{payload: (fresh ops/s, long-lived ops/s, each draw's long / fresh)}.

    Each LuaJIT state is one draw of the trace lottery: which traces it
    records, and so its speed on a payload, depends on its PRNG seed and on
    the order things got hot (the rate of one pair of states moved between
    83% and 103% run to run with no code change; see lua_ab.py
    --deterministic). So `states` independent draws are made, each a new
    set of fresh states and a new long-lived state, and the rate is the
    median long-lived ops/s over the median fresh ops/s of the draws; every
    draw's own rate is kept in the results."""
    draws = [_long_lived_draw(quick, loads, live) for _ in range(states)]
    out = {}
    for name, _, _ in loads:
        fr = statistics.median(d[name][0] for d in draws)
        lg = statistics.median(d[name][1] for d in draws)
        out[name] = (fr, lg, [d[name][1] / d[name][0] for d in draws])
    return out


RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "lua.json")
FULL_RUNGS = list(payloads.LADDER)
QUICK_RUNGS = ["2k", "100k", "1m"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2k, 100k, 1m; shorter rounds")
    ap.add_argument("--json", default=RESULTS, help=f"results file (default {RESULTS})")
    ap.add_argument("--payloads", help="comma-separated ladder rungs (default: all 2k..10m)")
    ap.add_argument(
        "--live-tables",
        type=int,
        default=100_000,
        help="live tables the long-lived state holds in its second run (0: skip that run)",
    )
    ap.add_argument(
        "--states",
        type=int,
        default=3,
        help="long-lived rows: independent draws of LuaJIT states (median; default 3)",
    )
    ap.add_argument("--deterministic", action="store_true", help="a fixed LuaJIT PRNG seed")
    args = ap.parse_args()
    if args.deterministic:
        deterministic()

    b = Bench(args.quick)
    no_cjson = None
    if not b.has_cjson:
        no_cjson = "lua-cjson not found (install it with scripts/install-lua-deps.sh)"
        print(f"skipped: every cjson row: {no_cjson}")
    if args.payloads:
        rungs = args.payloads.split(",")
    else:
        rungs = QUICK_RUNGS if args.quick else FULL_RUNGS
    loads = [(r, payloads.chat_request(payloads.LADDER[r]), "chat") for r in rungs]
    loads.append(("small_request", payloads.small_request(), "chat"))
    loads.append(("github_issues", payloads.github_issues(), "github"))
    for name, data, _ in loads:
        b.B.set_payload(name.encode(), data)

    rows: list[dict] = []
    skipped: list[dict] = []

    def record(scenario: str, nbytes: int, workload: str, lib: str, ops, w: str, p: str = ""):
        row = {"scenario": scenario, "bytes": nbytes, "workload": workload, "library": lib}
        if ops is None:
            skipped.append({**row, "reason": no_cjson})
            return
        alloc, kept = b.mem(w, p)
        rows.append(
            {**row, "ops_per_s": ops, "rounds": b.rounds, "alloc_kib": alloc, "retained_kib": kept}
        )

    def pair(qw: str, cw: str, p: str = "") -> tuple[float, float | None]:
        if b.has_cjson:
            q, c = b.ops_per_s(qw, cw, p=p)
            return q, c
        return b.ops_per_s(qw, p=p)[0], None

    n_steps = 2 * len(loads) + sum(k == "chat" for _, _, k in loads) + 2 + 4
    n_steps += 2 if args.live_tables else 1
    progress = Progress(n_steps, "lua", every=0.0)
    print(
        f"qjson {qjson.__version__} ({qjson.backend()}), lupa {b.luajit}; "
        f"median ops/s of {b.rounds} rounds after warm-up, qjson and cjson alternating"
    )
    print("\n== parse + access (qjson Doc getters; qjson.decode proxies; cjson.decode) ==")
    print("   (the three workloads interleaved round by round; ratios = qjson / cjson)")
    print(
        f"{'payload':>14} {'bytes':>9} {'qjson ops/s':>13} {'proxy ops/s':>13} "
        f"{'cjson ops/s':>13} {'getters':>8} {'proxies':>8}"
    )
    for name, data, kind in loads:
        progress.step(f"{name} access")
        ws = [f"qjson_{kind}", f"qjson_proxy_{kind}"]
        if b.has_cjson:
            q, px, c = b.ops_per_s(*ws, f"cjson_{kind}", p=name)
        else:
            (q, px), c = b.ops_per_s(*ws, p=name), None
        record(name, len(data), "access", "qjson", q, f"qjson_{kind}", name)
        record(name, len(data), "proxy_access", "qjson", px, f"qjson_proxy_{kind}", name)
        record(name, len(data), "access", "cjson", c, f"cjson_{kind}", name)
        print(
            f"{name:>14} {len(data):>9} {fmt(q):>13} {fmt(px):>13} {fmt(c):>13} "
            f"{ratio(q, c):>8} {ratio(px, c):>8}"
        )

    print("\n== decode + encode (passthrough) and edits, ops/s ==")
    print(
        f"{'payload':>14} {'qjson pass':>11} {'cjson pass':>11} {'ratio':>7}   "
        "edits top / add / nested: qjson (cjson)"
    )
    for name, data, kind in loads:
        if kind != "chat":
            continue
        progress.step(f"{name} passthrough + edits")
        q, c = pair("qjson_pass", "cjson_pass", name)
        record(name, len(data), "passthrough", "qjson", q, "qjson_pass", name)
        record(name, len(data), "passthrough", "cjson", c, "cjson_pass", name)
        cells = []
        for e in ("top", "add", "nested"):
            qe, ce = pair(f"qjson_edit_{e}", f"cjson_edit_{e}", name)
            record(name, len(data), f"edit_{e}", "qjson", qe, f"qjson_edit_{e}", name)
            record(name, len(data), f"edit_{e}", "cjson", ce, f"cjson_edit_{e}", name)
            cells.append(f"{fmt(qe)} ({fmt(ce)})")
        print(f"{name:>14} {fmt(q):>11} {fmt(c):>11} {ratio(q, c):>7}   " + " / ".join(cells))

    print("\n== Lua edits and patches, % of the Lua passthrough rate (target >= 70%) ==")
    print("   (decode + edit + encode; floor = decode + one copy of the payload into a Lua")
    print("    string; set = model (chat) / [1].title (github); fresh = set, a new value each")
    print("    call; patch = 3 ops; merge = a small merge patch as text; interleaved rounds)")
    labels = ["floor", "set", "fresh", "patch", "merge"]
    print(f"{'payload':>14} {'pass ops/s':>11} " + " ".join(f"{c:>6}" for c in labels))
    for name, data, kind in loads:
        progress.step(f"{name} edits vs passthrough")
        ws = ["qjson_pass", "qjson_copy", f"qjson_edit_{'model' if kind == 'chat' else 'github'}"]
        ws += [f"qjson_fresh_{kind}", f"qjson_patch_{kind}"]
        if kind == "chat":
            ws.append("qjson_merge_chat")
        ops = b.ops_per_s(*ws, p=name)
        cells = [f"{o / ops[0]:>6.0%}" for o in ops[1:]] + ([] if kind == "chat" else ["-"])
        for label, o in zip(["copy", "set", "fresh", "patch", "merge"], ops[1:]):
            rows.append(
                {
                    "scenario": name,
                    "bytes": len(data),
                    "workload": f"{label}_vs_pass",
                    "library": "qjson",
                    "ops_per_s": o,
                    "pass_ops_per_s": ops[0],
                    "ratio": o / ops[0],
                    "rounds": b.rounds,
                }
            )
        print(f"{name:>14} {fmt(ops[0]):>11} " + " ".join(f"{c:>6}" for c in cells))

    print("\n== small object marshal / unmarshal ==")
    for op in ("encode", "decode"):
        progress.step(f"small object {op}")
        q, c = pair(f"qjson_small_{op}", f"cjson_small_{op}")
        record("small-object", 0, op, "qjson", q, f"qjson_small_{op}")
        record("small-object", 0, op, "cjson", c, f"cjson_small_{op}")
        print(f"{op:>12} qjson {fmt(q):>11}/s  cjson {fmt(c):>11}/s  {ratio(q, c)}")

    print("\n== Fleece tables, encode (1000 elements), ns per element ==")
    for name in (n.decode() for n in b.B.fleece_names.values()):
        progress.step(f"fleece {name}")
        q, c = pair(f"qjson_fleece {name}", f"cjson_fleece {name}")
        record("fleece", 1000, f"encode {name}", "qjson", q, f"qjson_fleece {name}")
        record("fleece", 1000, f"encode {name}", "cjson", c, f"cjson_fleece {name}")
        qn = 1e9 / q / 1000
        cn = f"{1e9 / c / 1000:6.1f}" if c else "skipped"
        print(f"{name:>32}  qjson {qn:6.1f} ns/elem  cjson {cn} ns/elem  {ratio(q, c)}")

    print("\n== one long-lived state cycling every payload vs a fresh state per payload ==")
    print("   (qjson parse + access, Doc getters; rate = long-lived / fresh, target >= 90%)")
    for live in [0, args.live_tables] if args.live_tables else [0]:
        progress.step(f"long-lived state, {live} live tables")
        res = long_lived(args.quick, loads, live, args.states)
        label = f"long-lived state holding {live:,} live tables" if live else "long-lived state"
        print(f"{label} (medians of {args.states} draws of states):")
        print(f"{'payload':>14} {'fresh ops/s':>12} {'long ops/s':>12} {'rate':>6}   each draw")
        for name, data, _ in loads:
            fr, lg, draws = res[name]
            wl = f"long_lived_{live}" if live else "long_lived"
            for lib, ops in (("qjson fresh state", fr), ("qjson long-lived state", lg)):
                rows.append(
                    {
                        "scenario": name,
                        "bytes": len(data),
                        "workload": wl,
                        "library": lib,
                        "ops_per_s": ops,
                        "rounds": b.rounds,
                        "live_tables": live,
                        "states": args.states,
                        "draw_rates": draws,
                    }
                )
            each = " ".join(f"{r:.0%}" for r in draws)
            print(f"{name:>14} {fmt(fr):>12} {fmt(lg):>12} {lg / fr:>6.0%}   {each}")
    progress.finish()

    results = {
        "mode": "quick" if args.quick else "full",
        "backend": qjson.backend(),
        "luajit": b.luajit,
        "cjson": b.has_cjson,
        "rounds": b.rounds,
        "round_s": b.target,
        "rows": rows,
        "skipped": skipped,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(results, f, indent=1)
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
