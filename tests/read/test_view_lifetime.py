"""Making and freeing views, cursors and documents (``src/python/view/alloc.rs``): reference counts
of the type, the input and the parent, collector tracking, views that outlive
their document, cycles through edited views, and views freed on other
threads.
"""

from __future__ import annotations

import gc
import json
import sys
import threading
import weakref

import pytest
import qjson

DATA = b'{"a": {"b": {"c": [1, {"d": 2}]}}, "l": [[1], {"x": "y"}], "s": "t"}'


def test_freeing_views_releases_their_type():
    v = qjson.decode(DATA)
    obj_type, arr_type = type(v["a"]), type(v["l"])
    before = sys.getrefcount(obj_type), sys.getrefcount(arr_type)
    for _ in range(1000):
        w = qjson.decode(DATA)
        x, y, z = w["a"], w["l"], w["a"]["b"]["c"]
        del w, x, y, z
    assert (sys.getrefcount(obj_type), sys.getrefcount(arr_type)) == before


def test_freeing_views_releases_the_input():
    data = bytes(DATA)
    base = sys.getrefcount(data)
    doc = qjson.parse(data)
    views = [doc.root["a"]["b"], doc.root["l"][1], qjson.decode(data)["a"]]
    assert sys.getrefcount(data) > base
    del doc
    # The views keep the input alive and readable.
    assert views[0]["c"][1]["d"] == 2
    assert views[1]["x"] == "y"
    assert views[2]["b"]["c"][0] == 1
    del views
    assert sys.getrefcount(data) == base


def test_child_views_are_tracked_and_released():
    v = qjson.decode(DATA)
    child = v["a"]
    assert gc.is_tracked(child)
    assert child is v["a"]
    assert any(r is v for r in gc.get_referrers(child))
    n = sys.getrefcount(child)
    del v
    assert sys.getrefcount(child) == n - 1
    assert child["b"]["c"][0] == 1
    assert dict(child["b"]["c"][1]) == {"d": 2}


def test_views_outlive_every_other_reference():
    def make():
        return qjson.parse(bytearray(DATA)).root["a"]["b"]["c"]

    c = make()
    gc.collect()
    assert c[1]["d"] == 2
    assert list(c) == [1, c[1]]


def test_cycles_through_edited_views_are_collected():
    class Box:
        pass

    v = qjson.decode(DATA)
    box = Box()
    v["a"]["cycle"] = box
    box.view = v
    ref = weakref.ref(box)
    del v, box
    gc.collect()
    assert ref() is None


def test_deep_chains_are_freed_without_recursion():
    depth = 1000
    data = b'{"k":' * depth + b"1" + b"}" * depth
    x = qjson.decode(data)
    root = x
    for _ in range(depth - 1):
        x = x["k"]
    assert x["k"] == 1
    del root
    del x  # the whole chain goes here; must not overflow the stack


@pytest.mark.parametrize("kept", [None, "a", "c1", "v"])
@pytest.mark.parametrize("width", [1, 2, 3])
def test_views_release_cached_children_then_the_document(kept, width):
    # A lazy view's common drop (view/alloc.rs `drop_quick`) releases the
    # views it cached (up to two, in the cache's inline room; three spill
    # it, and take the usual drop), then counts out its share of the
    # document; when that share turns out to be the last, the usual drop
    # releases the input. Whatever is kept stays readable, and the input
    # goes exactly when the last holder does.
    data = b'{"a": {"b": {"c": [1, {"d": 2}]}}, "l": [[1], {"x": "y"}], "m": {"n": []}}'
    data = bytes(data)
    base = sys.getrefcount(data)
    for _ in range(3):
        v = qjson.decode(data)
        children = [v[k] for k in ("a", "l", "m")[:width]]
        a = v["a"]
        c1 = a["b"]["c"][1]
        held = {"a": a, "c1": c1, "v": v}.get(kept) if kept else None
        del children, a, c1, v
        if held is not None:
            assert sys.getrefcount(data) > base
            assert (
                qjson.materialize(held)
                == {
                    "a": {"b": {"c": [1, {"d": 2}]}},
                    "c1": {"d": 2},
                    "v": {"a": {"b": {"c": [1, {"d": 2}]}}, "l": [[1], {"x": "y"}], "m": {"n": []}},
                }[kept]
            )
        del held
        assert sys.getrefcount(data) == base


