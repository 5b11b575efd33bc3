"""qjson.patch (RFC 6902), qjson.merge_patch (RFC 7396), qjson.incr / qjson.mul
on lazy views: the JSON Patch conformance suite, RFC 7396's Appendix A, a
differential property test against the ``jsonpatch`` package, atomicity
(a failing patch leaves the target byte-identical, held views included), and
the number operations."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import qjson
from conftest import pointer_token, same
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from patch_cases import (
    RFC7396_APPENDIX_A,
    ROOTS,
    patches,
    suite_params,
)

jsonpatch = pytest.importorskip("jsonpatch", reason="jsonpatch is not installed (qjson[test])")


def reloaded(v: Any) -> Any:
    return json.loads(qjson.dumps(v))


# ------------------------------------------------------------ conformance


@pytest.mark.parametrize("as_text", [False, True], ids=["objects", "text"])
@pytest.mark.parametrize("record", suite_params())
def test_conformance(record: dict, as_text: bool) -> None:
    src = json.dumps(record["doc"], indent=1).encode()
    target = qjson.decode(src)
    ops = json.dumps(record["patch"]).encode() if as_text else copy.deepcopy(record["patch"])
    if "error" in record:
        before = qjson.dumps(target)
        with pytest.raises(qjson.PatchError) as info:
            qjson.patch(target, ops)
        assert isinstance(info.value, ValueError)
        assert 0 <= info.value.op_index < len(record["patch"])
        assert qjson.dumps(target) == before
        return
    result = qjson.patch(target, ops)
    if "expected" in record:
        assert same(reloaded(result), record["expected"])
        # A patch given as objects is not aliased by the document.
        if not as_text:
            assert ops == record["patch"]


def test_conformance_error_indices() -> None:
    v = qjson.decode(b'{"a": [1, 2]}')
    ops = [
        {"op": "test", "path": "/a/0", "value": 1},
        {"op": "add", "path": "/a/01", "value": 3},
    ]
    with pytest.raises(qjson.PatchError) as info:
        qjson.patch(v, ops)
    assert info.value.op_index == 1


@pytest.mark.parametrize(
    "op",
    [
        {"path": "/a", "value": 1},
        {"op": "add", "value": 1},
        {"op": "add", "path": "/a"},
        {"op": "move", "path": "/b"},
        {"op": "add", "path": 5, "value": 1},
        {"op": "bogus", "path": "/a"},
        {"op": "add", "path": "a", "value": 1},
        {"op": "add", "path": "/a~2", "value": 1},
        {"op": "remove", "path": "/missing"},
        {"op": "remove", "path": "/a/x"},
        {"op": "replace", "path": "/b", "value": 1},
        {"op": "add", "path": "/a/-1", "value": 1},
        {"op": "add", "path": "/a/4", "value": 1},
        {"op": "add", "path": "/a/1e0", "value": 1},
        {"op": "remove", "path": "/a/-"},
        {"op": "move", "from": "/a", "path": "/a/0"},
        {"op": "test", "path": "/t", "value": 1},
        {"op": "test", "path": "/one", "value": True},
        "not an op",
        # Lone surrogates: no JSON text holds them, so a patch error (not
        # Python's UnicodeEncodeError), the document unchanged.
        {"op": "replace", "path": "/\ud800", "value": 1},
        {"op": "add", "path": "/a/\udc00", "value": 1},
        {"op": "move", "from": "/\ud800", "path": "/b"},
        {"op": "copy", "from": "/a", "path": "/\ud800"},
        {"op": "\ud800", "path": "/a"},
    ],
)
def test_bad_ops(op: Any) -> None:
    src = b'{"a": [1, 2, 3], "t": true, "one": 1}'
    v = qjson.decode(src)
    with pytest.raises(qjson.PatchError) as info:
        qjson.patch(v, [{"op": "add", "path": "/z", "value": 0}, op])
    assert info.value.op_index == 1
    assert qjson.dumps(v) == src


def test_member_with_a_lone_surrogate_name_is_ignored() -> None:
    # Members other than op / path / value / from are ignored (RFC 6902),
    # also one whose name no JSON text can hold.
    v = qjson.decode(b'{"a": 1}')
    qjson.patch(v, [{"op": "add", "path": "/z", "value": 2, "\ud800": 1}])
    assert json.loads(qjson.dumps(v)) == {"a": 1, "z": 2}


def test_json_equality_of_test() -> None:
    v = qjson.decode(
        b'{"n": 1, "f": 1.0, "o": {"a": 1, "b": [true, null]}, "big": 123456789012345678901}'
    )
    qjson.patch(
        v,
        [
            {"op": "test", "path": "/n", "value": 1.0},
            {"op": "test", "path": "/f", "value": 1},
            {"op": "test", "path": "/o", "value": {"b": [True, None], "a": 1.0}},
            {"op": "test", "path": "/big", "value": 123456789012345678901},
        ],
    )
    for bad in (2**53 + 1, {"a": 1}, {"a": 1, "b": [1, None]}):
        with pytest.raises(qjson.PatchError):
            qjson.patch(
                v, [{"op": "test", "path": "/o" if isinstance(bad, dict) else "/n", "value": bad}]
            )


def test_text_patch_values_keep_their_bytes() -> None:
    v = qjson.decode(b'{"a": []}')
    qjson.patch(v, b'[{"op": "add", "path": "/a/-", "value": {"x" :  [1.50, 1e2, "\\u00e9"]}}]')
    assert b'{"x" :  [1.50, 1e2, "\\u00e9"]}' in qjson.dumps(v)


def test_copy_and_move_do_not_alias() -> None:
    v = qjson.decode(b'{"a": {"x": [1]}, "b": {}}')
    qjson.patch(
        v,
        [
            {"op": "copy", "from": "/a", "path": "/b/c"},
            {"op": "add", "path": "/b/c/x/-", "value": 2},
            {"op": "move", "from": "/a/x", "path": "/m"},
        ],
    )
    assert same(reloaded(v), {"a": {}, "b": {"c": {"x": [1, 2]}}, "m": [1]})


def test_added_dict_is_copied() -> None:
    value = {"k": [1]}
    v = qjson.decode(b"{}")
    qjson.patch(
        v,
        [{"op": "add", "path": "/a", "value": value}, {"op": "add", "path": "/a/k/-", "value": 2}],
    )
    assert value == {"k": [1]}
    assert reloaded(v) == {"a": {"k": [1, 2]}}


def test_root_replacement_returns_the_new_root() -> None:
    v = qjson.decode(b'{"a": 1}')
    r = qjson.patch(
        v, [{"op": "replace", "path": "", "value": [1, 2]}, {"op": "add", "path": "/-", "value": 3}]
    )
    assert r == [1, 2, 3]
    assert qjson.dumps(v) == b'{"a": 1}'
    assert qjson.patch(v, []) is v


def test_views_see_the_patch_and_materialize_applies_it() -> None:
    v = qjson.decode(b'{"m": [{"role": "user"}], "s": true}')
    m = v["m"]
    first = m[0]
    qjson.patch(
        v,
        [{"op": "replace", "path": "/m/0/role", "value": "system"}, {"op": "remove", "path": "/s"}],
    )
    assert first["role"] == "system"
    assert v["m"] is m
    assert qjson.materialize(v) == {"m": [{"role": "system"}]}


def test_patch_rejects_wrong_kinds() -> None:
    v = qjson.decode(b"{}")
    with pytest.raises(TypeError):
        qjson.patch(v, 5)
    with pytest.raises(qjson.PatchError):
        qjson.patch(v, b'{"op": "add"}')
    with pytest.raises(qjson.JSONDecodeError):
        qjson.patch(v, b"[")


def test_text_patch_read_again_gives_fresh_values() -> None:
    """A patch text applied twice (read once, kept): each document gets
    values of its own, and a malformed op fails in its turn each time."""
    text = (
        b'[{"op": "add", "path": "/a", "value": {"x": [1]}},'
        b' {"op": "add", "path": "/n", "value": 2}]'
    )
    first = qjson.decode(b"{}")
    qjson.patch(first, text)
    first["a"]["x"].append(5)
    first["a"]["y"] = 0
    for again in (text, bytes(text), text.decode(), bytearray(text), memoryview(text)):
        v = qjson.decode(b"{}")
        assert qjson.patch(v, again) is v
        assert reloaded(v) == {"a": {"x": [1]}, "n": 2}
        assert b'{"x": [1]}' in qjson.dumps(v)
    assert reloaded(first) == {"a": {"x": [1, 5], "y": 0}, "n": 2}
    bad = b'[{"op": "add", "path": "/a", "value": 1}, {"op": "add", "value": 1}]'
    for _ in range(2):
        v = qjson.decode(b'{"b": 0}')
        with pytest.raises(qjson.PatchError) as info:
            qjson.patch(v, bad)
        assert info.value.op_index == 1
        assert "path" in str(info.value)
        assert qjson.dumps(v) == b'{"b": 0}'
    # Escaped member names are read unescaped; the first occurrence wins.
    v = qjson.decode(b"{}")
    qjson.patch(v, rb'[{"o\u0070": "add", "path": "/k", "path": "/no", "value": 1}]')
    assert reloaded(v) == {"k": 1}


def test_text_patch_cache_keeps_no_stale_text() -> None:
    """Many different texts in turn (more than are kept), then the first
    again: every one reads as itself."""
    texts = [json.dumps([{"op": "add", "path": f"/k{i}", "value": i}]) for i in range(20)]
    for t in [*texts, *texts[:3]]:
        v = qjson.decode(b"{}")
        qjson.patch(v, t)
        op = json.loads(t)[0]
        assert reloaded(v) == {op["path"][1:]: op["value"]}


def test_dict_ops_read_again_on_every_call() -> None:
    """Ops given as dicts are read on every call: the pointers parsed once
    (kept by the identity of their str) give what parsing gives, more paths
    than are kept read as themselves, and a dict changed between calls is
    applied as it is now."""
    ops: list[dict[str, Any]] = [{"op": "add", "path": "/a~1b/~0", "value": 1}]
    for _ in range(2):
        v = qjson.decode(b'{"a/b": {}}')
        qjson.patch(v, ops)
        assert reloaded(v) == {"a/b": {"~": 1}}
    ops[0]["path"] = "/c"
    v = qjson.decode(b'{"a/b": {}}')
    qjson.patch(v, ops)
    assert reloaded(v) == {"a/b": {}, "c": 1}
    ops[0]["path"] = "no pointer"
    with pytest.raises(qjson.PatchError) as info:
        qjson.patch(qjson.decode(b"{}"), ops)
    assert "JSON Pointer" in str(info.value)
    # More distinct paths than are kept, then the first ones again; a str
    # subclass reads as its text.
    paths = [f"/k{i}" for i in range(40)]

    class Sub(str):
        pass

    for p in [*paths, *paths[:5], Sub("/sub")]:
        v = qjson.decode(b"{}")
        qjson.patch(v, [{"op": "add", "path": p, "value": p}])
        assert reloaded(v) == {str(p)[1:]: str(p)}
    # Keys given as equal strs that are not the interned names.
    names = ["".join(c) for c in ("op", "path", "value")]
    v = qjson.decode(b"{}")
    qjson.patch(v, [{names[0]: "add", names[1]: "/x", names[2]: 2, "extra": 0}])
    assert reloaded(v) == {"x": 2}


# -------------------------------------------------------------- atomicity

DOC = (
    b'{"model": "gpt-4o",  "stream": true, "max_tokens": 500,\n'
    b' "messages": [{"role": "system", "content": "Be brief."},\n'
    b'   {"role": "user", "content": [{"type": "text", "text": "hi"}]}],\n'
    b' "tools": {"a": {"x": 1}, "b": [1, 2.50]}}'
)

GOOD_OPS: list[dict[str, Any]] = [
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
def test_failed_patch_changes_nothing(fail_after: int, pre_edit: bool) -> None:
    v = qjson.decode(DOC)
    held = [
        v["messages"],
        v["messages"][1],
        v["messages"][1]["content"],
        v["tools"],
        v["tools"]["b"],
    ]
    if pre_edit:
        v["max_tokens"] = 7
        held[1]["name"] = "n"
        held[4].append(3)
    plain_before = qjson.materialize(v)  # (unfolds patched objects: before `before`)
    before = qjson.dumps(v)
    held_before = [qjson.dumps(h) for h in held]
    ops = [*GOOD_OPS[:fail_after], {"op": "test", "path": "/model", "value": "nope"}]
    with pytest.raises(qjson.PatchError) as info:
        qjson.patch(v, ops)
    assert info.value.op_index == fail_after
    assert qjson.dumps(v) == before
    assert [qjson.dumps(h) for h in held] == held_before
    assert qjson.materialize(v) == plain_before
    assert v["messages"] is held[0] and v["messages"][1] is held[1]
    assert v["tools"]["b"] is held[4]
    # The same views still take the patch afterwards.
    qjson.patch(v, GOOD_OPS)
    assert held[0][1]["moved"] == {"x": 1}


def test_failed_patch_on_plain_values_changes_nothing() -> None:
    v = qjson.decode(b'{"a": 1}')
    v["p"] = {"x": [1, 2], "y": {"z": 1}}
    before = qjson.dumps(v)
    ops = [
        {"op": "add", "path": "/p/x/0", "value": 0},
        {"op": "remove", "path": "/p/y/z"},
        {"op": "add", "path": "/p/y/w", "value": 2},
        {"op": "remove", "path": "/nope"},
    ]
    with pytest.raises(qjson.PatchError):
        qjson.patch(v, ops)
    assert qjson.dumps(v) == before


def test_untouched_document_stays_one_copy() -> None:
    v = qjson.decode(DOC)
    with pytest.raises(qjson.PatchError):
        qjson.patch(v, [GOOD_OPS[0], GOOD_OPS[2], {"op": "remove", "path": "/x"}])
    assert qjson.dumps(v) == DOC


# ------------------------------------------------------------ merge patch


@pytest.mark.parametrize("as_text", [False, True], ids=["objects", "text"])
@pytest.mark.parametrize(("original", "patch", "result"), RFC7396_APPENDIX_A)
def test_merge_patch_rfc7396(original: Any, patch: Any, result: Any, as_text: bool) -> None:
    target = qjson.decode(json.dumps(original, indent=2).encode())
    # A str patch is JSON text, so a string patch is always given as text.
    text = as_text or isinstance(patch, str)
    p = json.dumps(patch).encode() if text else copy.deepcopy(patch)
    out = qjson.merge_patch(target, p)
    assert same(reloaded(out), result)


def test_merge_patch_splices() -> None:
    src = b'{"model": "gpt-4o",  "logprobs": true, "messages": [ {"role": "user"} ]}'
    v = qjson.decode(src)
    r = qjson.merge_patch(v, b'{"metadata": {"tenant":  "acme", "x": null}, "logprobs": null}')
    assert r is v
    out = qjson.dumps(v)
    assert b'"messages": [ {"role": "user"} ]' in out
    assert json.loads(out) == {
        "model": "gpt-4o",
        "messages": [{"role": "user"}],
        "metadata": {"tenant": "acme"},
    }
    # A patch object without nulls is written as its own bytes.
    v = qjson.decode(src)
    qjson.merge_patch(v, b'{"metadata": {"tenant":  "acme"}}')
    assert b'{"tenant":  "acme"}' in qjson.dumps(v)


def test_merge_patch_into_views_held() -> None:
    v = qjson.decode(b'{"a": {"b": 1, "c": 2}}')
    a = v["a"]
    qjson.merge_patch(v, {"a": {"b": None, "d": [None]}})
    assert a == {"c": 2, "d": [None]}
    assert v["a"] is a


def test_merge_patch_object_into_absent_member() -> None:
    # An object value for a member the target lacks is added at the end,
    # whether the member never was there, was deleted before (a patch), or
    # the object was unfolded by another edit; a key with a lone surrogate
    # is refused, as item assignment refuses it.
    src = b'{"a": 1, "b": {"c": 2},  "d": 3}'
    v = qjson.decode(src)
    qjson.merge_patch(v, {"n": {"x": 1, "y": None}})
    assert qjson.dumps(v) == b'{"a": 1, "b": {"c": 2},  "d": 3,"n":{"x":1}}'
    v = qjson.decode(src)
    del v["b"]
    qjson.merge_patch(v, {"b": {"x": 1}})
    assert list(v) == ["a", "d", "b"]
    assert json.loads(qjson.dumps(v)) == {"a": 1, "d": 3, "b": {"x": 1}}
    v = qjson.decode(src)
    v.popitem()  # unfolds the object
    qjson.merge_patch(v, {"d": {"x": 1}, "b": {"e": 4}})
    assert json.loads(qjson.dumps(v)) == {"a": 1, "b": {"c": 2, "e": 4}, "d": {"x": 1}}
    v = qjson.decode(src)
    before = qjson.dumps(v)
    with pytest.raises(UnicodeEncodeError):
        qjson.merge_patch(v, {"\ud800": {"x": 1}})
    assert qjson.dumps(v) == before


def _merged(target: Any, patch: Any) -> Any:
    """RFC 7396's MergePatch, on plain values (the reference)."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = _merged(out.get(k), v)
    return out


