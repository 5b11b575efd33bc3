"""Edits of lazy objects through patches (set / delete / re-insert without
unfolding the object), including objects whose keys repeat, raw or only
once unescaped: random operation sequences against a first-wins dict model.

Reads of a repeated key see its first occurrence; once an object has edits
of its own, dumps writes each key once (the first occurrence's position and
value, unless edited), so json.loads of the output equals the model. An
object edited only inside its child views keeps its other members as
written, repeats included (see `check`).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import hypothesis.strategies as st
import pytest
import qjson
from hypothesis import given, settings

KEYS = ["a", "b", "c", "é", "k.1", ""]


def encode_key(k: str, escaped: bool) -> str:
    if escaped and k:
        # Escaped: ASCII keys wholly as \uXXXX, others their non-ASCII characters.
        return (
            json.dumps(k, ensure_ascii=True)
            if not k.isascii()
            else ('"' + "".join(f"\\u{ord(ch):04x}" for ch in k) + '"')
        )
    return json.dumps(k, ensure_ascii=False)


@st.composite
def documents(draw: st.DrawFn) -> tuple[bytes, dict[str, Any]]:
    """An object text with possibly repeated keys, and its first-wins model."""
    n = draw(st.integers(min_value=0, max_value=24))
    members = []
    model: dict[str, Any] = {}
    for _ in range(n):
        k = draw(st.sampled_from(KEYS) | st.text(max_size=2))
        v = draw(st.integers(-5, 5) | st.lists(st.integers(0, 3), max_size=2))
        members.append(f"{encode_key(k, draw(st.booleans()))}: {json.dumps(v)}")
        model.setdefault(k, v)
    return ("{" + ", ".join(members) + "}").encode(), model


ops = st.lists(
    st.tuples(
        st.sampled_from(
            ["set", "del", "get", "in", "len", "keys", "pop", "setdefault", "child", "dumps"]
        ),
        st.sampled_from(KEYS) | st.text(max_size=2),
        st.integers(100, 105),
    ),
    max_size=12,
)


def check(
    view: Any, model: dict[str, Any], edited: bool, text: bytes, first: dict, children: set
) -> None:
    """Once edited, the output reads as the model (first occurrences, as
    qjson reads). Edited by its own members, dumps writes each key once, so
    json.loads of it is the model too; edited only inside child views
    (`children`: their keys), its other members stay as written, repeats
    included, and only the edited children's keys are written once, so
    json.loads sees them as the model has them. Edits can also cancel out
    (a key added, then deleted): the object is untouched again and dumps
    gives the original text, repeats included; that is right only when
    the model is back to the original."""
    if not edited and not children:
        return
    raw = qjson.dumps(view)
    if raw == text:
        assert model == first and list(model) == list(first)
        return
    mine = qjson.materialize(qjson.decode(raw))
    assert mine == model
    assert list(mine) == list(model)
    out = json.loads(raw)
    if edited:
        assert out == model
        assert list(out) == list(model)
    else:
        assert all(out[k] == model[k] for k in children)


@settings(max_examples=300, deadline=None)
@given(doc=documents(), steps=ops)
def test_patched_objects_follow_a_dict(doc: tuple[bytes, dict[str, Any]], steps: list) -> None:
    text, model = doc
    first = copy.deepcopy(model)
    view = qjson.decode(text)
    # Original keys set, deleted or popped: a patch of the object's own that
    # no later edit takes back. (A key added and then deleted leaves no
    # patch: see `own_edits`.)
    touched: set[str] = set()
    children: set[str] = set()

    def own_edits() -> bool:
        return bool(touched) or any(k not in first for k in model)

    for op, k, v in steps:
        if op == "set":
            view[k] = v
            model[k] = v
            touched |= {k} & first.keys()
        elif op == "del":
            if k in model:
                del view[k]
                del model[k]
                touched |= {k} & first.keys()
            else:
                with pytest.raises(KeyError):
                    del view[k]
        elif op == "get":
            assert view.get(k, "missing") == model.get(k, "missing")
        elif op == "in":
            assert (k in view) == (k in model)
        elif op == "len":
            assert len(view) == len(model)
        elif op == "keys":
            assert list(view.keys()) == list(model)
        elif op == "pop":
            if k in model:
                touched |= {k} & first.keys()
            assert view.pop(k, None) == model.pop(k, None)
        elif op == "setdefault":
            assert view.setdefault(k, v) == model.setdefault(k, v)
        elif op == "child":
            # An edit inside a child view: the object is dirty without a
            # patch of its own (see `check`).
            if isinstance(model.get(k), list):
                view[k].append(v)
                model[k].append(v)
                children.add(k)
        elif op == "dumps":
            check(view, model, own_edits(), text, first, children)
        assert len(view) == len(model)
    check(view, model, own_edits(), text, first, children)
    assert qjson.materialize(view) == model
    assert list(qjson.materialize(view)) == list(model)


@pytest.mark.parametrize(
    ("text", "steps", "want"),
    [
        # Replacing a repeated key keeps its first position; the repeat goes.
        (b'{"a": 1, "b": 2, "a": 3}', [("set", "a", 9)], {"a": 9, "b": 2}),
        # Equal only once unescaped.
        (b'{"a": 1, "\\u0061": 2, "c": 3}', [("set", "c", 0)], {"a": 1, "c": 0}),
        # Deleted then set again: at the end, as in a dict.
        (b'{"a": 1, "b": 2}', [("del", "a", 0), ("set", "a", 5)], {"b": 2, "a": 5}),
        # Added then deleted: gone; deleted original stays deleted.
        (
            b'{"a": 1, "b": 2}',
            [("set", "z", 1), ("del", "a", 0), ("del", "z", 0), ("set", "y", 2)],
            {"b": 2, "y": 2},
        ),
        # Added then deleted on an object with a repeat: untouched again, so
        # dumps gives the original text (the repeat included; checked below).
        (b'{"b": 0, "b": []}', [("set", "a", 1), ("del", "a", 0)], {"b": 0}),
        # Dirty only through a child view (no patch of its own) whose key
        # repeats: the repeat goes (see test_child_edit_keeps_other_repeats
        # for a repeat of another key).
        (b'{"a": [1], "b": 2, "a": [3]}', [("child", "a", 5)], {"a": [1, 5], "b": 2}),
        (b'{"a": [1], "b": 2, "\\u0061": [3]}', [("child", "a", 5)], {"a": [1, 5], "b": 2}),
        (b'{"b": 2, "x": [1]}', [("get", "b", 0), ("child", "x", 0)], {"b": 2, "x": [1, 0]}),
        # The first edit finds the key early; a repeat comes later.
        (b'{"a": 1, "b": 2, "c": 3, "b": 4}', [("set", "a", 0)], {"a": 0, "b": 2, "c": 3}),
        # Wide objects (more than 16 members) with a repeat.
        (
            ("{" + ",".join(f'"k{i % 20}": {i}' for i in range(30)) + "}").encode(),
            [("set", "k3", -1)],
            {**{f"k{i}": i for i in range(20)}, "k3": -1},
        ),
    ],
)
def test_patch_cases(text: bytes, steps: list, want: dict[str, Any]) -> None:
    view = qjson.decode(text)
    for op, k, v in steps:
        if op == "set":
            view[k] = v
        elif op == "child":
            view[k].append(v)
        elif op == "get":
            view[k]
        else:
            del view[k]
    out = qjson.dumps(view)
    if out == text:
        # Untouched after all: the original bytes, whatever json.loads makes
        # of their repeats; the view still reads the first occurrence.
        assert steps and all(k not in json.loads(text) for _, k, _ in steps)
    else:
        assert json.loads(out) == want
        assert list(json.loads(out)) == list(want)
    assert view == want
    assert list(view) == list(want)
    assert len(view) == len(want)


@pytest.mark.parametrize(
    ("text", "read_first", "want"),
    [
        (b'{"x": [1], "b": 2, "b": 3}', False, b'{"x": [1,0], "b": 2, "b": 3}'),
        (b'{"b": 2, "x": [1], "b": 3}', True, b'{"b": 2, "x": [1,0], "b": 3}'),
        (b'{"b": 2, "x": [1], "\\u0062": 3}', False, b'{"b": 2, "x": [1,0], "\\u0062": 3}'),
    ],
)
def test_child_edit_keeps_other_repeats(text: bytes, read_first: bool, want: bytes) -> None:
    """An object dirty only through a child view keeps its other members
    as written, a repeated key included (as an untouched object does):
    only the edited child's key must not repeat."""
    view = qjson.decode(text)
    if read_first:
        assert view["b"] == 2
    view["x"].append(0)
    assert qjson.dumps(view) == want
    assert view == {"b": 2, "x": [1, 0]} and len(view) == 2


def test_untouched_siblings_stay_byte_identical() -> None:
    text = b'{"model": "m",  "keep": {"x" : [1, 2 ]}, "messages": [{"role": "u", "content": "c"}]}'
    view = qjson.decode(text)
    view["model"] = "gpt"
    view["messages"][0]["content"] = "hi"
    out = qjson.dumps(view)
    assert b'"keep": {"x" : [1, 2 ]}' in out
    assert json.loads(out) == {
        "model": "gpt",
        "keep": {"x": [1, 2]},
        "messages": [{"role": "u", "content": "hi"}],
    }


def test_patch_holding_its_own_object_is_a_cycle() -> None:
    view = qjson.decode(b'{"a": 1}')
    view["self"] = view
    with pytest.raises((ValueError, TypeError)):
        qjson.dumps(view)
    with pytest.raises(ValueError):
        qjson.materialize(view)
