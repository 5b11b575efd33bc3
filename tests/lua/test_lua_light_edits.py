"""Light edits (qjson.lua's LIGHT): the first edit of an unedited root object
that replaces a member by a string, number or boolean is kept on the Lua
side and written by splicing the value's text into the object's bytes.
Each result is compared byte for byte with the full path's (the same edit
made through a JSON Patch, which never takes the light path) and with
Python's for the same edits; the tests also check which path was taken
(a light root's state has no `e` field), and that every other operation
after a light edit (reads, further edits, deletes, pairs, patches that
succeed or fail, merge patches, child edits, encoding inside a table) sees
the edit."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("lupa", reason="lupa is not installed (pip install 'qjson[lua]')")
import qjson  # noqa: E402
import qjson.luajit  # noqa: E402

DOCS = [
    b'{"model": "gpt-4o", "temperature": 0.7, "stream": false, "messages": [{"role": "user"}]}',
    b'  {"a" : 1 ,\n "b":[1, 2], "c": {"d": null}}\n',
    b'{"k":"v"}',
]

# (document, key, value): values as Lua literals (with their JSON for Python).
CASES = [
    (0, "model", '"gpt-4o-mini"', "gpt-4o-mini"),
    (0, "temperature", "0.25", 0.25),
    (0, "stream", "true", True),
    (0, "model", "12", 12),
    (1, "a", '"x"', "x"),
    (1, "b", "false", False),
    (1, "c", '"q\\"uote\\\\ \\n tab\\t \\1 caf\\195\\169"', 'q"uote\\ \n tab\t \x01 café'),
    (2, "k", '""', ""),
]


@pytest.fixture(scope="module")
def lua() -> Any:
    return qjson.luajit.runtime(lua_modules=True)


def as_bytes(x: Any) -> bytes:
    return x.encode() if isinstance(x, str) else bytes(x)


def python_edit(doc: bytes, ops: list[Any]) -> bytes:
    return as_bytes(qjson.dumps(qjson.patch(qjson.decode(doc), ops)))


@pytest.mark.parametrize("case", CASES)
def test_light_set_is_the_full_paths_bytes(lua: Any, case: Any) -> None:
    """t[k] = v on a fresh document takes the light path and gives the bytes
    of the same replacement made by a patch (the full path), twice over
    (the second encode of the same proxy too), and Python's."""
    d, key, lit, value = case
    f = lua.eval(
        "function(s, k)\n"
        '    local qjson = require("qjson")\n'
        f"    local v = {lit}\n"
        "    local t = qjson.decode(s)\n"
        "    t[k] = v\n"
        '    local light = rawget(getmetatable(t), "e") == nil\n'
        "    local a, b = qjson.encode(t), qjson.encode(t)\n"
        '    local op = {op = "replace", path = "/" .. k, value = v}\n'
        "    local full = qjson.encode(qjson.patch(qjson.decode(s), {op}))\n"
        "    return light, a, b, full, t[k] == v\n"
        "end"
    )
    light, a, b, full, read_back = f(DOCS[d], key)
    assert light
    assert as_bytes(a) == as_bytes(full) == as_bytes(b)
    assert as_bytes(a) == python_edit(
        DOCS[d], [{"op": "replace", "path": "/" + key, "value": value}]
    )
    assert read_back