_MERGE_SRC = (
    b'{"model": "gpt-4o", "n" : {"a": 1, "b": [2]}, "stream": true,'
    b'  "temperature": 0.7, "a_rather_long_key": {"x": null}}'
)


@pytest.mark.parametrize(
    "edits",
    [
        [],
        [("set", "model", "m")],
        [("set", "new", 1)],
        [("del", "stream", None)],
        [("del", "stream", None), ("set", "stream", 2)],
        [("del", "n", None)],
        [("set", "n", {"z": 1})],
        [("unfold", None, None)],
    ],
)
@pytest.mark.parametrize(
    "patch",
    [
        {"model": "x", "stream": None, "missing": None, "n": {"b": None, "c": 3}},
        {"absent": {"k": 1}, "logprobs": None, "temperature": 0.2},
        {"a_rather_long_key": {"x": 1}, "new": None, "n": 5, "model": None},
        {"stream": {"s": None}, "n": {"a": {"deep": True}}, "": 0},
    ],
    ids=["mixed", "chat", "long", "objects"],
)
def test_merge_patch_of_several_keys_after_edits(edits: Any, patch: Any) -> None:
    """A merge patch of several keys into a lazy object after edits of the
    same keys (set, deleted, deleted and set again, unfolded): the same
    result as the reference on plain values, and members neither edited
    nor patched keep their bytes."""
    v = qjson.decode(_MERGE_SRC)
    want = json.loads(_MERGE_SRC)
    for kind, key, value in edits:
        if kind == "set":
            v[key] = value
            want[key] = value
        elif kind == "del":
            del v[key]
            del want[key]
        else:
            v.popitem()
            want.popitem()
    out = qjson.merge_patch(v, copy.deepcopy(patch))
    assert out is v
    want = _merged(want, patch)
    assert json.loads(qjson.dumps(v)) == want
    assert dict(v.items()) == want
    if not edits and "n" not in patch:
        assert b'"n" : {"a": 1, "b": [2]}' in qjson.dumps(v)


