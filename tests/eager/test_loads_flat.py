"""loads: containers that hold no container (filled by a loop of their own).

The token walk marks each array or object whose children are all strings,
numbers or literals; the builder fills those without a frame. Random trees
that mix them with nested containers, every kind of leaf, duplicate keys,
scalars that fail their check inside such a container (the error must be
the one `validate` reports), literals in the last bytes of input, and
`loads_many` lines: all compared with `json`.
"""

from __future__ import annotations

import gc
import json
import random
import struct
import sys

import pytest
import qjson

LEAVES = [
    "0",
    "-1",
    "17",
    "9223372036854775807",
    "-9223372036854775809",
    "123456789012345678901234567890",
    "1.5",
    "-0.0",
    "2.2250738585072014e-308",
    "1e400",
    "3.14159265358979323846264338327950288",
    "true",
    "false",
    "null",
    '""',
    '"a"',
    '"short"',
    '"a string longer than sixteen bytes"',
    '"caf\\u00e9 \\"q\\" \\n"',
    '"\u00e9t\u00e9"',
    '"\u4e2d\u6587 \U0001f600"',
    '"https:\\/\\/example.com\\/x"',
]

KEYS = [
    "id",
    "name",
    "a",
    "",
    "k\\u00e9y",
    "\u00e9",
    "type",
    "a key longer than forty-eight bytes, not cached ok",
]


def tree(rng: random.Random, depth: int) -> str:
    """A random JSON text: flat containers, nested ones and leaves."""
    r = rng.random()
    if depth > 4 or r < 0.35:
        return rng.choice(LEAVES)
    n = rng.choice([0, 1, 1, 2, 3, 5, 8, 20])
    sp = rng.choice(["", " ", "\n  "])
    if r < 0.7:
        return "[" + sp + ("," + sp).join(tree(rng, depth + 1) for _ in range(n)) + sp + "]"
    members = (f'"{rng.choice(KEYS)}"{sp}:{sp}{tree(rng, depth + 1)}' for _ in range(n))
    return "{" + sp + ("," + sp).join(members) + sp + "}"


