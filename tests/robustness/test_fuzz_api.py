"""Fuzzing the Python API with hypothesis: random bytes, random
paths and random Python objects through parse / get / open / len / raw /
type / typed getters, views, loads / validate / dumps, and decode / edit /
dumps when the build has ``qjson.decode``.

The only exceptions allowed are qjson's own (JSONDecodeError, PathError,
JSONEncodeError) and the documented built-ins: ValueError (and subclasses,
e.g. UnicodeEncodeError for a str with lone surrogates, or Python's
4300-digit int limit), KeyError, IndexError, TypeError. Never a crash, a
Rust panic (pyo3_runtime.PanicException is a BaseException, so it would
escape these checks) or a hang (each example has a deadline).
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

import pytest
import qjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ALLOWED = (qjson.JSONDecodeError, qjson.PathError, ValueError, KeyError, IndexError, TypeError)

# A generous deadline: a hang fails, a slow shared machine does not.
# QJSON_FUZZ_EXAMPLES=20000 for a longer run.
SETTINGS = settings(
    deadline=5000,
    max_examples=int(os.environ.get("QJSON_FUZZ_EXAMPLES", "300")),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Bytes that make JSON (and break it) more often than uniform bytes.
JSONISH = (
    b'{}[],:"\\ \n\t0123456789-+.eEtrufalsn/~\x00\x1f\x7f\xc3\xa9\xed\xa0\x80\xf0\x9f\x98\x80\xff'
)
json_bytes = st.one_of(
    st.binary(max_size=200),
    st.lists(st.sampled_from([bytes([b]) for b in JSONISH]), max_size=120).map(b"".join),
)

text = st.text(max_size=8)
json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**100), max_value=2**100),
        st.floats(allow_nan=False, allow_infinity=False),
        text,
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=5), st.dictionaries(text, children, max_size=5)
    ),
    max_leaves=30,
)
valid_docs = st.builds(
    lambda v, indent: json.dumps(v, indent=indent).encode(),
    json_values,
    st.sampled_from([None, 1]),
)

PATH_ALPHABET = 'ab0123456789-.[]"/~\\u\x00 é' + "\ud800"
paths = st.one_of(
    st.text(alphabet=PATH_ALPHABET, max_size=16),
    st.text(max_size=12),
    st.lists(
        st.one_of(
            st.integers(-3, 5).map(lambda i: f"[{i}]"),
            text.map(lambda k: f"[{json.dumps(k)}]"),
            st.sampled_from(["a", ".a", "/0", "/a", "~0", "~1", "[", "]", '["', "."]),
        ),
        max_size=5,
    ).map("".join),
)


def calls(reader: Any, path: str) -> None:
    """Every getter of a Doc or Cursor at `path`; allowed exceptions only."""
    for name in (
        "get",
        "type",
        "len",
        "raw",
        "open",
        "get_str",
        "get_int",
        "get_float",
        "get_bool",
    ):
        try:
            getattr(reader, name)(path)
        except ALLOWED:
            pass
    try:
        reader.get(path, default=None)
    except ALLOWED:
        pass


def walk_views(v: Any, budget: list[int]) -> None:
    """Touch a view the way user code would: len, iteration, indexing, in."""
    if budget[0] <= 0:
        return
    budget[0] -= 1
    try:
        if isinstance(v, qjson.Object):
            len(v)
            _ = "a" in v
            _ = v.get("a", None)
            for k in list(v)[:5]:
                walk_views(v[k], budget)
        elif isinstance(v, qjson.Array):
            n = len(v)
            _ = v[-1] if n else None
            for x in list(v)[:5]:
                walk_views(x, budget)
            with pytest.raises(IndexError):
                v[n]
    except ALLOWED:
        pass


@SETTINGS
@given(json_bytes, st.booleans(), st.lists(paths, max_size=4))
def test_random_bytes_and_paths(data: bytes, lazy: bool, ps: list[str]) -> None:
    try:
        doc = qjson.parse(data, lazy=lazy)
    except qjson.JSONDecodeError as e:
        assert 0 <= e.pos <= len(data)
        assert e.msg
        assert f"(char {e.pos})" in str(e)
        return
    for p in ["", *ps]:
        calls(doc, p)
        try:
            cur = doc.open(p)
        except ALLOWED:
            continue
        for q in ps:
            calls(cur, q)
    try:
        root = doc.root
    except ALLOWED:
        return
    walk_views(root, [50])
    try:
        qjson.materialize(root)
    except ALLOWED:
        pass


def _json_reference(data: bytes) -> tuple[bool, Any, bool]:
    """(accepted, value, had_duplicate_keys) per json.loads."""
    dup = False

    def pairs(kv: list[tuple[str, Any]]) -> dict:
        nonlocal dup
        d: dict = {}
        for k, v in kv:
            if k in d:
                dup = True
            else:
                d[k] = v
        return d

    try:
        return True, json.loads(data.decode("utf-8"), object_pairs_hook=pairs), dup
    except (ValueError, RecursionError):
        return False, None, dup


@SETTINGS
@given(json_bytes)
def test_parse_loads_validate_agree(data: bytes) -> None:
    """parse, loads and validate accept the same inputs, report the same
    error offset, and whatever they accept json.loads accepts with the same
    value (json also accepts NaN / Infinity, which qjson rejects)."""
    outcomes = []
    for fn in (qjson.parse, qjson.loads, qjson.validate):
        try:
            r = fn(data)
            outcomes.append(("ok", r))
        except qjson.JSONDecodeError as e:
            outcomes.append(("err", e.pos))
    kinds = {o[0] for o in outcomes}
    assert len(kinds) == 1, outcomes
    if "err" in kinds:
        assert len({o[1] for o in outcomes}) == 1, outcomes
        return
    ok, ref, dup = _json_reference(data)
    assert ok, data
    try:
        loaded = qjson.loads(data)
    except ValueError:  # Python's 4300-digit int limit, as in json
        return
    if not dup:
        assert loaded == ref or (isinstance(ref, float) and math.isnan(ref))
    doc = qjson.parse(data)
    try:
        assert qjson.materialize(doc.root) == ref or dup
    except ValueError:
        pass


@SETTINGS
@given(valid_docs, st.lists(paths, max_size=6), st.booleans())
def test_valid_docs_random_paths(data: bytes, ps: list[str], lazy: bool) -> None:
    doc = qjson.parse(data, lazy=lazy)
    for p in ps:
        calls(doc, p)
    walk_views(doc.root, [100])


class StrSub(str):
    pass


class IntSub(int):
    pass


weird_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**200), max_value=2**200),
    st.floats(),  # NaN and infinities included
    st.text(),
    st.text().map(StrSub),
    st.integers(-5, 5).map(IntSub),
    st.binary(max_size=4),
    st.just(object()),
    st.just("\ud800"),
    st.tuples(st.integers()),
)
weird_objects = st.recursive(
    weird_leaves,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(
            st.one_of(st.text(max_size=4), st.integers(), st.none()), children, max_size=4
        ),
        st.tuples(children, children),
    ),
    max_leaves=20,
)


@SETTINGS
@given(
    weird_objects,
    st.sampled_from([None, 0, 2]),
    st.booleans(),
    st.sampled_from([None, "str", "none", "raise"]),
)
def test_dumps_random_objects(obj: Any, indent: int | None, sort_keys: bool, default: Any) -> None:
    fallback = {
        None: None,
        "str": lambda o: f"<{type(o).__name__}>",
        "none": lambda o: None,
        "raise": lambda o: (_ for _ in ()).throw(TypeError("no")),
    }[default]
    try:
        out = qjson.dumps(obj, indent=indent, sort_keys=sort_keys, default=fallback)
    except ALLOWED:
        return
    assert isinstance(out, bytes)
    back = qjson.loads(out)
    assert json.loads(out) == back or out != out  # NaN never reaches here
    qjson.validate(out)


@pytest.mark.skipif(not hasattr(qjson, "decode"), reason="qjson.decode is not in this build yet")
@SETTINGS
@given(
    valid_docs,
    st.lists(
        st.tuples(st.integers(0, 20), st.sampled_from(["set", "del", "append"]), json_values),
        max_size=6,
    ),
)
def test_decode_edit_dumps(data: bytes, edits: list) -> None:
    """Random edits on decode()'s views; dumps of the result reads back as
    the same edits applied to json.loads' value."""
    view = qjson.decode(data)
    ref = json.loads(data)
    if not isinstance(ref, (dict, list)):
        return
    for i, op, value in edits:
        for target in (view, ref):
            try:
                if isinstance(target, (list, qjson.Array)) or (
                    not isinstance(target, dict) and hasattr(target, "append")
                ):
                    n = len(target)
                    if op == "append":
                        target.append(value)
                    elif n and op == "set":
                        target[i % n] = value
                    elif n:
                        del target[i % n]
                else:
                    key = f"k{i}"
                    if op == "del":
                        target.pop(key, None)
                    else:
                        target[key] = value
            except ALLOWED:
                pass
    out = qjson.dumps(view)
    assert json.loads(out) == json.loads(json.dumps(ref))
