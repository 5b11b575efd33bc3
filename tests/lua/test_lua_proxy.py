"""qjson.decode proxies in Lua: reads, edits (an overlay in Lua), the
pairs / ipairs / len helpers, materialize, and encode (passthrough of
untouched proxies, splicing of edits). Edits are checked against a Python
model by a property test."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("lupa", reason="lupa is not installed (pip install 'qjson[lua]')")
import qjson.luajit  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

DOC = b'{"model": "gpt-4o", "t": 0.7, "n": null, "ok": true, "x/y": "a\\u00e9",  "messages": [{"role": "system", "content": "hi"}, {"role": "user", "content": [1, 2.50, 3]}], "dup": 1, "dup": 2}'  # noqa: E501


@pytest.fixture(scope="module")
def lua():
    return qjson.luajit.runtime(lua_modules=True)


@pytest.fixture(scope="module")
def run(lua):
    f = lua.eval(
        """function(s, code)
            local qjson = require("qjson")
            local t = qjson.decode(s)
            return assert(loadstring("local qjson, t, s = ...; " .. code))(qjson, t, s)
        end"""
    )

    def go(code: str, s: bytes = DOC):
        return f(s, code)

    return go


def test_reads(run):
    assert run("return t.model, t.t, t.ok, t.n == qjson.null, t['x/y']") == (
        "gpt-4o",
        0.7,
        True,
        True,
        "a\u00e9",
    )
    assert run("return t.messages[2].content[2], t.messages[1].role") == (2.5, "system")
    assert run("return t.missing, t.messages[3], t.messages[0], t.messages.x") == (
        None,
        None,
        None,
        None,
    )
    assert run("return t.dup") == 1  # the first of duplicate keys
    # The same proxy each time (edits through it stick).
    assert run("return t.messages == t.messages, rawequal(t.messages[1], t.messages[1])") == (
        True,
        True,
    )
    assert run("return qjson.is_proxy(t), qjson.is_proxy({}), next(t)") == (True, False, None)


def test_scalar_documents(run):
    assert run("return t", b' "abc" ') == "abc"
    assert run("return t", b"12.5") == 12.5
    assert run("return t == qjson.null", b"null") is True


def test_len_pairs_ipairs(run):
    assert run("return qjson.len(t), qjson.len(t.messages), qjson.len({1, 2})") == (7, 2, 2)
    keys = run(
        "local r = {}; for k, v in qjson.pairs(t) do r[#r + 1] = k end; return table.concat(r, ',')"
    )
    assert keys == "model,t,n,ok,x/y,messages,dup"
    assert (
        run(
            "local r = 0; for i, v in qjson.ipairs(t.messages[2].content) do r = r + i * v end;"
            " return r"
        )
        == 1 * 1 + 2 * 2.5 + 3 * 3
    )
    assert (
        run("local n = 0; for k, v in qjson.pairs({a = 1, b = 2}) do n = n + v end; return n") == 3
    )
    assert run("local n = 0; for i, v in qjson.ipairs({5, 6}) do n = n + v end; return n") == 11


def test_materialize(run):
    code = """
        local m = qjson.materialize(t)
        assert(getmetatable(m) == nil and getmetatable(m.messages) == nil)
        return m.model, m.n == qjson.null, #m.messages, m.messages[2].content[3], m.dup
    """
    assert run(code) == ("gpt-4o", True, 2, 3, 1)
    assert run("return qjson.materialize(5), qjson.materialize('x')") == (5, "x")


def test_encode_passthrough(run):
    # Untouched: the original bytes, even for sub-proxies placed in a table.
    assert run("return qjson.encode(t)") == DOC.decode()
    assert run("return qjson.encode(t.messages[2])") == '{"role": "user", "content": [1, 2.50, 3]}'
    assert run("return qjson.encode({a = t.messages[2].content})") == '{"a":[1, 2.50, 3]}'
    assert run("return qjson.encode(t) == s") is True  # no copy at all


def test_encode_splices_edits(run):
    out = run(
        "t.model = 'm2'; t.messages[2].content[2] = 7; t.new = {1, 2}; return qjson.encode(t)"
    )
    # Untouched parts keep their bytes ("2.50" stays unless replaced, the
    # duplicate key is emitted once); keys and whitespace as written, as
    # Python's views write the same edits (test_lua_edit_diff.py).
    assert out == (
        '{"model": "m2","t": 0.7, "n": null, "ok": true, "x/y": "a\\u00e9",'
        '"messages": [{"role": "system", "content": "hi"}, '
        '{"role": "user", "content": [1,7,3]}],"dup": 1,"new":[1,2]}'
    )
    out = run("t.messages = nil; t.ok = nil; t.n = false; return qjson.encode(t)")
    assert json.loads(out) == {"model": "gpt-4o", "t": 0.7, "n": False, "x/y": "aé", "dup": 1}
    # Arrays: append, shorten, holes.
    out = run(
        "local c = t.messages[2].content; c[4] = 'x'; c[6] = true; return qjson.encode(c),"
        " qjson.len(c)"
    )
    assert out == ('[1, 2.50, 3,"x",null,true]', 6)
    out = run("local c = t.messages[2].content; c[3] = nil; return qjson.encode(c), qjson.len(c)")
    assert out == ("[1, 2.50]", 2)
    # A delete and re-add moves the key to the end (as a dict does).
    out = run("t.t = nil; t.t = 1; t.extra = 2; t.extra = nil; return qjson.encode(t)")
    assert out == (
        '{"model": "gpt-4o","n": null, "ok": true, "x/y": "a\\u00e9",  "messages": '
        '[{"role": "system", "content": "hi"}, {"role": "user", "content": [1, 2.50, 3]}], '
        '"dup": 1,"t":1}'
    )


def test_insert_remove_append(run):
    out = run(
        "local c = t.messages[2].content; qjson.insert(c, 1, 0); qjson.append(c, 9);"
        " qjson.insert(c, 'end'); local r = qjson.remove(c, 2); local last = qjson.remove(c);"
        " return qjson.encode(c), r, last, qjson.len(c)"
    )
    assert out == ("[0,2.50, 3,9]", 1, "end", 4)
    assert run("local ok, e = pcall(qjson.insert, t.messages, 5, 1); return e").endswith(
        "position out of bounds"
    )
    assert run("local ok, e = pcall(qjson.remove, t.messages, 0); return e").endswith(
        "position out of bounds"
    )
    assert "expected an array" in run("local ok, e = pcall(qjson.append, t, 1); return e")
    assert run("local e = qjson.decode('[]'); return qjson.remove(e)") is None
    # Plain tables: table.insert / table.remove.
    assert run(
        "local p = {1}; qjson.append(p, 2); qjson.insert(p, 1, 0); return qjson.encode(p)"
    ) == ("[0,1,2]")


def test_edit_errors(run):
    assert "keys must be strings" in run("local ok, e = pcall(function() t[1] = 2 end); return e")
    assert "positive integer" in run(
        "local ok, e = pcall(function() t.messages.x = 2 end); return e"
    )
    assert "cycle" in run("t.self = t; local ok, e = pcall(qjson.encode, t); return e")
    # A failed encode leaves nothing behind: the next one works.
    assert run(
        "t.f = print; local ok, e = pcall(qjson.encode, t); t.f = nil; t.ok = 1;"
        " return e, qjson.decode(qjson.encode(t)).ok"
    ) == ("Cannot serialise function: type not supported", 1)


def test_number_keys_of_an_edited_object(run):
    # An edited object's key states share a table with its values, whose
    # keys are numbers (value ids): a number key must still read nil.
    assert run("t.model = 'x'; return t[1], t[2], t.model") == (None, None, "x")
    assert run("for i = 1, 7 do t['k' .. i] = i + 6 end; return t[1], t[7], t.k7, t[7.5]") == (
        None,
        None,
        13,
        None,
    )


def test_decode_errors(run, lua):
    f = lua.eval('function(s) return pcall(require("qjson").decode, s) end')
    ok, e = f(b"[1, 2")
    assert not ok and "Unexpected end of input" in e


# ---------------------------------------------------------------- property test

# Documents: ints (small, so that both sides write them the same), strings,
# bools, null, nested containers. No empty arrays: a plain Lua table cannot
# tell [] from {} (cjson writes {}), and edits put plain tables in.
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=8),
)
keys = st.text(st.sampled_from("abcxyz/é"), min_size=1, max_size=3)


def _nest(inner: st.SearchStrategy) -> st.SearchStrategy:
    # A named function, not a lambda: hypothesis reads the source of `extend`
    # to check that it uses its argument, and a lambda inside a multi-line
    # call is not always found (a spurious deprecation warning, an error here).
    return st.one_of(
        st.lists(inner, min_size=1, max_size=4),
        st.dictionaries(keys, inner, max_size=4),
    )


values = st.recursive(scalars, _nest, max_leaves=12)
documents = st.one_of(
    st.dictionaries(keys, values, min_size=1, max_size=5),
    st.lists(values, min_size=1, max_size=5),
)

HOLE = object()


def containers(model: Any, path: tuple = ()) -> list[tuple]:
    """Paths of every container in the model."""
    out = [path]
    items = model.items() if isinstance(model, dict) else enumerate(model)
    for k, v in items:
        if isinstance(v, (dict, list)):
            out += containers(v, path + (k,))
    return out


def resolve(model: Any, path: tuple) -> Any:
    for k in path:
        model = model[k]
    return model


def plain(model: Any) -> Any:
    """The model as JSON (holes are null)."""
    if model is HOLE:
        return None
    if isinstance(model, dict):
        return {k: plain(v) for k, v in model.items()}
    if isinstance(model, list):
        return [plain(v) for v in model]
    return model


APPLY = """
function(t, path_json, op, key, value_json)
    local qjson = require("qjson")
    local path = qjson.materialize(qjson.decode(path_json))
    for i = 1, #path do
        local k = path[i]
        if type(k) == "number" then k = k + 1 end
        t = t[k]
    end
    local v = nil
    if value_json ~= "" then
        v = qjson.decode(value_json)
        if type(v) == "table" then v = qjson.materialize(v) end
    end
    if type(key) == "number" then key = key + 1 end
    t[key] = v
