"""Passthrough dumps of views: untouched input comes back byte for byte,
edits are spliced in, and the result always parses to the edited value."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
import qjson
from conftest import data_files, reference_loads


def _passthrough_identity(path: Path | None) -> None:
    assert path is not None
    data = path.read_bytes()
    try:
        qjson.validate(data)
    except qjson.JSONDecodeError:
        pytest.skip("qjson rejects this file (see the conformance table)")
    view = qjson.decode(data)
    out = qjson.dumps(view)
    if isinstance(view, (qjson.Object, qjson.Array)):
        assert out == data
    else:
        # A scalar root decodes to a Python scalar: re-encoded, same value.
        assert json.loads(out) == json.loads(data)
    assert qjson.dumps(qjson.parse(data)) == data


@pytest.mark.parametrize("path", data_files("JSONTestSuite/test_parsing", "y_*.json"))
def test_jsontestsuite_y_identity(path: Path | None) -> None:
    _passthrough_identity(path)


@pytest.mark.parametrize("path", data_files("jsonexamples", "**/*.json"))
def test_jsonexamples_identity(path: Path | None) -> None:
    _passthrough_identity(path)


@pytest.mark.parametrize("path", data_files("jsonexamples", "**/*.json"))
def test_jsonexamples_edit_round_trip(path: Path | None) -> None:
    """Edit the first member / element at two depths; the output equals the
    edited reference value and keeps untouched siblings byte-identical."""
    assert path is not None
    data = path.read_bytes()
    view = qjson.decode(data)
    model = reference_loads(data)
    if not isinstance(view, (qjson.Object, qjson.Array)) or len(view) == 0:
        pytest.skip("no container to edit")
    first = next(iter(view)) if isinstance(view, qjson.Object) else 0
    view[first] = {"edited": [1, "x"]}
    model[first] = {"edited": [1, "x"]}
    out = qjson.dumps(view)
    assert json.loads(out) == json.loads(orjson.dumps(model))
    assert qjson.materialize(view) == model


BODY = (
    b'{ "model" : "gpt-4o",\n  "temperature": 0.7, "stream": false,\n'
    b'  "messages": [ {"role": "system", "content": "Be brief."},\n'
    b'    {"role": "user", "content": [ {"type": "text", "text": "hi \\u00e9"} ]} ],\n'
    b'  "meta": {"a": [1, 2.50, -0], "b": "\\ud83d\\ude00"} }\n'
)


def test_untouched_is_identical_whitespace_kept() -> None:
    assert qjson.dumps(qjson.decode(BODY)) == BODY
    doc = qjson.parse(BODY)
    assert qjson.dumps(doc) == BODY
    assert qjson.dumps(doc.root) == BODY
    # Views read but not written stay untouched.
    v = qjson.decode(BODY)
    _ = v["messages"][1]["content"][0]["text"], v["meta"]["a"], list(v.items())
    assert qjson.dumps(v) == BODY
    # A nested untouched view: its own bytes.
    assert qjson.dumps(v["meta"]) == b'{"a": [1, 2.50, -0], "b": "\\ud83d\\ude00"}'
    assert qjson.dumps(v["meta"]["a"]) == b"[1, 2.50, -0]"


def test_edits_splice_and_keep_untouched_bytes() -> None:
    v = qjson.decode(BODY)
    v["model"] = "gpt-4o-mini"
    v["messages"][1]["content"][0]["text"] = "bye"
    out = qjson.dumps(v)
    # Untouched siblings are copied as written (whitespace, 2.50, -0, escapes).
    assert b'"meta": {"a": [1, 2.50, -0], "b": "\\ud83d\\ude00"}' in out
    assert b'{"role": "system", "content": "Be brief."}' in out
    assert b'"temperature": 0.7, "stream": false' in out
    m = json.loads(BODY)
    m["model"] = "gpt-4o-mini"
    m["messages"][1]["content"][0]["text"] = "bye"
    assert json.loads(out) == m == json.loads(orjson.dumps(m))


def test_mixed_trees() -> None:
    a = qjson.decode(b'{"x": [1, {"y": 2}], "z": "s"}')
    b = qjson.decode(b'[true, {"k": null}]')
    plain = {"view": a, "list": [b, a["x"]], "n": 1}
    out = qjson.dumps(plain)
    assert json.loads(out) == {
        "view": {"x": [1, {"y": 2}], "z": "s"},
        "list": [[True, {"k": None}], [1, {"y": 2}]],
        "n": 1,
    }
    # a view from another document assigned into this one
    a["other"] = b
    a["x"][1]["y"] = {"d": [b[1]]}
    b[1]["k"] = 5  # aliasing: b is shared, as a dict would be
    expected = {
        "x": [1, {"y": {"d": [{"k": 5}]}}],
        "z": "s",
        "other": [True, {"k": 5}],
    }
    assert json.loads(qjson.dumps(a)) == expected
    assert a == expected
    assert qjson.materialize(a) == expected
    assert type(qjson.materialize(a)["other"]) is list


def test_type_swaps() -> None:
    v = qjson.decode(b'{"a": {"b": [1, 2]}, "c": 3}')
    inner = v["a"]
    v["a"] = 1
    v["c"] = {"new": [inner]}
    assert json.loads(qjson.dumps(v)) == {"a": 1, "c": {"new": [{"b": [1, 2]}]}}
    inner["b"].append(3)
    assert json.loads(qjson.dumps(v)) == {"a": 1, "c": {"new": [{"b": [1, 2, 3]}]}}


def test_indent_and_sort_keys_reencode() -> None:
    v = qjson.decode(b'{"b": 1,   "a": [1,   2]}')
    v["c"] = None
    plain = {"b": 1, "a": [1, 2], "c": None}
    assert qjson.dumps(v, sort_keys=True) == orjson.dumps(plain, option=orjson.OPT_SORT_KEYS)
    assert qjson.dumps(v, indent=2) == orjson.dumps(plain, option=orjson.OPT_INDENT_2)
    assert qjson.dumps(qjson.decode(b'{"b": 1, "a": 2}'), sort_keys=True) == b'{"a":2,"b":1}'


def test_duplicate_keys() -> None:
    data = b'{"a": 1, "b": 2, "a": 3}'
    v = qjson.decode(data)
    assert v["a"] == 1 and len(v) == 2 and list(v) == ["a", "b"]
    # Untouched: byte for byte, duplicates included.
    assert qjson.dumps(v) == data
    # Edited: each key once; the first occurrence keeps its place (and its
    # key as written: a replaced value follows the original key and colon).
    v["b"] = 5
    assert qjson.dumps(v) == b'{"a": 1,"b": 5}'
    v = qjson.decode(data)
    v["a"] = 9
    assert qjson.dumps(v) == b'{"a": 9,"b": 2}'
    v = qjson.decode(b'{"o": {"x": 1, "x": 2}}')
    v["o"]["y"] = 0
    assert json.loads(qjson.dumps(v)) == {"o": {"x": 1, "y": 0}}
    # Only a child edited: the parent's other members stay as written,
    # repeats included, unless the edited child's own key repeats (a
    # reader keeping the last value would then miss the edit).
    v = qjson.decode(b'{"a": 1, "o": {"x": 1}, "a": 3}')
    v["o"]["x"] = 2
    assert qjson.dumps(v) == b'{"a": 1, "o": {"x": 2}, "a": 3}'
    for repeat in (b'"o"', b'"\\u006f"'):
        v = qjson.decode(b'{"o": {"x": 1}, "a": 1, ' + repeat + b': {"x": 9}}')
        v["o"]["x"] = 2
        assert qjson.dumps(v) == b'{"o": {"x": 2},"a": 1}'
        assert json.loads(qjson.dumps(v)) == {"o": {"x": 2}, "a": 1}


def test_lazy_documents_are_validated_on_passthrough() -> None:
    data = b'{"bad": "\\q", "ok": [1, 2], "num": 01}'
    doc = qjson.parse(data, lazy=True)
    v = doc.root
    with pytest.raises(qjson.JSONDecodeError) as ei:
        qjson.dumps(v)
    assert ei.value.pos == 9
    with pytest.raises(qjson.JSONDecodeError):
        qjson.dumps(doc)
    assert qjson.dumps(v["ok"]) == b"[1, 2]"
    v["bad"] = "fixed"
    with pytest.raises(qjson.JSONDecodeError):
        qjson.dumps(v)  # "num": 01 is still copied
    del v["num"]
    assert qjson.dumps(v) == b'{"bad":"fixed","ok": [1, 2]}'
    bad_utf8 = b'["\xff", 1]'
    w = qjson.parse(bad_utf8, lazy=True).root
    with pytest.raises(qjson.JSONDecodeError):
        qjson.dumps(w)
    del w[0]
    assert qjson.dumps(w) == b"[1]"


def test_cycles_raise() -> None:
    v = qjson.decode(b'{"a": [1]}')
    v["a"].append(v)
    with pytest.raises(qjson.JSONEncodeError):
        qjson.dumps(v)
    with pytest.raises(ValueError):
        qjson.materialize(v)


def test_str_and_memoryview_inputs() -> None:
    s = '{"k": "é", "n": [1]}'
    v = qjson.decode(s)
    assert qjson.dumps(v) == s.encode()
    v["n"].append(2)
    assert json.loads(qjson.dumps(v)) == {"k": "é", "n": [1, 2]}
    m = qjson.decode(memoryview(b' [1, {"a": 2}] '))
    assert qjson.dumps(m) == b' [1, {"a": 2}] '


def test_views_after_a_large_result() -> None:
    # dumps sizes its buffer from the previous result; a view's encoded
    # parts use a small one, whatever came before (same output either way).
    big = qjson.dumps(["x" * 1000] * 2000)
    assert len(big) > 2_000_000
    v = qjson.decode(b'{"a": 1, "b": [2, 3]}')
    assert qjson.dumps(v) == b'{"a": 1, "b": [2, 3]}'
    v["a"] = "y" * 600
    v["b"].append({"c": None})
    assert json.loads(qjson.dumps(v)) == {"a": "y" * 600, "b": [2, 3, {"c": None}]}
    assert qjson.dumps([1, 2]) == b"[1,2]"


@pytest.mark.parametrize("size", [10, 2_000, 60_000, 70_000, 200_000, 9_000_000])
def test_edited_root_outgrows_or_shrinks_its_input(size: int) -> None:
    # dumps of a root view of a small document writes into a result sized
    # for the input; an edit may need far more room than that, or far less
    # (and a larger document goes by segments: same bytes either way, also
    # for ranges past the vector copy's 16 KiB and a document of several MB).
    pad = "p" * size
    data = b'{"a": 1, "pad": "' + pad.encode() + b'", "b": [2, 3]}'
    v = qjson.decode(data)
    assert qjson.dumps(v) == data
    v["a"] = "y" * (3 * size + 1000)
    assert qjson.dumps(v) == data.replace(b'"a": 1', b'"a": "' + b"y" * (3 * size + 1000) + b'"')
    del v["pad"]
    v["a"] = 0
    assert qjson.dumps(v) == b'{"a": 0, "b": [2, 3]}'
    # A child view is written by segments, whatever the document's size.
    w = qjson.decode(data)
    w["b"].append(4)
    assert qjson.dumps(w["b"]) == b"[2, 3,4]"
    d = qjson.parse(data)
    assert qjson.dumps(d) == data


def test_array_with_edited_children_is_spliced_byte_for_byte() -> None:
    # Only the edited children change; the array's own bytes (whitespace,
    # number text, untouched siblings) are kept, whatever the access order.
    data = b'[ {"a": 1.50}, [1, 2] ,{"b": 2} , 3e0, {"c": [ ]} ]'
    v = qjson.decode(data)
    v[4]["c"].append(1)
    v[0]["a"] = 0
    v[2]  # read, not edited: stays as written
    assert qjson.dumps(v) == b'[ {"a": 0}, [1, 2] ,{"b": 2} , 3e0, {"c": [1 ]} ]'
    v[1][0] = 9
    out = qjson.dumps(v)
    assert out == b'[ {"a": 0}, [9,2] ,{"b": 2} , 3e0, {"c": [1 ]} ]'
    assert json.loads(out) == [{"a": 0}, [9, 2], {"b": 2}, 3.0, {"c": [1]}]
    # An append is spliced after the last element, the rest as written.
    v.append(None)
    assert qjson.dumps(v) == b'[ {"a": 0}, [9,2] ,{"b": 2} , 3e0, {"c": [1 ]},null ]'
    # A removal writes the array element by element, runs copied.
    del v[3]
    assert json.loads(qjson.dumps(v)) == [{"a": 0}, [9, 2], {"b": 2}, {"c": [1]}, None]


def test_array_splice_inside_an_object_and_in_a_lazy_document() -> None:
    data = b'{"m": [ {"r": "s"}, {"r": "u", "c": "x"} ], "k": 1}'
    v = qjson.decode(data)
    v["m"][1]["c"] = "y"
    # Objects with distinct keys are spliced too: only the edited value changes.
    assert qjson.dumps(v) == data.replace(b'"x"', b'"y"')
    doc = qjson.parse(data, lazy=True)
    r = doc.root
    r["m"][1]["c"] = "y"
    assert json.loads(qjson.dumps(r)) == json.loads(qjson.dumps(v))


# The object splice: a lazy object of a strict document with distinct keys,
# whose edits are replacements, additions and edited child views, is written
# as its own bytes with those spans replaced (whitespace kept); anything else
# takes the member-by-member path. Each case: (input, edit, expected output).
OBJECT_SPLICE_CASES = [
    # Replacements keep the key, the whitespace and the untouched members.
    (b'{"a": 1, "b": 2}', lambda v: v.__setitem__("a", 5), b'{"a": 5, "b": 2}'),
    (b'{ "a" : 1 ,\n "b": 2 }', lambda v: v.__setitem__("b", [1]), b'{ "a" : 1 ,\n "b": [1] }'),
    # Additions go after the last original member, before the whitespace.
    (b'{"a": 1, "b": 2 }', lambda v: v.__setitem__("c", 3), b'{"a": 1, "b": 2,"c":3 }'),
    (b"{ }", lambda v: v.__setitem__("c", "x"), b'{"c":"x" }'),
    (b"{}", lambda v: (v.__setitem__("c", 1), v.__setitem__("d", 2)), b'{"c":1,"d":2}'),
    # The root's surrounding whitespace is dropped once it is edited.
    (b' {"a": 1} ', lambda v: v.__setitem__("a", True), b'{"a": true}'),
    # Replacement, addition and an edited child together, in offset order
    # whatever the order of the edits.
    (
        b'{"a": [1, 2] , "x" : {"y": 1}, "s": "t" }',
        lambda v: (
            v.__setitem__("z", None),
            v["x"].__setitem__("y", 2),
            v.__setitem__("a", 0),
        ),
        b'{"a": 0 , "x" : {"y": 2}, "s": "t","z":null }',
    ),
    # A replaced member's edited view is not written: the new value is.
    (
        b'{"x": {"y": 1}, "k": 2}',
        lambda v: (v["x"].__setitem__("y", 2), v.__setitem__("x", "new")),
        b'{"x": "new", "k": 2}',
    ),
    # Set twice, and set back after an addition: one member each.
    (
        b'{"a": 1, "b": 2}',
        lambda v: (v.__setitem__("a", 3), v.__setitem__("c", 4), v.__setitem__("a", 5)),
        b'{"a": 5, "b": 2,"c":4}',
    ),
    # Keys with escapes that differ once unescaped: still spliced.
    (b'{"\\u0061": 1, "b": 2}', lambda v: v.__setitem__("b", 3), b'{"\\u0061": 1, "b": 3}'),
    # Repeated keys: member by member, each key once (its first place).
    (b'{"a": 1, "b": 2, "a": 3}', lambda v: v.__setitem__("b", 4), b'{"a": 1,"b": 4}'),
    (b'{"a": 1, "\\u0061": 3}', lambda v: v.__setitem__("c", 0), b'{"a": 1,"c":0}'),
    # A deletion is cut out with one separator: the comma after the
    # member, or the one before it when no member follows; the rest keeps
    # its layout.
    (b'{"a": 1, "b": 2, "c": 3}', lambda v: v.__delitem__("b"), b'{"a": 1, "c": 3}'),
    (b'{"a": 1, "b": 2, "c": 3}', lambda v: v.__delitem__("a"), b'{"b": 2, "c": 3}'),
    (b'{"a": 1, "b": 2, "c": 3 }', lambda v: v.__delitem__("c"), b'{"a": 1, "b": 2 }'),
    (
        b'{"a": 1, "b": 2, "c": 3}',
        lambda v: (v.__delitem__("c"), v.__delitem__("b")),
        b'{"a": 1}',
    ),
    (
        b'{ "a": 1, "b": 2 }',
        lambda v: (v.__delitem__("a"), v.__delitem__("b")),
        b"{  }",
    ),
    (
        b'{\n  "a": 1,\n  "b": {"x": 1},\n  "c": 3\n}',
        lambda v: (v.__delitem__("a"), v["b"].__setitem__("x", 2), v.__delitem__("c")),
        b'{\n  "b": {"x": 2}\n}',
    ),
    # Deleted, then set again: added at the end, as a dict does.
    (
        b'{"a": 1, "b": 2, "c": 3}',
        lambda v: (v.__delitem__("b"), v.__setitem__("b", 9)),
        b'{"a": 1, "c": 3,"b":9}',
    ),
    (
        b'{"a": 1, "b": 2, "c": 3}',
        lambda v: (v.__delitem__("c"), v.__setitem__("d", 4), v.__setitem__("a", 0)),
        b'{"a": 0, "b": 2,"d":4}',
    ),
    # A deleted member's edited child is not written.
    (
        b'{"x": {"y": 1}, "k": 2}',
        lambda v: (v["x"].__setitem__("y", 2), v.__delitem__("x")),
        b'{"k": 2}',
    ),
    # Repeated keys and a deletion: member by member, every later
    # occurrence of the deleted key gone too.
    (
        b'{"a": 1, "b": 2, "a": 3, "c": 4}',
        lambda v: v.__delitem__("a"),
        b'{"b": 2,"c": 4}',
    ),
]


# The array splice: an unfolded array of a strict document that still holds
# all its original elements in order, with elements inserted or appended,
# is its own bytes with each new element before the original one after it
# (`value,`) or after the last one (`,value`). (input, edit, expected).
ARRAY_SPLICE_CASES = [
    (b"[1, 2]", lambda v: v.insert(0, 0), b"[0,1, 2]"),
    (b"[1, 2]", lambda v: v.append(3), b"[1, 2,3]"),
    (b"[ 1 ,\n 2 ]", lambda v: v.insert(1, "x"), b'[ 1 ,\n "x",2 ]'),
    (
        b"[\n  1,\n  2\n]",
        lambda v: (v.insert(0, 0), v.append(3), v.insert(2, [])),
        b"[\n  0,1,\n  [],2,3\n]",
    ),
    (b"[ 1 ]", lambda v: (v.append(2), v.append(3), v.insert(0, -1)), b"[ -1,1,2,3 ]"),
    # Edited children among inserts keep their place.
    (
        b'[ {"a": 1}, {"b": 2} ]',
        lambda v: (v.insert(1, None), v[2].__setitem__("b", 3), v[0].__setitem__("a", 0)),
        b'[ {"a": 0}, null,{"b": 3} ]',
    ),
    # Inserting into an element inserted before: the new element is written
    # whole, the array still spliced.
    (b'[{"m": [1]}, 5]', lambda v: (v.insert(0, [7]), v[0].append(8)), b'[[7,8],{"m": [1]}, 5]'),
    # An empty array: the new elements right after `[`, its inner
    # whitespace kept before `]`, as an empty object keeps it after its
    # added members (`{ }` with `c` set is `{"c":"x" }`).
    (b"[ ]", lambda v: v.append(1), b"[1 ]"),
    (b"[\n]", lambda v: (v.append(1), v.insert(0, "a"), v.append({})), b'["a",1,{}\n]'),
    (b'{"l": [ ] }', lambda v: v["l"].append([]), b'{"l": [[] ] }'),
    (b"[ ]", lambda v: (v.append(1), v.pop()), b"[ ]"),
    # Anything else element by element: removed, replaced, reordered
    # elements.
    (b"[1, 2, 3 ]", lambda v: (v.append(4), v.__delitem__(0)), b"[2, 3,4]"),
    (b"[1, 2, 3 ]", lambda v: v.__setitem__(1, 9), b"[1,9,3]"),
    (b"[1, 2 ]", lambda v: v.reverse(), b"[2,1]"),
]


def _check_splice(data: bytes, edit: Any, want: bytes) -> None:
    v = qjson.decode(data)
    edit(v)
    out = qjson.dumps(v)
    assert out == want
    assert json.loads(out) == qjson.materialize(v)
    # A lazy document gives the same value (written child by child).
    r = qjson.parse(data, lazy=True).root
    edit(r)
    assert json.loads(qjson.dumps(r)) == json.loads(out)


@pytest.mark.parametrize(("data", "edit", "want"), ARRAY_SPLICE_CASES)
def test_array_splice_byte_for_byte(data: bytes, edit: Any, want: bytes) -> None:
    _check_splice(data, edit, want)


@pytest.mark.parametrize(("data", "edit", "want"), OBJECT_SPLICE_CASES)
def test_object_splice_byte_for_byte(data: bytes, edit: Any, want: bytes) -> None:
    _check_splice(data, edit, want)


def test_object_splice_keys_told_apart_by_fingerprint() -> None:
    # Keys that share a length and their first eight bytes, or only differ
    # past them, are distinct; equal long keys are a repeat.
    pairs = [("abcdefgh1", "abcdefgh2"), ("k" * 20 + "a", "k" * 20 + "b"), ("ab", "ba")]
    for a, b in pairs:
        data = json.dumps({a: 1, b: 2}).encode()
        v = qjson.decode(data)
        v[a] = 0
        assert qjson.dumps(v) == data.replace(b": 1", b": 0")
    data = ('{"' + "k" * 20 + '": 1, "x": 2, "' + "k" * 20 + '": 3}').encode()
    v = qjson.decode(data)
    v["x"] = 0
    assert json.loads(qjson.dumps(v)) == {"k" * 20: 1, "x": 0}


def test_large_object_splice_keys_told_apart() -> None:
    # Objects over sixteen members are checked for repeats by sorted
    # fingerprints (length, first and last eight bytes): keys that share
    # all three are still told apart by their middle bytes.
    keys = [f"abcdefgh_{i:02}_12345678" for i in range(20)] + [f"k{i}" for i in range(10)]
    data = json.dumps({k: i for i, k in enumerate(keys)}).encode()
    for edit in ("set", "add", "delete"):
        v = qjson.decode(data)
        want = json.loads(data)
        if edit == "set":
            v[keys[3]] = want[keys[3]] = "x"
        elif edit == "add":
            v["new"] = want["new"] = None
        else:
            del v[keys[5]], want[keys[5]]
        out = qjson.dumps(v)
        assert json.loads(out) == want
        # Spliced: untouched members keep their layout (", " and ": ").
        assert out.count(b", ") == len(want) - 1 - (edit == "add"), out


@pytest.mark.parametrize("repeat", ['"k3"', '"k\\u0033"'])
def test_large_object_with_a_repeated_key(repeat: str) -> None:
    members = [f'"k{i}": {i}' for i in range(25)]
    members[20] = f"{repeat}: 99"
    data = ("{" + ", ".join(members) + "}").encode()
    want = {f"k{i}": i for i in range(25) if i != 20}
    for edit in ("set", "add", "delete", "nested"):
        v = qjson.decode(data)
        assert v["k3"] == 3
        w = dict(want)
        if edit == "set":
            v["k1"] = w["k1"] = "x"
        elif edit == "add":
            v["new"] = w["new"] = 1
        elif edit == "delete":
            del v["k1"], w["k1"]
        else:
            v["k24"] = w["k24"] = [1]
            v["k24"].append(2)
            w["k24"] = [1, 2]
        out = qjson.dumps(v)
        # Edited: each key once, the first occurrence wins (as reads see it).
        assert b"99" not in out, out
        assert json.loads(out) == w


def test_edited_children_of_a_container_with_many_cached_views() -> None:
    # Views read out of order beyond the small cache move it to a map; the
    # writer still finds every edited child among them, in place.
    src = json.dumps([{"i": i, "x": [i]} for i in range(40)], indent=1).encode()
    v = qjson.decode(src)
    views = [v[i] for i in reversed(range(40))]
    views[5]["i"] = "e"
    views[30]["x"].append(1)
    want = json.loads(src)
    want[34]["i"] = "e"
    want[9]["x"].append(1)
    out = qjson.dumps(v)
    assert json.loads(out) == want
    assert out.startswith(b'[\n {\n  "i": 0,\n  "x": [\n   0\n  ]\n },')


@pytest.mark.parametrize("depth", [1, 23, 24, 25, 26, 60, 300])
@pytest.mark.parametrize("edit_at", ["none", "top", "bottom", "middle"])
def test_deep_chain_of_cached_views(depth: int, edit_at: str) -> None:
    """A chain of cached views on both sides of the depth the dirty walk
    recurses to (below it, a list): clean chains pass through, an edit at
    any level is written."""
    data = b'{"a": ' * depth + b'{"x": 1, "y":  2}' + b"}" * depth + b"\n"
    root = qjson.decode(data, max_depth=depth + 8)
    model = json.loads(data)
    chain = [root]
    node = model
    for _ in range(depth):
        chain.append(chain[-1]["a"])
        node = node["a"]
    _ = chain[-1]["x"]
    if edit_at == "none":
        assert qjson.dumps(root) == data
        return
    level = {"top": 0, "bottom": depth, "middle": depth // 2}[edit_at]
    chain[level]["z"] = [level]
    target = model
    for _ in range(level):
        target = target["a"]
    target["z"] = [level]
    assert json.loads(qjson.dumps(root)) == model
    # The untouched deepest object keeps its bytes when it is not edited.
    if level != depth:
        assert b'{"x": 1, "y":  2}' in qjson.dumps(root)
    # Asking again (notes of this era) gives the same answer.
    assert json.loads(qjson.dumps(chain[0])) == model
