"""The raw entry points of the common reads (``src/python/slots.rs``): the
fast path takes an exact ``str`` key or path (an exact ``int`` index) into an
unedited view, and hands every other call to the method PyO3 made. Each case
below is one of those hand-overs, or the fast path itself, checked against
what the read must give: the same values, the same errors, the same
signatures, whichever path the call takes.
"""

from __future__ import annotations

import gc
import inspect
import json
import sys

import pytest
import qjson

DATA = (
    b'{"id": 123456789, "big": 123456789012345678901234567890, "f": 2.5, "t": true,'
    b' "n": null, "s": "caf\\u00e9", "a": [10, {"x": "y"}, [1]], "o": {"k": "v"},'
    b' "\xc3\xa9t\xc3\xa9": 1, "dup": 1, "dup": 2, "neg": -7, "lazy_bad": [1]}'
)


class Key(str):
    """A str subclass: never the fast path, same answers."""


class Index(int):
    """An int subclass: never the fast path, same answers."""


@pytest.fixture(params=["parse", "lazy"])
def doc(request):
    return qjson.parse(DATA, lazy=request.param == "lazy")


def test_object_subscript_every_key_form(doc):
    v = doc.root
    assert v["id"] == 123456789
    assert v[Key("id")] == 123456789
    assert v["\u00e9t\u00e9"] == 1  # non-ASCII key: the str's UTF-8 form
    assert v["dup"] == 1  # first occurrence wins
    assert v["big"] == 123456789012345678901234567890
    assert v["s"] == "caf\u00e9"
    assert v["o"] is v[Key("o")]  # one cached view, whichever path made it
    assert v["a"][1] is v["a"][Index(1)] is v["a"][-2]
    assert v["t"] is True and v["n"] is None and v["f"] == 2.5
    with pytest.raises(KeyError) as e:
        v["missing"]
    assert e.value.args == ("missing",)
    with pytest.raises(KeyError):
        v[1]
    # A lone surrogate has no UTF-8 form, so no document holds it: absent,
    # as on a dict (tests/read/test_key_surrogate.py).
    with pytest.raises(KeyError):
        v["\ud800"]


def test_object_get_every_argument_form(doc):
    v = doc.root
    assert v.get("id") == 123456789
    assert v.get("missing") is None
    marker = object()
    assert v.get("missing", marker) is marker
    assert v.get("id", marker) == 123456789
    assert v.get(key="id") == 123456789
    assert v.get("missing", default=marker) is marker
    assert v.get(Key("o")) is v.get("o")
    with pytest.raises(TypeError):
        v.get()
    with pytest.raises(TypeError):
        v.get("a", 1, 2)


def test_array_subscript_every_index_form(doc):
    a = doc.root["a"]
    assert a[0] == 10 and a[-3] == 10 and a[True] is a[1]
    assert a[1]["x"] == "y"
    assert list(a[0:1]) == [10]
    for bad in (3, -4, 1 << 70, -(1 << 70)):
        with pytest.raises(IndexError):
            a[bad]
    with pytest.raises(TypeError):
        a["0"]
    with pytest.raises(TypeError):
        a[1.0]


def test_edited_and_patched_views_take_the_original(doc):
    v = doc.root
    v["id"] = 5  # a patch on a lazy object
    assert v["id"] == 5 and v.get("id") == 5
    del v["t"]
    with pytest.raises(KeyError):
        v["t"]
    assert v.get("t", "gone") == "gone"
    a = v["a"]
    a.append(4)  # unfolds the array
    assert a[3] == 4 and a[-1] == 4 and a[0] == 10
    o = v["o"]
    o.clear()  # an Edited object
    assert o.get("k") is None
    out = json.loads(qjson.dumps(v))
    assert out["id"] == 5 and "t" not in out and out["a"][3] == 4 and out["o"] == {}


