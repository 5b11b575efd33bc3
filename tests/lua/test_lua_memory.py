"""Native memory of Lua documents: the index memory each qjson.parse /
qjson.decode holds is Rust's, freed when LuaJIT collects the document, and
qjson.lua asks the collector for work in proportion to it (the pacing in
`adopt`). Parse-and-drop loops stay bounded, with and without a big live
Lua heap; a stopped collector stays stopped; handles outlive the variables
that named their document for as long as a cursor or proxy needs them."""

from __future__ import annotations

import os
import sys

import pytest

pytest.importorskip("lupa", reason="lupa is not installed (pip install 'qjson[lua]')")

import qjson.luajit  # noqa: E402

# A dense document (~150 KB) whose index is about half its size: 2,000
# parses would hold ~150 MB of index memory if none were freed.
DENSE = (
    b"["
    + b",".join(b'{"id":%d,"t":"x","a":[1,2,3],"b":{"c":null,"d":true}}' % i for i in range(3000))
    + b"]"
)


def rss_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


needs_proc = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not os.path.exists("/proc/self/status"),
    reason="reads the resident set size from /proc/self/status (Linux)",
)


@pytest.fixture()
def lua():
    # A state of its own per test: the pacing adapts to the state's heap.
    return qjson.luajit.runtime(lua_modules=True, encoding=None)


LOOP = """function(s, n, live)
    local qjson = require("qjson")
    _G.keep = {}
    for i = 1, live do keep[i] = {i, tostring(i), x = {i}} end
    local index = tonumber(qjson.lib.qjson_memory(qjson.parse(s)._h))
    local sum = 0
    for i = 1, n do
        local d = qjson.parse(s)
        sum = sum + d:len()
    end
    _G.keep = nil
    return sum, index
end"""


@needs_proc
@pytest.mark.parametrize("live", [0, 100_000])
def test_parse_and_drop_loop_is_bounded(lua, live):
    # live = 100,000: a state holding ~26 MB of live tables, where a cycle
    # is costly and the budget grows (up to 64 MB of index memory).
    n = 2000
    before = rss_bytes()
    total, index = lua.eval(LOOP)(DENSE, n, live)
    grown = rss_bytes() - before
    assert total == n * 3000
    assert index > 50_000
    unbounded = n * index
    assert grown < 160 * 2**20 < unbounded, (grown, unbounded)


def test_stopped_collector_stays_stopped(lua):
    f = lua.eval(
        """function(s)
            local qjson = require("qjson")
            collectgarbage("collect")
            collectgarbage("stop")
            for i = 1, 100 do qjson.parse(s) end
            local running = collectgarbage("isrunning")
            collectgarbage("restart")
            return running, collectgarbage("isrunning")
        end"""
    )
    assert f(DENSE) == (False, True)


def test_handles_outlive_their_variables(lua):
    # Cursors, proxies and their children hold the handle: after the
    # variables naming the document are gone and full collections (and the
    # pacing's own cycles) have run, every read is still right.
    f = lua.eval(
        """function(s)
            local qjson = require("qjson")
            local c = qjson.parse(s):open("[2].b")
            local p = qjson.decode(s)[3].a
            local q = qjson.decode(s)
            local items = {}
            for i = 1, 5 do items[i] = q[i] end
            q = nil
            for i = 1, 300 do qjson.parse(s) end
            for i = 1, 3 do collectgarbage("collect") end
            local out = {c:get_bool("d"), p[3], qjson.encode(p)}
            for i = 1, 5 do out[#out + 1] = items[i].id end
            return unpack(out)
        end"""
    )
    assert f(DENSE) == (True, 3, b"[1,2,3]", 0, 1, 2, 3, 4)