def test_views_made_and_freed_on_threads():
    data = bytes(DATA)
    doc = qjson.parse(data)
    obj_type = type(doc.root)
    before = sys.getrefcount(obj_type)
    errors = []

    def work(doc):
        try:
            for _ in range(300):
                r = doc.root
                v = qjson.decode(data)
                assert v["a"]["b"]["c"][1]["d"] == r["a"]["b"]["c"][1]["d"] == 2
                del v
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(doc,)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    del doc
    # The document's cached root view was the last view of the type.
    assert sys.getrefcount(obj_type) == before - 1


@pytest.mark.parametrize("make", [qjson.decode, lambda b: qjson.parse(b).root])
def test_view_types_stay_final(make):
    cls = type(make(DATA))
    with pytest.raises(TypeError):
        type("Sub", (cls,), {})


def test_freeing_cursors_releases_their_type_and_input():
    data = bytes(DATA)
    doc = qjson.parse(data)
    cursor_type = type(doc.open("a"))
    before = sys.getrefcount(cursor_type), sys.getrefcount(data)
    for i in range(1000):
        c = doc.open("a.b" if i % 2 else "l[1]")
        assert c.get_str("x") == "y" if i % 2 == 0 else c.get_int("c[1].d") == 2
        del c
    assert (sys.getrefcount(cursor_type), sys.getrefcount(data)) == before
    c = doc.open("a")
    del doc
    assert c.get_int("b.c[1].d") == 2
    assert not gc.is_tracked(c)
    del c
    assert sys.getrefcount(data) == before[1] - 1


def test_freeing_docs_releases_their_type_and_input():
    data = DATA + b" "  # an object of its own
    doc_type = type(qjson.parse(data))
    before = sys.getrefcount(doc_type), sys.getrefcount(data)
    for i in range(1000):
        doc = qjson.parse(data)
        assert gc.is_tracked(doc)
        if i % 3 == 0:
            assert doc.root["a"]["b"]["c"][1]["d"] == 2  # a cached root view
        elif i % 3 == 1:
            c = doc.open("l")  # a cursor that outlives the Doc
            del doc
            assert c.get_str("[1].x") == "y"
            del c
            continue
        del doc
    assert (sys.getrefcount(doc_type), sys.getrefcount(data)) == before


def test_docs_in_cycles_are_collected():
    data = DATA + b" "  # an object of its own
    base = sys.getrefcount(data)
    doc = qjson.parse(data)
    root = doc.root
    root["self"] = [root]  # the cached root view now refers to itself
    del doc
    assert sys.getrefcount(data) > base  # the cycle holds the document
    del root
    gc.collect()
    assert sys.getrefcount(data) == base


def test_doc_type_stays_final():
    with pytest.raises(TypeError):
        type("Sub", (type(qjson.parse(DATA)),), {})


@pytest.mark.parametrize(
    "edit",
    [
        lambda v, x: v.__setitem__("new", x),  # an edited object holds a new value
        lambda v, x: v["l"].append(x),  # an array with inserts holds it
        lambda v, x: v["a"].__setitem__("b", x),  # a cached child view holds it
    ],
)
def test_freeing_views_releases_what_they_hold_at_once(edit):
    # Views freed by CPython release their children by plain decrefs or
    # through PyO3 (never its deferred pool): the count drops at the `del`,
    # whether the view holds the last share of its document or not.
    for keep_doc in (False, True):
        x = object()
        n = sys.getrefcount(x)
        v = qjson.decode(DATA)
        other = v["l"][1] if keep_doc else None  # shares the document only
        edit(v, x)
        assert sys.getrefcount(x) > n
        del v
        assert sys.getrefcount(x) == n, keep_doc
        del other


