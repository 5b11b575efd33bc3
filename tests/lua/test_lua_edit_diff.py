"""Edits through Lua proxies and through Python views give the same bytes.

The same random edit sequences (30 steps each) are applied to a document
decoded by qjson in Python (views) and in LuaJIT through lupa (proxies);
both outputs must be byte-identical and, read as qjson reads (the first
of a repeated key), equal a model the same edits were applied to. New
values are chosen so that both encoders write them alike (no `/`, no
floats, no object with two keys: a Lua table's key order is its own);
everything else (copied members, keys as written, separators and
whitespace) comes from the one edit engine.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

pytest.importorskip("lupa", reason="lupa is not installed (pip install 'qjson[lua]')")
import qjson  # noqa: E402
import qjson.luajit  # noqa: E402
from conftest import reference_loads  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

DOCS = [
    # Pretty-printed, with escaped keys and strings.
    json.dumps(
        {
            "model": "gpt-4o",
            "temperature": 0.7,
            "stream": True,
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": [{"type": "text", "text": "hi"}, 1, 2.5]},
            ],
            "meta": {"tags": ["a", "b"], "empty": {}, "none": [], "n": None},
        },
        indent=2,
    ).replace('"meta"', '"x\\/y": 0, "z": 1, "meta"', 1)
    + "\n",
    # Compact, keys with escapes, a repeated key.
    '{"a\\u00e9":1,"b":[1,2,3,[4,5],{"c":{"d":[]}}],"dup":1,"dup":2,"e":{"f":"g"}}',
    # Odd whitespace everywhere, an array at the root.
    ' [ 1 , { "a" : [ ] , "b":{ } } ,"s",[ [ 0 ] ] , null ,{"k" :"v"}] \n',
    # Empty containers.
    '{ "o": { }, "l": [ ], "x": [ { } ] }',
]


class NewDict(dict):  # type: ignore[type-arg]
    """A value set by an edit (edits do not go into new values)."""


class NewList(list):  # type: ignore[type-arg]
    """A value set by an edit."""


# Keys set on proxies are written by the engine (as Python writes them);
# keys inside new values by each encoder (Lua's escapes "/": not used there).
KEYS = ["model", "new", "x/y", "é", 'q"', "b", "dup", "content", "k\\n"]
VALUE_KEYS = [k for k in KEYS if "/" not in k]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**9), 10**9),
    st.text(alphabet='abcé "\\\n\t0', max_size=6),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=3),
        st.dictionaries(st.sampled_from(VALUE_KEYS), inner, min_size=0, max_size=1),
    ),
    max_leaves=4,
)


def lua_str(s: str) -> str:
    out = []
    for b in s.encode():
        if 32 <= b < 127 and b not in (34, 92):
            out.append(chr(b))
        else:
            out.append(f"\\{b:03d}")
    return '"' + "".join(out) + '"'


def lua_value(v: Any) -> str:
    if v is None:
        return "qjson.null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return lua_str(v)
    if isinstance(v, list):
        return "{" + ", ".join(lua_value(x) for x in v) + "}"
    return "{" + ", ".join(f"[{lua_str(k)}] = {lua_value(x)}" for k, x in v.items()) + "}"


def model_value(v: Any) -> Any:
    if isinstance(v, list):
        return NewList(model_value(x) for x in v)
    if isinstance(v, dict):
        return NewDict((k, model_value(x)) for k, x in v.items())
    return v


def containers(model: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths of the original containers of the model (not new values)."""
    out = [path]
    items = model.items() if isinstance(model, dict) else enumerate(model)
    for k, x in items:
        if isinstance(x, (dict, list)) and not isinstance(x, (NewDict, NewList)):
            out.extend(containers(x, (*path, k)))
    return out


def at(root: Any, path: tuple[Any, ...]) -> Any:
    for k in path:
        root = root[k]
    return root


def lua_path(path: tuple[Any, ...]) -> str:
    return "t" + "".join(f"[{k + 1}]" if isinstance(k, int) else f"[{lua_str(k)}]" for k in path)


