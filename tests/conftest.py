"""Shared helpers for the qjson test suite.

Third-party test data lives beside the checkout, in ``../shared/data`` (see
that folder's README). Tests that need it skip with a message naming the
missing path, so a fresh clone without the data still passes.

The helpers below are plain functions (imported by the test modules with
``from conftest import ...``) plus a few fixtures.
"""

from __future__ import annotations

import collections.abc
import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import hypothesis
import pytest

# Hypothesis: under CI (CI=true in the environment) the property tests draw
# the same examples on every run (derandomize), so a CI result depends on the
# code, not on the draw; local runs keep exploring fresh examples (a failure
# prints the seed to reproduce it with --hypothesis-seed). hypothesis is in
# the test extra.
hypothesis.settings.register_profile("ci", derandomize=True, print_blob=True)
hypothesis.settings.register_profile("dev", print_blob=True)
hypothesis.settings.load_profile("ci" if os.environ.get("CI", "").lower() == "true" else "dev")

DATA_DIR = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
FIXTURES_DIR = Path(__file__).resolve().parent / "fixtures"
REPO_DIR = Path(__file__).resolve().parents[1]

# JSON whitespace (RFC 8259): space, tab, line feed, carriage return.
JSON_WS = b" \t\n\r"


# --------------------------------------------------------------------------
# Data location
# --------------------------------------------------------------------------


def data_path(*parts: str) -> Path:
    """The path of ``../shared/data/<parts>``, or skip the test if it is absent."""
    p = DATA_DIR.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"test data not found: {p.resolve()} (see shared/data/README.md)")
    return p


def data_files(subdir: str, pattern: str, id_prefix: str = "") -> list[Any]:
    """pytest params (one per file, id = name relative to ``subdir``) for
    ``DATA_DIR/subdir/pattern``; a single skipping param if the folder is absent,
    so that collection never fails and the skip names the missing path."""
    d = DATA_DIR / subdir
    if not d.is_dir():
        return [
            pytest.param(
                None,
                id=f"{id_prefix}data-missing",
                marks=pytest.mark.skip(
                    reason=f"test data not found: {d.resolve()} (see shared/data/README.md)"
                ),
            )
        ]
    files = sorted(d.glob(pattern))
    return [pytest.param(f, id=id_prefix + f.relative_to(d).as_posix()) for f in files]


@pytest.fixture
def shared_data() -> Path:
    """The shared data folder; skips when it is absent."""
    return data_path()


# --------------------------------------------------------------------------
# Reference decoding
# --------------------------------------------------------------------------


class FirstWinsDict(dict):
    """A dict built from JSON object pairs where the FIRST duplicate key wins
    (qjson's rule for reads). ``had_duplicates`` tells whether any key repeated."""

    had_duplicates = False


def _first_wins(pairs: list[tuple[str, Any]]) -> FirstWinsDict:
    d = FirstWinsDict()
    for k, v in pairs:
        if k in d:
            d.had_duplicates = True
            continue
        d[k] = v
    return d


def reference_loads(data: bytes) -> Any:
    """json.loads, except that the first of duplicate keys wins (as in qjson)."""
    return json.loads(data, object_pairs_hook=_first_wins)


def same(a: Any, b: Any) -> bool:
    """Deep equality that also checks Python types (bool is not int, int is not
    float) and the sign of zero floats. ``a`` may hold views: compared as
    Mapping / Sequence. Iterative, so deep documents do not hit the recursion
    limit."""
    stack = [(a, b)]
    while stack:
        a, b = stack.pop()
        if isinstance(b, dict):
            if not hasattr(a, "keys") or len(a) != len(b):
                return False
            for k, v in b.items():
                if k not in a:
                    return False
                stack.append((a[k], v))
        elif isinstance(b, list):
            if isinstance(a, (str, bytes, dict)) or not hasattr(a, "__len__"):
                return False
            if hasattr(a, "keys") or len(a) != len(b):
                return False
            stack.extend(zip(a, b))
        elif type(a) is not type(b):
            return False
        elif isinstance(b, float):
            if math.isnan(b):
                if not math.isnan(a):
                    return False
            elif not (a == b and math.copysign(1.0, a) == math.copysign(1.0, b)):
                return False
        elif a != b:
            return False
    return True


# --------------------------------------------------------------------------
# Paths
# --------------------------------------------------------------------------

_NEEDS_QUOTE = frozenset('.[]"')


def key_needs_quote(key: str) -> bool:
    # A bare key beginning with `*` is the wildcard: quote those too.
    return key == "" or key.startswith(("/", "*")) or any(c in _NEEDS_QUOTE for c in key)