def test_views_made_while_the_collector_runs_often():
    # Every allocation may start a collection (threshold 1): a view must be
    # whole before the collector can reach it, and tracked after.
    old = gc.get_threshold()
    gc.set_threshold(1, 1, 1)
    try:
        v = qjson.decode(DATA)
        doc = qjson.parse(DATA)
        for _ in range(200):
            views = [v["a"], v["l"], v["a"]["b"]["c"], doc.root["l"][1], doc.open("a.b")]
            assert all(gc.is_tracked(x) for x in views[:4])
            assert views[2][1]["d"] == 2 and views[3]["x"] == "y"
            assert doc.open("a.b").get_int("c[0]") == 1
    finally:
        gc.set_threshold(*old)
    gc.collect()


def _restored_by_a_failed_patch(v, x):
    with pytest.raises(qjson.PatchError):
        qjson.patch(v, [{"op": "add", "path": "/new", "value": x}, {"op": "remove", "path": "/no"}])


@pytest.mark.parametrize(
    "cycle",
    [
        lambda v, x: v["a"]["b"],  # a cached child: the view is lazy but not bare
        lambda v, x: (v.__setitem__("new", x), v.__delitem__("new")),  # patched, then undone
        lambda v, x: (v.__setitem__("s", x), v.__setitem__("s", "t")),  # replaced, then put back
        _restored_by_a_failed_patch,  # an edit journal restored the view
        lambda v, x: v["l"][1],  # a cached child of a child
        lambda v, x: [v[k] for k in ("a", "l", "s", "a", "l")],  # several cached children
    ],
)
def test_views_in_every_state_free_what_they_hold(cycle):
    # An untouched lazy view is freed without its drop glue (view/alloc.rs
    # `drop_bare`); every other state (cached children, patches, even
    # emptied or restored ones) must still release the input, its children
    # and the values it held, once each: no leak, no double decref.
    data = bytes(DATA)
    x = object()
    base_data, base_x = sys.getrefcount(data), sys.getrefcount(x)
    for _ in range(300):
        v = qjson.decode(data)
        kept = cycle(v, x)
        child = v["a"]  # outlives its parent
        del v
        assert child["b"]["c"][0] == 1
        del child, kept
    assert sys.getrefcount(data) == base_data
    assert sys.getrefcount(x) == base_x


def _holders(data):
    """A document's holders of every kind: the Doc, its root view, cached and
    uncached child views, cursors, a view got through a cursor, an edited view
    and a copy-on-write twin of it, each with a read that checks it."""
    doc = qjson.parse(data)
    root = doc.root
    edited = qjson.decode(data)
    edited["s"] = "u"
    child = edited["a"]
    held = {
        "doc": (doc, lambda d: d.get_int("a.b.c[1].d") == 2),
        "root": (root, lambda v: v["l"][1]["x"] == "y"),
        "grandchild": (root["a"]["b"], lambda v: v["c"][1]["d"] == 2),
        "cursor": (doc.open("l"), lambda c: c.get_str("[1].x") == "y"),
        "cursor_view": (doc.open("a").get("b"), lambda v: v["c"][0] == 1),
        "edited": (edited, lambda v: v["s"] == "u" and v["a"]["b"]["c"][0] == 1),
        "edited_child": (child, lambda v: dict(v["b"]["c"][1]) == {"d": 2}),
    }
    return held


@pytest.mark.parametrize("seed", range(40))
def test_holders_of_a_document_freed_in_any_order(seed):
    # Views and cursors share one count of their document between them
    # (src/python/share.rs): whatever order they go in, each one left reads
    # its document, and the input is released exactly when the last goes.
    import random

    data = bytes(DATA)  # an object of its own
    base = sys.getrefcount(data)
    held = _holders(data)
    order = list(held)
    random.Random(seed).shuffle(order)
    for i, name in enumerate(order):
        del held[name]
        gc.collect()
        for other, (obj, read) in held.items():
            assert read(obj), (order[: i + 1], other)
        obj = read = None  # (the loop's names hold the last one)
        if held:
            assert sys.getrefcount(data) > base
    assert sys.getrefcount(data) == base


