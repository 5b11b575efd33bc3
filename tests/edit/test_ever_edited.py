"""Every editing path marks the document edited.

``dumps`` of a view whose document was never edited is one copy of the
input, with no walk over the cached views (``Input::ever_edited``). A
path that edited a view without setting that flag would have its edit
dumped as the original bytes: here each mutating method runs once on a
fresh document with views cached by reads, and ``dumps`` must write the
edit (checked against the same mutation of the plain value).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
import qjson
from qjson import _qjson

# Spaces everywhere, so that a compact rewrite is never the input.
SRC = (
    b'{ "model": "m",  "messages": [ {"role": "user", "content": "hi"} ,'
    b' {"role": "assistant", "content": "yo"} ],'
    b' "meta": { "tags": [ "a", "b", "c" ], "n": 3, "x": 1.5 }, "flag": true }'
)


def _set(c: Any, k: Any, v: Any) -> None:
    # Subscript syntax: the raw `mp_ass_subscript` entry point (a call of
    # `__setitem__` as a method goes to the slot PyO3 made).
    c[k] = v


def _del(c: Any, k: Any) -> None:
    del c[k]


def _iadd(t: Any) -> None:
    t += ["d"]


def _set_twice(r: Any) -> None:
    r["model"] = "a"
    r["model"] = "b"


# (id, mutation): each is applied to the qjson root and to the plain value.
MUTATIONS: list[tuple[str, Callable[[Any], Any]]] = [
    # objects
    ("obj-setitem-root", lambda r: _set(r, "model", "z")),
    ("obj-setitem-twice", _set_twice),
    ("obj-setitem-nested", lambda r: _set(r["messages"][0], "content", "x")),
    ("obj-setitem-existing", lambda r: _set(r["meta"], "n", 4)),
    ("obj-setitem-new", lambda r: _set(r["meta"], "new", 1)),
    ("obj-setitem-container", lambda r: _set(r["meta"], "n", {"a": [1]})),
    ("obj-setitem-method", lambda r: r.__setitem__("model", "z")),
    ("obj-setitem-method-nested", lambda r: r["meta"].__setitem__("n", 4)),
    ("obj-delitem-method", lambda r: r["meta"].__delitem__("x")),
    ("arr-setitem-method", lambda r: r["meta"]["tags"].__setitem__(0, "z")),
    ("arr-delitem-method", lambda r: r["meta"]["tags"].__delitem__(1)),
    ("obj-delitem", lambda r: _del(r["meta"], "x")),
    ("obj-delitem-root", lambda r: _del(r, "flag")),
    ("obj-pop", lambda r: r["meta"].pop("x")),
    ("obj-pop-default-present", lambda r: r["meta"].pop("n", None)),
    ("obj-popitem", lambda r: r["meta"].popitem()),
    ("obj-clear", lambda r: r["meta"].clear()),
    ("obj-update-dict", lambda r: r["meta"].update({"n": 5})),
    ("obj-update-kwargs", lambda r: r["meta"].update(n=5, y=2)),
    ("obj-update-pairs", lambda r: r["meta"].update([("z", None)])),
    ("obj-setdefault-absent", lambda r: r["meta"].setdefault("k", [1])),
    # arrays
    ("arr-setitem", lambda r: _set(r["meta"]["tags"], 0, "z")),
    ("arr-setitem-negative", lambda r: _set(r["meta"]["tags"], -1, "z")),
    ("arr-setitem-slice", lambda r: _set(r["meta"]["tags"], slice(0, 2), ["q"])),
    ("arr-setitem-ext-slice", lambda r: _set(r["meta"]["tags"], slice(None, None, 2), ["p", "q"])),
    ("arr-delitem", lambda r: _del(r["meta"]["tags"], 1)),
    ("arr-delitem-slice", lambda r: _del(r["meta"]["tags"], slice(0, 2))),
    ("arr-delitem-ext-slice", lambda r: _del(r["meta"]["tags"], slice(None, None, 2))),
    ("arr-append", lambda r: r["meta"]["tags"].append("d")),
    ("arr-append-messages", lambda r: r["messages"].append({"role": "x"})),
    ("arr-insert", lambda r: r["meta"]["tags"].insert(0, "d")),
    ("arr-extend", lambda r: r["meta"]["tags"].extend(["d", "e"])),
    ("arr-iadd", lambda r: _iadd(r["meta"]["tags"])),
    ("arr-pop", lambda r: r["meta"]["tags"].pop()),
    ("arr-pop-index", lambda r: r["meta"]["tags"].pop(0)),
    ("arr-remove", lambda r: r["meta"]["tags"].remove("b")),
    ("arr-reverse", lambda r: r["meta"]["tags"].reverse()),
    ("arr-clear", lambda r: r["meta"]["tags"].clear()),
    ("arr-setitem-of-element", lambda r: _set(r["messages"][1], "role", "tool")),
    # whole-document edits
    ("patch-replace", lambda r: qjson.patch(r, [{"op": "replace", "path": "/meta/n", "value": 9}])),
    (
        "patch-add",
        lambda r: qjson.patch(r, [{"op": "add", "path": "/messages/-", "value": {"a": 1}}]),
    ),
    ("patch-add-member", lambda r: qjson.patch(r, [{"op": "add", "path": "/meta/k", "value": 0}])),
    ("patch-remove", lambda r: qjson.patch(r, [{"op": "remove", "path": "/meta/tags/0"}])),
    ("patch-move", lambda r: qjson.patch(r, [{"op": "move", "from": "/model", "path": "/meta/m"}])),
    (
        "patch-copy",
        lambda r: qjson.patch(r, [{"op": "copy", "from": "/model", "path": "/messages/0/c"}]),
    ),
    (
        "patch-text",
        lambda r: qjson.patch(
            r,
            b'[{"op": "test", "path": "/flag", "value": true},'
            b' {"op": "replace", "path": "/flag", "value": false}]',
        ),
    ),
    ("merge-patch", lambda r: qjson.merge_patch(r, {"meta": {"n": None, "k": 1}})),
    ("merge-patch-text", lambda r: qjson.merge_patch(r, b'{"model": "q", "flag": null}')),
    # a new key whose value is an object, and nothing else: only the object
    # hook's add-if-absent path edits (review 30)
    ("merge-patch-add-object", lambda r: qjson.merge_patch(r, {"meta": {"k": {"z": 1}}})),
    ("incr", lambda r: qjson.incr(r, "/meta/n")),
    ("incr-float", lambda r: qjson.incr(r, "/meta/x", 0.25)),
    ("mul", lambda r: qjson.mul(r, "/meta/n", 3)),
]


def _fresh(entry: str) -> tuple[Any, Any]:
    """(the object to dump, its root view), with views cached by reads."""
    if entry == "decode":
        root = qjson.decode(SRC)
        top: Any = root
    else:
        top = qjson.parse(SRC)
        root = top.root
    assert root["messages"][0]["role"] == "user"
    assert root["meta"]["tags"][1] == "b"
    assert root["meta"]["n"] == 3
    return top, root


@pytest.mark.parametrize("entry", ["decode", "parse"])
@pytest.mark.parametrize(("name", "mutate"), MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_each_edit_is_dumped(entry: str, name: str, mutate: Callable[[Any], Any]) -> None:
    top, root = _fresh(entry)
    mutate(root)
    expected = json.loads(SRC)
    mutate(expected)
    out = qjson.dumps(top)
    assert out != SRC, name
    assert json.loads(out) == expected, name
    # The root view itself writes the same bytes.
    assert qjson.dumps(root) == out


@pytest.mark.parametrize("entry", ["decode", "parse"])
def test_reads_alone_keep_the_input(entry: str) -> None:
    top, root = _fresh(entry)
    list(root["meta"].items())
    list(root["messages"])
    assert len(root["meta"]) == 3
    assert root.get("nope") is None
    assert "model" in root
    assert qjson.dumps(top) == SRC
    assert qjson.dumps(root["meta"]) == b'{ "tags": [ "a", "b", "c" ], "n": 3, "x": 1.5 }'


def test_a_failed_patch_is_undone_and_later_edits_are_dumped() -> None:
    top, root = _fresh("decode")
    with pytest.raises(qjson.PatchError):
        qjson.patch(
            root,
            [{"op": "replace", "path": "/meta/n", "value": 9}, {"op": "remove", "path": "/nope"}],
        )
    assert qjson.dumps(top) == SRC
    root["meta"]["tags"].append("d")
    expected = json.loads(SRC)
    expected["meta"]["tags"].append("d")
    assert json.loads(qjson.dumps(top)) == expected


def test_an_edit_of_another_document_view_put_in_is_dumped() -> None:
    # A view of document A put into document B, edited after: B was edited
    # (the assignment), and A's view is written through its own document.
    _, a = _fresh("decode")
    _, b = _fresh("decode")
    tags = a["meta"]["tags"]
    b["model"] = tags
    tags.append("d")
    out = json.loads(qjson.dumps(b))
    assert out["model"] == ["a", "b", "c", "d"]
    assert json.loads(qjson.dumps(a))["meta"]["tags"] == ["a", "b", "c", "d"]


# Deleting a key the document lacks changes nothing, so the document stays
# never edited: `dumps` is one copy of the input, with no walk (a merge
# patch's `null` for an absent key, `{"stream": null}`, is the common case).
# `_ever_edited` reads the document's flag (`Input::ever_edited`).

ABSENT_DELETES: list[tuple[str, Callable[[Any], Any]]] = [
    ("merge-null-root", lambda r: qjson.merge_patch(r, {"stream": None})),
    ("merge-null-nested", lambda r: qjson.merge_patch(r, {"meta": {"nope": None}})),
    (
        "merge-nulls-both",
        lambda r: qjson.merge_patch(r, {"stream": None, "meta": {"k": None, "j": None}}),
    ),
    ("merge-null-text", lambda r: qjson.merge_patch(r, b'{"stream": null, "meta": {"y": null}}')),
    ("merge-null-twice", lambda r: qjson.merge_patch(r, {"stream": None, "stream2": None})),
]


@pytest.mark.parametrize("entry", ["decode", "parse"])
@pytest.mark.parametrize(("name", "mutate"), ABSENT_DELETES, ids=[m[0] for m in ABSENT_DELETES])
def test_deleting_absent_keys_leaves_the_document_unedited(
    entry: str, name: str, mutate: Callable[[Any], Any]
) -> None:
    top, root = _fresh(entry)
    assert _qjson._ever_edited(top) is False
    mutate(root)
    expected = json.loads(SRC)
    mutate(expected)
    assert expected == json.loads(SRC)
    assert _qjson._ever_edited(top) is False, name
    assert _qjson._ever_edited(root["meta"]) is False, name
    assert qjson.dumps(top) == SRC
    assert qjson.dumps(root) == SRC
    # The views still read right, and a later edit is written.
    assert "stream" not in root
    assert root.get("stream") is None
    assert len(root) == 4
    assert len(root["meta"]) == 3
    assert root["meta"]["n"] == 3
    assert qjson.materialize(root) == expected
    root["meta"]["n"] = 4
    assert _qjson._ever_edited(top) is True
    expected["meta"]["n"] = 4
    assert json.loads(qjson.dumps(top)) == expected


@pytest.mark.parametrize("entry", ["decode", "parse"])
def test_del_of_an_absent_key_raises_and_leaves_the_document_unedited(entry: str) -> None:
    top, root = _fresh(entry)
    with pytest.raises(KeyError):
        del root["nope"]
    with pytest.raises(KeyError):
        del root["meta"]["nope"]
    assert _qjson._ever_edited(top) is False
    assert qjson.dumps(top) == SRC
    # Deleted once, the second delete finds nothing: the first one edited.
    del root["meta"]["x"]
    with pytest.raises(KeyError):
        del root["meta"]["x"]
    assert _qjson._ever_edited(top) is True
    expected = json.loads(SRC)
    del expected["meta"]["x"]
    assert json.loads(qjson.dumps(top)) == expected


@pytest.mark.parametrize("entry", ["decode", "parse"])
@pytest.mark.parametrize(
    "ops",
    [
        [{"op": "remove", "path": "/nope"}],
        [{"op": "remove", "path": "/meta/nope"}],
        [{"op": "test", "path": "/flag", "value": True}, {"op": "remove", "path": "/stream"}],
    ],
    ids=["root", "nested", "after-test"],
)
def test_a_patch_removing_an_absent_key_fails_and_leaves_the_document_unedited(
    entry: str, ops: list[dict[str, Any]]
) -> None:
    top, root = _fresh(entry)
    with pytest.raises(qjson.PatchError):
        qjson.patch(root, ops)
    assert _qjson._ever_edited(top) is False
    assert qjson.dumps(top) == SRC
    assert qjson.materialize(root) == json.loads(SRC)
    assert root["meta"]["tags"][2] == "c"


def test_merging_nulls_beside_a_real_delete_is_dumped() -> None:
    top, root = _fresh("decode")
    qjson.merge_patch(root, {"stream": None, "meta": {"nope": None, "x": None}})
    assert _qjson._ever_edited(top) is True
    expected = json.loads(SRC)
    del expected["meta"]["x"]
    assert json.loads(qjson.dumps(top)) == expected
    assert qjson.materialize(root) == expected