def test_merge_patch_of_several_keys_with_repeats_and_escapes() -> None:
    """A merge patch of several keys into objects with a repeated key or an
    escaped key, strict and lazy: the first occurrence of a repeated key is
    the member, an escaped key matches its text."""
    for src in (
        b'{"a": 1, "b": {"c": 2}, "a": 3}',
        b'{"\\u0061": 1, "b": {"c": 2}}',
    ):
        for lazy in (False, True):
            v = qjson.parse(src, lazy=lazy).root
            qjson.merge_patch(v, {"a": None, "b": {"d": 4}, "e": 5})
            assert json.loads(qjson.dumps(v)) == {"b": {"c": 2, "d": 4}, "e": 5}
            v = qjson.parse(src, lazy=lazy).root
            qjson.merge_patch(v, {"a": {"x": 1}, "b": None})
            assert json.loads(qjson.dumps(v)) == {"a": {"x": 1}}


class _Key(str):
    """A str subclass key (goes the general way, not the one-copy path)."""


def test_merge_patch_dict_of_scalars_is_a_copy() -> None:
    # An added dict of non-null scalars is copied whole: later edits of the
    # caller's dict do not reach the document, and a null, a nested object,
    # a key of another type or a str subclass key goes the general way.
    v = qjson.decode(b'{"a": 1}')
    meta = {"tenant": "acme", "n": 2, "f": 0.5, "ok": True}
    qjson.merge_patch(v, {"metadata": meta})
    meta["tenant"] = "other"
    meta["extra"] = 1
    assert json.loads(qjson.dumps(v)) == {
        "a": 1,
        "metadata": {"tenant": "acme", "n": 2, "f": 0.5, "ok": True},
    }
    assert v["metadata"] is not meta
    qjson.merge_patch(v, {"b": {"x": None, "y": 1}, "c": {"d": {"e": None, "f": 2}}})
    assert json.loads(qjson.dumps(v))["b"] == {"y": 1}
    assert json.loads(qjson.dumps(v))["c"] == {"d": {"f": 2}}
    qjson.merge_patch(v, {"s": {_Key("k"): "v"}})
    assert json.loads(qjson.dumps(v))["s"] == {"k": "v"}
    before = qjson.dumps(v)
    with pytest.raises(TypeError, match="keys must be str"):
        qjson.merge_patch(v, {"g": {5: "x"}})
    assert qjson.dumps(v) == before