@pytest.fixture(scope="module")
def lua_apply():
    rt = qjson.luajit.runtime()
    return rt.eval(
        """function(s, code)
            local qjson = require("qjson")
            local t = qjson.decode(s)
            assert(loadstring("local qjson, t = ...; " .. code))(qjson, t)
            return qjson.encode(t)
        end"""
    )


def run_steps(data: st.DataObject, doc: str, lua_apply: Any, n_steps: int) -> None:
    model = reference_loads(doc.encode())
    view = qjson.decode(doc.encode())
    lua: list[str] = []
    for _ in range(n_steps):
        path = data.draw(st.sampled_from(containers(model)))
        m, v, p = at(model, path), at(view, path), lua_path(path)
        if isinstance(m, dict):
            op = data.draw(
                st.sampled_from(["set", "set_new", "del", "read", "keys", "items", "plain"])
            )
            if op in ("del", "read", "set") and not m:
                op = "set_new"
            if op == "set_new":
                key = data.draw(st.sampled_from(KEYS))
            elif op in ("keys", "items", "plain"):
                key = ""
            else:
                key = data.draw(st.sampled_from(sorted(m)))
            # Whole-object reads (Lua's proxies never unfold on reads; the
            # Python views must not either, or a patched object's replaced
            # keys would be rewritten and the bytes would differ).
            if op == "keys":
                assert list(v.keys()) == list(m)
                assert list(v) == list(m)
                lua.append(f"for _ in qjson.pairs({p}) do end")
            elif op == "items":
                assert [(k, qjson.materialize(x)) for k, x in v.items()] == list(m.items())
                lua.append(f"for _, x in qjson.pairs({p}) do local _ = x end")
            elif op == "plain":
                assert qjson.materialize(v) == m
                lua.append(f"local _ = qjson.materialize({p})")
            elif op == "read":
                v[key]
                lua.append(f"local _ = {p}[{lua_str(key)}]")
            elif op == "del":
                del m[key]
                del v[key]
                lua.append(f"{p}[{lua_str(key)}] = nil")
            else:
                x = data.draw(values)
                m[key] = model_value(x)
                v[key] = copy.deepcopy(x)
                lua.append(f"{p}[{lua_str(key)}] = {lua_value(x)}")
        else:
            ops = ["insert", "append"] + (["set", "remove", "read"] if m else [])
            op = data.draw(st.sampled_from(ops))
            if op in ("set", "remove", "read"):
                i = data.draw(st.integers(0, len(m) - 1))
            elif op == "insert":
                i = data.draw(st.integers(0, len(m)))
            if op == "read":
                v[i]
                lua.append(f"local _ = {p}[{i + 1}]")
            elif op == "remove":
                del m[i]
                del v[i]
                lua.append(f"qjson.remove({p}, {i + 1})")
            else:
                x = data.draw(values)
                if op == "set":
                    m[i] = model_value(x)
                    v[i] = copy.deepcopy(x)
                    lua.append(f"{p}[{i + 1}] = {lua_value(x)}")
                elif op == "insert":
                    m.insert(i, model_value(x))
                    v.insert(i, copy.deepcopy(x))
                    lua.append(f"qjson.insert({p}, {i + 1}, {lua_value(x)})")
                else:
                    m.append(model_value(x))
                    v.append(copy.deepcopy(x))
                    lua.append(f"qjson.append({p}, {lua_value(x)})")
    out_py = qjson.dumps(view)
    out_lua = lua_apply(doc.encode(), "\n".join(lua))
    if isinstance(out_lua, str):
        out_lua = out_lua.encode()
    # Read as qjson reads (the first of a repeated key): an object edited
    # only inside its children keeps the repeats of its other keys as
    # written, which json.loads would read as their last values.
    assert reference_loads(out_py) == model
    assert out_lua == out_py, "\n".join(lua)