def test_not_light_falls_back(lua: Any) -> None:
    """Edits the splice cannot make take the full path: an absent key, a
    table or null value, a repeated key, a child object, a second edit (and
    the result is Python's)."""
    f = lua.eval(
        """function()
            local qjson = require("qjson")
            local function light(t) return rawget(getmetatable(t), "e") == nil end
            local out = {}
            local t = qjson.decode('{"a": 1}'); t.b = 2
            out[#out + 1] = {light(t), qjson.encode(t)}
            t = qjson.decode('{"a": 1}'); t.a = {1}
            out[#out + 1] = {light(t), qjson.encode(t)}
            t = qjson.decode('{"a": 1}'); t.a = qjson.null
            out[#out + 1] = {light(t), qjson.encode(t)}
            t = qjson.decode('{"a": 1, "a": 2}'); t.a = 3
            out[#out + 1] = {light(t), qjson.encode(t)}
            t = qjson.decode('{"a": {"b": 1}}'); t.a.b = 5
            out[#out + 1] = {light(getmetatable(t).cache.a), qjson.encode(t)}
            t = qjson.decode('{"a": 1, "b": 2}'); t.a = 5; local l1 = light(t); t.b = 6
            out[#out + 1] = {l1 and not light(t), qjson.encode(t)}
            return out
        end"""
    )
    rows = [list(r.values()) for r in f().values()]
    assert [r[0] for r in rows] == [False, False, False, False, False, True]
    assert as_bytes(rows[0][1]) == python_edit(
        b'{"a": 1}', [{"op": "add", "path": "/b", "value": 2}]
    )
    assert as_bytes(rows[1][1]) == python_edit(
        b'{"a": 1}', [{"op": "replace", "path": "/a", "value": [1]}]
    )
    assert as_bytes(rows[2][1]) == python_edit(
        b'{"a": 1}', [{"op": "replace", "path": "/a", "value": None}]
    )
    assert as_bytes(rows[4][1]) == python_edit(
        b'{"a": {"b": 1}}', [{"op": "replace", "path": "/a/b", "value": 5}]
    )
    assert as_bytes(rows[5][1]) == python_edit(
        b'{"a": 1, "b": 2}',
        [{"op": "replace", "path": "/a", "value": 5}, {"op": "replace", "path": "/b", "value": 6}],
    )


def test_light_set_makes_one_small_record(lua: Any) -> None:
    """A light set makes one small record (an array-part table: its Lua
    heap, counted with the collector stopped, is under 400 bytes; a record
    with named fields, a 16-node hash part, made 544) and nothing else
    grows with it: no edit state, no plan."""
    f = lua.eval(
        """function(s)
            local qjson = require("qjson")
            local least = math.huge
            for _ = 1, 4 do
                local t = qjson.decode(s)
                collectgarbage("collect")
                collectgarbage("stop")
                local c0 = collectgarbage("count")
                t.model = "gpt-4o-mini"
                local made = (collectgarbage("count") - c0) * 1024
                collectgarbage("restart")
                assert(rawget(getmetatable(t), "e") == nil, "not light")
                least = math.min(least, made)
            end
            return least
        end"""
    )
    made = f(DOCS[0])
    assert 0 < made < 400, made


MERGE = b'{"stream": null, "x": {"y": 1}}'

# After t.model = "m" (light), each operation below; the Python ops are the
# same edits, the light one first (MERGE: that merge patch, as text, whose
# values keep their text on both sides).
AFTER = [
    (
        "local x = t.model; t.temperature = 1",
        [{"op": "replace", "path": "/temperature", "value": 1}],
    ),
    ("t.model = nil", [{"op": "remove", "path": "/model"}]),
    ('t.model = "n"', [{"op": "replace", "path": "/model", "value": "n"}]),
    ("t.extra = 5", [{"op": "add", "path": "/extra", "value": 5}]),
    (
        't.messages[1].role = "system"',
        [{"op": "replace", "path": "/messages/0/role", "value": "system"}],
    ),
    (
        'qjson.patch(t, {{op = "remove", path = "/stream"}})',
        [{"op": "remove", "path": "/stream"}],
    ),
    (
        'pcall(qjson.patch, t, {{op = "remove", path = "/stream"}, {op = "remove", path = "/zz"}})',
        [],
    ),
    ('qjson.merge_patch(t, \'{"stream": null, "x": {"y": 1}}\')', MERGE),
]