def test_getters_every_argument_form(doc):
    for base in (doc, doc.open("")):
        assert base.get("id") == 123456789
        assert base.get(qjson.Path("id")) == 123456789
        assert base.get(path="id") == 123456789
        assert base.get(Key("a[1].x")) == "y"
        assert base.get("missing", None) is None
        assert base.get("missing", default=7) == 7
        with pytest.raises(qjson.PathError):
            base.get("missing")
        assert base.get_int("id") == 123456789
        assert base.get_int("neg") == -7
        assert base.get_int("big") == 123456789012345678901234567890
        assert base.get_int(path="id") == 123456789
        assert base.get_float("f") == 2.5 and base.get_float("id") == 123456789.0
        assert base.get_float("big") == float(123456789012345678901234567890)
        assert base.get_bool("t") is True
        assert base.get_str("s") == "caf\u00e9"
        assert base.get_str("a[1].x") == "y"
        assert base.open("o").get_str("k") == "v"
        assert base.open(qjson.Path("a")).get_int("[0]") == 10
        for getter, path in [
            (base.get_int, "f"),
            (base.get_int, "s"),
            (base.get_str, "id"),
            (base.get_bool, "n"),
            (base.get_float, "t"),
        ]:
            with pytest.raises(TypeError):
                getter(path)
        for bad in (1, b"id", None):
            with pytest.raises(TypeError):
                base.get_int(bad)
        with pytest.raises(TypeError):
            base.get_int()
        with pytest.raises(TypeError):
            base.get_int("id", "extra")
        with pytest.raises(ValueError):
            base.get("a[*")


def test_signatures_unchanged():
    doc = qjson.parse(b"{}")
    assert str(inspect.signature(doc.get)) == "(path=None, default=Ellipsis)"
    assert str(inspect.signature(doc.get_int)) == "(path)"
    assert str(inspect.signature(doc.open("").get_str)) == "(path)"
    assert str(inspect.signature(doc.root.get)) == "(key, default=None)"
    assert doc.get_int.__name__ == "get_int" and doc.get_int.__doc__


def test_reads_release_what_they_make():
    """Values and views made by the fast paths are owned by the caller only:
    nothing is kept (or leaked) once they are dropped."""
    doc = qjson.parse(DATA)
    v = doc.root
    cur = doc.open("")
    for _ in range(3):  # warm up caches (interned strings, child tables)
        v["s"], v.get("o"), cur.get_str("s"), cur.get_int("id"), v["a"][0]
    gc.collect()
    before = sys.getrefcount(v)
    got = [v["s"], v.get("s"), cur.get_str("s"), cur.get("s")]
    assert all(sys.getrefcount(s) == 3 for s in got)  # the list, the call, got
    assert sys.getrefcount(v) == before
    c = cur.open("o")
    assert sys.getrefcount(c) == 2


@pytest.mark.parametrize("order", ["forward", "backward", "shuffled", "iter-then-index"])
def test_child_views_keep_their_identity_in_any_visit_order(order):
    """The view cache of a wide array (sorted vector while visits come in
    document order, hash map after one out of order): one view per child."""
    import random

    n = 200
    v = qjson.decode(json.dumps([{"i": i} for i in range(n)]).encode())
    idx = list(range(n))
    if order == "backward":
        idx.reverse()
    elif order == "shuffled":
        random.Random(5).shuffle(idx)
    if order == "iter-then-index":
        first = list(v)
        assert [x["i"] for x in first] == list(range(n))
    else:
        first = [None] * n
        for i in idx:
            first[i] = v[i]
    assert all(v[i] is first[i] and v[i - n] is first[i] for i in range(n))
    assert [x["i"] for x in v] == list(range(n)) and list(v) == first
    first[7]["i"] = -1  # an edit through a cached child reaches dumps
    assert json.loads(qjson.dumps(v))[7] == {"i": -1}


class Blob(bytes):
    """A bytes subclass: never the fast path of parse / decode, same answers."""


# Every input form parse and decode take; only the exact bytes below 64 KiB
# (the size from which the scan releases the GIL) take the fast path.
SMALL = b'{"a": [1, {"b": "c"}], "n": 7}'
BIG = json.dumps({"k": ["x" * 100] * 700, "n": 7}).encode()


@pytest.mark.parametrize(
    "make",
    [bytes, Blob, bytearray, memoryview, lambda b: b.decode()],
    ids=["bytes", "subclass", "bytearray", "memoryview", "str"],
)
@pytest.mark.parametrize("data", [SMALL, BIG], ids=["small", "big"])
def test_parse_and_decode_every_input_form(make, data):
    want = json.loads(data)
    doc = qjson.parse(make(data))
    assert doc.get_int("n") == 7 and qjson.materialize(doc.root) == want
    assert qjson.materialize(qjson.decode(make(data))) == want
    assert qjson.parse(make(data), lazy=True).get_int("n") == 7
    assert qjson.materialize(qjson.decode(make(data), max_depth=5)) == want
    with pytest.raises(qjson.JSONDecodeError):
        qjson.parse(make(data), max_depth=1)


