"""Reads of a patched lazy object (iteration, keys(), values(), items(),
materialize, ==, repr) must not unfold it: what `dumps` writes after any
reads equals what it writes for a twin object given the same edits and no
reads, and the reads equal a dict model (order and values). Keys repeat
in some documents (first occurrence wins), and both strict and lazy
documents are covered.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import hypothesis.strategies as st
import pytest
import qjson
from hypothesis import given, settings

KEYS = ["a", "b", "c", "é", ""]


@st.composite
def documents(draw: st.DrawFn) -> tuple[bytes, dict[str, Any]]:
    """An object text with irregular spacing and possibly repeated keys,
    and its first-wins model."""
    n = draw(st.integers(min_value=0, max_value=10))
    members = []
    model: dict[str, Any] = {}
    for _ in range(n):
        k = draw(st.sampled_from(KEYS))
        v = draw(st.integers(-5, 5) | st.lists(st.integers(0, 3), max_size=2))
        gap = draw(st.sampled_from(["", " ", "  "]))
        members.append(f"{json.dumps(k, ensure_ascii=False)}{gap}:{gap}{json.dumps(v)}")
        model.setdefault(k, v)
    return ("{ " + " , ".join(members) + " }").encode(), model


edits = st.lists(
    st.tuples(st.sampled_from(["set", "del"]), st.sampled_from(KEYS), st.integers(100, 105)),
    max_size=6,
)
READS = ["iter", "keys", "values", "items", "materialize", "eq", "repr", "len"]


def view_of(text: bytes, lazy: bool) -> Any:
    return qjson.parse(text, lazy=True).root if lazy else qjson.decode(text)


def read(view: Any, model: dict[str, Any], how: str) -> None:
    if how == "iter":
        assert list(view) == list(model)
    elif how == "keys":
        assert list(view.keys()) == list(model)
    elif how == "values":
        assert [qjson.materialize(v) for v in view.values()] == list(model.values())
    elif how == "items":
        got = [(k, qjson.materialize(v)) for k, v in view.items()]
        assert got == list(model.items())
    elif how == "materialize":
        plain = qjson.materialize(view)
        assert plain == model
        assert list(plain) == list(model)
    elif how == "eq":
        assert view == model
    elif how == "repr":
        assert repr(view) == f"qjson.Object({model!r})"
    elif how == "len":
        assert len(view) == len(model)


def edit(view: Any, model: dict[str, Any], op: str, k: str, v: int) -> None:
    if op == "set":
        view[k] = v
        model[k] = v
    elif k in model:
        del view[k]
        del model[k]


@settings(max_examples=300, deadline=None)
@given(
    doc=documents(),
    steps=edits,
    reads=st.lists(st.sampled_from(READS), min_size=1, max_size=4),
    lazy=st.booleans(),
)
def test_reads_leave_dumps_unchanged(
    doc: tuple[bytes, dict[str, Any]], steps: list, reads: list[str], lazy: bool
) -> None:
    text, first = doc
    model = copy.deepcopy(first)
    twin_model = copy.deepcopy(first)
    view, twin = view_of(text, lazy), view_of(text, lazy)
    for i, (op, k, v) in enumerate(steps):
        edit(view, model, op, k, v)
        edit(twin, twin_model, op, k, v)
        # Reads between edits too: the later edits still go into patches.
        read(view, model, reads[i % len(reads)])
    for how in reads:
        read(view, model, how)
    out = qjson.dumps(view)
    assert out == qjson.dumps(twin)
    if out != text:
        assert json.loads(out) == model
        assert list(json.loads(out)) == list(model)


@pytest.mark.parametrize("how", READS)
def test_replaced_key_keeps_its_bytes_after_a_read(how: str) -> None:
    text = b'{"a" : 1,  "b"  :  2, "c": [1]}'
    view = qjson.decode(text)
    view["b"] = 3
    model = {"a": 1, "b": 3, "c": [1]}
    read(view, model, how)
    # A replacement in a lazy object keeps the key and colon as written.
    assert qjson.dumps(view) == b'{"a" : 1,  "b"  :  3, "c": [1]}'


@pytest.mark.parametrize("how", READS)
def test_deleted_and_added_keys_read_in_dict_order(how: str) -> None:
    text = b'{"a": 1, "b": 2, "a": 9, "c": {"d": 4}}'
    view = qjson.decode(text)
    del view["a"]
    view["e"] = [5]
    view["a"] = 0
    model = {"b": 2, "c": {"d": 4}, "e": [5], "a": 0}
    want = qjson.dumps(view)
    read(view, model, how)
    assert qjson.dumps(view) == want
    assert json.loads(want) == model


def test_edits_after_reads_still_match_the_model() -> None:
    view = qjson.decode(b'{"x": {"y": 1}, "z": 2}')
    view["z"] = 3
    assert dict(view.items())["z"] == 3
    # A child view read through items() is the cached one: editing it shows
    # in the output, and the replaced member keeps its key as written.
    child = dict(view.items())["x"]
    assert child is view["x"]
    child["y"] = 7
    assert qjson.dumps(view) == b'{"x": {"y": 7}, "z": 3}'
    assert qjson.materialize(view) == {"x": {"y": 7}, "z": 3}