@needs_proc
@pytest.mark.parametrize(
    "ops",
    [
        # A replace in an untouched object, then a failing op: the undo of
        # the replace dropped the edit state it had made, which the document
        # owns until it is freed (one state per failed patch).
        '[{"op": "replace", "path": "/meta/a", "value": 5},'
        ' {"op": "test", "path": "/z", "value": 2}]',
        '[{"op": "add", "path": "/list/0", "value": 5}, {"op": "remove", "path": "/zz"}]',
        '[{"op": "remove", "path": "/meta/b"}, {"op": "add", "path": "/meta/b/c", "value": 1}]',
    ],
)
def test_failed_patches_keep_no_edit_state_each(lua, ops):
    f = lua.eval(
        """function(s, n, ops)
            local qjson = require("qjson")
            local t = qjson.decode(s)
            local states = {}
            for i = 1, n do
                assert(not pcall(qjson.patch, t, ops))
                if i <= 3 then
                    states[i] = tostring(getmetatable(t.meta).e) .. "/"
                        .. tostring(getmetatable(t.list).e)
                end
            end
            collectgarbage(); collectgarbage()
            return states[1], states[2], states[3], qjson.encode(t)
        end"""
    )
    doc = b'{"meta": {"a": 1, "b": 2}, "list": [1, 2], "z": 1}'
    f(doc, 1000, ops.encode())  # warm up: the state's own tables, the allocator
    before = rss_bytes()
    s1, s2, s3, out = f(doc, 100_000, ops.encode())
    grown = rss_bytes() - before
    # The state made by the first failure is the one every later one reuses.
    assert s1 == s2 == s3
    assert s1 != b"false/false", s1
    assert out == doc
    # One state per failure was about 800 bytes each: 80 MB here.
    assert grown < 16 * 2**20, grown


@needs_proc
def test_a_sweep_inside_adopt_loses_no_handle(lua):
    # A collection cycle may end inside `adopt` (the handle's address is
    # taken with ffi.cast, which can step the collector), and its finaliser
    # sweeps at once when 4 MB of index memory or more were made since the
    # last sweep. The new handle's slot must not be half-registered then:
    # a sweep that saw it empty compacted the registry below it, the handle
    # was registered above the registry's end, and once later documents
    # took that slot its index (~4.5 MB here) was never freed.
    f = lua.eval(
        """function(big, rounds)
            local qjson = require("qjson")
            local ffi = require("ffi")
            local cast, intptr_t = ffi.cast, ffi.typeof("intptr_t")
            local armed = false
            ffi.cast = function(ct, v)
                if armed and ct == intptr_t then -- adopt's cast of the address
                    -- (Else this test would test nothing.)
                    assert(debug.getinfo(2, "n").name == "adopt", "not adopt's cast")
                    armed = false
                    collectgarbage("collect") -- the cycle ends in the cast
                    collectgarbage("stop") -- (a full collection restarts it)
                end
                return cast(ct, v)
            end
            -- (Stopped: adopt's pacing steps no cycle that would sweep first.)
            collectgarbage("stop")
            local ok, err = pcall(function()
                for i = 1, rounds do
                    -- More documents each round than the last one's slots.
                    local small = {}
                    for j = 1, 3 * i do small[j] = qjson.parse("[1]") end
                    small = nil
                    -- Over 4 MB of index memory made: the next cycle's end
                    -- sweeps at once.
                    local a = qjson.parse(big)
                    a = nil
                    armed = true
                    local b = qjson.parse(big)
                    assert(not armed and b:len() > 0)
                    b = nil
                end
            end)
            ffi.cast = cast
            collectgarbage("restart")
            assert(ok, err)
            for i = 1, 3 do collectgarbage("collect") end
            local c = qjson.parse("[1]") -- the sweep that collection asked for
            return tonumber(qjson.lib.qjson_memory(qjson.parse(big)._h))
        end"""
    )
    big = b"[" + b",".join(b'{"id":%d,"a":[1,2],"b":{"c":null}}' % i for i in range(42_000)) + b"]"
    index = f(big, 2)  # warm up: the state's tables, the allocator
    assert index > 4 * 2**20, index
    before = rss_bytes()
    f(big, 20)
    grown = rss_bytes() - before
    # Leaking one index a round: 20 x ~4.5 MB.
    assert grown < 40 * 2**20, (grown, index)