# ------------------------------------------------------------ number ops


def test_incr_ints_exact_beyond_64_bits() -> None:
    v = qjson.decode(b'{"n": 18446744073709551615, "a": [1, -5]}')
    assert qjson.incr(v, "/n") == 2**64
    assert qjson.incr(v, "n", 2**70) == 2**64 + 2**70
    assert qjson.mul(v, "a[1]", 2**65) == -5 * 2**65
    assert qjson.incr(v, "/a/0", -1) == 0
    assert json.loads(qjson.dumps(v)) == {"n": 2**64 + 2**70, "a": [0, -5 * 2**65]}
    assert type(qjson.incr(v, "/a/0")) is int


def test_number_ops_on_floats_follow_python() -> None:
    v = qjson.decode(b'{"t": 0.1, "i": 3, "e": 1e2}')
    assert qjson.incr(v, "/t", 0.2) == 0.1 + 0.2
    assert qjson.mul(v, "/i", 0.5) == 1.5
    assert qjson.mul(v, "e", 3) == 300.0
    assert type(v["e"]) is float
    assert json.loads(qjson.dumps(v)) == {"t": 0.1 + 0.2, "i": 1.5, "e": 300.0}


@pytest.mark.parametrize("path", ["/s", "/b", "/z", "/o", "/l", "l[0]"])
def test_number_ops_on_non_numbers(path: str) -> None:
    src = b'{"s": "1", "b": true, "z": null, "o": {}, "l": [[]]}'
    v = qjson.decode(src)
    with pytest.raises(TypeError):
        qjson.incr(v, path)
    with pytest.raises(TypeError):
        qjson.mul(v, path, 2)
    assert qjson.dumps(v) == src


