"""Strings of a strictly parsed document are made from their bodies without a
second check (issue 18): the document's flags (an escape anywhere, a byte >=
0x80 anywhere) pick the path, and each str must come out as json.loads makes
it, in the narrowest width (CPython compares the kind first, so a wider str
would not be equal), whatever the read: getters, views, get_all, materialize
(keys too)."""

from __future__ import annotations

import json

import pytest
import qjson

PIECES = ["a", "é", "ÿ", "Ā", "中", "\U0001f600", '"', "\\", "\n", "/", "\u00e9"]


def values() -> list[str]:
    out = [""]
    for p in PIECES:
        for n in (0, 1, 3, 4, 7, 8, 9, 15, 16, 17):
            out.append("x" * n + p)
            out.append(p + "y" * n)
            out.append("x" * n + p + "y" * (n % 5) + p)
    return out


# Each string sits in a document of every kind: the neighbour sets the flags
# (no escape and all ASCII; an escape elsewhere; a byte >= 0x80 elsewhere;
# both).
NEIGHBOURS = ["plain", "esc\\aped", "naïve", "naïve\tesc"]


@pytest.mark.parametrize("neighbour", NEIGHBOURS)
@pytest.mark.parametrize("ensure_ascii", [False, True])
def test_strict_strings_agree_with_json(neighbour: str, ensure_ascii: bool) -> None:
    vals = values()
    obj = {"n": neighbour, "v": vals, "k": {v: i for i, v in enumerate(vals)}}
    data = json.dumps(obj, ensure_ascii=ensure_ascii).encode()
    want = json.loads(data)
    doc = qjson.parse(data)
    assert doc.get_all("v[*]") == vals
    got_keys = list(qjson.materialize(doc.root["k"]))
    assert got_keys == list(want["k"])
    assert qjson.materialize(doc.root) == want
    arr = doc.root["v"]
    for i, v in enumerate(vals):
        for got in (doc.get(f"v[{i}]"), doc.get_str(f"v[{i}]"), arr[i]):
            assert got == v and type(got) is str, (v, got)
            assert hash(got) == hash(v)


def test_strict_strings_of_a_lazy_document_still_validate() -> None:
    # The same bodies in a lazy document are checked on read.
    doc = qjson.parse(b'{"a": "\\ud800", "b": "ok\xff"}', lazy=True)
    with pytest.raises(qjson.JSONDecodeError):
        doc.get("a")
    with pytest.raises(qjson.JSONDecodeError):
        doc.get("b")
    with pytest.raises(qjson.JSONDecodeError):
        qjson.parse(b'{"a": "\\ud800"}')