@pytest.mark.parametrize("doc", DOCS, ids=range(len(DOCS)))
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_fixed_documents(doc: str, data: st.DataObject, lua_apply: Any) -> None:
    run_steps(data, doc, lua_apply, 30)


documents = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(KEYS), inner, max_size=4),
    ),
    max_leaves=12,
).filter(lambda d: isinstance(d, (dict, list)))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(doc=documents, indent=st.sampled_from([None, 0, 1, 2]), data=st.data())
def test_random_documents(
    doc: Any, indent: int | None, data: st.DataObject, lua_apply: Any
) -> None:
    text = json.dumps(doc, indent=indent, ensure_ascii=data.draw(st.booleans()))
    run_steps(data, text, lua_apply, 30)


def test_example_from_the_issue(lua_apply: Any) -> None:
    body = DOCS[0].encode()
    v = qjson.decode(body)
    v["model"] = "x"
    del v["stream"]
    v["messages"].append({"role": "user"})
    code = 't.model = "x"; t.stream = nil; qjson.append(t.messages, {role = "user"})'
    out = lua_apply(body, code)
    assert (out.encode() if isinstance(out, str) else out) == qjson.dumps(v)
    # Keys and whitespace as written, the escaped key kept.
    assert b'"x\\/y"' in qjson.dumps(v)
    # Untouched members copied with their whitespace (the deletion makes
    # the object written member by member: "{" and "}" are the writer's).
    assert b'{\n      "role": "system",\n      "content": "Be brief."\n    }' in qjson.dumps(v)


# ---------------------------------------------------------------- patches

PATCH_DOC = (
    b'{"model": "gpt-4o",  "stream": true, "max_tokens": 500,\n'
    b' "messages": [{"role": "system", "content": "Be brief."},\n'
    b'   {"role": "user", "content": [{"type": "text", "text": "hi"}]}],\n'
    b' "tools": {"a": {"x": 1}, "b": [1, 2.50]}}'
)

PATCH_OPS = [
    {"op": "replace", "path": "/model", "value": "gpt-4o-mini"},
    {"op": "remove", "path": "/stream"},
    {"op": "add", "path": "/messages/0", "value": {"role": "system", "content": "x"}},
    {"op": "add", "path": "/messages/2/content/-", "value": {"type": "text"}},
    {"op": "move", "from": "/tools/a", "path": "/messages/1/moved"},
    {"op": "copy", "from": "/tools/b", "path": "/tools/c"},
    {"op": "remove", "path": "/tools/b/0"},
    {"op": "test", "path": "/max_tokens", "value": 500.0},
    {"op": "replace", "path": "/messages/1/content", "value": None},
    {"op": "add", "path": "/tools/b/-", "value": [1, {"k": " v "}]},
]


@pytest.fixture(scope="module")
def lua_patch():
    rt = qjson.luajit.runtime()
    return rt.eval(
        """function(s, kind, p, path, by)
            local qjson = require("qjson")
            local t = qjson.decode(s)
            if kind == "patch" then
                t = qjson.patch(t, p)
            elseif kind == "merge" then
                t = qjson.merge_patch(t, p)
            elseif kind == "incr" then
                qjson.incr(t, path, by)
            else
                qjson.mul(t, path, by)
            end
            return qjson.encode(t)
        end"""
    )


def as_bytes(x: Any) -> bytes:
    return x.encode() if isinstance(x, str) else x


@pytest.mark.parametrize("n", range(1, len(PATCH_OPS) + 1))
def test_patch_bytes_equal_python(lua_patch: Any, n: int) -> None:
    # As JSON text, the patch's values are written as their original bytes
    # by both edges, so every byte of the output must agree.
    ops = json.dumps(PATCH_OPS[:n], indent=1).encode()
    out_py = qjson.dumps(qjson.patch(qjson.decode(PATCH_DOC), ops))
    assert as_bytes(lua_patch(PATCH_DOC, "patch", ops, None, None)) == out_py


