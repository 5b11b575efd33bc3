"""`Object[key] = value` through the raw entry point (an exact str key on a
lazy object, first set of that key) and through PyO3's slot (everything
else): the same state, output and errors either way."""

from __future__ import annotations

import gc
import json
import sys

import pytest
import qjson

BODY = b'{"model": "gpt-4o", "temperature": 0.7, "messages": [{"role": "user", "content": "hi"}]}'


class Key(str):
    pass


def test_new_and_existing_keys_are_patched_in_place() -> None:
    v = qjson.decode(BODY)
    v["model"] = "gpt-4o-mini"  # raw entry: first set of an existing key
    v["user"] = "u-1"  # raw entry: a new key
    v["model"] = "o3"  # PyO3's slot: the key is patched already
    v[Key("temperature")] = 0.2  # PyO3's slot: a str subclass
    assert v["model"] == "o3" and v["user"] == "u-1" and v["temperature"] == 0.2
    assert len(v) == 4
    out = qjson.dumps(v)
    assert out == (
        b'{"model": "o3", "temperature": 0.2, "messages": [{"role": "user", '
        b'"content": "hi"}],"user":"u-1"}'
    )
    assert json.loads(out) == qjson.materialize(v)


def test_nested_set_and_delete() -> None:
    v = qjson.decode(BODY)
    m = v["messages"][0]
    m["content"] = "You are terse."
    del m["role"]  # `del` always goes to PyO3's slot
    assert json.loads(qjson.dumps(v))["messages"] == [{"content": "You are terse."}]
    with pytest.raises(KeyError):
        del m["role"]


def test_errors_are_the_slot_s() -> None:
    v = qjson.decode(BODY)
    with pytest.raises(TypeError, match="keys must be str"):
        v[1] = 2  # type: ignore[index]
    with pytest.raises(UnicodeEncodeError):
        v["\ud800"] = 1
    assert json.loads(qjson.dumps(v)) == json.loads(BODY)


def test_set_on_an_unfolded_object_and_a_lazy_document() -> None:
    v = qjson.decode(BODY)
    v.popitem()  # unfolds the object: later sets go to PyO3's slot
    v["x"] = [1]
    assert json.loads(qjson.dumps(v)) == {"model": "gpt-4o", "temperature": 0.7, "x": [1]}
    d = qjson.parse(BODY, lazy=True).root
    d["model"] = None
    assert json.loads(qjson.dumps(d))["model"] is None


def test_the_value_and_key_are_held_once_and_released() -> None:
    value = object.__new__(type("V", (), {}))
    key = "".join(["fresh", "key"])  # not interned: its count is ours alone
    before = (sys.getrefcount(value), sys.getrefcount(key))
    v = qjson.decode(BODY)
    v[key] = value
    assert v[key] is value
    assert (sys.getrefcount(value), sys.getrefcount(key)) == (before[0] + 1, before[1] + 1)
    del v
    gc.collect()
    assert (sys.getrefcount(value), sys.getrefcount(key)) == before


def test_a_freed_patched_views_list_starts_the_next_one_empty() -> None:
    # A patched view freed with its document (nested: released by its
    # parent's drop; the root: the document's last share) gives its emptied
    # patch list back for the next first patch; the next object patched
    # must see none of the old list's members (nor its keys' positions).
    for _ in range(3):
        d = qjson.decode(b'{"a": 1, "b": {"x": 1, "y": 2, "z": 3}}')
        d["b"]["y"] = 5
        d["b"]["w"] = 6
        assert d["b"]["x"] == 1
        assert json.loads(qjson.dumps(d)) == {"a": 1, "b": {"x": 1, "y": 5, "z": 3, "w": 6}}
        del d
        # (Its last key, which the freed object's table does not have:
        # a stale table takes it for a new member and writes it twice.)
        e = qjson.decode(b'{"z": 0, "y": 1, "x": 2, "q": 3}')
        e["q"] = 7
        assert (e["z"], e["y"], e["x"], e["q"]) == (0, 1, 2, 7)
        assert "w" not in e and len(e) == 4
        assert qjson.dumps(e) == b'{"z": 0, "y": 1, "x": 2, "q": 7}'
        e["x"] = 8
        assert qjson.dumps(e) == b'{"z": 0, "y": 1, "x": 8, "q": 7}'
        del e
