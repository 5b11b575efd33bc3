"""Array children of a proxy edited in Lua (qjson.lua's new_proxy: a child
array's state starts with every field of an edited one, so its first edit
does not grow the state): JSON Patches and direct edits that change arrays
inside objects and arrays, patches that fail part-way (the journal undoes
the arrays' edits), values read back after them. Each result is compared
byte for byte with Python's (qjson.patch / qjson.dumps over views) for the
same edits, and clean arrays keep their original bytes (whitespace)."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("lupa", reason="lupa is not installed (pip install 'qjson[lua]')")
import qjson  # noqa: E402
import qjson.luajit  # noqa: E402

DOC = (
    b'{"a": [ 1 , [2, 3], {"k": [ 4 ]} ],\n "b": {"c": [ 5 ,\n 6 ], "e": []},'
    b' "d": "x", "m": [{"r": "u", "t": "hi"}, {"r": "a", "t": [7, 8]}]}'
)

# Patches whose ops edit array children at several depths (inserts, removals,
# replacements, `-`, moves between arrays), each applied to a fresh document.
PATCHES = [
    [{"op": "add", "path": "/a/1/0", "value": 9}],
    [{"op": "remove", "path": "/b/c/1"}],
    [
        {"op": "replace", "path": "/d", "value": "y"},
        {"op": "remove", "path": "/b/c/0"},
        {"op": "add", "path": "/m/0", "value": {"r": "s"}},
    ],
    [
        {"op": "add", "path": "/a/2/k/-", "value": [1]},
        {"op": "replace", "path": "/m/1/t/1", "value": "z"},
        {"op": "add", "path": "/b/e/0", "value": None},
    ],
    [
        {"op": "move", "from": "/a/1/1", "path": "/b/c/0"},
        {"op": "copy", "from": "/m/1/t", "path": "/a/0"},
        {"op": "remove", "path": "/m/1"},
    ],
    [{"op": "remove", "path": "/a/1/0"}, {"op": "remove", "path": "/a/1/0"}],
]


@pytest.fixture(scope="module")
def lua() -> Any:
    return qjson.luajit.runtime(lua_modules=True)


def as_bytes(x: Any) -> bytes:
    return x.encode() if isinstance(x, str) else bytes(x)


def python_patch(ops: Any) -> bytes:
    """Python's bytes for `ops` (a list, or JSON text: its values keep their
    text, as Lua's text patches do)."""
    return qjson.dumps(qjson.patch(qjson.decode(DOC), ops))


@pytest.mark.parametrize("i", range(len(PATCHES)))
def test_patches_of_array_children_equal_python(lua: Any, i: int) -> None:
    """The same patch, as Lua tables and as JSON text, three times each (a
    fresh document each time): Python's bytes every time."""
    ops = PATCHES[i]
    f = lua.eval(
        """function(s, text)
            local qjson = require("qjson")
            local ops = qjson.materialize(qjson.decode(text))
            local out = {}
            for round = 1, 3 do
                out[#out + 1] = qjson.encode(qjson.patch(qjson.decode(s), ops))
                out[#out + 1] = qjson.encode(qjson.patch(qjson.decode(s), text))
            end
            return out
        end"""
    )
    text = json.dumps(ops)
    want = [python_patch(ops), python_patch(text.encode())]
    got = [as_bytes(x) for x in f(DOC, text).values()]
    assert got == want * 3


def test_failing_patch_undoes_array_children(lua: Any) -> None:
    """A patch whose last op fails after edits of array children leaves the
    document as it was: the original bytes, the arrays' lengths and elements
    read back as before; a later patch of the same arrays then gives
    Python's bytes, and its values read back."""
    f = lua.eval(
        """function(s)
            local qjson = require("qjson")
            local t = qjson.decode(s)
            -- Read the arrays first (their proxies are cached and held).
            local a1, c, mt = t.a[2], t.b.c, t.m[2].t
            local bad = {{op = "add", path = "/a/1/0", value = 9},
                         {op = "remove", path = "/b/c/0"},
                         {op = "replace", path = "/m/1/t/0", value = "z"},
                         {op = "add", path = "/a/1/9", value = 1}}
            local ok, err = pcall(qjson.patch, t, bad)
            assert(not ok and err.op_index == 3, tostring(err))
            local before = qjson.encode(t)
            local lens = {qjson.len(a1), qjson.len(c), qjson.len(mt), a1[1], c[1], mt[1]}
            local good = {{op = "add", path = "/a/1/0", value = 9},
                          {op = "remove", path = "/b/c/0"},
                          {op = "replace", path = "/m/1/t/0", value = "z"}}
            qjson.patch(t, good)
            local after = qjson.encode(t)
            local back = {qjson.len(a1), a1[1], a1[2], qjson.len(c), c[1], mt[1], mt[2],
                          qjson.len(t.a[2]), t.m[2].t[1]}
            return before, lens, after, back
        end"""
    )
    before, lens, after, back = f(DOC)
    assert as_bytes(before) == DOC
    assert list(lens.values()) == [2, 2, 2, 2, 5, 7]
    good = [
        {"op": "add", "path": "/a/1/0", "value": 9},
        {"op": "remove", "path": "/b/c/0"},
        {"op": "replace", "path": "/m/1/t/0", "value": "z"},
    ]
    assert as_bytes(after) == python_patch(good)
    assert list(back.values()) == [3, 9, 2, 1, 6, "z", 8, 3, "z"]


def test_direct_edits_of_nested_arrays(lua: Any) -> None:
    """Arrays edited through the proxies (insert, remove, set, append) at two
    depths, an array only read in between: Python's bytes for the same edits
    on views; an array whose only edit a failing patch undid is written as
    its original bytes."""
    f = lua.eval(
        """function(s)
            local qjson = require("qjson")
            local t = qjson.decode(s)
            local _ = t.b.c[2] -- read, not edited
            qjson.insert(t.a, 1, "first")
            local inner = t.a[3]
            inner[1] = 20
            qjson.append(inner, 30)
            qjson.remove(t.m[2].t, 1)
            local ok = pcall(qjson.patch, t, {{op = "add", path = "/b/c/0", value = 0},
                                              {op = "test", path = "/d", value = "no"}})
            assert(not ok)
            return qjson.encode(t), qjson.len(inner), inner[3], t.m[2].t[1]
        end"""
    )
    out, n, last, first = f(DOC)
    v = qjson.decode(DOC)
    v["a"].insert(0, "first")
    v["a"][2][0] = 20
    v["a"][2].append(30)
    del v["m"][1]["t"][0]
    assert as_bytes(out) == qjson.dumps(v)
    assert b'"c": [ 5 ,\n 6 ]' in as_bytes(out)
    assert (n, last, first) == (3, 30, 8)


def test_child_array_edit_written_at_every_encode_count() -> None:
    """Every encode of a fresh document whose child array was edited writes
    the edit, whatever the runtime's encode counter (`era`) has reached: a
    child array state starting with a numeric era or writing field N (for
    any N up to the rounds) would drop the edit on the N-th encode. A runtime
    of its own, so the count does not depend on the other tests' order."""
    rt = qjson.luajit.runtime(lua_modules=True)
    f = rt.eval(
        """function(s, rounds)
            local qjson = require("qjson")
            for r = 1, rounds do
                local t = qjson.decode(s)
                t.a[2] = r
                local out = qjson.encode(t)
                if out ~= '{"a": [1,' .. r .. ']}' then return r end
            end
            return 0
        end"""
    )
    assert f(b'{"a": [1,2]}', 300) == 0