@pytest.mark.parametrize(
    "patch",
    [
        b'{"model": "m", "stream": null, "tools": {"a": null, "z": {"q": [1, 2]}}}',
        b'{"messages": [1], "new": {"a": {"b": null}}}',
        b'{"tools": {"b": null}, "model": null, "max_tokens": 1}',
    ],
)
def test_merge_patch_bytes_equal_python(lua_patch: Any, patch: bytes) -> None:
    out_py = qjson.dumps(qjson.merge_patch(qjson.decode(PATCH_DOC), patch))
    assert as_bytes(lua_patch(PATCH_DOC, "merge", patch, None, None)) == out_py


@pytest.mark.parametrize(
    "kind,path,by",
    [("incr", "/max_tokens", -100), ("mul", "max_tokens", 3), ("incr", "tools.a.x", 41)],
)
def test_number_ops_bytes_equal_python(lua_patch: Any, kind: str, path: str, by: int) -> None:
    v = qjson.decode(PATCH_DOC)
    (qjson.incr if kind == "incr" else qjson.mul)(v, path, by)
    assert as_bytes(lua_patch(PATCH_DOC, kind, None, path, by)) == qjson.dumps(v)


# A child view read before its member is replaced, deleted, moved or
# patched stays with the caller: setting a member does not drop the cached
# child, so every way of replacing it must leave the old child out of the
# output (and out of the reads), whether it was edited before or after.
STALE_DOC = b'{"a": {"x": 1}, "b": [{"y": 1}, 2], "c": 3}'
STALE_CASES = [
    (
        "local a = t.a; t.a = 7; a.x = 5; assert(t.a == 7)",
        "a = v['a']; v['a'] = 7; a['x'] = 5; assert v['a'] == 7",
    ),
    ("local a = t.a; a.x = 5; t.a = 7", "a = v['a']; a['x'] = 5; v['a'] = 7"),
    ("local a = t.a; a.x = 5; t.a = nil; assert(t.a == nil)", "a = v['a']; a['x'] = 5; del v['a']"),
    (
        "local a = t.a; a.x = 5; t.a = nil; t.a = {z = 1}",
        "a = v['a']; a['x'] = 5; del v['a']; v['a'] = {'z': 1}",
    ),
    (
        "local a = t.a; t.a = {z = 1}; a.x = 5; assert(t.a.z == 1 and t.a.x == nil)",
        "a = v['a']; v['a'] = {'z': 1}; a['x'] = 5; assert v['a'] == {'z': 1}",
    ),
    ("local e = t.b[1]; e.y = 5; t.b[1] = 9", "e = v['b'][0]; e['y'] = 5; v['b'][0] = 9"),
    (
        "local e = t.b[1]; t.b[1] = 9; e.y = 5; assert(t.b[1] == 9)",
        "e = v['b'][0]; v['b'][0] = 9; e['y'] = 5; assert v['b'][0] == 9",
    ),
    ("local e = t.b[1]; e.y = 5; qjson.remove(t.b, 1)", "e = v['b'][0]; e['y'] = 5; del v['b'][0]"),
    (
        "local e = t.b[1]; e.y = 5; qjson.insert(t.b, 1, 0)",
        "e = v['b'][0]; e['y'] = 5; v['b'].insert(0, 0)",
    ),
    (
        "local a = t.a; a.x = 5; qjson.patch(t, {{op = 'replace', path = '/a', value = 7}})",
        "a = v['a']; a['x'] = 5; qjson.patch(v, [{'op': 'replace', 'path': '/a', 'value': 7}])",
    ),
    (
        "local a = t.a; a.x = 5; qjson.patch(t, {{op = 'move', from = '/a', path = '/d'}})",
        "a = v['a']; a['x'] = 5; qjson.patch(v, [{'op': 'move', 'from': '/a', 'path': '/d'}])",
    ),
    (
        "local a = t.a; a.x = 5; assert(not pcall(qjson.patch, t, {{op = 'replace', path = '/a',"
        " value = 7}, {op = 'remove', path = '/zz'}})); a.x = 6; assert(t.a == a)",
        "a = v['a']; a['x'] = 5\n"
        "try:\n    qjson.patch(v, [{'op': 'replace', 'path': '/a', 'value': 7},"
        " {'op': 'remove', 'path': '/zz'}])\nexcept qjson.PatchError:\n    pass\n"
        "a['x'] = 6",
    ),
    (
        "local a = t.a; qjson.merge_patch(t, '{\"a\": 7}'); a.x = 5",
        "a = v['a']; qjson.merge_patch(v, b'{\"a\": 7}'); a['x'] = 5",
    ),
]


