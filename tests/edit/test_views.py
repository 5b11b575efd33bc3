"""The mutable view protocols: Object as a MutableMapping, Array as a
MutableSequence, identity of child views, lifetime, and qjson.decode."""

from __future__ import annotations

import collections.abc
import gc
import json

import pytest
import qjson

DOC = b'{"o": {"x": 1, "y": [1, 2, {"z": null}], "s": "t"}, "a": [3, "b", [], {}, false, 3]}'
PY = json.loads(DOC)


def test_decode_returns_views_and_scalars() -> None:
    v = qjson.decode(DOC)
    assert isinstance(v, qjson.Object)
    assert isinstance(v, collections.abc.MutableMapping)
    assert isinstance(v["a"], collections.abc.MutableSequence)
    assert v == PY and PY == v
    assert qjson.decode(b" 1 ") == 1 and qjson.decode(b'"s"') == "s"
    assert qjson.decode(b"null") is None
    with pytest.raises(qjson.JSONDecodeError):
        qjson.decode(b'{"a": 01}')
    with pytest.raises(qjson.JSONDecodeError):
        qjson.decode(b"[[[1]]]", max_depth=2)
    assert isinstance(qjson.parse(DOC).root, qjson.Object)


def test_child_views_are_cached() -> None:
    v = qjson.decode(DOC)
    assert v["o"] is v["o"]
    assert v["o"]["y"] is v.get("o")["y"]
    assert v["a"][2] is v["a"][-4]
    assert [x for x in v.values()][0] is v["o"]
    v["new"] = 1  # edits keep the cached children
    assert v["o"] is v.get("o")
    assert v["a"][3] is v["a"][3]
    v["a"].insert(0, 0)
    assert v["a"][4] is v["a"][4]


def test_mapping_protocol() -> None:
    v = qjson.decode(DOC)["o"]
    assert len(v) == 3 and list(v) == ["x", "y", "s"]
    assert "x" in v and "q" not in v and 1 not in v
    assert v.get("q") is None and v.get("q", 5) == 5
    with pytest.raises(KeyError):
        v["q"]
    v["q"] = [1]
    v["x"] = 2
    del v["s"]
    assert list(v.keys()) == ["x", "y", "q"]
    assert v == {"x": 2, "y": [1, 2, {"z": None}], "q": [1]}
    assert v.pop("q") == [1] and v.pop("q", 7) == 7
    with pytest.raises(KeyError):
        v.pop("q")
    with pytest.raises(KeyError):
        del v["q"]
    assert v.setdefault("x", 9) == 2 and v.setdefault("w", 9) == 9
    v.update({"u": 1}, k=2)
    v.update([("p", 3)])
    assert list(v) == ["x", "y", "w", "u", "k", "p"]
    assert v.popitem() == ("p", 3)
    assert dict(v.items())["u"] == 1
    with pytest.raises(TypeError):
        v[1] = 2  # type: ignore[index]
    v.clear()
    assert v == {} and len(v) == 0
    with pytest.raises(KeyError):
        v.popitem()
    with pytest.raises(TypeError):
        hash(v)
    assert repr(qjson.decode(b'{"a": [1]}')) == "qjson.Object({'a': [1]})"


def test_sequence_protocol() -> None:
    a = qjson.decode(DOC)["a"]
    m = list(PY["a"])
    assert a == m and len(a) == 6
    assert a[-1] == 3 and a[1:3] == ["b", []] and a[::-2] == m[::-2]
    with pytest.raises(IndexError):
        a[6]
    with pytest.raises(TypeError):
        a["x"]  # type: ignore[call-overload]
    assert a.index(3) == 0 and a.index(3, 1) == 5 and a.count(3) == 2
    assert "b" in a and list(reversed(a)) == m[::-1]
    ops = [
        lambda s: s.append(7),
        lambda s: s.insert(-100, "first"),
        lambda s: s.insert(100, "last"),
        lambda s: s.extend([8, 9]),
        lambda s: s.__setitem__(1, {"k": 1}),
        lambda s: s.__setitem__(slice(2, 4), ["s1", "s2", "s3"]),
        lambda s: s.__setitem__(slice(0, 6, 2), [0, 0, 0]),
        lambda s: s.__delitem__(slice(1, 3)),
        lambda s: s.__delitem__(slice(None, None, -3)),
        lambda s: s.__delitem__(-1),
        lambda s: s.remove(0),
        lambda s: s.reverse(),
    ]
    for op in ops:
        op(a)
        op(m)
        assert a == m
        assert json.loads(qjson.dumps(a)) == m
    assert a.pop() == m.pop() and a.pop(0) == m.pop(0)
    with pytest.raises(ValueError):
        a[0:3:2] = [1, 2, 3]
    with pytest.raises(ValueError):
        a.remove("absent")
    a += [1]
    m += [1]
    assert a == m
    a.extend(a)
    m.extend(m)
    assert a == m
    a.clear()
    assert a == [] and qjson.dumps(a) == b"[]"
    with pytest.raises(IndexError):
        a.pop()


def test_views_outlive_their_document() -> None:
    data = bytearray(DOC)
    v = qjson.decode(data)
    inner = v["o"]["y"]
    inner.append(4)
    del v, data
    gc.collect()
    junk = [bytes(range(256)) * 64 for _ in range(100)]
    assert inner == [1, 2, {"z": None}, 4]
    assert qjson.dumps(inner) == b'[1, 2, {"z": null},4]'
    del junk


def test_cycles_are_collected() -> None:
    v = qjson.decode(b'{"a": 1}')
    v["self"] = v
    del v
    assert gc.collect() >= 1