def test_number_ops_operand() -> None:
    v = qjson.decode(b'{"n": 1}')
    for bad in (True, "1", [1], None):
        with pytest.raises(TypeError):
            qjson.incr(v, "n", bad)
        with pytest.raises(TypeError):
            qjson.incr(v, "n", by=bad)
        with pytest.raises(TypeError):
            qjson.mul(v, "n", bad)
    assert qjson.dumps(v) == b'{"n": 1}'
    # Left out, `by` is 1.
    assert qjson.incr(v, "n") == 2 and qjson.incr(target=v, path="/n") == 3


@pytest.mark.parametrize("path", ["/missing", "missing", "/a/5", "a[5]", "/a/x", "/n/x", "a.b"])
def test_number_ops_on_missing_paths(path: str) -> None:
    v = qjson.decode(b'{"n": 1, "a": [1]}')
    with pytest.raises(qjson.PathError):
        qjson.incr(v, path)
    with pytest.raises(qjson.PathError):
        qjson.mul(v, path, 2)


# ----------------------------------------------------- differential test


def top_level_untouched(doc: Any, ops: list[dict[str, Any]]) -> list[str]:
    """Members of a top-level object that no op names (path or from)."""
    if not isinstance(doc, dict):
        return []
    named = set()
    for op in ops:
        for p in (op.get("path"), op.get("from")):
            if p == "":
                return []
            if p:
                named.add(p.split("/")[1])
    return [k for k in doc if pointer_token(k) not in named]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_against_jsonpatch(data: Any) -> None:
    doc = data.draw(ROOTS)
    ops = data.draw(patches(doc))
    indent = data.draw(st.sampled_from([None, 1, 2]))
    src = json.dumps(doc, indent=indent).encode()
    expected = jsonpatch.apply_patch(json.loads(src), ops)
    as_text = data.draw(st.booleans())
    target = qjson.decode(src)
    fail = data.draw(st.booleans())
    if fail:
        children = target.values() if isinstance(target, qjson.Object) else list(target)
        held = [c for c in children if isinstance(c, (qjson.Object, qjson.Array))]
        before, held_before = qjson.dumps(target), [qjson.dumps(h) for h in held]
        bad = [*ops, {"op": "remove", "path": "/does-not-exist/x"}]
        with pytest.raises(qjson.PatchError) as info:
            qjson.patch(target, json.dumps(bad).encode() if as_text else bad)
        assert info.value.op_index == len(ops)
        assert qjson.dumps(target) == before
        assert [qjson.dumps(h) for h in held] == held_before
    result = qjson.patch(target, json.dumps(ops).encode() if as_text else ops)
    out = qjson.dumps(result)
    assert same(json.loads(out), expected)
    # Untouched members are copied as they were written.
    if isinstance(expected, dict) and result is target:
        got, orig = qjson.parse(out), qjson.parse(src)
        for k in top_level_untouched(doc, ops):
            ptr = "/" + pointer_token(k)
            assert got.raw(ptr) == orig.raw(ptr)