@pytest.mark.parametrize("lua_code,py_code", STALE_CASES)
def test_replaced_member_drops_its_cached_child(lua_apply: Any, lua_code: str, py_code: str):
    assert_stale_doc_edits_agree(lua_apply, lua_code, py_code)


def assert_stale_doc_edits_agree(lua_apply: Any, lua_code: str, py_code: str) -> None:
    """The same edits of STALE_DOC in Lua and in Python give the same bytes,
    and those are not the document's own."""
    v = qjson.decode(STALE_DOC)
    exec(py_code, {"v": v, "qjson": qjson})
    out_py = qjson.dumps(v)
    assert as_bytes(lua_apply(STALE_DOC, lua_code)) == out_py
    assert out_py != STALE_DOC


# A container whose children alone were edited gets an edit state only to
# plan them when it is encoded (no values table of its own); its own edits,
# and a patch's save and undo, made after that encode must still be written.
PLANNED_CASES = [
    (
        STALE_DOC,
        "t.b[1].y = 5; assert(qjson.encode(t)); t.c = 4; t.z = 'n'",
        "v['b'][0]['y'] = 5; qjson.dumps(v); v['c'] = 4; v['z'] = 'n'",
    ),
    (
        STALE_DOC,
        "t.b[1].y = 5; assert(qjson.encode(t)); t.b[2] = 8; assert(qjson.encode(t)); t.a = nil",
        "v['b'][0]['y'] = 5; qjson.dumps(v); v['b'][1] = 8; qjson.dumps(v); del v['a']",
    ),
    (
        STALE_DOC,
        "t.a.x = 5; assert(qjson.encode(t)); assert(not pcall(qjson.patch, t,"
        " {{op = 'add', path = '/d', value = 1}, {op = 'remove', path = '/zz'}})); t.e = 2",
        "v['a']['x'] = 5; qjson.dumps(v)\n"
        "try:\n    qjson.patch(v, [{'op': 'add', 'path': '/d', 'value': 1},"
        " {'op': 'remove', 'path': '/zz'}])\nexcept qjson.PatchError:\n    pass\n"
        "v['e'] = 2",
    ),
    # Children whose edits were undone (an added key removed again), among
    # dirty ones, under an edited container: the plan's views are then the
    # dirty children alone (put_proxy's table from the first clean kid on);
    # the clean ones are copied with their container's bytes and whitespace.
    (
        STALE_DOC,
        "t.a.z = 5; t.a.z = nil; t.b[1].y = 6; t.b[1].w = 1; t.b[1].w = nil; t.c = 4",
        "v['a']['z'] = 5; del v['a']['z']; v['b'][0]['y'] = 6; v['b'][0]['w'] = 1;"
        " del v['b'][0]['w']; v['c'] = 4",
    ),
    (
        b' [ 1 ,{"k" :"v"}] \n',
        "qjson.insert(t, 1, qjson.null); t[3].m = 1; t[3].m = nil",
        "v.insert(0, None); v[2]['m'] = 1; del v[2]['m']",
    ),
    (
        b'[ {"y": 1} , [2] ,\n {"q": [0]} , 3 ]',
        "t[1].z = 5; t[1].z = nil; t[3].q[1] = 7; t[2][2] = 1; t[2][2] = nil; t[4] = 4",
        "v[0]['z'] = 5; del v[0]['z']; v[2]['q'][0] = 7; v[1].append(1); del v[1][1]; v[3] = 4",
    ),
    (
        b'[{"y": 1}, [2], 3]',
        "t[1].y = 5; assert(qjson.encode(t)); t[3] = 4;"
        " qjson.patch(t, {{op = 'add', path = '/0', value = 0}})",
        "v[0]['y'] = 5; qjson.dumps(v); v[2] = 4;"
        " qjson.patch(v, [{'op': 'add', 'path': '/0', 'value': 0}])",
    ),
]