@pytest.mark.parametrize("data", [b"", b"{", b"[1,", b'{"a" 1}', b"nul", b"[" * 1025 + b"]" * 1025])
def test_parse_and_decode_errors_whichever_path(data):
    """Invalid JSON in exact bytes leaves the fast path; the error is the
    one the full functions report, for bytes and a subclass alike."""
    for fn in (qjson.parse, qjson.decode):
        with pytest.raises(qjson.JSONDecodeError) as fast:
            fn(data)
        with pytest.raises(qjson.JSONDecodeError) as slow:
            fn(Blob(data))
        assert str(fast.value) == str(slow.value)
        assert (fast.value.pos, fast.value.doc) == (slow.value.pos, data)


@pytest.mark.parametrize("data", [b"17", b'"s"', b"null", b"[]", b"{}", SMALL])
def test_parse_and_decode_release_the_input(data):
    """The document made by the fast paths holds one reference to the input
    (for JSONDecodeError.doc) while it lives, and none after: scalar roots
    drop the document inside the call."""
    data = bytes(bytearray(data))  # a fresh object, not an interned constant
    base = sys.getrefcount(data)
    doc = qjson.parse(data)
    assert sys.getrefcount(data) == base + 1
    del doc
    for _ in range(100):
        qjson.decode(data)
        qjson.parse(data)
        with pytest.raises(qjson.JSONDecodeError):
            qjson.parse(data + b"]")
    gc.collect()
    assert sys.getrefcount(data) == base
    v = qjson.decode(data)
    assert qjson.materialize(v) == json.loads(data)


def test_parse_and_decode_arguments_and_signatures():
    assert str(inspect.signature(qjson.parse)) == "(data, *, lazy=False, max_depth=1024)"
    assert str(inspect.signature(qjson.decode)) == "(data, *, max_depth=1024)"
    assert qjson.parse.__name__ == "parse" and qjson.parse.__doc__
    assert qjson.parse.__module__ == qjson.decode.__module__ == "qjson._qjson"
    assert qjson.parse(data=b"[1]").get_int("[0]") == 1
    assert qjson.decode(data=b"[1]")[0] == 1
    with pytest.raises(TypeError):
        qjson.parse()
    with pytest.raises(TypeError):
        qjson.parse(b"1", False)
    with pytest.raises(TypeError):
        qjson.decode(b"1", 5)
    with pytest.raises(TypeError):
        qjson.parse(1)
    with pytest.raises(TypeError):
        qjson.decode(None)


def test_len_every_argument_form(doc):
    for base, n in ((doc, 13), (doc.open(""), 13), (doc.open("a"), 3)):
        assert base.len() == n
        assert base.len("") == n
        assert base.len(path=None) == n  # a keyword: the original method
        assert base.len(None) == n  # None: the original method
    assert doc.len("a") == 3 and doc.len(qjson.Path("a[1]")) == 1
    assert doc.len(Key("o")) == 1
    assert doc.open("a").len("[1]") == 1
    with pytest.raises(qjson.PathError):
        doc.len("missing")
    with pytest.raises(TypeError):
        doc.len("id")  # not a container
    with pytest.raises(TypeError):
        doc.len(1)
    with pytest.raises(TypeError):
        doc.len("a", "extra")
    assert str(inspect.signature(doc.len)) == "(path=None)"


def test_array_iteration_fast_and_original(doc):
    v = doc.root
    a = v["a"]
    items = list(a)  # a Lazy array: the fast path
    assert items[0] == 10 and items[1] is a[1] and items[2] is a[2]
    assert list(a) == items and list(a)[1] is items[1]  # the cached views
    assert [list(x) if isinstance(x, type(a)) else x for x in iter(a)][2] == [1]
    a.append(5)  # unfolded: the original method
    got = list(a)
    assert got[:3] == items and got[1] is items[1] and got[3] == 5
    assert list(qjson.decode(b"[]")) == []
    assert [len(x) for x in qjson.decode(b"[[1], [], [2, 3]]")] == [1, 0, 2]