def test_shares_of_two_documents_stay_apart():
    # Freeing every view of one document leaves another document's views
    # (over the same input object) readable, and each input's count exact.
    data = bytes(DATA)
    base = sys.getrefcount(data)
    a, b = qjson.decode(data), qjson.decode(data)
    kept = [b["a"]["b"], b["l"][1]]
    for _ in range(100):
        x = a["a"]["b"]["c"]
        y = qjson.parse(data).open("a").get("b")
        del x, y
    del a
    assert kept[0]["c"][1]["d"] == 2 and kept[1]["x"] == "y"
    del b
    assert kept[0]["c"][1]["d"] == 2
    del kept
    assert sys.getrefcount(data) == base


def test_child_views_outlive_parents_made_on_threads():
    # Children made on one thread and freed on another (the GIL orders the
    # share counts) keep the document alive until the last goes.
    data = bytes(DATA)
    base = sys.getrefcount(data)
    out = []

    def make():
        v = qjson.decode(data)
        out.extend([v["a"]["b"], v["l"], qjson.parse(data).open("l")])

    threads = [threading.Thread(target=make) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for b, arr, c in zip(out[0::3], out[1::3], out[2::3]):
        assert b["c"][1]["d"] == 2 and arr[1]["x"] == "y" and c.get_str("[1].x") == "y"
    del b, arr, c

    def drop(part):
        for _ in range(len(part)):
            part.pop()

    halves = [out[: len(out) // 2], out[len(out) // 2 :]]
    out.clear()
    threads = [threading.Thread(target=drop, args=(h,)) for h in halves]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sys.getrefcount(data) == base


def test_freeing_docs_releases_a_buffer_input():
    # A buffer input is released by the Doc's full drop (not the plain
    # decref of a bytes input), with or without a cursor outliving it.
    m = memoryview(DATA + b" ")
    base = sys.getrefcount(m)
    for i in range(300):
        doc = qjson.parse(m)
        assert sys.getrefcount(m) > base
        if i % 2:
            c = doc.open("l")
            del doc
            assert c.get_str("[1].x") == "y"
            del c
        else:
            assert doc.get_str("l[1].x") == "y"
            del doc
        assert sys.getrefcount(m) == base


@pytest.mark.parametrize("keep", ["parent", "child", "none"])
def test_quick_drops_beside_edited_children_and_cursors(keep):
    # The quick drop (view/alloc.rs `drop_quick`) of a parent whose cached
    # child was edited (the child holds patches: it takes the usual drop),
    # and of cursors sharing the document: edits stay visible through
    # whatever is kept, and the input goes with the last holder. (A copy,
    # not a shared constant.)
    data = bytes(bytearray(b'{"a": {"b": 1, "c": [1, 2]}, "d": {"e": "f"}, "g": [true]}'))
    base = sys.getrefcount(data)
    for _ in range(3):
        v = qjson.decode(data)
        a = v["a"]
        a["b"] = 5
        del a["c"]
        d = v["d"]  # cached, untouched: released by plain decref
        doc = qjson.parse(data)
        cursors = [doc.open("a"), doc.open("d"), doc.open("g")]
        del doc
        assert [c.raw() for c in cursors][1] == b'{"e": "f"}'
        held = {"parent": v, "child": a, "none": None}[keep]
        del v, a, d
        cursors.pop(0)  # a cursor whose document is shared on
        if keep == "parent":
            assert json.loads(qjson.dumps(held)) == {"a": {"b": 5}, "d": {"e": "f"}, "g": [True]}
        elif keep == "child":
            assert json.loads(qjson.dumps(held)) == {"b": 5}
        assert cursors[1].get_bool("[0]") is True
        del cursors
        if held is not None:
            assert sys.getrefcount(data) > base
        del held
        assert sys.getrefcount(data) == base
