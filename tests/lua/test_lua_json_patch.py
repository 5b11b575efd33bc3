"""qjson.patch / merge_patch / incr / mul in Lua (qjson.lua over proxies, run
through lupa): the JSON Patch conformance suite, RFC 7396's Appendix A,
atomicity (a failing patch leaves qjson.encode's output byte-identical and
held proxies unchanged) and the number operations.

The conformance and property tests compare results by JSON value (Lua has
only doubles); the merge patch tests near the end compare bytes with
Python's result for the same edits, and pin where Lua cannot match."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from patch_cases import RFC7396_APPENDIX_A, ROOTS, patches, suite_params

pytest.importorskip("lupa", reason="lupa is not installed (pip install 'qjson[lua]')")
import qjson.luajit  # noqa: E402


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value (Lua has only doubles), bool is not a
    number, members in any order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or (isinstance(a, float) and math.isclose(a, b, rel_tol=1e-15))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


@pytest.fixture(scope="module")
def lua() -> Any:
    return qjson.luajit.runtime(lua_modules=True)


@pytest.fixture(scope="module")
def patch(lua: Any) -> Any:
    """(doc text, patch text) -> (ok, encoded result or message, op_index,
    encode of the target afterwards)."""
    return lua.eval(
        """function(s, p)
            local qjson = require("qjson")
            local t = qjson.decode(s)
            local ok, r = pcall(qjson.patch, t, p)
            if not ok then
                local idx = type(r) == "table" and getmetatable(r) == qjson.PatchError
                    and r.op_index or nil
                return false, tostring(r), idx, qjson.encode(t)
            end
            return true, qjson.encode(r), nil, qjson.encode(t)
        end"""
    )


@pytest.mark.parametrize(
    ("doc", "ops", "expected"),
    [
        # A number moved inside an object, then the edited object copied:
        # the copy must keep the double (its text was written with %.14g,
        # 1e+15, before compacting; found by test_against_jsonpatch).
        (
            {"a": [], "b": {"a": None, "b": 1000000000000001.0}},
            [
                {"op": "move", "from": "/b/b", "path": "/b/new"},
                {"op": "remove", "path": "/b/a"},
                {"op": "copy", "from": "/b", "path": "/a"},
                {"op": "test", "path": "/a", "value": {"new": 1000000000000001.0}},
                {"op": "test", "path": "/a/new", "value": 1000000000000001},
            ],
            # /b/new is a Lua number: qjson.encode writes it as lua-cjson
            # does (%.14g); the copy at /a kept its double.
            {"a": {"new": 1000000000000001.0}, "b": {"new": 1e15}},
        ),
        # An edited array copied out of its proxy is a plain table: emptied,
        # it must still be an array (found by test_against_jsonpatch).
        (
            {},
            [
                {"op": "add", "path": "/new", "value": [None]},
                {"op": "move", "from": "/new/0", "path": "/a"},
                {"op": "copy", "from": "/new", "path": "/new"},
                {"op": "move", "from": "/new", "path": "/a"},
                {"op": "add", "path": "/a/0", "value": None},
            ],
            {"a": [None]},
        ),
        # A plain array emptied by remove stays an array.
        (
            {"a": []},
            [
                {"op": "add", "path": "/a/-", "value": {"x": [1]}},
                {"op": "remove", "path": "/a/0/x/0"},
                {"op": "copy", "from": "/a/0/x", "path": "/b"},
                {"op": "add", "path": "/b/0", "value": 2},
            ],
            {"a": [{"x": []}], "b": [2]},
        ),
    ],
)
def test_emptied_arrays_stay_arrays(patch: Any, doc: Any, ops: Any, expected: Any) -> None:
    ok, out, _, _ = patch(json.dumps(doc).encode(), json.dumps(ops).encode())
    assert ok, out
    assert json.loads(out) == expected


@pytest.mark.parametrize(
    ("doc", "value"),
    [({"a": {}}, []), ({"a": []}, {}), ({"a": {}}, {}), ({"a": []}, [])],
)
def test_empty_object_is_not_empty_array(patch: Any, doc: Any, value: Any) -> None:
    """`test` of an empty container against the other kind fails, as in
    Python and RFC 6902: only a plain Lua `{}` (a patch built as Lua tables)
    stands for either (found by review: a document's `{}` passed for `[]`)."""
    ops = [{"op": "test", "path": "/a", "value": value}]
    ok, _, _, _ = patch(json.dumps(doc).encode(), json.dumps(ops).encode())
    try:
        qjson.patch(qjson.decode(json.dumps(doc)), json.dumps(ops))
        py_ok = True
    except qjson.PatchError:
        py_ok = False
    assert ok == py_ok == (type(doc["a"]) is type(value))


def test_empty_array_mt(lua: Any) -> None:
    f = lua.eval(
        """function()
            local qjson = require("qjson")
            local e = setmetatable({}, qjson.empty_array_mt)
            local m = qjson.materialize(qjson.decode('{"a": [], "b": {}}'))
            return qjson.encode({x = e}), qjson.encode(m.a), qjson.encode(m.b)
        end"""
    )
    assert tuple(f()) == ('{"x":[]}', "[]", "{}")


@pytest.mark.parametrize("record", suite_params())
def test_conformance(patch: Any, record: dict) -> None:
    src = json.dumps(record["doc"], indent=1).encode()
    ops = json.dumps(record["patch"]).encode()
    ok, out, op_index, after = patch(src, ops)
    if "error" in record:
        assert not ok, out
        assert op_index is not None and 0 <= op_index < len(record["patch"]), out
        assert after.encode() == src if isinstance(after, str) else after == src
        return
    assert ok, out
    if "expected" in record:
        assert json_equal(json.loads(out), record["expected"])


def test_patch_as_lua_tables(lua: Any) -> None:
    f = lua.eval(
        """function(s)
            local qjson = require("qjson")
            local t = qjson.decode(s)
            qjson.patch(t, {
                {op = "replace", path = "/model", value = "gpt-4o-mini"},
                {op = "remove", path = "/stream"},
                {op = "add", path = "/messages/0",
                 value = {role = "system", content = "Be brief."}},
                {op = "add", path = "/n", value = qjson.null},
            })
            return qjson.encode(t)
        end"""
    )
    out = f(b'{"model": "gpt-4o", "stream": true, "messages": [{"role": "user"}]}')
    assert json.loads(out) == {
        "model": "gpt-4o-mini",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user"}],
        "n": None,
    }


def test_text_values_keep_their_bytes(patch: Any) -> None:
    ok, out, _, _ = patch(
        b'{"a": []}', b'[{"op": "add", "path": "/a/-", "value": {"x" :  [1.50, 1e2]}}]'
    )
    assert ok
    assert '{"x" :  [1.50, 1e2]}' in out


DOC = (
    b'{"model": "gpt-4o",  "stream": true, "max_tokens": 500,\n'
    b' "messages": [{"role": "system", "content": "Be brief."},\n'
    b'   {"role": "user", "content": [{"type": "text", "text": "hi"}]}],\n'
    b' "tools": {"a": {"x": 1}, "b": [1, 2.50]}}'
)

GOOD_OPS = [
    {"op": "replace", "path": "/model", "value": "gpt-4o-mini"},
    {"op": "remove", "path": "/stream"},
    {"op": "add", "path": "/messages/0", "value": {"role": "system", "content": "x"}},
    {"op": "add", "path": "/messages/2/content/-", "value": {"type": "text"}},
    {"op": "move", "from": "/tools/a", "path": "/messages/1/moved"},
    {"op": "copy", "from": "/tools/b", "path": "/tools/c"},
    {"op": "remove", "path": "/tools/b/0"},
    {"op": "replace", "path": "/messages/1/content", "value": None},
]


@pytest.mark.parametrize("fail_after", range(len(GOOD_OPS) + 1))
@pytest.mark.parametrize("pre_edit", [False, True])
def test_failed_patch_changes_nothing(lua: Any, fail_after: int, pre_edit: bool) -> None:
    f = lua.eval(
        """function(s, bad, good, pre_edit)
            local qjson = require("qjson")
            local t = qjson.decode(s)
            local held = {t.messages, t.messages[2], t.messages[2].content, t.tools, t.tools.b}
            if pre_edit then
                t.max_tokens = 7
                held[2].name = "n"
                held[5][3] = 3
            end
            local function snap()
                local out = {qjson.encode(t)}
                for i = 1, #held do out[#out + 1] = qjson.encode(held[i]) end
                return table.concat(out, "\\n")
            end
            local before = snap()
            local ok, err = pcall(qjson.patch, t, bad)
            assert(not ok and getmetatable(err) == qjson.PatchError)
            local after = snap()
            local same_views = t.messages == held[1] and t.messages[2] == held[2]
                and t.tools.b == held[5]
            qjson.patch(t, good)
            return before == after, err.op_index, same_views, qjson.encode(held[1][2].moved)
        end"""
    )
    bad = [*GOOD_OPS[:fail_after], {"op": "test", "path": "/model", "value": "nope"}]
    unchanged, op_index, same_views, moved = f(DOC, json.dumps(bad), json.dumps(GOOD_OPS), pre_edit)
    assert unchanged
    assert op_index == fail_after
    assert same_views
    assert json.loads(moved) == {"x": 1}


def test_raised_errors_undo_the_patch(lua: Any) -> None:
    """An error that is not an op failure (here the encoder's, copying an
    edited object that holds a function) still leaves the target as it
    was: patches run without pcall and such errors undo the journal
    themselves. A merge of a value nested too deeply says so, and changes
    nothing either."""
    f = lua.eval(
        """function(s)
            local qjson = require("qjson")
            local t = qjson.decode(s)
            local before = qjson.encode(t)
            t.c.f = print
            local ops = {{op = "replace", path = "/a", value = 5},
                {op = "add", path = "/b/0", value = 9}, {op = "copy", from = "/c", path = "/z"}}
            local ok, err = pcall(qjson.patch, t, ops)
            assert(not ok and getmetatable(err) ~= qjson.PatchError)
            t.c.f = nil
            local after_patch = qjson.encode(t)
            local deep = {}
            local x = deep
            for _ = 1, 3000 do x[1] = {}; x = x[1] end
            local ok2, err2 = pcall(qjson.merge_patch, t, {a = 6, z = deep})
            assert(not ok2)
            local ok3 = pcall(qjson.patch, t, {{op = "replace", path = "/a", value = 7}})
            return before, after_patch, tostring(err2), qjson.encode(t), ok3
        end"""
    )
    before, after_patch, merge_err, after, ok3 = f('{"a":1,"b":[1,2],"c":{"d":2}}')
    assert after_patch == before
    assert merge_err == "qjson.merge_patch: value nested too deeply"
    assert ok3
    assert json.loads(after) == {"a": 7, "b": [1, 2], "c": {"d": 2}}


def test_user_error_mid_patch_undoes_it(lua: Any) -> None:
    """An error raised by user code mid-patch (a __newindex of a plain
    table on the touched path), not through qjson's raise(), still leaves
    the target as it was, and reaches the caller as it was raised."""
    f = lua.eval(
        """function()
            local qjson = require("qjson")
            local guarded = setmetatable({}, {__newindex = function() error("boom", 0) end})
            local t = {a = 1, b = {1, 2}, g = guarded}
            local ops = {{op = "replace", path = "/a", value = 5},
                {op = "add", path = "/b/0", value = 9}, {op = "add", path = "/g/x", value = 1}}
            local ok, err = pcall(qjson.patch, t, ops)
            local a, nb, b1, b2, g = t.a, #t.b, t.b[1], t.b[2], next(guarded)
            local ok2 = pcall(qjson.patch, t, {{op = "replace", path = "/a", value = 7}})
            return ok, tostring(err), a, nb, b1, b2, g, ok2, t.a
        end"""
    )
    ok, err, a, nb, b1, b2, g, ok2, a2 = f()
    assert not ok
    assert err == "boom"
    assert (a, nb, b1, b2, g) == (1, 2, 1, 2, None)
    assert ok2 and a2 == 7


def test_user_code_catching_a_qjson_error_mid_patch(lua: Any) -> None:
    """A user metamethod on the patch's path that calls qjson under its own
    pcall and catches the error does not undo the patch around it: every op
    is applied, once (JSON Patch and merge patch)."""
    f = lua.eval(
        """function()
            local qjson = require("qjson")
            local inner = setmetatable({}, {__newindex = function(tb, k, v)
                pcall(qjson.decode, "{")
                rawset(tb, k, v)
            end})
            local t = {a = 1, b = inner}
            local r = qjson.patch(t, {{op = "replace", path = "/a", value = 2},
                {op = "add", path = "/b/c", value = 3}})
            local m_inner = setmetatable({}, {__newindex = function(tb, k, v)
                pcall(qjson.decode, "[")
                rawset(tb, k, v)
            end})
            local m = {x = 1, y = m_inner}
            local r2 = qjson.merge_patch(m, {x = 5, y = {z = 6}})
            return r == t, t.a, rawget(inner, "c"), r2 == m, m.x, rawget(m_inner, "z")
        end"""
    )
    assert f() == (True, 2, 3, True, 5, 6)


def test_cdata_with_user_metamethods_in_a_patch(lua: Any) -> None:
    """A cdata value may carry metamethods of the user's (an ffi metatype's
    __eq): a patch that meets one runs them under its pcall, so an error
    from one leaves the target as it was, and a patch over a harmless one
    applies."""
    f = lua.eval(
        """function()
            local qjson = require("qjson")
            local ffi = require("ffi")
            pcall(ffi.cdef, "typedef struct { int v; } qjson_test_box;")
            local Box = ffi.metatype("qjson_test_box", {__eq = function() error("eq boom", 0) end})
            local t = {a = 1, b = Box(1)}
            local ok, err = pcall(qjson.patch, t, {{op = "replace", path = "/a", value = 2},
                {op = "test", path = "/b", value = Box(1)}})
            local a1 = t.a
            local u = {a = 1, n = ffi.new("int64_t", 5)}
            local ok2 = pcall(qjson.patch, u, {{op = "replace", path = "/a", value = 2},
                {op = "remove", path = "/n"}})
            return ok, tostring(err), a1, ok2, u.a, u.n == nil
        end"""
    )
    ok, err, a1, ok2, a2, gone = f()
    assert not ok
    assert "eq boom" in err
    assert a1 == 1
    assert ok2 and a2 == 2 and gone


def test_a_patch_from_a_metamethod_of_another_is_refused(lua: Any) -> None:
    """qjson.patch and merge_patch called from a user metamethod while
    another patch is applied raise a clear error before touching anything;
    the outer patch then fails as a whole (its target unchanged) or, when
    the metamethod catches the error, completes. Afterwards both work."""
    f = lua.eval(
        """function()
            local qjson = require("qjson")
            local other = {x = 1}
            local g = setmetatable({}, {__newindex = function(tb, k, v)
                qjson.patch(other, {{op = "replace", path = "/x", value = 2}})
                rawset(tb, k, v)
            end})
            local t = {a = 1, g = g}
            local ok, err = pcall(qjson.patch, t, {{op = "replace", path = "/a", value = 5},
                {op = "add", path = "/g/k", value = 1}})
            local a1, k1, x1 = t.a, rawget(g, "k"), other.x
            local h = setmetatable({}, {__newindex = function(tb, k, v)
                local ok2, e2 = pcall(qjson.merge_patch, other, {x = 3})
                rawset(tb, k, tostring(e2))
            end})
            local u = {a = 1, h = h}
            qjson.patch(u, {{op = "replace", path = "/a", value = 6},
                {op = "add", path = "/h/k", value = 1}})
            local r = qjson.patch(other, {{op = "replace", path = "/x", value = 4}})
            return ok, tostring(err), a1, k1, x1, u.a, rawget(h, "k"), other.x, r == other
        end"""
    )
    ok, err, a1, k1, x1, ua, hk, x2, same = f()
    assert not ok
    assert "not re-entrant" in err
    assert (a1, k1, x1) == (1, None, 1)
    assert ua == 6 and "not re-entrant" in hk
    assert x2 == 4 and same


def test_a_patch_from_a_metamethod_run_by_an_undo(lua: Any) -> None:
    """A failing patch's undo restores a plain table's keys by assignment,
    so a user __newindex there runs, and may apply a patch of its own (no
    patch is being applied by then). That patch takes a journal of its own:
    the outer undo still puts back every op before the failing one, and the
    caller gets the PatchError of the op that failed. (Checked to fail when
    the two patches share one journal table: the inner close empties it
    under the outer undo.)"""
    f = lua.eval(
        """function()
            local qjson = require("qjson")
            local other = {x = 1}
            local inner = 0
            local t = qjson.decode('{"a": 1, "c": [1, 2]}')
            t.p = setmetatable({k = 1}, {__newindex = function(tb, k, v)
                rawset(tb, k, v)
                inner = inner + 1
                qjson.patch(other, {{op = "replace", path = "/x", value = inner + 1},
                    {op = "add", path = "/y", value = 0}})
            end})
            local before = qjson.encode(t)
            local ok, err = pcall(qjson.patch, t, {{op = "add", path = "/b", value = 1},
                {op = "add", path = "/c/0", value = 9},
                {op = "replace", path = "/p/k", value = 5},
                {op = "remove", path = "/nope"}})
            local idx = type(err) == "table" and getmetatable(err) == qjson.PatchError
                and err.op_index or nil
            local r = qjson.patch(t, {{op = "replace", path = "/a", value = 7}})
            return ok, idx, before == qjson.encode(t), t.b, qjson.len(t.c), rawget(t.p, "k"),
                inner > 0, other.x == inner + 1, other.y, r == t
        end"""
    )
    ok, idx, _, b, nc, k, ran, x_ok, y, same = f()
    assert not ok
    assert idx == 3
    assert (b, nc, k) == (None, 2, 1)
    assert ran and x_ok and y == 0
    assert same


def test_user_metamethods_on_the_path_run_once(lua: Any) -> None:
    """A patch whose path reaches a plain table with metamethods of the
    user's is applied once: its first run (without pcall) stops before any
    of them runs, undoes the ops before, and the patch runs again under a
    pcall; each metamethod runs as often as the ops need it."""
    f = lua.eval(
        """function()
            local qjson = require("qjson")
            local calls = {idx = 0, new = 0}
            local store = {x = 1}
            local g = setmetatable({}, {
                __index = function(_, k) calls.idx = calls.idx + 1; return store[k] end,
                __newindex = function(_, k, v) calls.new = calls.new + 1; store[k] = v end})
            local t = qjson.decode('{"a": 1, "b": [1, 2]}')
            t.g = g
            local ops = {{op = "replace", path = "/a", value = 5},
                {op = "add", path = "/b/0", value = 9},
                {op = "test", path = "/g/x", value = 1},
                {op = "replace", path = "/g/x", value = 2}}
            local r = qjson.patch(t, ops)
            return r == t, t.a, qjson.len(t.b), t.b[1], t.b[2], calls.idx, calls.new, store.x
        end"""
    )
    # test /g/x reads x once; replace /g/x checks it exists (a read), then sets it.
    assert tuple(f()) == (True, 5, 3, 9, 1, 2, 1, 2)


def test_user_metatables_in_values_and_merge(lua: Any) -> None:
    """Values with metatables of the user's are copied as plain tables are
    (by patch, after its first run stops at them, and by merge_patch, always
    under its pcall), also after a patch that failed."""
    f = lua.eval(
        """function()
            local qjson = require("qjson")
            local t = qjson.decode('{"a": 1}')
            local ok = pcall(qjson.patch, t, {{op = "remove", path = "/nope"}})
            assert(not ok)
            local v = setmetatable({k = 1}, {__index = function() return "meta" end})
            qjson.patch(t, {{op = "add", path = "/p", value = v}})
            qjson.merge_patch(t, {m = v})
            return qjson.encode(t)
        end"""
    )
    assert json.loads(f()) == {"a": 1, "p": {"k": 1}, "m": {"k": 1}}


def test_edits_after_a_failed_patch(lua: Any) -> None:
    """Views made dirty by a failed patch are clean again, and edits made
    through them afterwards (or by a later patch) are written: the undo puts
    back the encoder's list of dirty child views too."""
    f = lua.eval(
        """function(s, bad, good)
            local qjson = require("qjson")
            local t = qjson.decode(s)
            local m2 = t.messages[2]
            local ok = pcall(qjson.patch, t, bad)
            assert(not ok)
            local same = qjson.encode(t) == s
            m2.role = "assistant"
            local one = qjson.encode(t)
            qjson.patch(t, good)
            return same, one, qjson.encode(t)
        end"""
    )
    bad = [
        {"op": "replace", "path": "/messages/1/content/0/text", "value": "x"},
        {"op": "add", "path": "/tools/a/y", "value": 2},
        {"op": "remove", "path": "/nope"},
    ]
    good = [{"op": "replace", "path": "/tools/b/0", "value": 7}]
    same, one, two = f(DOC, json.dumps(bad), json.dumps(good))
    assert same
    want = json.loads(DOC)
    want["messages"][1]["role"] = "assistant"
    assert json.loads(one) == want
    want["tools"]["b"][0] = 7
    assert json.loads(two) == want


@pytest.mark.parametrize(
    "bad",
    [
        [{"op": "replace", "path": "/nope", "value": 1}],
        [{"op": "remove", "path": "/nope"}],
        [{"op": "remove", "path": "/stream"}, {"op": "remove", "path": "/stream"}],
        [{"op": "remove", "path": "/stream"}, {"op": "replace", "path": "/stream", "value": 1}],
        [
            {"op": "add", "path": "/x", "value": 1},
            {"op": "remove", "path": "/x"},
            {"op": "replace", "path": "/x", "value": 2},
        ],
        [{"op": "replace", "path": "/messages/0/nope", "value": 1}],
        [{"op": "remove", "path": "/messages/1/nope"}],
    ],
)
@pytest.mark.parametrize("pre_edit", [False, True])
def test_missing_member_undone(lua: Any, bad: list, pre_edit: bool) -> None:
    """replace / remove of a member that is not there (never, or no longer:
    removed or added and removed earlier in the patch) fail and change
    nothing: the output is as before, also for a container whose first
    edit the failing op was, and later edits through the same proxies are
    written."""
    f = lua.eval(
        """function(s, bad, pre_edit)
            local qjson = require("qjson")
            local t = qjson.decode(s)
            local m1, m2 = t.messages[1], t.messages[2]
            if pre_edit then
                t.max_tokens = 7
                m1.role = "user"
            end
            local before = qjson.encode(t)
            local ok, err = pcall(qjson.patch, t, bad)
            assert(not ok and getmetatable(err) == qjson.PatchError, tostring(err))
            local same = qjson.encode(t) == before and t.stream == true
                and t.nope == nil and m1.nope == nil and m2.nope == nil
            m1.content = "again"
            m2.role = "assistant"
            t.stream = false
            return same, err.op_index, qjson.encode(t)
        end"""
    )
    same, op_index, after = f(DOC, json.dumps(bad), pre_edit)
    assert same
    assert op_index == len(bad) - 1
    want = json.loads(DOC)
    if pre_edit:
        want["max_tokens"] = 7
    want["messages"][0]["content"] = "again"
    want["messages"][0]["role"] = "user" if pre_edit else "system"
    want["messages"][1]["role"] = "assistant"
    want["stream"] = False
    assert json.loads(after) == want


def test_patches_in_a_row(lua: Any) -> None:
    """The tables a patch keeps between calls (its state, the set of the
    containers it saved, its journal) start empty each time: a patch that
    saves more than 32 containers and writes more than 1024 journal slots
    (both tables are then made anew), a failing one and small ones in turn
    each give their own result, and the last target is not kept alive by
    them."""
    f = lua.eval(
        """function(s, big, bad, small)
            local qjson = require("qjson")
            local out = {}
            local t = qjson.decode(s)
            out[1] = qjson.encode(qjson.patch(t, big))
            local u = qjson.decode(s)
            out[2] = select("#", pcall(qjson.patch, u, bad)) and qjson.encode(u)
            out[3] = qjson.encode(qjson.patch(qjson.decode(s), small))
            out[4] = qjson.encode(qjson.patch(u, small))
            -- The last target, once dropped, is collected.
            local w = qjson.decode(s)
            qjson.patch(w, small)
            local weak = setmetatable({w}, {__mode = "v"})
            w = nil
            collectgarbage()
            collectgarbage()
            out[5] = weak[1] == nil
            return out[1], out[2], out[3], out[4], out[5]
        end"""
    )
    doc = {"a": [{"x": i} for i in range(100)], "b": 1}
    big = [{"op": "replace", "path": f"/a/{i}/x", "value": -i} for i in range(100)]
    bad = [{"op": "replace", "path": "/b", "value": 2}, {"op": "remove", "path": "/nope"}]
    small = [{"op": "add", "path": "/c", "value": 3}]
    s = json.dumps(doc)
    one, two, three, four, collected = f(s, json.dumps(big), json.dumps(bad), json.dumps(small))
    assert json.loads(one) == {"a": [{"x": -i} for i in range(100)], "b": 1}
    assert two == s
    assert json.loads(three) == {**doc, "c": 3}
    assert json.loads(four) == {**doc, "c": 3}
    assert collected


def test_text_patches_are_reused_unchanged(lua: Any) -> None:
    """A patch text applied again (decoded once and kept) gives the same
    result, whatever was done to the values it put into earlier targets."""
    f = lua.eval(
        """function(s, mp, ops)
            local qjson = require("qjson")
            local a = qjson.merge_patch(qjson.decode(s), mp)
            a.meta.tenant = "changed"
            a.meta.extra = {1}
            local b = qjson.patch(qjson.decode(s), ops)
            b.meta.tenant = "changed too"
            return qjson.encode(qjson.merge_patch(qjson.decode(s), mp)),
                qjson.encode(qjson.patch(qjson.decode(s), ops)), qjson.encode(a)
        end"""
    )
    mp = '{"meta": {"tenant": "acme"}, "model": null}'
    ops = '[{"op": "add", "path": "/meta", "value": {"tenant": "acme"}}]'
    merged, patched, a = f('{"model": "m", "n": 1}', mp, ops)
    assert json.loads(merged) == {"n": 1, "meta": {"tenant": "acme"}}
    assert json.loads(patched) == {"model": "m", "n": 1, "meta": {"tenant": "acme"}}
    assert json.loads(a) == {"n": 1, "meta": {"tenant": "changed", "extra": [1]}}


ONE_TEXT_OPS = (
    '[{"op": "test", "path": "/a", "value": 1}, {"op": "add", "path": "/b/-", "value": {"c": [2]}},'
    ' {"op": "copy", "from": "/b", "path": "/d"}, {"op": "remove", "path": "/a"}]'
)
ONE_TEXT_TARGETS = [
    '{"a": 1, "b": []}',
    '{"a": 1, "b": [0, 1]}',
    '{"a": 2, "b": []}',  # the test fails: op 0
    '{"a": 1, "b": {}}',  # "-" in an object is a key: added
    '{"a": 1}',  # no /b: op 1
    "[1]",
]


def test_one_patch_text_on_many_targets(patch: Any) -> None:
    """A patch text is read into a plan once (its ops as plain tables): every
    later use, failing or not, gives what Python gives for the same text."""
    for _ in range(2):
        for doc in ONE_TEXT_TARGETS:
            ok, out, idx, after = patch(doc, ONE_TEXT_OPS)
            v = qjson.decode(doc.encode())
            try:
                want = qjson.dumps(qjson.patch(v, ONE_TEXT_OPS.encode()))
            except qjson.PatchError as e:
                assert not ok and idx == e.op_index, (doc, out)
                assert after.encode() == qjson.dumps(v) == doc.encode()
            else:
                assert ok and out.encode() == want, (doc, out)


def _merge_reference(target: Any, patch: Any) -> Any:
    """RFC 7396's MergePatch, as its section 2 gives it."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = _merge_reference(out.get(k), v)
    return out


def test_one_merge_text_on_many_targets(lua: Any) -> None:
    """A merge patch text is made into a plan once and applied to every
    target: members that merge into an object, replace a scalar or a missing
    member, delete (present, absent, a null member), on proxies and on plain
    tables inside them, and on a target that is not an object."""
    f = lua.eval(
        """function(s, mp, plain)
            local qjson = require("qjson")
            local t = qjson.decode(s)
            if plain then
                t.a = {keep = 1, x = 2}
            end
            return qjson.encode(qjson.merge_patch(t, mp))
        end"""
    )
    patch = {"a": {"x": None, "y": {"z": 1, "w": None}}, "b": None, "c": [1, None], "d": {"e": "f"}}
    mp = json.dumps(patch)
    targets = [
        {"a": {"x": 1, "keep": True}, "b": 2, "c": {"old": 1}, "d": 3},
        {"a": 5, "b": None, "d": {"e": 1, "g": 2}},
        {"a": {"y": {"z": 0, "w": 1, "v": 2}}, "z": [1]},
        {},
        [1, 2],
        "text",
    ]
    for _ in range(3):  # the plan made on the first call serves the next ones
        for target in targets:
            out = f(json.dumps(target), mp, False)
            assert json.loads(out) == _merge_reference(target, patch), target
        target = {"a": {"x": 1}, "b": 1}
        out = f(json.dumps(target), mp, True)
        assert json.loads(out) == _merge_reference({"a": {"keep": 1, "x": 2}, "b": 1}, patch)


@pytest.mark.parametrize(("original", "patch", "result"), RFC7396_APPENDIX_A)
def test_merge_patch_rfc7396(lua: Any, original: Any, patch: Any, result: Any) -> None:
    f = lua.eval(
        """function(s, p)
            local qjson = require("qjson")
            return qjson.encode(qjson.merge_patch(qjson.decode(s), p))
        end"""
    )
    out = f(json.dumps(original, indent=2).encode(), json.dumps(patch).encode())
    assert json_equal(json.loads(out), result)


def test_number_ops(lua: Any) -> None:
    f = lua.eval(
        """function(s)
            local qjson = require("qjson")
            local t = qjson.decode(s)
            local a = qjson.incr(t, "/n")
            local b = qjson.incr(t, "a[1]", -10)
            local c = qjson.mul(t, "/f", 3)
            local errs = {}
            for _, p in ipairs({"/s", "/b", "/z", "/o"}) do
                local ok, e = pcall(qjson.incr, t, p)
                errs[#errs + 1] = (not ok) and tostring(e):find("not a number", 1, true) ~= nil
            end
            local ok, e = pcall(qjson.incr, t, "/missing")
            errs[#errs + 1] = (not ok) and tostring(e):find("not found", 1, true) ~= nil
            return a, b, c, qjson.encode(t), table.concat({tostring(errs[1]), tostring(errs[2]),
                tostring(errs[3]), tostring(errs[4]), tostring(errs[5])}, ",")
        end"""
    )
    a, b, c, out, errs = f(
        b'{"n": 1, "a": [0, 5], "f": 0.5, "s": "1", "b": true, "z": null, "o": {}}'
    )
    assert (a, b, c) == (2, -5, 1.5)
    assert json.loads(out)["a"] == [0, -5]
    assert errs == "true,true,true,true,true"


def lua_equal(a: Any, b: Any) -> bool:
    """json_equal, within what Lua can hold: numbers are doubles written with
    %.14g (as lua-cjson writes them), and a container copied out of an
    edited proxy is a plain table, where an empty array reads as {} (see the
    README)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or math.isclose(float(a), float(b), rel_tol=1e-13)
    if a in ({}, []) and b in ({}, []):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(lua_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(lua_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


jsonpatch = pytest.importorskip("jsonpatch", reason="jsonpatch is not installed (qjson[test])")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_against_jsonpatch(patch: Any, data: Any) -> None:
    doc = data.draw(ROOTS)
    ops = data.draw(patches(doc))
    src = json.dumps(doc, indent=data.draw(st.sampled_from([None, 1]))).encode()
    expected = jsonpatch.apply_patch(json.loads(src), ops)
    bad = [*ops, {"op": "remove", "path": "/does-not-exist/x"}]
    ok, _, op_index, after = patch(src, json.dumps(bad).encode())
    assert not ok and op_index == len(ops)
    assert (after.encode() if isinstance(after, str) else after) == src
    ok, out, _, _ = patch(src, json.dumps(ops).encode())
    assert ok, out
    assert lua_equal(json.loads(out), expected)


def test_values_out_of_the_double_range_do_not_fail_a_patch(lua: Any) -> None:
    """A copy of an edited container, or a merge patch's new object, holding
    `1e400`: Python applies the patch (the value is `inf` until it is
    written), so Lua must too; the copied text keeps `1e400` as written
    (found by review: qjson_compact refused it)."""
    run = lua.eval(
        """function(s, p, merge)
            local qjson = require("qjson")
            local t = qjson.decode(s)
            t.a.y = 2
            local ok, r = pcall(merge and qjson.merge_patch or qjson.patch, t, p)
            if not ok then return false, tostring(r) end
            if merge == "all" then return true, qjson.encode(r) end
            if merge then return true, qjson.encode(r.d.g) end
            return true, qjson.encode(t)
        end"""
    )
    src = b'{"a": {"x": 1e400, "y": 1}, "b": 0}'
    copy = [{"op": "copy", "from": "/a", "path": "/c"}]
    merge = b'{"d": {"e": 1e400, "f": null, "g": {"h": 1}}}'
    v = qjson.decode(src)
    v["a"]["y"] = 2
    qjson.patch(v, copy)
    assert math.isinf(qjson.materialize(v["c"])["x"])
    qjson.merge_patch(qjson.decode(src), json.loads(merge))
    ok, out = run(src, json.dumps(copy).encode(), False)
    assert ok, out
    assert out.endswith('"c":{"x":1e400,"y":2}}')
    ok, out = run(src, merge, True)
    assert ok, out
    # Byte for byte as Python writes it for the same text patch: `g` holds
    # no null, so MergePatch({}, g) is the patch's value, its original bytes.
    v = qjson.decode(src)
    v["a"]["y"] = 2
    assert out.encode() == qjson.dumps(qjson.merge_patch(v, merge)["d"]["g"]) == b'{"h": 1}'
    # The whole result: Lua writes the new object `d` with `1e400` as it
    # stands; Python holds it as inf and refuses to write it.
    ok, out = run(src, merge, "all")
    assert ok, out
    assert out == '{"a": {"x": 1e400, "y": 2}, "b": 0,"d":{"e":1e400,"g":{"h": 1}}}'
    with pytest.raises(qjson.JSONEncodeError, match="Out of range float"):
        qjson.dumps(qjson.merge_patch(v, merge))


@pytest.fixture(scope="module")
def merge_set(lua: Any) -> Any:
    """(doc text, merge patch text, key, value) -> qjson.encode of the
    merge's result, after `value` is set at `d[key]` of the decoded patch
    (when `key` is not nil)."""
    return lua.eval(
        """function(s, p, k, x)
            local qjson = require("qjson")
            local patch = qjson.decode(p)
            if k ~= nil then patch.d[k] = x end
            return qjson.encode(qjson.merge_patch(qjson.decode(s), patch))
        end"""
    )


@pytest.mark.parametrize(
    ("patch", "key", "value"),
    [
        # A nested object with no null: its original bytes, in both.
        (b'{"d": {"f": null, "g": {"h": 1, "i": [1, 2]}}}', None, None),
        # One holding nulls: built compact, in order, at every depth.
        (b'{"d": {"f": null, "g": {"h": null, "i": {"j": null, "k": 1.0E2}}}}', None, None),
        # Keys: written as they are when printable ASCII, else as Python's
        # write_str writes them (only `"`, `\` and control bytes escaped;
        # `\/` and `\u00e9` decoded).
        (
            b'{"d": {"f": null, "k\\/y": 1, "\\u00e9": 2, "c\\u0001": 3, "q\\"": 4,'
            b' "b\\\\": 5, "": 6, "~ !#[]": 7, "\\u007f": 8, "\\ud83d\\ude00": 9}}',
            None,
            None,
        ),
        # Scalars of the patch text: their compact form.
        (b'{"d": {"f": null, "x": 1.0E2, "u": "a\\/b", "n": 12345678901234567890}}', None, None),
        # Values set on the patch in Lua: exact doubles (17 digits, then the
        # shortest form), not lua-cjson's %.14g (which wrote 0.3).
        (b'{"d": {"f": null, "x": 1}}', "x", 0.1 + 0.2),
        (b'{"d": {"f": null, "x": 1}}', "x", 1e300),
        (b'{"d": {"f": null, "x": 1}}', "x", 2.5e-8),
        (b'{"d": {"f": null, "x": 1}}', "x", 123456789012345),
        (b'{"d": {"f": null, "x": 1}}', "x", "a/b\u00e9\n"),
        (b'{"d": {"f": null, "x": 1}}', "y", True),
        (b'{"d": {"f": null, "x": 1}}', "k/y\u00e9", 1),
    ],
)
def test_merge_patch_new_objects_match_python_bytes(
    merge_set: Any, patch: bytes, key: Any, value: Any
) -> None:
    src = b'{"a": 1, "d": 2}'
    p = qjson.decode(patch)
    if key is not None:
        p["d"][key] = value
    expected = qjson.dumps(qjson.merge_patch(qjson.decode(src), p))
    out = merge_set(src, patch, key, value)
    assert (out.encode() if isinstance(out, str) else out) == expected


def test_scalars_a_patch_sets_directly_are_lua_values(merge_set: Any, patch: Any) -> None:
    """Where Lua cannot give Python's bytes: a scalar a patch puts straight
    into the target is read into a Lua value, and Lua's encoder writes it
    (lua-cjson's way: %.14g, `\\/`, no int/float distinction), where Python
    writes its own value (`100.0`, `/`, an exact big integer). Pinned so a
    change is seen; the README's Patches section says so."""
    src = b'{"a": 1}'
    text = b'{"x": 1.0E2, "u": "a\\/b", "big": 12345678901234567890, "f": 0.1}'
    assert qjson.dumps(qjson.merge_patch(qjson.decode(src), text)) == (
        b'{"a": 1,"x":100.0,"u":"a/b","big":12345678901234567890,"f":0.1}'
    )
    out = merge_set(src, text, None, None)
    assert out == '{"a": 1,"x":100,"u":"a\\/b","big":1.2345678901235e+19,"f":0.1}'
    ops = (
        b'[{"op": "add", "path": "/x", "value": 1.0E2},'
        b' {"op": "add", "path": "/u", "value": "a\\/b"}]'
    )
    v = qjson.decode(src)
    qjson.patch(v, ops)
    assert qjson.dumps(v) == b'{"a": 1,"x":100.0,"u":"a/b"}'
    ok, out, _, _ = patch(src, ops)
    assert ok, out
    assert out == '{"a": 1,"x":100,"u":"a\\/b"}'


@pytest.mark.parametrize(
    "bad",
    [
        [{"op": "replace", "path": "/model", "value": "m"}, {"op": "remove", "path": "/absent"}],
        [{"op": "remove", "path": "/stream"}, {"op": "replace", "path": "/absent", "value": 1}],
        [{"op": "add", "path": "/x", "value": 1}, {"op": "remove", "path": "/tools/a/absent"}],
    ],
)
def test_missing_member_fails_on_an_untouched_object(lua: Any, bad: list[Any]) -> None:
    """remove/replace of a missing member of an object no edit has touched
    (the edit runs first and the journal undoes it, 55e170f): PatchError at
    that op, "not found", every byte as before; the Python edge agrees; a
    merge of nulls for absent members changes no byte either."""
    f = lua.eval(
        """function(s, bad, merge)
            local qjson = require("qjson")
            local t = qjson.decode(s)
            local ok, err = pcall(qjson.patch, t, bad)
            assert(not ok and getmetatable(err) == qjson.PatchError)
            local after_patch = qjson.encode(t)
            local u = qjson.decode(s)
            qjson.merge_patch(u, merge)
            return err.op_index, tostring(err), after_patch, qjson.encode(u)
        end"""
    )
    merge = b'{"absent": null, "tools": {"a": {"gone": null}, "none": null}}'
    op_index, message, after_patch, after_merge = f(DOC, json.dumps(bad), merge)
    assert op_index == 1
    assert "not found" in message
    as_bytes = [x.encode() if isinstance(x, str) else x for x in (after_patch, after_merge)]
    assert as_bytes == [DOC, DOC]
    v = qjson.decode(DOC)
    with pytest.raises(qjson.PatchError) as e:
        qjson.patch(v, bad)
    assert e.value.op_index == 1
    assert qjson.dumps(v) == DOC
    assert qjson.dumps(qjson.merge_patch(qjson.decode(DOC), merge)) == DOC


def test_merge_of_a_value_nested_too_deeply_says_so(lua: Any) -> None:
    """A merge patch whose new value is nested deeper than encode allows
    raises a message naming the function (it was the patch walk's bare
    marker table), on every path: into an object target (undone: the
    target's bytes stay), into a non-object target, a non-object patch,
    and a patch text; a later merge still works."""
    f = lua.eval(
        """function(s)
            local qjson = require("qjson")
            local t = qjson.decode(s)
            local before = qjson.encode(t)
            local deep = {}
            local x = deep
            for _ = 1, 3000 do x[1] = {}; x = x[1] end
            local errs = {}
            local ok, e = pcall(qjson.merge_patch, t, {a = 6, z = deep})
            errs[1] = not ok and tostring(e)
            local after = qjson.encode(t)
            ok, e = pcall(qjson.merge_patch, 5, {z = deep})
            errs[2] = not ok and tostring(e)
            ok, e = pcall(qjson.merge_patch, t, deep)
            errs[3] = not ok and tostring(e)
            local text = string.rep("[", 3000) .. string.rep("]", 3000)
            ok, e = pcall(qjson.merge_patch, t, text)
            errs[4] = not ok and type(e)
            qjson.merge_patch(t, {a = 7})
            return before, after, errs[1], errs[2], errs[3], errs[4], qjson.encode(t)
        end"""
    )
    before, after, e1, e2, e3, e4, final = f('{"a":1,"b":[1,2]}')
    assert after == before
    assert e1 == e2 == e3 == "qjson.merge_patch: value nested too deeply"
    assert e4 == "string"  # the decoder's own depth error, a message too
    assert json.loads(final) == {"a": 7, "b": [1, 2]}
    # Python's merge_patch names the same function for the same values
    # (it named qjson.patch), and leaves the target as it was.
    deep: list[Any] = []
    x = deep
    for _ in range(3000):
        x.append([])
        x = x[0]
    v = qjson.decode(b'{"a":1,"b":[1,2]}')
    for target, patch in ((v, {"a": 6, "z": deep}), (5, {"z": deep}), (v, deep)):
        with pytest.raises(ValueError) as err:
            qjson.merge_patch(target, patch)
        assert str(err.value) == e1
    assert qjson.dumps(v) == b'{"a":1,"b":[1,2]}'
    with pytest.raises(ValueError, match="qjson.patch: value nested too deeply"):
        qjson.patch(qjson.decode(b"{}"), [{"op": "add", "path": "/z", "value": deep}])