end
"""


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(doc=documents, data=st.data())
def test_edits_match_a_model(lua, doc, data):
    text = json.dumps(doc, indent=data.draw(st.sampled_from([None, 1]))).encode()
    root = lua.eval('function(s) return require("qjson").decode(s) end')(text)
    apply = lua.eval(APPLY)
    encode = lua.eval('function(t) return require("qjson").encode(t) end')
    length = lua.eval('function(t) return require("qjson").len(t) end')
    model = json.loads(text)
    for _ in range(data.draw(st.integers(1, 6))):
        path = data.draw(st.sampled_from(containers(model)))
        target = resolve(model, path)
        new = data.draw(st.one_of(scalars, values.filter(lambda v: v != [] and v != {})))
        if isinstance(target, dict):
            key = data.draw(st.one_of(keys, st.sampled_from(list(target) or ["k"])))
            if data.draw(st.booleans()) and key in target:
                del target[key]
                apply(root, json.dumps(list(path)).encode(), "set", key, b"")
                continue
            target[key] = new
        else:
            n = len(target)
            i = data.draw(st.integers(0, n))
            if i == n - 1 and n > 1 and data.draw(st.booleans()):
                target.pop()  # t[#t] = nil shortens the array
                while target and target[-1] is HOLE:
                    target.pop()
                apply(root, json.dumps(list(path)).encode(), "set", i, b"")
                continue
            if i == n:
                target.append(new)
            else:
                target[i] = new
            key = i
        if new is None:
            # Setting nil deletes in Lua; write JSON null as qjson.null instead.
            apply_null = lua.eval(
                """function(t, path_json, key)
                    local qjson = require("qjson")
                    for _, k in ipairs(qjson.materialize(qjson.decode(path_json))) do
                        if type(k) == "number" then k = k + 1 end
                        t = t[k]
                    end
                    if type(key) == "number" then key = key + 1 end
                    t[key] = qjson.null
                end"""
            )
            apply_null(root, json.dumps(list(path)).encode(), key)
        else:
            apply(root, json.dumps(list(path)).encode(), "set", key, json.dumps(new).encode())
    out = encode(root)
    assert json.loads(out) == plain(model)
    assert length(root) == len(model)