@pytest.mark.parametrize("doc,lua_code,py_code", PLANNED_CASES)
def test_edits_after_a_planned_only_state(lua_apply: Any, doc: bytes, lua_code: str, py_code: str):
    v = qjson.decode(doc)
    exec(py_code, {"v": v, "qjson": qjson})
    out_py = qjson.dumps(v)
    assert as_bytes(lua_apply(doc, lua_code)) == out_py
    assert out_py != doc


# Values a patch builds (rather than takes from a text or an untouched
# container) are written as Python writes the dicts and lists it
# materializes: compact, in the patch's or the view's order, strings and
# numbers as decoded and encoded again (`\/` is `/`, `1.0E2` is `100.0`,
# an integer beyond 2^53 stays exact); containers taken as they are keep
# their bytes. Lua once built these as plain tables (written in hash order,
# with lua-cjson's escapes and number format).
MERGE_NEW_TARGETS = [b"[1]", b'{"x": 1}', b'{"k2": {"q": 1}, "a": {"e": 1}}']
MERGE_NEW_PATCHES = [
    b'{"x":{"y":null},"w":2}',
    b'{"k0": {"y": null, "z": 1.0E2, "s": "a\\/b\\u00e9", "big": 12345678901234567891},'
    b' "k1": [1.50, {"n": null}], "k2": {"keep": {"as":  "is"}, "drop": null},'
    b' "k3": {"neg": -0, "t": true, "c": "\\u0001", "e": 1e-7, "x": null},'
    b' "k4": true, "k7": {}, "k8": null}',
    b'{ "a" : { "b" : { "c" : null , "d" : [ ] } , "e" : null } , "f" : { } }',
    b"{" + b", ".join(b'"m%d": %d, "n%d": null' % (i, i, i) for i in range(12)) + b"}",
]
# (Scalar members set straight on an object target are host values: each
# edge's encoder writes them, so they are kept to values both write alike.)


@pytest.mark.parametrize("target", MERGE_NEW_TARGETS)
@pytest.mark.parametrize("patch", MERGE_NEW_PATCHES)
def test_merge_patch_new_objects_equal_python(lua_patch: Any, target: bytes, patch: bytes):
    out_py = qjson.dumps(qjson.merge_patch(qjson.decode(target), patch))
    # Twice: the second time from the cached plan.
    for _ in range(2):
        assert as_bytes(lua_patch(target, "merge", patch, None, None)) == out_py


def test_merge_patch_new_object_from_a_proxy() -> None:
    # A patch given as a decoded document (a proxy), not as text.
    f = qjson.luajit.runtime().eval(
        """function(s, p)
            local qjson = require("qjson")
            return qjson.encode(qjson.merge_patch(qjson.decode(s), qjson.decode(p)))
        end"""
    )
    patch = b'{"n": {"a": null, "b": 1.0E2, "s": "\\/"}, "m": {"z": 1, "y": 2, "x": 3}}'
    for target in (b"[1]", b'{"q": 0}'):
        out_py = qjson.dumps(qjson.merge_patch(qjson.decode(target), qjson.decode(patch)))
        assert as_bytes(f(target, patch)) == out_py