def dotted_child(parent: str, key: str) -> str:
    """The dotted path of ``parent``'s member ``key`` (quoted form when needed)."""
    if key_needs_quote(key):
        return f"{parent}[{json.dumps(key)}]"
    return f"{parent}.{key}" if parent else key


def pointer_token(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def walk_json(value: Any, dotted: str = "", pointer: str = "") -> Iterator[Entry]:
    """Every value reachable from ``value`` (a json.loads result), with its dotted
    path and its JSON Pointer, in document order. Iterative (deep inputs)."""
    stack: list[tuple[Any, str, str, int]] = [(value, dotted, pointer, 0)]
    while stack:
        v, d, p, depth = stack.pop()
        yield Entry(d, p, v, depth)
        if isinstance(v, dict):
            children = [
                (cv, dotted_child(d, k), f"{p}/{pointer_token(k)}", depth + 1)
                for k, cv in v.items()
            ]
            stack.extend(reversed(children))
        elif isinstance(v, list):
            children = [(cv, f"{d}[{i}]", f"{p}/{i}", depth + 1) for i, cv in enumerate(v)]
            stack.extend(reversed(children))


class Entry(NamedTuple):
    dotted: str
    pointer: str
    value: Any
    depth: int


def json_type(v: Any) -> str:
    """The Doc.type name for a json.loads value."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, dict):
        return "object"
    if isinstance(v, list):
        return "array"
    raise TypeError(type(v))


def float_or_none(i: int) -> float | None:
    """float(i), or None when it overflows."""
    try:
        return float(i)
    except OverflowError:
        return None


def check_value(reader: Any, path: str, expected: Any, *, check_wrong_types: bool = False) -> None:
    """Assert that ``reader`` (a Doc or a Cursor) reads ``expected`` at ``path``
    through get(), type() and the matching typed getter (and len() for
    containers). With ``check_wrong_types``, every other typed getter must raise
    TypeError."""
    got = reader.get(path)
    t = json_type(expected)
    assert reader.type(path) == t, (path, reader.type(path), t)
    wrong: list[str] = []
    if t in ("object", "array"):
        # Containers: compared shallowly here (children are visited on their own).
        abc = collections.abc.Mapping if t == "object" else collections.abc.Sequence
        assert isinstance(got, abc), (path, type(got))
        if not getattr(expected, "had_duplicates", False):
            # With duplicate keys the contract only fixes reads (first wins),
            # not the count; test_doc.py covers that case on its own.
            assert reader.len(path) == len(expected), path
            assert len(got) == len(expected), path
        wrong = ["get_str", "get_int", "get_float", "get_bool"]
    elif t == "string":
        assert same(got, expected), (path, got, expected)
        assert reader.get_str(path) == expected, path
        wrong = ["get_int", "get_float", "get_bool"]
    elif t == "bool":
        assert got is expected, (path, got, expected)
        assert reader.get_bool(path) is expected, path
        wrong = ["get_str", "get_int", "get_float"]
    elif t == "null":
        assert got is None, (path, got)
        wrong = ["get_str", "get_int", "get_float", "get_bool"]
    elif isinstance(expected, int):
        assert same(got, expected), (path, got, expected)
        got_i = reader.get_int(path)
        assert type(got_i) is int and got_i == expected, (path, got_i, expected)
        f = float_or_none(expected)
        if f is not None:
            got_f = reader.get_float(path)
            assert type(got_f) is float and got_f == f, (path, got_f, f)
        wrong = ["get_str", "get_bool"]
    else:  # float
        assert same(got, expected), (path, got, expected)
        assert same(reader.get_float(path), expected), path
        wrong = ["get_str", "get_int", "get_bool"]
    if check_wrong_types:
        for name in wrong:
            with pytest.raises(TypeError):
                getattr(reader, name)(path)
        if t not in ("object", "array"):
            with pytest.raises(TypeError):
                reader.len(path)


def full_walk(view: Any) -> int:
    """Touch every value under a view (Object / Array / scalar): keys, values,
    elements. Returns the number of values seen. Used to force lazy decoding."""
    n = 0
    stack = [view]
    while stack:
        v = stack.pop()
        n += 1
        if isinstance(v, (str, bytes, int, float, bool)) or v is None:
            continue
        if hasattr(v, "items"):
            for k, cv in v.items():
                assert isinstance(k, str)
                stack.append(cv)
        else:
            stack.extend(iter(v))
    return n