def test_test_op_reads_without_unfolding() -> None:
    v = qjson.decode(b'{"o": {"a": 1,  "b": 2}, "z": 0}')
    v["o"]["a"] = 5
    before = qjson.dumps(v)
    with pytest.raises(qjson.PatchError):
        qjson.patch(
            v,
            [
                {"op": "test", "path": "/o", "value": {"b": 2, "a": 5}},
                {"op": "test", "path": "/z", "value": 1},
            ],
        )
    assert qjson.dumps(v) == before


def test_failed_merge_patch_changes_nothing() -> None:
    src = b'{"a": {"b": 1},  "c": 2}'
    v = qjson.decode(src)
    a = v["a"]
    with pytest.raises(TypeError):
        qjson.merge_patch(v, {"a": {"b": None, "x": 1}, "c": None, 5: 1})
    assert qjson.dumps(v) == src
    assert a == {"b": 1}


def test_merge_patch_dict_members_in_order_and_key_errors_atomic() -> None:
    """A merge patch given as a dict is applied member by member in the
    dict's order, nested dicts merged into the objects they name (nulls
    delete, absent nulls are nothing); a key that is not a str anywhere a
    dict merges into an object raises TypeError before that object
    changes, and the whole merge is undone, held views included."""
    src = b'{"a": {"b": 1, "c": {"d": 2}}, "e": 3, "f": [1]}'
    v = qjson.decode(src)
    a, c = v["a"], v["a"]["c"]
    patch = {"e": None, "a": {"c": {"d": None, "x": {"y": None, "z": 1}}, "b": 5}, "g": None}
    qjson.merge_patch(v, patch)
    assert qjson.dumps(v) == b'{"a": {"b": 5, "c": {"x":{"z":1}}}, "f": [1]}'
    assert a["c"] is c and c == {"x": {"z": 1}}
    c["w"] = 0
    assert reloaded(v)["a"]["c"] == {"x": {"z": 1}, "w": 0}
    v = qjson.decode(src)
    a, c = v["a"], v["a"]["c"]
    for bad in (
        {"e": 9, "a": {"b": 2, "c": {"d": 3, 7: 1}}},
        {"a": {"b": None, 7: 1}},
        {"e": None, "a": {"c": {"d": None}}, (1,): 2},
    ):
        with pytest.raises(TypeError, match="keys must be str"):
            qjson.merge_patch(v, bad)
        assert qjson.dumps(v) == src
        assert a == {"b": 1, "c": {"d": 2}} and v["a"]["c"] is c
    qjson.merge_patch(v, {"a": {_Key("b"): 4}})
    assert reloaded(v)["a"] == {"b": 4, "c": {"d": 2}}
    # Several absent members are added in the dict's order, at each level.
    v = qjson.decode(b'{"a": {"b": 1}}')
    qjson.merge_patch(v, {"x": 1, "a": {"q": 1, "p": 2, "b": None}, "y": 2, "w": 3})
    assert qjson.dumps(v) == b'{"a": {"q":1,"p":2},"x":1,"y":2,"w":3}'
    assert list(json.loads(qjson.dumps(v))) == ["a", "x", "y", "w"]


