"""Shared cases of the JSON Patch suites (tests/edit/test_json_patch.py and
tests/lua/test_lua_json_patch.py): the conformance suite's records, RFC 7396's
Appendix A, and hypothesis strategies for random documents and random valid
patches (each op checked against a model patched with the ``jsonpatch`` package)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from conftest import data_path, pointer_token, walk_json
from hypothesis import strategies as st

jsonpatch = pytest.importorskip("jsonpatch", reason="jsonpatch is not installed (qjson[test])")


def load_suite(name: str) -> list[Any]:
    records = json.loads(data_path("json-patch-tests", name).read_text())
    params = []
    for i, r in enumerate(records):
        label = f"{name}:{i}:{r.get('comment', '')[:50]}"
        if "disabled" in r:
            continue
        params.append(pytest.param(r, id=label))
    return params


def suite_params() -> list[Any]:
    try:
        return load_suite("tests.json") + load_suite("spec_tests.json")
    except pytest.skip.Exception as e:
        return [pytest.param(None, marks=pytest.mark.skip(reason=str(e)), id="data-missing")]


RFC7396_APPENDIX_A = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"a": "foo"}, None, None),
    ({"a": "foo"}, "bar", "bar"),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


KEYS = st.sampled_from(["a", "b", "c", "a/b", "m~n", "", "é", "0", "1"])
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=5),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=12,
)
ROOTS = st.one_of(st.dictionaries(KEYS, VALUES, max_size=5), st.lists(VALUES, max_size=5))


def pointers(doc: Any) -> list[str]:
    return [e.pointer for e in walk_json(doc)]


def insert_points(doc: Any) -> list[str]:
    """Pointers where an add may put a value."""
    out = []
    for e in walk_json(doc):
        if isinstance(e.value, dict):
            out += [f"{e.pointer}/{pointer_token(k)}" for k in ["a", "new", "x/y", *e.value]]
        elif isinstance(e.value, list):
            out += [f"{e.pointer}/{i}" for i in range(len(e.value) + 1)] + [f"{e.pointer}/-"]
    return out


def resolve(doc: Any, ptr: str) -> Any:
    return jsonpatch.JsonPointer(ptr).resolve(doc)


@st.composite
def patches(draw: Any, doc: Any) -> list[dict[str, Any]]:
    model = copy.deepcopy(doc)
    ops: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(1, 6))):
        existing = [p for p in pointers(model) if p]
        kind = draw(st.sampled_from(["add", "remove", "replace", "move", "copy", "test"]))
        if kind in ("remove", "replace", "move", "test", "copy") and not existing:
            kind = "add"
        if kind == "add":
            op = {
                "op": "add",
                "path": draw(st.sampled_from(insert_points(model))),
                "value": draw(VALUES),
            }
        elif kind == "remove":
            op = {"op": "remove", "path": draw(st.sampled_from(existing))}
        elif kind == "replace":
            op = {"op": "replace", "path": draw(st.sampled_from(existing)), "value": draw(VALUES)}
        elif kind == "test":
            p = draw(st.sampled_from(existing))
            op = {"op": "test", "path": p, "value": copy.deepcopy(resolve(model, p))}
        elif kind == "copy":
            op = {
                "op": "copy",
                "from": draw(st.sampled_from(existing)),
                "path": draw(st.sampled_from(insert_points(model))),
            }
        else:
            src = draw(st.sampled_from(existing))
            after = jsonpatch.apply_patch(model, [{"op": "remove", "path": src}])
            targets = [t for t in insert_points(after) if not t.startswith(src + "/")]
            if not targets:
                continue
            op = {"op": "move", "from": src, "path": draw(st.sampled_from(targets))}
        model = jsonpatch.apply_patch(model, [op])
        ops.append(op)
    return ops