@pytest.mark.parametrize("seed", range(8))
def test_random_trees_match_json(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(300):
        doc = tree(rng, 0)
        want = json.loads(doc)
        got = qjson.loads(doc.encode())
        assert got == want, doc
        assert json.dumps(got) == json.dumps(want), doc  # key order, duplicates


def test_flat_containers_of_every_leaf() -> None:
    arr = "[" + ",".join(LEAVES) + "]"
    obj = "{" + ",".join(f'"k{i}": {v}' for i, v in enumerate(LEAVES)) + "}"
    nested = f'{{"a":{arr},"b":[{obj}],"c":1}}'
    for doc in (arr, obj, f"[{arr},{obj}]", nested, "[[]]", "[{}, [], [[]]]"):
        assert qjson.loads(doc) == json.loads(doc), doc


def test_flat_object_duplicate_keys() -> None:
    doc = '[{"a": 1, "b": 2, "a": 3}, {"x": "1", "x": "2", "y": null, "x": true}]'
    got = qjson.loads(doc)
    assert got == json.loads(doc)
    assert [list(d) for d in got] == [["a", "b"], ["x", "y"]]


def test_literals_ending_the_input_in_flat_arrays() -> None:
    for lit in ("true", "false", "null"):
        for n in range(1, 12):
            doc = "[" + ",".join([lit] * n) + "]"
            assert qjson.loads(doc) == json.loads(doc)
            doc = '{"a":[' + ",".join([lit] * n) + "]}"
            assert qjson.loads(doc) == json.loads(doc)


BAD = [
    "[1, tru]",
    "[true, nul]",
    "[true, null, fals, 1]",
    "[truex]",
    "[1, 01]",
    "[1, -]",
    "[1, 2.]",
    "[1, 1e]",
    '["a", 1 2]',
    '{"a": nul}',
    '{"a": 1, "b": 2.}',
    '{"a": "x", "b": -}',
    '[[1, 2], [3, tru], {"a": 1}]',
    '{"a": {"b": [1, 2, nan]}}',
    "[true, null, true, nulll]",
    "[null, true, tru, 1]",
    "[false, false, fals]",
    "[true, true, 1, nul]",
    '[true, null, "x", nullx]',
    "[true,null,truex,1]",
    "[null, true, -]",
    # (Failures inside lists of containers, filled one pushed item at a time.)
    '[[1, 2], {"a": [3]}, [4, 5], {"b": nan}]',
    '[{"a": 1}, [[1], [2, 3], []], [[], [01]]]',
]


@pytest.mark.parametrize("doc", BAD)
def test_bad_scalars_in_flat_containers(doc: str) -> None:
    with pytest.raises(qjson.JSONDecodeError) as want:
        qjson.validate(doc)
    with pytest.raises(qjson.JSONDecodeError) as got:
        qjson.loads(doc)
    assert (got.value.msg, got.value.pos) == (want.value.msg, want.value.pos)
    with pytest.raises(ValueError):
        json.loads(doc)


def test_gc_tracking_as_json() -> None:
    doc = '[{"a": 1, "b": "x"}, {"a": [1]}, [1, 2], {"n": null}, {"d": {}}]'
    got, want = qjson.loads(doc), json.loads(doc)
    assert [gc.is_tracked(x) for x in got] == [gc.is_tracked(x) for x in want]
    # A dict of atoms, untracked, is tracked once it holds a container.
    d = got[0]
    d["c"] = []
    assert gc.is_tracked(d)


def test_loads_many_lines_of_flat_containers() -> None:
    rng = random.Random(7)
    lines = [tree(rng, 0) for _ in range(400)]
    data = "\n".join(lines).encode() + b"\n"
    assert list(qjson.loads_many(data)) == [json.loads(x) for x in lines]


def test_runs_of_literals_then_other_elements() -> None:
    # A list that starts with literals fills that run by a loop of its own,
    # the rest element by element: every mix, spacing and length.
    rng = random.Random(11)
    lits = ["true", "false", "null"]
    for _ in range(400):
        run = [rng.choice(lits) for _ in range(rng.choice([1, 2, 3, 7, 40]))]
        rest = [rng.choice(LEAVES) for _ in range(rng.choice([0, 0, 1, 3, 9]))]
        sep = rng.choice([",", ", ", " ,\n\t", ",   "])
        doc = "[" + sep.join(run + rest) + "]"
        want = json.loads(doc)
        assert qjson.loads(doc) == want, doc
        assert qjson.loads('{"k": ' + doc + ', "z": 1}') == {"k": want, "z": 1}, doc
        assert qjson.loads("[" + doc + "," + doc + "]") == [want, want], doc


def _singleton_counts() -> list[int]:
    return [sys.getrefcount(x) for x in (True, False, None)]


def test_refcounts_of_literal_singletons() -> None:
    # Every slot holding a literal owns one reference to its singleton,
    # and a failed build leaves their counts as they were (before 3.12;
    # from 3.12 on they are immortal and their counts do not move). No
    # assert runs between two counts: pytest's rewritten asserts bind
    # their temporaries to None.
    doc = b"[" + b", ".join([b"true", b"null", b"false", b"true"] * 50) + b', 1, "x", null]'
    base = _singleton_counts()
    got = qjson.loads(doc)
    after = _singleton_counts()
    del got
    final = _singleton_counts()
    bads = (b"[true, null, false, nul]", b"[true, null, 1, tru]", b"[" + b"null," * 30 + b"nulx]")
    for bad in bads:  # (a first error may set up state that holds a singleton)
        with pytest.raises(qjson.JSONDecodeError):
            qjson.loads(bad)
    before_errors = _singleton_counts()
    after_errors = []
    for bad in bads * 3:
        try:
            qjson.loads(bad)
        except qjson.JSONDecodeError:
            pass
        after_errors.append(_singleton_counts())
    if sys.version_info < (3, 12):
        assert [a - b for a, b in zip(after, base)] == [100, 50, 51]
    assert final == base
    assert after_errors == [before_errors] * len(after_errors)


@pytest.mark.parametrize("n", [1, 2, 3, 17, 1000])
def test_flat_number_lists_are_ordinary_lists(n: int) -> None:
    # A flat list of numbers gets its item array uninitialised and counts
    # its items as they are written: the result has exactly its items
    # (the collector's view too), room for exactly those (as `PyList_New(n)`
    # leaves it), and grows, shrinks and sorts as any list.
    items = [f"{i * 0.1 + 0.5:.17g}" if i % 3 else str(i - 7) for i in range(n)]
    doc = "[" + ", ".join(items) + "]"
    want = json.loads(doc)
    for got in (qjson.loads(doc), qjson.loads('{"k": ' + doc + "}")["k"]):
        assert got == want
        assert len(gc.get_referents(got)) == n
        assert sys.getsizeof(got) == sys.getsizeof([]) + n * struct.calcsize("P")
        got.append(1)
        got.extend(want)
        got.sort()
        assert got == sorted([*want, 1, *want])
        del got[1:]
        assert len(got) == 1


def test_failure_mid_flat_number_list() -> None:
    # An element that fails its check after thousands were written: the
    # partial list (its written items only) is released, and the error is
    # the one `validate` reports.
    for bad in ("01", "-", "1.", "1e", "tru"):
        doc = "[" + "1.25, " * 5000 + bad + ", 2.5]"
        with pytest.raises(qjson.JSONDecodeError) as want:
            qjson.validate(doc)
        with pytest.raises(qjson.JSONDecodeError) as got:
            qjson.loads(doc)
        assert (got.value.msg, got.value.pos) == (want.value.msg, want.value.pos)


def test_failures_mid_fill_release_what_was_built() -> None:
    # A loads that fails part-way releases every list it began (filled one
    # item at a time: flat lists of numbers and lists of containers) with
    # the items written so far: repeated failures leave no memory behind.
    import tracemalloc

    docs = [d.encode() for d in BAD]
    docs.append(("[" + "1.25, " * 5000 + "01, 2.5]").encode())
    docs.append(("[" + "[1.5, [2.5, 3]], " * 2000 + '{"a": [1, 2, nan]}]').encode())

    def fail_all() -> None:
        # (try/except: pytest.raises keeps ~1 KB per call of its own.)
        for d in docs:
            try:
                qjson.loads(d)
            except qjson.JSONDecodeError:
                continue
            raise AssertionError(f"loads accepted {d[:40]!r}")

    fail_all()  # warm-up: caches, free lists
    tracemalloc.start()
    try:
        fail_all()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(20):
            fail_all()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # A leaked partial list of the long documents alone is >= 100 KB a time.
    assert grown < 16 * 1024
