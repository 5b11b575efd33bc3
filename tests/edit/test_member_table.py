"""Edits that look a key up in a small object's member table (src/edit/table.rs)
must find exactly the member the key names: a short key never matches a longer
member whose fingerprint collides with it, and a long key holding a quote never
matches a shorter member (the review of session 14 found both)."""

from __future__ import annotations

import json

import pytest
import qjson

LONG = "headers " + "x" * 31  # 39 bytes: ' ' ^ 39 == 7, the fingerprint of a 7-byte key


def _doc() -> tuple[object, dict]:
    d = {LONG: 1, "b": 2}
    return qjson.decode(json.dumps(d)), d


def test_short_key_set_adds_a_member() -> None:
    v, d = _doc()
    v["headers"] = 5
    d["headers"] = 5
    assert json.loads(qjson.dumps(v)) == d


def test_short_key_patch_remove_and_test_fail() -> None:
    v, _ = _doc()
    with pytest.raises(qjson.PatchError):
        qjson.patch(v, [{"op": "remove", "path": "/headers"}])
    with pytest.raises(qjson.PatchError):
        qjson.patch(v, [{"op": "test", "path": "/headers", "value": 1}])
    assert json.loads(qjson.dumps(v)) == {LONG: 1, "b": 2}


def test_short_key_merge_delete_keeps_the_long_member() -> None:
    v, _ = _doc()
    out = qjson.merge_patch(v, {"headers": None})
    assert json.loads(qjson.dumps(out)) == {LONG: 1, "b": 2}


def test_long_key_with_a_quote_does_not_match_a_short_member() -> None:
    w = qjson.decode('{"abcdefg":1,"' + "x" * 25 + '":2}')
    out = qjson.merge_patch(w, {'abcdefg":1,"' + "x" * 25: None})
    assert json.loads(qjson.dumps(out)) == {"abcdefg": 1, "x" * 25: 2}