def test_patch_on_a_lazy_document_raises_decode_errors_atomically() -> None:
    src = b'{"a": [1, 2], "bad": {"x": tru}}'
    v = qjson.parse(src, lazy=True).root
    with pytest.raises(qjson.JSONDecodeError):
        qjson.patch(
            v, [{"op": "remove", "path": "/a/0"}, {"op": "test", "path": "/bad/x", "value": 1}]
        )
    assert v["a"] == [1, 2]


def test_op_dict_keys_of_other_kinds_and_array_tokens() -> None:
    """An op dict's members are found among keys that are not strs and
    under str-subclass keys; array tokens are indices only when written
    as one (no leading zero, no sign, in range), checked against the
    array's length on every use of the same pointer."""

    class Key(str):
        pass

    v = qjson.decode(b'{"a": [1, 2]}')
    qjson.patch(v, [{1: "x", None: 0, Key("op"): "add", Key("path"): "/a/1", "value": 9}])
    assert reloaded(v) == {"a": [1, 9, 2]}
    for token in ("01", "+1", "-1", "1.0", "99999999999999999999999", "4"):
        with pytest.raises(qjson.PatchError):
            qjson.patch(
                qjson.decode(b'{"a": [1, 2]}'),
                [{"op": "replace", "path": f"/a/{token}", "value": 0}],
            )
    # The same pointer in range, then out of range (an index is kept with
    # the pointer, its bound is not).
    ops = [{"op": "remove", "path": "/a/2"}]
    v = qjson.decode(b'{"a": [1, 2, 3]}')
    qjson.patch(v, ops)
    assert reloaded(v) == {"a": [1, 2]}
    with pytest.raises(qjson.PatchError):
        qjson.patch(v, ops)
    assert reloaded(v) == {"a": [1, 2]}
    qjson.patch(v, [{"op": "add", "path": "/a/2", "value": 3}])
    assert reloaded(v) == {"a": [1, 2, 3]}


