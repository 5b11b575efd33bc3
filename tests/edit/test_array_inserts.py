"""Inserts into a lazy array of a strict document (`insert`, `append`,
`extend`, a patch's `add` at an index or `-`) are kept without unfolding
the array: the array reads, writes and materializes as the unfolded one
would, and `dumps` gives the same bytes."""

from __future__ import annotations

import gc
import json
from typing import Any, Callable

import pytest
import qjson

ARRAYS = [
    b"[ ]",
    b"[]",
    b"[ 1 ]",
    b'[\n  1,\n  {"a": 2} ,\n  [3]\n]',
    b"[1,2,3,4,5]",
    b' [ {"m": [1]} , "s" ] ',
]

# Edits made only of inserts (each on a fresh view).
INSERTS: list[Callable[[Any], Any]] = [
    lambda v: v.append(7),
    lambda v: v.insert(0, "x"),
    lambda v: (v.insert(0, "x"), v.insert(0, "y"), v.append(None)),
    lambda v: (v.append(1), v.insert(1, [2]), v.insert(-1, {"k": 3}), v.insert(100, 4)),
    lambda v: (v.insert(-100, 0), v.extend([8, 9]), v.insert(2, "m")),
    lambda v: [v.insert(i * 2, i) for i in range(4)],
]


def _model(data: bytes, edit: Callable[[Any], Any]) -> Any:
    m = json.loads(data)
    edit(m)
    return m


def _unfolded(data: bytes, edit: Callable[[Any], Any]) -> Any:
    # Reversing twice unfolds the array into slots, in its original order.
    v = qjson.decode(data)
    v.reverse()
    v.reverse()
    edit(v)
    return v


@pytest.mark.parametrize("data", ARRAYS)
@pytest.mark.parametrize("edit", INSERTS)
def test_inserts_write_the_bytes_of_the_unfolded_array(
    data: bytes, edit: Callable[[Any], Any]
) -> None:
    v = qjson.decode(data)
    edit(v)
    out = qjson.dumps(v)
    assert out == qjson.dumps(_unfolded(data, edit))
    want = _model(data, edit)
    assert json.loads(out) == want
    assert qjson.materialize(v) == want
    assert len(v) == len(want)


@pytest.mark.parametrize("data", ARRAYS)
@pytest.mark.parametrize("edit", INSERTS)
def test_reads_after_inserts(data: bytes, edit: Callable[[Any], Any]) -> None:
    want = _model(data, edit)
    v = qjson.decode(data)
    edit(v)
    assert [
        qjson.materialize(x) if isinstance(x, (qjson.Object, qjson.Array)) else x for x in v
    ] == want
    v = qjson.decode(data)
    edit(v)
    for i in range(-len(want), len(want)):
        got = v[i]
        assert (
            qjson.materialize(got) if isinstance(got, (qjson.Object, qjson.Array)) else got
        ) == want[i]
    assert qjson.materialize(v) == want
    # Any other edit after the inserts (here a pop) sees them in place.
    if want:
        v.pop(0)
        want.pop(0)
        assert json.loads(qjson.dumps(v)) == want


def test_inserts_keep_the_layout_and_edited_children() -> None:
    data = b'{"messages": [\n  {"role": "user", "content": "hi"}\n], "n": 1}'
    v = qjson.decode(data)
    msgs = v["messages"]
    msgs[0]["content"] = "hello"
    msgs.insert(0, {"role": "system", "content": "Be brief."})
    msgs.append("end")
    assert qjson.dumps(v) == (
        b'{"messages": [\n  {"role":"system","content":"Be brief."},'
        b'{"role": "user", "content": "hello"},"end"\n], "n": 1}'
    )


def test_patch_add_into_an_array_is_undone_on_failure() -> None:
    data = b'{"a": [1, 2], "b": 0}'
    v = qjson.decode(data)
    a = v["a"]
    ops = [
        {"op": "add", "path": "/a/0", "value": 0},
        {"op": "add", "path": "/a/-", "value": 3},
        {"op": "test", "path": "/b", "value": 1},
    ]
    with pytest.raises(qjson.PatchError):
        qjson.patch(v, ops)
    assert qjson.dumps(v) == data
    assert v["a"] is a
    assert len(a) == 2 and qjson.materialize(a) == [1, 2]
    qjson.patch(v, ops[:2])
    assert qjson.dumps(v) == b'{"a": [0,1, 2,3], "b": 0}'


def test_lazy_documents_unfold_as_before() -> None:
    # A lazy document's array was never validated: inserts unfold it (its
    # elements are checked when written), as before.
    r = qjson.parse(b"[1, 01]", lazy=True).root
    r.append(2)
    with pytest.raises(qjson.JSONDecodeError):
        qjson.dumps(r)
    r = qjson.parse(b"[ 1 , 2 ]", lazy=True).root
    r.insert(1, 5)
    assert qjson.dumps(r) == b"[1,5,2]"


def test_cycles_through_inserts() -> None:
    v = qjson.decode(b'{"a": [1]}')
    v["a"].insert(0, v)
    with pytest.raises(qjson.JSONEncodeError):
        qjson.dumps(v)
    with pytest.raises(ValueError):
        qjson.materialize(v)
    # The collector finds the cycle through the inserted element.
    a = qjson.decode(b"[1, 2]")
    a.append(a)
    del a
    gc.collect()