COPY_DOC = (
    b'{"a": {"p": 1.0E2, "q": "\\u00e9\\/", "n": [1, {"x": null}], "big": 123456789012345678901},'
    b' "b": [true, {"c": {"c": "s"}, "a": []}], "c": {}, "d": [{}, [1, "s"]], "e": 1}'
)
COPY_CASES = [
    # (Lua edits before the patch, Python edits, the patch)
    ("t.a.r = 5", "v['a']['r'] = 5", [{"op": "copy", "from": "/a", "path": "/z"}]),
    ("t.a.r = 5", "v['a']['r'] = 5", [{"op": "copy", "from": "", "path": "/z"}]),
    ("t.a.p = nil", "del v['a']['p']", [{"op": "copy", "from": "/a", "path": "/b/0"}]),
    (
        "qjson.append(t.a.n, 2)",
        "v['a']['n'].append(2)",
        [{"op": "copy", "from": "/a", "path": "/d/-"}],
    ),
    ("", "", [{"op": "remove", "path": "/d/1"}, {"op": "copy", "path": "/d/1", "from": ""}]),
    (
        "",
        "",
        [
            {"op": "replace", "path": "/a/q", "value": "x"},
            {"op": "replace", "path": "/e", "value": 2},
            {"op": "copy", "path": "/c/k", "from": ""},
        ],
    ),
    ("t.b[2].c.c = 't'", "v['b'][1]['c']['c'] = 't'", [{"op": "copy", "from": "/b", "path": "/f"}]),
    # An edit undone: no edit left, so the copy is the untouched bytes.
    (
        "t.a.r = 5; t.a.r = nil",
        "v['a']['r'] = 5; del v['a']['r']",
        [{"op": "copy", "from": "/a", "path": "/z"}],
    ),
]


@pytest.mark.parametrize("lua_code,py_code,ops", COPY_CASES)
def test_copy_of_an_edited_container_equals_python(
    lua_apply: Any, lua_code: str, py_code: str, ops: list[Any]
) -> None:
    v = qjson.decode(COPY_DOC)
    exec(py_code, {"v": v, "qjson": qjson})
    out_py = qjson.dumps(qjson.patch(v, json.dumps(ops)))
    code = f"{lua_code}\nt = qjson.patch(t, {lua_str(json.dumps(ops))})"
    # The encode runs on `t` as the patch returned it (the root stays).
    assert as_bytes(lua_apply(COPY_DOC, code)) == out_py


# Values a text patch puts are fresh proxies of the patch's own members
# (sharing the patch document's fields); edits made to them afterwards are
# written, and never reach the cached patch: the same text applied again
# puts its members as they are.
TEXT_VALUE_CASES = [
    (
        'local m = \'{"m": {"k": [1, 2], "o": {"p": 1}}, "n": [3]}\'\n'
        "qjson.merge_patch(t, m); t.m.k[1] = 9; t.m.o.q = 2; t.m.j = 1; qjson.insert(t.n, 1, 0)\n"
        "qjson.merge_patch(t, m); t.m.k[2] = 8",
        'm = b\'{"m": {"k": [1, 2], "o": {"p": 1}}, "n": [3]}\'\n'
        "qjson.merge_patch(v, m); v['m']['k'][0] = 9; v['m']['o']['q'] = 2; v['m']['j'] = 1;"
        " v['n'].insert(0, 0)\n"
        "qjson.merge_patch(v, m); v['m']['k'][1] = 8",
    ),
    (
        'local p = \'[{"op": "add", "path": "/x", "value": {"a": [1, {"b": 2}]}}]\'\n'
        "qjson.patch(t, p); t.x.a[2].b = 3; qjson.insert(t.x.a, 1, 0)\n"
        "t.y = t.x; qjson.patch(t, p); t.x.a[1] = 5",
        'p = b\'[{"op": "add", "path": "/x", "value": {"a": [1, {"b": 2}]}}]\'\n'
        "qjson.patch(v, p); v['x']['a'][1]['b'] = 3; v['x']['a'].insert(0, 0)\n"
        "v['y'] = v['x']; qjson.patch(v, p); v['x']['a'][0] = 5",
    ),
]


@pytest.mark.parametrize("lua_code,py_code", TEXT_VALUE_CASES)
def test_text_patch_values_edited_after(lua_apply: Any, lua_code: str, py_code: str):
    assert_stale_doc_edits_agree(lua_apply, lua_code, py_code)
