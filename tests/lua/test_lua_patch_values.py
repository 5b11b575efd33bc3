"""Values put by qjson.patch and qjson.merge_patch again and again
(qjson.lua's value records, RAW): a gateway applies one patch to every
request. From the second time a flat Lua value table is put by a patch, the
document holds a record of it (a copy and its encoded text) instead of a
copy of its own; an object member that a merge patch text adds is put as
the plan's record (the member's bytes) instead of a fresh proxy. These
tests apply the same patches several times (a patch's first application
makes no record, the second makes one, the later ones reuse it) and check
that a record is invisible: the encoded bytes, values read back (values of
their own: plain tables with exact doubles, fresh proxies), values changed
between patches, values put into plain tables or as the root, values that
are not flat, and failing patches."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("lupa", reason="lupa is not installed (pip install 'qjson[lua]')")
import qjson.luajit  # noqa: E402

DOC = b'{"model": "gpt-4o", "stream": true, "messages": [{"role": "user", "content": "hi"}]}'
ROUNDS = 4  # the first puts a copy, the second makes the record, the rest reuse it


@pytest.fixture(scope="module")
def lua() -> Any:
    return qjson.luajit.runtime(lua_modules=True)


def test_values_put_again_encode_and_read_back(lua: Any) -> None:
    """Each round: the same bytes; the value read back is a plain table, the
    same one on each read, whose change shows in that document only."""
    f = lua.eval(
        """function(s, rounds)
            local qjson = require("qjson")
            local V = {role = "system", content = "Be brief."}
            local A = {"x", 1.5, true, qjson.null}
            local P = {{op = "replace", path = "/model", value = V},
                       {op = "add", path = "/messages/0", value = V},
                       {op = "add", path = "/a", value = A}}
            local out = {}
            for i = 1, rounds do
                local t = qjson.patch(qjson.decode(s), P)
                out[#out + 1] = qjson.encode(t)
                local r, a = t.messages[1], t.a
                assert(getmetatable(r) == nil and getmetatable(a) == nil)
                assert(r == t.messages[1] and a == t.a)
                assert(r ~= V and a ~= A and r ~= t.model)
                assert(r.role == "system" and r.content == "Be brief." and #a == 4)
                assert(a[1] == "x" and a[2] == 1.5 and a[3] == true and a[4] == qjson.null)
                r.role, a[1] = "changed", "y"
                out[#out + 1] = qjson.encode(t)
            end
            return out
        end"""
    )
    out = list(f(DOC, ROUNDS).values())
    v = {"role": "system", "content": "Be brief."}
    first = {"model": v, "stream": True, "messages": [v, {"role": "user", "content": "hi"}]}
    first["a"] = ["x", 1.5, True, None]
    changed = json.loads(json.dumps(first))
    changed["messages"][0]["role"] = "changed"
    changed["a"][0] = "y"
    for i in range(ROUNDS):
        assert json.loads(out[2 * i]) == first, i
        assert json.loads(out[2 * i + 1]) == changed, i
    # One key order for the value in every round (the bytes written for it
    # do not depend on which round made them).
    assert len({o for o in out[::2]}) == 1


def test_values_changed_between_patches(lua: Any) -> None:
    """A value table changed between two patches: each document gets the
    value as it was when its patch ran (a member changed, added, removed;
    0 and -0, which compare equal)."""
    f = lua.eval(
        """function(s)
            local qjson = require("qjson")
            local V = {role = "system", n = 1}
            local P = {{op = "add", path = "/v", value = V}}
            local function put()
                return qjson.encode(qjson.patch(qjson.decode(s), P))
            end
            local out = {put(), put(), put()}
            V.n = 2
            out[#out + 1] = put()
            V.extra = "e"
            out[#out + 1] = put()
            out[#out + 1] = put()
            V.extra = nil
            V.role = nil
            out[#out + 1] = put()
            V.n = 0
            out[#out + 1] = put()
            out[#out + 1] = put()
            V.n = -0.0
            out[#out + 1] = put()
            V.n = {1}  -- not flat any more
            out[#out + 1] = put()
            V.n = 3    -- flat again
            out[#out + 1] = put()
            out[#out + 1] = put()
            return out
        end"""
    )
    out = [json.loads(o)["v"] for o in f(DOC).values()]
    assert out == [
        {"role": "system", "n": 1},
        {"role": "system", "n": 1},
        {"role": "system", "n": 1},
        {"role": "system", "n": 2},
        {"role": "system", "n": 2, "extra": "e"},
        {"role": "system", "n": 2, "extra": "e"},
        {"n": 2},
        {"n": 0},
        {"n": 0},
        {"n": -0.0},
        {"n": [1]},
        {"n": 3},
        {"n": 3},
    ]
    # -0 is written as such (json.loads gives -0.0 == 0.0: check the text).
    texts = list(f(DOC).values())
    assert '"n":-0' in texts[9] and '"n":-0' not in texts[8]


def test_numbers_read_back_exactly(lua: Any) -> None:
    """Numbers that lua-cjson's %.14g would round are written as before (as
    lua-cjson does) but read back, and copied by later ops, as the same
    doubles: the record keeps the values, not only their text."""
    f = lua.eval(
        """function(s, rounds)
            local qjson = require("qjson")
            local V = {a = 0.1 + 0.2, b = 2 ^ 53 + 2, c = 1 / 3, d = -1e-300}
            local P = {{op = "add", path = "/v", value = V},
                       {op = "copy", from = "/v", path = "/w"},
                       {op = "test", path = "/w/a", value = 0.1 + 0.2},
                       {op = "test", path = "/v/b", value = 2 ^ 53 + 2}}
            local texts, exact = {}, true
            for i = 1, rounds do
                local t = qjson.patch(qjson.decode(s), P)
                texts[#texts + 1] = qjson.encode(t)
                for _, r in ipairs({t.v, t.w}) do
                    for k, x in pairs(V) do
                        if r[k] ~= x then
                            exact = false
                        end
                    end
                end
            end
            return exact, texts, qjson.encode(V)
        end"""
    )
    exact, texts, alone = f(DOC, ROUNDS)
    assert exact
    texts = list(texts.values())
    v = json.loads(texts[0])["v"]
    assert v == json.loads(alone)  # the digits lua-cjson writes
    assert v["a"] == 0.3 and v["c"] == 0.33333333333333
    for text in texts:
        assert json.loads(text)["v"] == v


def test_values_into_plain_tables_and_the_root(lua: Any) -> None:
    """A value put into a plain table of the document (one read back after
    an earlier patch) or made the whole document is a plain table of its
    own, never the record."""
    f = lua.eval(
        """function(s, rounds)
            local qjson = require("qjson")
            local V = {role = "system"}
            local P1 = {{op = "add", path = "/p", value = {}}}
            local P2 = {{op = "add", path = "/p/x", value = V},
                        {op = "replace", path = "/p/y", value = {k = V}},
                        {op = "replace", path = "/p/z", value = V},
                        {op = "add", path = "/q", value = V}}
            local PR = {{op = "add", path = "", value = V}}
            local P3 = {{op = "add", path = "/arr", value = {"a"}}}
            local P4 = {{op = "add", path = "/arr/0", value = V},
                        {op = "replace", path = "/arr/1", value = V}}
            local out = {}
            for i = 1, rounds do
                local t = qjson.patch(qjson.decode(s), P1)
                local _ = t.p -- read back: a plain table from here on
                t.p.y, t.p.z = 0, 0
                qjson.patch(t, P2)
                assert(getmetatable(t.p.x) == nil and getmetatable(t.p.y.k) == nil)
                assert(getmetatable(t.p.z) == nil and t.p.z.role == "system")
                assert(t.p.x ~= V and t.p.x.role == "system" and t.p.x ~= t.q)
                t.p.x.role = "changed"
                out[#out + 1] = qjson.encode(t)
                local r = qjson.patch(qjson.decode(s), PR)
                assert(getmetatable(r) == nil and r ~= V and r.role == "system")
                out[#out + 1] = qjson.encode(r)
                t = qjson.patch(qjson.decode(s), P3)
                local _ = t.arr
                qjson.patch(t, P4)
                assert(getmetatable(t.arr[1]) == nil and getmetatable(t.arr[2]) == nil)
                assert(t.arr[1] ~= t.arr[2] and t.arr[1].role == "system")
                out[#out + 1] = qjson.encode(t)
            end
            return out
        end"""
    )
    out = list(f(DOC, ROUNDS).values())
    base = json.loads(DOC)
    for i in range(ROUNDS):
        a, root, arr = (json.loads(x) for x in out[3 * i : 3 * i + 3])
        assert a == {
            **base,
            "p": {
                "x": {"role": "changed"},
                "y": {"k": {"role": "system"}},
                "z": {"role": "system"},
            },
            "q": {"role": "system"},
        }, i
        assert root == {"role": "system"}
        assert arr == {**base, "arr": [{"role": "system"}, {"role": "system"}]}


def test_values_that_are_not_flat(lua: Any) -> None:
    """Tables holding tables (plain or proxies), sparse or mixed tables and
    empty ones are copied as before, each round."""
    f = lua.eval(
        """function(s, rounds)
            local qjson = require("qjson")
            local src = qjson.decode('{"m": {"k": [1, 2]}, "e": []}')
            local held = src.m
            local P = {{op = "add", path = "/a", value = {p = held, s = "x"}},
                       {op = "add", path = "/b", value = {inner = {z = 1}}},
                       {op = "add", path = "/c", value = {}},
                       {op = "add", path = "/d", value = setmetatable({}, qjson.empty_array_mt)},
                       {op = "add", path = "/e", value = {[1] = "a", [2] = "b"}},
                       {op = "add", path = "/f", value = {"a", k = "b"}}}
            local out = {}
            for i = 1, rounds do
                local t = qjson.patch(qjson.decode(s), P)
                out[#out + 1] = qjson.encode(t)
                assert(qjson.is_proxy(t.a.p) and t.a.p ~= held)
                t.a.p.k[3] = i
                out[#out + 1] = qjson.encode(t)
            end
            held.k = "changed"  -- the source's edit: not in the documents made
            local t = qjson.patch(qjson.decode(s), P)
            out[#out + 1] = qjson.encode(t)
            return out
        end"""
    )
    out = list(f(DOC, ROUNDS).values())
    base = json.loads(DOC)
    want = {
        **base,
        "a": {"p": {"k": [1, 2]}, "s": "x"},
        "b": {"inner": {"z": 1}},
        "c": {},
        "d": [],
        "e": ["a", "b"],
        "f": {"1": "a", "k": "b"},
    }
    for i in range(ROUNDS):
        assert json.loads(out[2 * i]) == want, i
        edited = json.loads(json.dumps(want))
        edited["a"]["p"]["k"].append(i + 1)
        assert json.loads(out[2 * i + 1]) == edited, i
    last = json.loads(json.dumps(want))
    last["a"]["p"]["k"] = "changed"
    assert json.loads(out[-1]) == last


def test_values_with_metatables(lua: Any) -> None:
    """A value table with a metatable of the user's (the patch then runs
    under pcall) is copied without it, as before, each round; one marked
    with qjson.empty_array_mt keeps the mark."""
    f = lua.eval(
        """function(s, rounds)
            local qjson = require("qjson")
            local V = setmetatable({role = "system"}, {__tostring = function() return "V" end})
            local A = setmetatable({"a", "b"}, qjson.empty_array_mt)
            local P = {{op = "add", path = "/v", value = V}, {op = "add", path = "/a", value = A}}
            local out = {}
            for i = 1, rounds do
                local t = qjson.patch(qjson.decode(s), P)
                out[#out + 1] = qjson.encode(t)
                assert(getmetatable(t.v) == nil and t.v.role == "system")
                assert(getmetatable(t.a) == qjson.empty_array_mt and t.a ~= A and t.a[2] == "b")
            end
            return out
        end"""
    )
    out = list(f(DOC, ROUNDS).values())
    want = {**json.loads(DOC), "v": {"role": "system"}, "a": ["a", "b"]}
    for i in range(ROUNDS):
        assert json.loads(out[i]) == want, i


def test_failed_patches_with_values_put(lua: Any) -> None:
    """A patch that fails after putting values (records among them) leaves
    the target as it was; the values put by the failing patch are not
    there, and the next patch puts them again."""
    f = lua.eval(
        """function(s, rounds)
            local qjson = require("qjson")
            local V = {role = "system", content = "x"}
            local GOOD = {{op = "add", path = "/messages/0", value = V},
                          {op = "add", path = "/v", value = V}}
            local BAD = {{op = "add", path = "/messages/0", value = V},
                         {op = "replace", path = "/model", value = V},
                         {op = "add", path = "/v", value = V},
                         {op = "test", path = "/stream", value = false}}
            local out = {}
            for i = 1, rounds do
                local t = qjson.decode(s)
                qjson.patch(t, GOOD)
                local before = qjson.encode(t)
                local ok, err = pcall(qjson.patch, t, BAD)
                assert(not ok and getmetatable(err) == qjson.PatchError and err.op_index == 3)
                out[#out + 1] = tostring(before == qjson.encode(t))
                out[#out + 1] = qjson.encode(t)
                assert(t.model == "gpt-4o" and t.messages[3] == nil)
                t.messages[1].content = "read back " .. i
                out[#out + 1] = qjson.encode(t)
            end
            return out
        end"""
    )
    out = list(f(DOC, ROUNDS).values())
    base = json.loads(DOC)
    v = {"role": "system", "content": "x"}
    good = {**base, "messages": [v, *base["messages"]], "v": v}
    for i in range(ROUNDS):
        assert out[3 * i] == "true", i
        assert json.loads(out[3 * i + 1]) == good, i
        edited = json.loads(json.dumps(good))
        edited["messages"][0]["content"] = f"read back {i + 1}"
        assert json.loads(out[3 * i + 2]) == edited, i


MERGE = '{"m": {"k": [1, 2.50]}, "n": {"a": 1, "b": null}, "temperature": 0.2, "stream": null}'


def test_merge_members_put_again(lua: Any) -> None:
    """Object members a merge patch text adds: each round the same bytes
    (the member's own text, as written in the patch); read back, a proxy of
    that document's own, whose edits stay in that document."""
    f = lua.eval(
        """function(s, mp, rounds)
            local qjson = require("qjson")
            local out = {}
            for i = 1, rounds do
                local t = qjson.merge_patch(qjson.decode(s), mp)
                out[#out + 1] = qjson.encode(t)
                local m, n = t.m, t.n
                assert(qjson.is_proxy(m) and qjson.is_proxy(n) and m == t.m and n == t.n)
                assert(m.k[2] == 2.5 and n.a == 1 and n.b == nil)
                m.k[3] = i
                n.c = "c" .. i
                out[#out + 1] = qjson.encode(t)
            end
            return out
        end"""
    )
    out = list(f(DOC, MERGE, ROUNDS).values())
    base = json.loads(DOC)
    del base["stream"]
    want = {**base, "m": {"k": [1, 2.5]}, "n": {"a": 1}, "temperature": 0.2}
    for i in range(ROUNDS):
        assert out[2 * i] == out[0], i
        assert '"m":{"k": [1, 2.50]}' in out[2 * i]  # the patch's own bytes
        assert json.loads(out[2 * i]) == want, i
        edited = json.loads(json.dumps(want))
        edited["m"]["k"].append(i + 1)
        edited["n"]["c"] = f"c{i + 1}"
        assert json.loads(out[2 * i + 1]) == edited, i


def test_merge_members_into_plain_tables_and_non_objects(lua: Any) -> None:
    """A member merged into a plain table of the document, and a merge
    patch applied to a target that is not an object: fresh proxies, never
    the record."""
    f = lua.eval(
        """function(s, mp, rounds)
            local qjson = require("qjson")
            local out = {}
            for i = 1, rounds do
                local t = qjson.decode(s)
                t.p = {}
                qjson.merge_patch(t, '{"p": ' .. mp .. '}')
                assert(qjson.is_proxy(t.p.m) and qjson.is_proxy(t.p.n))
                t.p.m.k[1] = i
                out[#out + 1] = qjson.encode(t)
                local r = qjson.merge_patch(qjson.decode("[1]"), '{"p": ' .. mp .. '}')
                assert(qjson.is_proxy(r) and qjson.is_proxy(r.p.m))
                r.p.m.z = i
                out[#out + 1] = qjson.encode(r)
            end
            return out
        end"""
    )
    out = list(f(DOC, MERGE, ROUNDS).values())
    p = {"m": {"k": [1, 2.5]}, "n": {"a": 1}, "temperature": 0.2}
    for i in range(ROUNDS):
        got = json.loads(out[2 * i])
        assert got["p"] == {**p, "m": {"k": [i + 1, 2.5]}}, i
        assert json.loads(out[2 * i + 1]) == {"p": {**p, "m": {"k": [1, 2.5], "z": i + 1}}}, i


def test_failed_merges_with_members_put(lua: Any) -> None:
    """A merge that fails (a user __newindex raising) after it put members
    leaves the target as it was; the next merge puts them again."""
    f = lua.eval(
        """function(s, mp, rounds)
            local qjson = require("qjson")
            local out = {}
            local bad = '{"m": {"k": [1, 2.50]}, "q": {"z": {"x": 1}}}'
            for i = 1, rounds do
                local t = qjson.decode(s)
                t.q = setmetatable({}, {__newindex = function() error("refused", 0) end})
                local before = qjson.encode(t)
                local ok, err = pcall(qjson.merge_patch, t, bad)
                assert(not ok and tostring(err):find("refused"))
                assert(t.m == nil and qjson.encode(t) == before)
                qjson.merge_patch(t, mp)
                t.m.k[1] = i
                out[#out + 1] = qjson.encode(t)
            end
            return out
        end"""
    )
    out = list(f(DOC, MERGE, ROUNDS).values())
    base = json.loads(DOC)
    del base["stream"]
    for i in range(ROUNDS):
        want = {**base, "q": {}, "m": {"k": [i + 1, 2.5]}, "n": {"a": 1}, "temperature": 0.2}
        assert json.loads(out[i]) == want, i


def test_a_read_keeps_the_encoded_member_order(lua: Any) -> None:
    """Reading a value put as a record gives a table of its own in the
    record's place; encode then walks that table, which must iterate as the
    record's copy did: the same bytes before and after the read (the
    review's probe: tables of 6-13 keys, where a copy filled in another
    order iterates differently)."""
    f = lua.eval(
        """function(s)
            local qjson = require("qjson")
            local changed, total = 0, 0
            for trial = 1, 300 do
                local V = {}
                for i = 1, 5 + trial % 9 do
                    V["k" .. ((i * 7 + trial * 13) % 97)] = i
                end
                local P = {{op = "add", path = "/v", value = V}}
                for _ = 1, 3 do
                    local t = qjson.patch(qjson.decode(s), P)
                    local before = qjson.encode(t)
                    local _ = t.v
                    if qjson.encode(t) ~= before then
                        changed = changed + 1
                    end
                    total = total + 1
                end
            end
            return changed, total
        end"""
    )
    changed, total = f(b'{"a": 1}')
    assert (changed, total) == (0, 900)