@pytest.mark.parametrize("i", range(len(AFTER)))
def test_operations_after_a_light_edit(lua: Any, i: int) -> None:
    """A light edit, then another operation: the result is Python's for the
    same edits; reads, pairs and a table holding the proxy see the light
    value."""
    code, ops = AFTER[i]
    f = lua.eval(
        "function(s)\n"
        '    local qjson = require("qjson")\n'
        "    local t = qjson.decode(s)\n"
        '    t.model = "m"\n'
        '    local light = rawget(getmetatable(t), "e") == nil\n'
        f"    {code}\n"
        "    local keys = {}\n"
        "    for k, v in qjson.pairs(t) do keys[#keys + 1] = k end\n"
        "    local inner = qjson.encode({t})\n"
        "    return light, qjson.encode(t), table.concat(keys, ','), inner, t.model\n"
        "end"
    )
    light, out, keys, inner, model = f(DOCS[0])
    first = [{"op": "replace", "path": "/model", "value": "m"}]
    if ops is MERGE:
        want = as_bytes(
            qjson.dumps(qjson.merge_patch(qjson.patch(qjson.decode(DOCS[0]), first), MERGE))
        )
    else:
        want = python_edit(DOCS[0], [*first, *ops])
    assert light
    assert as_bytes(out) == want
    assert as_bytes(inner) == b"[" + want + b"]"
    assert as_bytes(keys).decode().split(",") == list(json.loads(want))
    assert (model is None) == ("model" not in json.loads(want))


def test_child_read_before_and_edited_after_a_light_edit(lua: Any) -> None:
    """A child proxy read before the light edit and edited after it (the
    root's state is not read again, so the light edit is not made real by
    a read): the encode writes both edits, as Python does."""
    f = lua.eval(
        """function(s)
            local qjson = require("qjson")
            local t = qjson.decode(s)
            local m = t.messages
            t.model = "m"
            local light = rawget(getmetatable(t), "e") == nil
            m[1].role = "system"
            return light, qjson.encode(t)
        end"""
    )
    light, out = f(DOCS[0])
    assert light
    ops = [
        {"op": "replace", "path": "/model", "value": "m"},
        {"op": "replace", "path": "/messages/0/role", "value": "system"},
    ]
    assert as_bytes(out) == python_edit(DOCS[0], ops)


# A light-edited root put into another document by a patch: own() copies an
# edited proxy as its compact text, which it reads only when the proxy says
# it has edits (`dirty_now`); each op here once wrote the original bytes.
PUT_OPS = [
    ('{op = "add", path = "/z", value = t}', "add"),
    ('{op = "replace", path = "/y", value = t}', "replace"),
    ('{op = "add", path = "/z", value = {t}}', "nested"),
    ('{op = "add", path = "", value = t}', "whole"),
]


@pytest.mark.parametrize("op", [o for o, _ in PUT_OPS], ids=[i for _, i in PUT_OPS])
def test_light_edited_root_put_by_a_patch_keeps_its_edit(lua: Any, op: str) -> None:
    f = lua.eval(
        "function()\n"
        '    local qjson = require("qjson")\n'
        '    local t = qjson.decode(\'{"model":"gpt-4o","x":1}\')\n'
        '    t.model = "b"\n'
        '    local light = rawget(getmetatable(t), "e") == nil\n'
        "    local u = qjson.decode('{\"y\":0}')\n"
        f"    u = qjson.patch(u, {{{op}}})\n"
        "    return light, qjson.encode(u)\n"
        "end"
    )
    light, out = f()
    assert light
    got = json.loads(as_bytes(out))
    edited = {"model": "b", "x": 1}
    expected = {
        "add": {"y": 0, "z": edited},
        "replace": {"y": edited},
        "nested": {"y": 0, "z": [edited]},
        "whole": edited,
    }[dict(PUT_OPS)[op]]
    assert got == expected


def test_light_edited_root_copied_into_itself(lua: Any) -> None:
    """A copy op from "" of a light-edited root copies the edited value."""
    f = lua.eval(
        "function()\n"
        '    local qjson = require("qjson")\n'
        '    local t = qjson.decode(\'{"model":"gpt-4o","x":1}\')\n'
        '    t.model = "b"\n'
        '    qjson.patch(t, {{op = "copy", from = "", path = "/self"}})\n'
        "    return qjson.encode(t)\n"
        "end"
    )
    assert json.loads(as_bytes(f())) == {"model": "b", "x": 1, "self": {"model": "b", "x": 1}}
