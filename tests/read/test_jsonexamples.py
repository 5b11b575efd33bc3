"""The simdjson corpus (jsonexamples/*.json, jsonexamples/small/*.json): every
value reads the same as through json.loads, by dotted path, by JSON Pointer,
and through Cursors opened on every container.

Linear work per file: each value is visited a bounded number of times, paths
from the root are short (depth <= 11 in this corpus) and big containers are
indexed by qjson, so no check is quadratic in the file size. Containers are
compared shallowly (type, len) except the root, which is compared deeply once.
"""

from __future__ import annotations

import collections.abc
import json
from pathlib import Path

import pytest
import qjson
from conftest import (
    JSON_WS,
    check_value,
    data_files,
    dotted_child,
    pointer_token,
    reference_loads,
    same,
    walk_json,
)

FILES = data_files("jsonexamples", "*.json") + data_files(
    "jsonexamples/small", "*.json", id_prefix="small/"
)


def load(path: Path) -> tuple[bytes, object]:
    data = path.read_bytes()
    try:
        json.loads(data)
    except ValueError as e:  # json.JSONDecodeError, UnicodeDecodeError
        pytest.skip(f"{path.name} is not valid JSON per json.loads ({e}); not a qjson test")
    return data, reference_loads(data)


@pytest.mark.parametrize("path", FILES)
def test_every_value_by_dotted_path(path: Path) -> None:
    data, expected = load(path)
    doc = qjson.parse(data)
    assert same(doc.root, expected)  # one deep comparison of the whole document
    assert doc.raw() == data.strip(JSON_WS)
    n = 0
    for e in walk_json(expected):
        check_value(doc, e.dotted, e.value)
        n += 1
    assert n > 0


@pytest.mark.parametrize("path", FILES)
def test_every_value_by_pointer(path: Path) -> None:
    data, expected = load(path)
    doc = qjson.parse(data)
    for e in walk_json(expected):
        check_value(doc, e.pointer, e.value)


@pytest.mark.parametrize("path", FILES)
def test_scalars_raw(path: Path) -> None:
    """raw() of every scalar is its exact text (json.loads of it gives the value)."""
    data, expected = load(path)
    doc = qjson.parse(data)
    for e in walk_json(expected):
        if isinstance(e.value, (dict, list)):
            continue
        raw = doc.raw(e.dotted)
        assert same(json.loads(raw), e.value), (e.dotted, raw)
        assert raw == raw.strip(JSON_WS)


@pytest.mark.parametrize("path", FILES)
def test_cursors_on_every_container(path: Path) -> None:
    """Open a Cursor on every container and read each direct child through it
    by relative dotted path, relative pointer and (arrays) negative index."""
    data, expected = load(path)
    doc = qjson.parse(data)
    for e in walk_json(expected):
        v = e.value
        if not isinstance(v, (dict, list)):
            continue
        cur = doc.open(e.dotted)
        assert cur.type("") == ("object" if isinstance(v, dict) else "array")
        assert cur.len() == len(v)
        assert cur.raw() == doc.raw(e.pointer)
        view = cur.get()
        if isinstance(v, dict):
            assert isinstance(view, collections.abc.Mapping)
            if not getattr(v, "had_duplicates", False):
                assert list(view.keys()) == list(v.keys())
            for k, cv in v.items():
                check_value(cur, dotted_child("", k), cv)
                check_value(cur, "/" + pointer_token(k), cv)
                if not isinstance(cv, (dict, list)):
                    assert same(view[k], cv)
        else:
            assert isinstance(view, collections.abc.Sequence)
            for i, cv in enumerate(v):
                check_value(cur, f"[{i}]", cv)
                check_value(cur, f"/{i}", cv)
                if not isinstance(cv, (dict, list)):
                    assert same(view[i], cv)
            if v:
                check_value(cur, "[-1]", v[-1])
                check_value(cur, f"[-{len(v)}]", v[0])
                check_value(doc, f"{e.dotted}[-1]", v[-1])
