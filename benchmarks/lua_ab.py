"""A/B of two builds of qjson's Lua side (qjson.lua + C-ABI library) in one process.

Each side is its own lupa LuaJIT runtime, loaded from a qjson.lua file and a
library path (``cargo build --release --no-default-features`` builds
``libqjson.so``), so two checkouts compare without installing either. Both
runtimes get the same payloads (made once, outside the timed loops) and the
same workloads; the rounds alternate A, B, B, A, ... and each round is timed
inside Lua with os.clock (CPU time of the process; the collector on, as in a
user's process). Printed: median ops/s per side, B / A, and each workload as
a share of its side's passthrough (decode + encode unmodified).

    python benchmarks/lua_ab.py A_LUA A_LIB B_LUA B_LIB [--payloads 2k,1m,...]
        [--work pass,set,...] [--rounds 7] [--round-s 0.05] [--deterministic]
        [--long [--live N]] [--alloc] [--callgrind [--n1 N --n2 N --top K] [--seeds 0,1,2]
        [--per-seed] [--jobs J]]

--long: per side, one LuaJIT state that holds and cycles every payload (a
gateway sees every size in turn; with --live, N live tables of its own)
against a fresh state per payload, as lua_bench.py's long-lived rows; the
workload is `get` unless --work names another. Printed per side: fresh and
long ops/s and long / fresh, and B long / A long.

--alloc: instead of timing, the bytes of Lua heap each workload makes per
call (the collector stopped while counting), per side: deterministic, and
free of the trace draw that moves --callgrind's counts of 2 KB edits.

Workloads: pass, decode (alone), edit (decode + the set, no encode), set
(model / [1].title on github), nested (messages[1].content / [1].user.login
on github: the edit in a child of a child), patch (3 ops, as
lua_bench.py), ptext (the same patch as JSON text; chat payloads only),
edits3 (the chat patch's three edits made on the proxies
directly: what the patch functions add over the edits), merge, read
(decode + the access reads of lua_bench.py), get (parse + the path getters
of lua_bench.py's access and long-lived rows), copy
(the copy floor: decode, then ffi.string of the input less its last byte:
a Lua string of about the payload's size; as for the edited results, equal
on every call, LuaJIT's string table may hold the previous one, and then the
string costs a compare of the bytes instead of a copy), fresh (set, with
a value that differs on every call: each result is a new string, as in a
gateway, where no two outputs are equal; from 128 KB up LuaJIT's allocator
maps every such string afresh and the kernel faults its pages in, which
costs far more than the copy: 1 MB 0.64 ms, 10 MB 6.2 ms in one run,
against 23 us and 0.9 ms for an equal string).

--callgrind: instead of timing, instructions per op of each workload on
each payload, per side: each side runs the workload n1 and n2 times (after
a warm-up of 200 calls, so the traces are recorded) in its own
`valgrind --tool=callgrind` process, with the fixed getrandom of
--deterministic preloaded, and the difference over n2 - n1 is printed,
with --top, B - A per function (exclusive; LuaJIT's internals and its
machine code are `???` rows). --seeds 0,1,2 averages over those draws
(QJSON_DETRAND_SEED): a patch's count moves by 15% from draw to draw;
--per-seed prints each draw's count and their spread, --jobs runs that
many valgrind processes at once, --trace-log writes each run's LuaJIT trace
events beside its callgrind file (FILE.traces: which traces a draw got;
the logger runs Lua code at each event, so it may move the draw itself).
The counts of one build and seed repeat from run to run (the profiled
process reads a clock that ticks a microsecond per read: with the real
one, qjson.lua's collector pacing followed the machine's load, and a 2 KB
merge counted 26.5k or 35.1k instructions on two runs); this is the tool
behind the "k instructions per op" figures of the Lua notes.

--deterministic: LuaJIT seeds its PRNG (trace penalties, string hashes) from
getrandom, and tables keyed by tables or cdata hash their addresses, so
the traces a workload gets change from run to run (a 2 KB patch ranged
31k-74k instructions under callgrind; a 100 KB patch ran at 12k or 45k
ops/s). The option builds benchmarks/detrand.c (a fixed getrandom) with cc
and runs the script again with it preloaded, address randomisation off
(personality ADDR_NO_RANDOMIZE) and PYTHONHASHSEED=0: runs of one build
then repeat, and callgrind counts compare across builds. Timings still vary
with the machine's load. One fixed seed is one sample of the trace
lottery: a layout-sensitive workload can sit on a slow or a fast draw;
QJSON_DETRAND_SEED=n (0-255, default 0) picks another draw, so an A/B over
a few seeds tells the code's difference from the draw's (the 2 KB patch
falls on about 40k or about 58k instructions, by seed, on either build).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

try:
    import payloads  # type: ignore[import-not-found]
    from callgrind import load, show_diff  # type: ignore[import-not-found]
    from lua_workloads import QJSON_READS  # type: ignore[import-not-found]
except ImportError:  # python -m benchmarks.lua_ab
    from benchmarks import payloads  # type: ignore[no-redef]
    from benchmarks.callgrind import load, show_diff  # type: ignore[no-redef]
    from benchmarks.lua_workloads import QJSON_READS  # type: ignore[no-redef]

LOADER = """
function(src, lib)
    local chunk = assert(loadstring(src, "@qjson.lua"))
    package.loaded["qjson"] = nil
    package.preload["qjson"] = function(name) return chunk(name, lib) end
    return require("qjson")