def test_array_iterator_one_element_per_step():
    """``iter`` of a Lazy array steps through the index (``view/iter.rs``);
    once the loop edits the array, the iterator follows a list's rule: the
    element now at its position, the end when the position passes the
    length (what a loop over json.loads' list sees)."""
    v = qjson.decode(b'[1, {"x": 2}, [3], "s", null, 2.5]')
    it = iter(v)
    assert iter(it) is it and type(it).__name__ == "ArrayIterator"
    assert next(it) == 1
    second = next(it)
    assert second is v[1]  # the cached view
    v.append(9)  # edited: the array as it is now, from position 2 on
    assert [x if not isinstance(x, type(v)) else list(x) for x in it] == [
        [3],
        "s",
        None,
        2.5,
        9,
    ]
    assert next(it, "end") == "end" and next(it, "end") == "end"
    edits = (
        lambda a: a.insert(0, "n"),
        lambda a: a.__delitem__(1),
        lambda a: a.__setitem__(1, 0),
        lambda a: a.append([4]),
        lambda a: a.pop(),
        lambda a: a.clear(),
        lambda a: a.__setitem__(slice(0, 2), []),
    )
    for edit in edits:
        a = qjson.decode(b"[[1], [2], [3]]")
        plain = [[1], [2], [3]]
        it, pit = iter(a), iter(plain)
        assert next(it) == next(pit)
        edit(a)
        edit(plain)
        assert [qjson.materialize(x) if isinstance(x, type(a)) else x for x in it] == list(pit)
    a = qjson.decode(b"[[1], [2]]")
    kept = a[1]
    it = iter(a)
    a[0] = "new"  # edited before the first step: position 0 is "new" now
    assert next(it) == "new" and next(it) is kept
    # A child edited through its view, then its slot replaced: the loop sees
    # the replacement (the review of session 14: the original bytes came back).
    a = qjson.decode(b'[{"k": 1}, {"k": 2}]')
    it = iter(a)
    next(it)
    a[1]["k"] = 5
    a[1] = None
    assert next(it) is None and next(it, "end") == "end"
    a = qjson.decode(b'[{"k": 1}, {"k": 2}]')
    it = iter(a)
    next(it)
    a[1]["k"] = 5
    assert qjson.materialize(next(it)) == {"k": 5}
    assert len(qjson.decode(b"[1, [2, 3], {}]")) == 3 and len(qjson.decode(b"[]")) == 0
    grown = qjson.decode(b"[1]")
    grown.append(2)
    assert len(grown) == 2  # not Lazy: PyO3's method


def test_array_iterator_references():
    """The iterator holds its array while it lives; a cycle through an edit
    is collected."""
    a = qjson.decode(b"[1, 2, 3]")
    before = sys.getrefcount(a)
    its = [iter(a) for _ in range(5)]
    assert sys.getrefcount(a) == before + 5
    assert list(its[0]) == [1, 2, 3] and list(its[0]) == []
    del its
    assert sys.getrefcount(a) == before
    a = qjson.decode(b"[[1], 2]")
    it = iter(a)
    next(it)
    a.append(it)  # a -> it -> a
    assert gc.is_tracked(it)
    gc.collect()
    del a, it
    assert gc.collect() >= 2  # the array and its iterator
    # A malformed element in a lazy document: the read's error, at its step.
    doc = qjson.parse(b"[1, tru]", lazy=True)
    it = iter(doc.root)
    assert next(it) == 1
    with pytest.raises(qjson.JSONDecodeError):
        next(it)


def test_views_reused_after_free_start_afresh():
    """Freed views are kept for reuse (``alloc.rs``): a view made from a
    kept object holds nothing of the one freed before (no cached child, no
    edit, no borrow), and is tracked by the collector."""
    for _ in range(3):
        v = qjson.decode(b'{"a": {"x": 1}, "b": [1, {"y": 2}]}')
        a, b = v["a"], v["b"]
        a["x"] = 5  # an edit the next views must not see
        b[1]["y"]
        del v, a, b
        w = qjson.decode(b'{"a": {"x": 1}, "b": [1, {"y": 2}]}')
        assert w["a"]["x"] == 1 and dict(w["a"]) == {"x": 1}
        assert w["b"][1]["y"] == 2 and qjson.dumps(w) == b'{"a": {"x": 1}, "b": [1, {"y": 2}]}'
        assert gc.is_tracked(w) and gc.is_tracked(w["b"])
        w["a"]["x"] = 7  # borrowable
        assert w["a"]["x"] == 7
    n = sum(type(o).__module__ == "qjson" for o in gc.get_objects())
    del w
    gc.collect()
    # Kept objects are untracked: the collector sees none of them.
    assert sum(type(o).__module__ == "qjson" for o in gc.get_objects()) < n