class _EvictingKey:
    """A dict key equal to ``"a"`` whose comparison runs nested patches: the
    first uses the outer op's own path ``str`` (the same cached pointer),
    the rest enough fresh pointers to replace every entry of the pointer
    cache while the outer op still reads its pointer's later tokens."""

    def __init__(self, outer_path: str) -> None:
        self.outer_path = outer_path
        self.calls = 0

    def __hash__(self) -> int:
        return hash("a")

    def __eq__(self, other: object) -> bool:
        if other != "a":
            return False
        self.calls += 1
        inner = qjson.decode(b'{"a": {"b": {"c": 0}}}')
        qjson.patch(inner, [{"op": "replace", "path": self.outer_path, "value": 7}])
        assert qjson.dumps(inner) == b'{"a": {"b": {"c": 7}}}'
        fresh = [{"op": "add", "path": f"/k{i}", "value": i} for i in range(40)]
        qjson.patch({}, fresh)
        return True


def test_pointer_cache_entry_replaced_while_its_op_runs() -> None:
    """A nested ``qjson.patch`` from a callback during an op (here a dict
    key's ``__eq__`` while the op finds its parent) may hit the op's own
    cached pointer and then replace every cache entry: the outer op still
    reads its pointer whole, and the cache stays usable after."""
    path = "/a/b/c"
    plain = {"a": {"b": {"c": 0}}}
    qjson.patch(plain, [{"op": "replace", "path": path, "value": 1}])  # cached now
    key = _EvictingKey(path)
    target = {key: {"b": {"c": 0}}}
    qjson.patch(target, [{"op": "replace", "path": path, "value": 2}])
    assert key.calls >= 1
    assert target[key] == {"b": {"c": 2}}
    # Again, the entry now made anew by the nested patch, and a failing op
    # after it: undone, the nested patches' effects on their own targets kept.
    key2 = _EvictingKey(path)
    target = {key2: {"b": {"c": 0}}}
    with pytest.raises(qjson.PatchError):
        qjson.patch(
            target,
            [{"op": "replace", "path": path, "value": 3}, {"op": "remove", "path": "/zz"}],
        )
    assert key2.calls >= 1 and target[key2] == {"b": {"c": 0}}
    v = qjson.decode(b'{"a": {"b": {"c": 0}}}')
    qjson.patch(v, [{"op": "replace", "path": path, "value": 4}])
    assert qjson.dumps(v) == b'{"a": {"b": {"c": 4}}}'


@pytest.mark.parametrize("lazy", [False, True], ids=["decode", "lazy"])
def test_merge_patch_absent_nulls_change_nothing(lazy: bool) -> None:
    """Nulls naming absent members (at the top, in a nested object, in one
    whose other members the merge changes) delete nothing: a document whose
    only merge was absent nulls writes its input bytes, its held views are
    the same objects with the same values, and it edits as before after."""
    src = b'{"a": {"b": 1, "c": [1, {"d": 2}]},  "e": "x" , "f": null}'
    v = qjson.parse(src, lazy=True).root if lazy else qjson.decode(src)
    a, c = v["a"], v["a"]["c"]
    out = qjson.merge_patch(v, {"zz": None, "a": {"q": None, "c": None}, "a2": None})
    assert out is v
    assert reloaded(v) == {"a": {"b": 1}, "e": "x", "f": None}
    v = qjson.parse(src, lazy=True).root if lazy else qjson.decode(src)
    a, c = v["a"], v["a"]["c"]
    qjson.merge_patch(v, {"zz": None, "a": {"q": None, "r": None}, "f2": None})
    qjson.merge_patch(v, {"a": {"c2": None}})
    assert qjson.dumps(v) == src
    assert v["a"] is a and a["c"] is c and c == [1, {"d": 2}]
    assert "zz" not in v and "q" not in a and len(a) == 2 and len(v) == 3
    c[1]["d"] = 5
    assert reloaded(v) == json.loads(src.replace(b'"d": 2', b'"d": 5'))
    # A plain dict target: absent nulls are nothing too.
    d = {"a": {"b": 1}}
    qjson.merge_patch(d, {"zz": None, "a": {"q": None}})
    assert d == {"a": {"b": 1}}