end
"""

SETUP = (
    r"""
local qjson = require("qjson")
local ffi = require("ffi")
local W, P = {}, {}
W.pass = function(s) return qjson.encode(qjson.decode(s)) end
-- The copy floor: decode, then a Lua string of the input less its last
-- byte. Like the edited results (equal on every call), it is found in
-- LuaJIT's string table while the previous one is alive, and then costs a
-- hash and a compare of the bytes instead of a copy; a length that varies
-- from call to call was worse than a copy (long-string hash collisions).
W.copy = function(s)
    qjson.decode(s)
    return ffi.string(ffi.cast("const char *", s), #s - 1)
end
-- The parts of a set, for --callgrind: the decode alone, and the decode
-- and the edit without the encode.
W.decode = function(s) return qjson.decode(s) end
W.edit_chat = function(s)
    local t = qjson.decode(s)
    t.model = "gpt-4o-mini"
    return t
end
W.edit_github = function(s)
    local t = qjson.decode(s)
    t[1].title = "A better title"
    return t
end
W.set_chat = function(s)
    local t = qjson.decode(s)
    t.model = "gpt-4o-mini"
    return qjson.encode(t)
end
-- nested: an edit two containers down (a child object of a child array),
-- so the edit fields land in child proxies' states, not the root's.
W.nested_chat = function(s)
    local t = qjson.decode(s)
    t.messages[1].content = "Be brief."
    return qjson.encode(t)
end
W.nested_github = function(s)
    local t = qjson.decode(s)
    t[1].user.login = "octocat"
    return qjson.encode(t)
end
W.set_github = function(s)
    local t = qjson.decode(s)
    t[1].title = "A better title"
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
-- fresh: a set whose result differs on every call (a new string each time).
local n_fresh = 0
W.fresh_chat = function(s)
    local t = qjson.decode(s)
    n_fresh = n_fresh + 1
    t.model = "gpt-4o-mini-" .. n_fresh
    return qjson.encode(t)
end
W.fresh_github = function(s)
    local t = qjson.decode(s)
    n_fresh = n_fresh + 1
    t[1].title = "A better title " .. n_fresh
    return qjson.encode(t)
end
-- edits3: the patch's three edits made on the proxies directly (no patch
-- machinery: pointers, journal, protected call, value copies), for
-- --callgrind: what the patch functions add over the edits themselves.
W.edits3_chat = function(s)
    local t = qjson.decode(s)
    t.model = "gpt-4o-mini"
    t.stream = nil
    qjson.insert(t.messages, 1, {role = "system", content = "Be brief."})
    return qjson.encode(t)
end
W.patch_chat = function(s) return qjson.encode(qjson.patch(qjson.decode(s), PATCHES.chat)) end
W.patch_github = function(s) return qjson.encode(qjson.patch(qjson.decode(s), PATCHES.github)) end
-- ptext: the chat patch given as JSON text (lua_bench.py's patch_text column).
local PTEXT = '[{"op": "replace", "path": "/model", "value": "gpt-4o-mini"}, '
    .. '{"op": "remove", "path": "/stream"}, '
    .. '{"op": "add", "path": "/messages/0", "value": {"role": "system", "content": "Be brief."}}]'
W.ptext_chat = function(s) return qjson.encode(qjson.patch(qjson.decode(s), PTEXT)) end
local MERGE = '{"metadata": {"tenant": "acme"}, "logprobs": null, "temperature": 0.2}'
W.merge_chat = function(s) return qjson.encode(qjson.merge_patch(qjson.decode(s), MERGE)) end
"""
    + QJSON_READS
    + r"""
-- The read workloads are lua_bench.py's (lua_workloads.QJSON_READS): path getters on a
-- parsed Doc (its access and long-lived rows) and proxy reads.
W.get_chat, W.read_chat = W.qjson_chat, W.qjson_proxy_chat
W.get_github, W.read_github = W.qjson_github, W.qjson_proxy_github
local clock = os.clock
local B = {}
function B.set(name, s) P[name] = s end
function B.has(w) return W[w] ~= nil end
-- Each result is stored (LuaJIT would drop the making of a string nobody
-- uses: a copy or an encode result left unused costs nothing in a trace).
-- Each workload has a timing loop of its own (a chunk loaded once per
-- workload, so a root trace of its own), as in lua_bench.py: with one loop
-- shared by every workload, its trace is recorded for the first workload
-- that runs it and the others run through its side exits.
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
    local el = t(W[w], P[p], n, sink, clock)
    sink[1] = nil
    return el
end
function B.out(w, p) return W[w](P[p]) end
-- --alloc: bytes of Lua heap made per call of workload `w`, the collector
-- stopped (after `warm` calls, so the traces are recorded): a count that
-- does not depend on which traces LuaJIT drew, only on what the code makes.
function B.alloc(w, p, warm, n)
    B.time(w, p, warm)
    collectgarbage("collect")
    collectgarbage("stop")
    local c0 = collectgarbage("count")
    B.time(w, p, n)
    local c1 = collectgarbage("count")
    collectgarbage("restart")
    return (c1 - c0) * 1024 / n
end
return B
"""
)


LIVE = """function(n)
    _G.gateway_data = {}
    for i = 1, n do gateway_data[i] = {i, tostring(i), x = {i}} end
end"""


# --callgrind's clock: qjson.lua paces its collector steps by the time they
# take (os.clock, see "Doc / cursor" in qjson.lua), so under valgrind, on a
# loaded machine, the cycles ended at other calls from run to run, and with
# them the sentinel's finaliser, which aborts a trace being recorded: the
# same build and seed drew other traces (a 2 KB merge counted 26.5k or 35.1k
# instructions). A clock that ticks one microsecond per read makes the
# pacing, and the counts, repeat.
FIXED_CLOCK = """
local t = 0
os.clock = function() t = t + 1e-6 return t end
"""


def runtime(lua_path: str, lib: str, live: int = 0, prelude: str = ""):
    """(the lupa runtime, its workload table B): qjson.lua from `lua_path` on
    the C-ABI library `lib`, holding `live` live tables of its own; the Lua
    chunk `prelude` runs first."""
    import lupa.luajit21 as luajit21  # type: ignore[import-untyped]

    rt = luajit21.LuaRuntime(encoding=None)
    if prelude:
        rt.execute(prelude)
    with open(lua_path, "rb") as f:
        src = f.read()
    rt.eval(LOADER)(src, lib.encode())
    b = rt.execute(SETUP)
    if live:
        rt.eval(LIVE)(live)
    return rt, b


def side(lua_path: str, lib: str, live: int = 0):
    return runtime(lua_path, lib, live)[1]


ap_default_work = "pass,copy,set,patch,merge,read"

DETRAND = os.path.join(os.path.dirname(os.path.abspath(__file__)), "detrand.c")


def detrand_so() -> str:
    """benchmarks/detrand.c built into a temporary directory."""
    out = os.path.join(tempfile.mkdtemp(prefix="qjson-detrand-"), "detrand.so")
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", out, DETRAND, "-ldl"], check=True)
    return out


def deterministic() -> None:
    """Run this script again with a fixed getrandom (see --deterministic)."""
    if os.environ.get("QJSON_DETRAND") == "1":
        return
    out = detrand_so()
    env = dict(os.environ, QJSON_DETRAND="1", PYTHONHASHSEED="0")
    env["LD_PRELOAD"] = " ".join(x for x in (out, env.get("LD_PRELOAD", "")) if x)
    import ctypes

    addr_no_randomize = 0x0040000  # kept across exec
    libc = ctypes.CDLL(None, use_errno=True)
    libc.personality(libc.personality(0xFFFFFFFF) | addr_no_randomize)
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable, *sys.argv], env)


def payload(n: str) -> bytes:
    if n == "github":
        return payloads.github_issues()
    if n == "small":
        return payloads.small_request()
    return payloads.chat_request(payloads.LADDER[n])


def calibrate(s, w: bytes, p: bytes, round_s: float) -> int:
    s.time(w, p, 3)
    k = 1
    while True:
        el = s.time(w, p, k)
        if el >= round_s / 4:
            return max(1, int(k * round_s / max(el, 1e-9)))
        k *= 4


def long_lived(args, names: list[str], data: dict[str, bytes]) -> int:
    """--long: per side, one state that holds and cycles every payload (as a
    gateway sees every size in turn) against a fresh state per payload
    (lua_bench.py's long-lived rows). Each round times every payload in the
    four states, order alternating; medians of the rounds."""
    work = args.work if args.work != ap_default_work else "get"
    libs = [(args.a_lua, args.a_lib), (args.b_lua, args.b_lib)]
    longs = []
    fresh: list[dict[str, object]] = []
    for lua, lib in libs:
        s = side(lua, lib, args.live)
        for n in names:
            s.set(n.encode(), data[n])
        longs.append(s)
        fr = {}
        for n in names:
            f = side(lua, lib)
            f.set(n.encode(), data[n])
            fr[n] = f
        fresh.append(fr)
    wk = {n: f"{work}_{'github' if n == 'github' else 'chat'}".encode() for n in names}
    iters = {n: calibrate(longs[0], wk[n], n.encode(), args.round_s) for n in names}
    for i in (0, 1):
        for n in names:
            calibrate(fresh[i][n], wk[n], n.encode(), args.round_s)
        if i == 1:
            for n in names:
                calibrate(longs[1], wk[n], n.encode(), args.round_s)
    runs = {(n, i, kind): [] for n in names for i in (0, 1) for kind in ("fresh", "long")}
    for r in range(args.rounds):
        order = (0, 1) if r % 2 == 0 else (1, 0)
        for n in names:
            p, w, k = n.encode(), wk[n], iters[n]
            for i in order:
                for kind in ("fresh", "long") if r % 2 == 0 else ("long", "fresh"):
                    st = fresh[i][n] if kind == "fresh" else longs[i]
                    runs[(n, i, kind)].append(st.time(w, p, k) / k)
    ops = {key: 1.0 / statistics.median(v) for key, v in runs.items()}
    head = ["payload", "A fresh", "A long", "A rate", "B fresh", "B long", "B rate", "Blong/A"]
    print(" ".join(f"{h:>{w}}" for h, w in zip(head, (8, 10, 10, 7, 10, 10, 7, 8))))
    for n in names:
        af, al = ops[(n, 0, "fresh")], ops[(n, 0, "long")]
        bf, bl = ops[(n, 1, "fresh")], ops[(n, 1, "long")]
        print(
            f"{n:>8} {af:>10,.0f} {al:>10,.0f} {al / af:>7.0%} "
            f"{bf:>10,.0f} {bl:>10,.0f} {bl / bf:>7.0%} {bl / al:>8.2f}"
        )
    return 0


def work_name(w: str, n: str) -> str:
    """The workload function of `w` for payload `n` (pass and copy are shared)."""
    if w in ("pass", "copy", "decode"):
        return w
    return f"{w}_{'github' if n == 'github' else 'chat'}"


TRACE_LOG = r"""
local path = ...
local util = require("jit.util")
local log = assert(io.open(path, "w"))
local phase = "warm-up"
jit.attach(function(what, tr, func, pc, otr, oex)
    if what == "flush" then -- no function to name
        log:write(phase, " flush\n")
        return
    end
    local loc = util.funcinfo(func, pc).loc
    if what == "stop" then
        local ti = util.traceinfo(tr)
        loc = loc .. " link " .. ti.link .. " " .. ti.linktype .. " nins " .. ti.nins
    elseif what == "abort" then
        loc = loc .. " error " .. tostring(otr)
    elseif what == "start" and otr then
        loc = loc .. " side of " .. otr .. "/" .. oex
    end
    log:write(phase, " ", what, " ", tostring(tr), " ", loc, "\n")
    log:flush()
end, "trace")
return function(p) phase = p end
"""


def cg_child(lua: str, lib: str, w: str, n: str, k: int) -> int:
    """--callgrind's profiled process: warm up, then `k` calls. With
    $QJSON_TRACE_LOG (--trace-log), LuaJIT's trace events go to that file
    (start, stop with its link, abort with its error number, by phase): what
    a count's seed got (a loop of the op with a trace of its own, which the
    op's trace links to, or one trace for the whole op)."""
    rt, s = runtime(lua, lib, prelude=FIXED_CLOCK)
    log = os.environ.get("QJSON_TRACE_LOG")
    phase = rt.execute(TRACE_LOG, log.encode()) if log else None
    s.set(n.encode(), payload(n))
    s.time(w.encode(), n.encode(), 200)
    if phase is not None:
        phase(b"measured")
    s.time(w.encode(), n.encode(), k)
    return 0


def cg_run(
    lua: str, lib: str, w: str, n: str, k: int, out: str, so: str, seed: str, traces: bool = False
) -> None:
    env = dict(os.environ, PYTHONHASHSEED="0", QJSON_DETRAND_SEED=seed)
    if traces:
        env["QJSON_TRACE_LOG"] = out + ".traces"
    env["LD_PRELOAD"] = " ".join(x for x in (so, env.get("LD_PRELOAD", "")) if x)
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable]
    lua, lib = os.path.abspath(lua), os.path.abspath(lib)
    cmd += [os.path.abspath(__file__), lua, lib, lua, lib, "--cg-child", f"{w}:{n}:{k}"]
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def callgrind(args, names: list[str]) -> int:
    """--callgrind: instructions per op of each workload, A and B."""
    so = detrand_so()
    tmp = tempfile.mkdtemp(prefix="qjson-luacg-")
    sides = [("A", args.a_lua, args.a_lib), ("B", args.b_lua, args.b_lib)]
    if sides[1][1:] == sides[0][1:]:
        sides = sides[:1]  # one build: its counts only
    # Each side's files are copied to paths of the same length: the
    # command line's length moves the process's memory layout, and with it
    # the addresses tables are hashed by (a few hundred instructions per op).
    for i, (label, lua, lib) in enumerate(sides):
        d = os.path.join(tmp, f"side{label}")
        os.mkdir(d)
        shutil.copy(lua, os.path.join(d, "qjson.lua"))
        shutil.copy(lib, os.path.join(d, "libqjson.so"))
        sides[i] = (label, os.path.join(d, "qjson.lua"), os.path.join(d, "libqjson.so"))
    print(f"callgrind files in {tmp}")
    seeds = args.seeds.split(",")
    # Every (workload, side, seed, n) run is its own valgrind process: run
    # --jobs of them at once (counts do not depend on the machine's load).
    # ptext exists for the chat payloads only (see the docstring): skipped,
    # and said so, where it would name a workload that does not exist.
    pairs = [(n, w) for n in names for w in args.work.split(",")]
    for n, w in pairs:
        if w == "ptext" and n == "github":
            print(f"skipped: {w} on {n} (no {work_name(w, n)} workload)", file=sys.stderr)
    pairs = [(n, w) for n, w in pairs if not (w == "ptext" and n == "github")]
    runs = []
    for n, w in pairs:
        wn = work_name(w, n)
        for label, lua, lib in sides:
            for seed in seeds:
                for k in (args.n1, args.n2):
                    f = os.path.join(tmp, f"{wn}.{n}.{label}.{k}.s{seed}")
                    runs.append((lua, lib, wn, n, k, f, so, seed, args.trace_log))
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        done = {r[5]: pool.submit(cg_run, *r) for r in runs}
        for n, w in pairs:
            wn = work_name(w, n)
            counts = []
            per_seed = []
            for label, _lua, _lib in sides:
                # Summed over the seeds (a mean once divided by their number).
                tot: list[dict[str, int]] = [{}, {}]
                one = []
                for seed in seeds:
                    both = []
                    for j, k in enumerate((args.n1, args.n2)):
                        f = os.path.join(tmp, f"{wn}.{n}.{label}.{k}.s{seed}")
                        done[f].result()
                        c = load(f)
                        both.append(sum(c.values()))
                        for fn, x in c.items():
                            tot[j][fn] = tot[j].get(fn, 0) + x
                    one.append((both[1] - both[0]) / (args.n2 - args.n1))
                counts.append(tot)
                per_seed.append(one)
            per = (args.n2 - args.n1) * len(seeds)
            ops = [(sum(c[1].values()) - sum(c[0].values())) / per for c in counts]
            if len(ops) == 1:
                print(f"{n:>8} {w:>7}  A {ops[0]:10,.0f}")
            else:
                a, b = ops
                print(f"{n:>8} {w:>7}  A {a:10,.0f}  B {b:10,.0f}  B/A {b / max(a, 1):.3f}")
            if args.per_seed:
                for (label, _lua, _lib), one in zip(sides, per_seed):
                    cells = " ".join(f"{x:8,.0f}" for x in one)
                    spread = max(one) - min(one)
                    print(f"{'':>17}{label} per seed {cells}  (spread {spread:,.0f})")
            if args.top:
                if len(ops) == 1:
                    show_diff(counts[0][0], counts[0][1], per, args.top, "  A, Ir")
                else:
                    # B's N2 run against A's: the per-function difference.
                    show_diff(counts[0][1], counts[1][1], per, args.top, "  B - A, Ir")
            sys.stdout.flush()
    return 0


def alloc(args, names: list[str], data: dict[str, bytes]) -> int:
    """--alloc: Lua heap bytes made per op of each workload, A and B (the
    collector stopped while counting): what the collector has to take back,
    at about 4 instructions a byte in a benchmark's state, whatever traces
    LuaJIT drew."""
    sides = [side(args.a_lua, args.a_lib), side(args.b_lua, args.b_lib)]
    print(f"{'payload':>8} {'work':>7} {'A B/op':>9} {'B B/op':>9} {'B-A':>7}")
    for n in names:
        for s in sides:
            s.set(n.encode(), data[n])
        for w in args.work.split(","):
            full = work_name(w, n).encode()
            if not sides[0].has(full):
                continue
            a, b = (s.alloc(full, n.encode(), 300, 2000) for s in sides)
            print(f"{n:>8} {w:>7} {a:>9,.0f} {b:>9,.0f} {b - a:>+7,.0f}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a_lua")
    ap.add_argument("a_lib")
    ap.add_argument("b_lua")
    ap.add_argument("b_lib")
    ap.add_argument("--payloads", default="2k,60k,100k,200k,500k,1m,2m,5m,10m,github,small")
    ap.add_argument("--work", default=ap_default_work)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--round-s", type=float, default=0.05)
    ap.add_argument("--deterministic", action="store_true", help="a fixed LuaJIT PRNG seed")
    ap.add_argument(
        "--long",
        action="store_true",
        help="long-lived state cycling every payload vs a fresh state per payload (--work get)",
    )
    ap.add_argument("--live", type=int, default=0, help="--long: live tables the long state holds")
    ap.add_argument("--callgrind", action="store_true", help="instructions per op, not time")
    ap.add_argument("--alloc", action="store_true", help="Lua heap bytes made per op, not time")
    ap.add_argument("--n1", type=int, default=200, help="--callgrind: calls of the first run")
    ap.add_argument("--n2", type=int, default=1200, help="--callgrind: calls of the second run")
    ap.add_argument("--top", type=int, default=0, help="--callgrind: functions of the B - A diff")
    ap.add_argument("--seeds", default="0", help="--callgrind: QJSON_DETRAND_SEED draws (mean)")
    ap.add_argument("--per-seed", action="store_true", help="--callgrind: each seed's count")
    ap.add_argument(
        "--trace-log",
        action="store_true",
        help="--callgrind: each run's LuaJIT trace events beside its file (FILE.traces)",
    )
    ap.add_argument("--jobs", type=int, default=1, help="--callgrind: valgrind runs at once")
    ap.add_argument("--cg-child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.cg_child:
        w, n, k = args.cg_child.split(":")
        return cg_child(args.a_lua, args.a_lib, w, n, int(k))
    if args.deterministic:
        deterministic()

    names = args.payloads.split(",")
    if args.callgrind:
        if args.n2 <= args.n1:
            ap.error("--n2 must be larger than --n1")
        return callgrind(args, names)
    data = {n: payload(n) for n in names}
    if args.long:
        return long_lived(args, names, data)
    if args.alloc:
        return alloc(args, names, data)
    sides = [side(args.a_lua, args.a_lib), side(args.b_lua, args.b_lib)]
    for n in names:
        for s in sides:
            s.set(n.encode(), data[n])

    head = ["payload", "work", "A ops/s", "B ops/s", "B/A", "A %pass", "B %pass"]
    print(" ".join(f"{h:>{w}}" for h, w in zip(head, (8, 7, 11, 11, 6, 8, 8))))
    for n in names:
        pb = n.encode()
        works = []
        for w in args.work.split(","):
            full = work_name(w, n)
            if sides[0].has(full.encode()):
                works.append(full)
        # Same output on both sides: the same bytes, or, where a new plain
        # table of several keys is written (the github patch's label), the
        # same JSON value: LuaJIT seeds its string hashes per state, and a
        # plain table's key order follows them, so its members may come in
        # another order in the other runtime (as from lua-cjson).
        for w in works:
            if w not in ("copy", "decode") and not w.startswith(("read", "get", "fresh", "edit")):
                a, b = (s.out(w.encode(), pb) for s in sides)
                if a != b and json.loads(a) != json.loads(b):
                    print(f"  !! {n} {w}: outputs differ", file=sys.stderr)
        iters = {}
        for w in works:
            wb = w.encode()
            s = sides[0]
            s.time(wb, pb, 3)
            sides[1].time(wb, pb, 3)
            k = 1
            while True:
                el = s.time(wb, pb, k)
                if el >= args.round_s / 4:
                    break
                k *= 4
            iters[w] = max(1, int(k * args.round_s / max(el, 1e-9)))
        runs = {(w, i): [] for w in works for i in (0, 1)}
        for r in range(args.rounds):
            order = (0, 1) if r % 2 == 0 else (1, 0)
            for w in works:
                for i in order:
                    k = iters[w]
                    runs[(w, i)].append(sides[i].time(w.encode(), pb, k) / k)
        ops = {key: 1.0 / statistics.median(v) for key, v in runs.items()}
        for w in works:
            a, b = ops[(w, 0)], ops[(w, 1)]
            pa = a / ops[("pass", 0)] if ("pass", 0) in ops else float("nan")
            pbb = b / ops[("pass", 1)] if ("pass", 1) in ops else float("nan")
            label = w.split("_")[0]
            print(f"{n:>8} {label:>7} {a:>11,.0f} {b:>11,.0f} {b / a:>6.2f} {pa:>8.0%} {pbb:>8.0%}")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
