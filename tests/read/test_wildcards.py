"""Wildcard paths (`[*]`, `.*`), Doc / Cursor `get_all` and `get_many`, and
compiled `qjson.Path` objects."""

from __future__ import annotations

import json
import pickle
import sys
import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import qjson
from conftest import data_files, reference_loads, same
from wildcard_paths import CASES, DOC, generate, path_text, reference_all


@pytest.fixture(scope="module")
def doc() -> qjson.Doc:
    return qjson.parse(DOC)


@pytest.mark.parametrize("lazy", [False, True], ids=["strict", "lazy"])
@pytest.mark.parametrize("path,want", CASES, ids=[c[0] for c in CASES])
def test_get_all(path: str, want: list[Any], lazy: bool) -> None:
    d = qjson.parse(DOC, lazy=lazy)
    got = d.get_all(path)
    assert type(got) is list
    assert same(got, want), (path, got, want)
    assert same(d.get_all(qjson.Path(path)), want)
    # From a cursor: the same path relative to the root cursor.
    assert same(d.open("").get_all(path), want)


def test_values_are_what_get_returns(doc: qjson.Doc) -> None:
    got = doc.get_all("messages[*]")
    assert [type(v) for v in got] == [qjson.Object, qjson.Object, qjson.Object, str, qjson.Object]
    assert got[1] == doc.get("messages[1]")
    assert got[1].raw() == doc.raw("messages[1]")
    assert type(doc.get_all("nested[0][*]")[0]) is int
    assert doc.get_all("tools[1].function.x[*]") == [True, False]
    # Views from get_all are live views of the document.
    assert qjson.dumps(got[0]) == doc.raw("messages[0]")
    assert doc.get_all("") == [doc.get("")]


def test_whole_document_root_wildcards() -> None:
    d = qjson.parse(b'[{"user": {"login": "a"}}, {"user": null}, {"user": {"login": "b"}}, 7]')
    assert d.get_all("[*].user.login") == ["a", "b"]
    assert d.get_all("*") == []
    assert qjson.parse(b'{"a": 1, "b": [2]}').get_all("*") == [1, [2]]
    assert qjson.parse(b"5").get_all("[*]") == []
    assert qjson.parse(b"[]").get_all("[*]") == []


@pytest.mark.parametrize("lazy", [False, True], ids=["strict", "lazy"])
def test_wide_objects_keep_the_first_of_a_repeated_key(lazy: bool) -> None:
    # More than 16 members: repeats found by sorted fingerprints, escaped
    # keys compared decoded; the first occurrence wins, as in every read.
    members = [f'"k{i}": {i}' for i in range(20)] + ['"k3": -1', '"k\\u0035": -2', '"z": 99']
    members.insert(0, '"\\u006b7": 7000')  # "k7" escaped, before the plain one
    text = ("{" + ", ".join(members) + "}").encode()
    want = [7000] + [i for i in range(20) if i != 7] + [99]
    d = qjson.parse(text, lazy=lazy)
    assert d.get_all("*") == want
    assert list(qjson.decode(text).values()) == want
    rows = b"[" + b",".join([text] * 3) + b"]"
    assert qjson.parse(rows, lazy=lazy).get_all("[*].*") == want * 3


@pytest.mark.parametrize("lazy", [False, True], ids=["strict", "lazy"])
@pytest.mark.parametrize("wide", [False, True], ids=["small", "wide"])
def test_medium_keys_after_a_wildcard(lazy: bool, wide: bool) -> None:
    # Keys of 8 to 15 plain bytes (`screen_name`) after `[*]` are tested by
    # two words from each member's quote. Values of every type (huge ints,
    # floats, literals, containers), elements that are not objects, missing
    # keys, repeated keys (the first wins, escaped or not), keys equal only
    # after unescaping, near misses, non-ASCII keys of the same length.
    pad = ", ".join(f'"pad_key_{i:02}": {i}' for i in range(20)) + ", " if wide else ""
    rows = [
        '{"id": 1, "screen_name": 123456789012345678901234567890, "screen_name": 0}',
        '{"screen\\u005fname": -1.5e300, "screen_name": "plain"}',
        '{"screen_names": 0, "screen_nam": 0, "Screen_name": 0, "screen_namE": 0, '
        '"screen_name": true}',
        '{"\\u0073creen_name": null, "screen_name": 1}',
        '{"scrèen_name": 0, "screen_name": {"screen_name": [1, {"a": 2}]}}',
        '["screen_name", 1]',
        '"screen_name"',
        "-99999999999999999999",
        "{}",
        '{"screen_name\\n": 1, "screen_name ": 2}',
        '{"screen_name": "\\u00e9t\\u00e9 \\ud83d\\ude00"}',
        '{"screen_name": -9223372036854775809}',
    ]
    text = (
        "["
        + ", ".join(r if not r.startswith("{") or r == "{}" else "{" + pad + r[1:] for r in rows)
        + "]"
    ).encode()
    ref = json.loads(text, object_pairs_hook=lambda ps: {k: v for k, v in reversed(ps)})
    want = [r["screen_name"] for r in ref if isinstance(r, dict) and "screen_name" in r]
    assert len(want) == 7
    d = qjson.parse(text, lazy=lazy)
    got = d.get_all("[*].screen_name")
    assert same(got, want), got
    assert same(d.get_all(qjson.Path("[*].screen_name")), want)
    assert [type(v) for v in got] == [type(v) for v in want[:4]] + [qjson.Object] + [
        type(v) for v in want[5:]
    ]
    # One get per element agrees (the single reads take `Doc.field`'s walk).
    one = [d.get(f"[{i}].screen_name", None) for i in range(len(rows))]
    assert same([v for v in one if v is not None], [w for w in want if w is not None])
    assert d.get_all("[*].screen_name.screen_name[1].a") == [2]
    assert d.get_all("[*].scrèen_name") == [0]
    assert d.get_all("[*].screen_nam") == [0]
    assert d.get_all("[*].screen_namE") == [0]
    assert d.get_all("[*].screen_na_e") == []
    assert d.get_all("[*].screen_name_") == []


@pytest.mark.parametrize("lazy", [False, True], ids=["strict", "lazy"])
def test_matched_strings_of_every_kind(lazy: bool) -> None:
    values = ["", "a", "plain ascii", "x" * 40, r"caf\u00e9", "é", "日本語のテキスト" * 3]
    values += [r"a\\b\n", r"tab\t" * 5]
    text = ("[" + ", ".join(f'"{v}"' for v in values) + "]").encode()
    want = json.loads(text)
    assert qjson.parse(text, lazy=lazy).get_all("[*]") == want
    rows = ("[" + ", ".join(f'{{"s": "{v}"}}' for v in values) + "]").encode()
    assert qjson.parse(rows, lazy=lazy).get_all("[*].s") == want


def test_cursor_relative(doc: qjson.Doc) -> None:
    cur = doc.open("messages")
    assert cur.get_all("[*].role") == ["system", "user", "user"]
    assert cur.get_many(["[0].role", "[-1].tags[1]"]) == ["system", "y"]
    inner = cur.open("[4]")
    assert inner.get_all("tags[*]") == ["x", "y", "z"]
    assert inner.get_all("*") == [None, ["x", "y", "z"]]


MALFORMED = ["a[*", "[*", "[**]", "[*x]", "[*]x", "a.*b", "*a", "**", "a.**", "a.*.", "[ *]"]


@pytest.mark.parametrize("path", MALFORMED)
def test_malformed_wildcards_raise_value_error(doc: qjson.Doc, path: str) -> None:
    with pytest.raises(ValueError, match="invalid path"):
        doc.get_all(path)
    with pytest.raises(ValueError, match="invalid path"):
        qjson.Path(path)
    with pytest.raises(ValueError, match="invalid path"):
        doc.get(path, None)
    with pytest.raises(ValueError, match="invalid path"):
        doc.get_many([path], default=None)


@pytest.mark.parametrize("path", ["messages[*]", "*", "dup.*", "missing[*]", "missing.x.*"])
def test_single_value_reads_reject_wildcards(doc: qjson.Doc, path: str) -> None:
    p = qjson.Path(path)
    for name in [
        "get",
        "get_str",
        "get_int",
        "get_float",
        "get_bool",
        "type",
        "len",
        "raw",
        "open",
    ]:
        for arg in (path, p):
            with pytest.raises(ValueError, match="get_all"):
                getattr(doc, name)(arg)
    # Not a missing path: the default does not hide it.
    with pytest.raises(ValueError):
        doc.get(path, None)
    with pytest.raises(ValueError):
        doc.get_many([path], default=None)


def test_get_many(doc: qjson.Doc) -> None:
    paths = ["messages[0].role", "dup.k", qjson.Path("tools[1].function.name"), '["*"]']
    assert doc.get_many(paths) == ["system", 1, "g", "star"]
    assert doc.get_many(tuple(paths)) == doc.get_many(iter(paths)) == doc.get_many(paths)
    assert doc.get_many([]) == []
    assert doc.get_many(["missing", "dup.j", "x.y"], default=None) == [None, 2, None]
    sentinel = object()
    assert doc.get_many(["missing"], default=sentinel)[0] is sentinel
    with pytest.raises(qjson.PathError) as e:
        doc.get_many(["dup.j", "messages[7]"])
    assert e.value.path == "messages[7]"
    with pytest.raises(TypeError):
        doc.get_many(["dup.j", 5])
    for one in ["dup.j", b"dup.j", qjson.Path("dup.j")]:
        with pytest.raises(TypeError, match="iterable of paths"):
            doc.get_many(one)
    with pytest.raises(TypeError):
        doc.get_all(5)
    # A type mismatch is not a missing path.
    d = qjson.parse(b'{"a": 1}')
    assert d.get_many(["a", "a.b"], default=0) == [1, 0]


def test_get_many_positional_forms(doc: qjson.Doc) -> None:
    """The raw entry point's cases (positional arguments, an exact list or
    tuple) and the ones it leaves to the method PyO3 made (other iterables,
    errors) give the same answers; an iterator that fails part-way is not
    read twice; the default keeps its reference count."""
    paths = ["messages[0].role", "dup.k", "missing", qjson.Path("tools[1].function.name")]
    want = ["system", 1, None, "g"]
    assert doc.get_many(paths, None) == doc.get_many(paths, default=None) == want
    assert doc.get_many(tuple(paths), None) == want

    class L(list):
        pass

    assert doc.get_many(L(paths), None) == want
    assert doc.get_many((p for p in paths), None) == want
    with pytest.raises(qjson.PathError) as e:
        doc.get_many(iter(["dup.k", "missing", "dup.j"]))
    assert e.value.path == "missing"
    with pytest.raises(qjson.PathError):
        doc.get_many(("dup.k", "missing"))
    with pytest.raises(TypeError):
        doc.get_many(["dup.k"], None, None)
    sentinel = object()
    before = sys.getrefcount(sentinel)
    for _ in range(100):
        got = doc.get_many(["missing", "missing"], sentinel)
        assert got[0] is got[1] is sentinel
        del got
    assert sys.getrefcount(sentinel) == before
    assert doc.get_all(qjson.Path("messages[*].role")) == doc.get_all("messages[*].role")


# ---------------------------------------------------------------- Path objects


def test_path_value_semantics() -> None:
    a, b = qjson.Path("messages[*].content"), qjson.Path("messages[*].content")
    assert a == b and not (a != b) and a is not b
    assert hash(a) == hash(b)
    assert a != qjson.Path("messages[*].role")
    assert a != "messages[*].content"
    assert qjson.Path("a") != qjson.Path('["a"]')  # equal meaning, different text
    assert len({a, b, qjson.Path("x")}) == 2
    assert {a: 1}[b] == 1
    assert str(a) == "messages[*].content"
    assert repr(a) == "qjson.Path('messages[*].content')"
    assert pickle.loads(pickle.dumps(a)) == a
    with pytest.raises(AttributeError):
        a.text = "x"  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        qjson.Path(5)  # type: ignore[arg-type]
    assert qjson.Path("") == qjson.Path("")


def test_every_getter_takes_a_path(doc: qjson.Doc) -> None:
    reads = [
        ("get", "messages[1].content"),
        ("get_str", "messages[0].role"),
        ("get_int", "dup.k"),
        ("get_float", "dup.j"),
        ("get_bool", "tools[1].function.x[0]"),
        ("type", "tools"),
        ("len", "messages"),
        ("raw", "messages[1]"),
        ("get_all", "messages[*].role"),
    ]
    cur = doc.open("")
    for reader in (doc, cur):
        for name, text in reads:
            want = getattr(reader, name)(text)
            assert getattr(reader, name)(qjson.Path(text)) == want, name
        assert reader.open(qjson.Path("messages[4]")).get_all("tags[*]") == ["x", "y", "z"]
        assert reader.get(qjson.Path("missing"), None) is None
        with pytest.raises(qjson.PathError):
            reader.get(qjson.Path("missing"))
        with pytest.raises(TypeError):
            reader.get_str(qjson.Path("dup.k"))
    assert doc.type(None) == doc.type(qjson.Path(""))


def test_paths_reused_across_documents_and_threads() -> None:
    paths = [qjson.Path("[*].user.login"), qjson.Path("[*].id"), qjson.Path("[-1].tags[*]")]
    first_id = qjson.Path("[0].id")
    docs = []
    for n in range(1, 40):
        items = [
            {"id": i, "user": {"login": f"u{i}"}, "tags": list(range(i % 4))} for i in range(n)
        ]
        docs.append((qjson.parse(json.dumps(items)), items))

    def check(k: int) -> int:
        for d, items in docs[k % 3 :: 3] + docs:
            assert d.get_all(paths[0]) == [it["user"]["login"] for it in items]
            assert d.get_all(paths[1]) == [it["id"] for it in items]
            assert d.get_all(paths[2]) == items[-1]["tags"]
            assert d.get_many([first_id, "[-1].user.login"]) == [
                items[0]["id"],
                items[-1]["user"]["login"],
            ]
        return k

    with ThreadPoolExecutor(4) as pool:
        assert sorted(pool.map(check, range(12))) == list(range(12))
    # One Path built on another thread is the same value.
    made: list[qjson.Path] = []
    t = threading.Thread(target=lambda: made.append(qjson.Path("[*].id")))
    t.start()
    t.join()
    assert made[0] == paths[1] and hash(made[0]) == hash(paths[1])


# ---------------------------------------------------------------- differential

FILES = (
    data_files("JSONTestSuite/test_parsing", "y_*.json", id_prefix="y/")
    + data_files("jsonexamples", "*.json", id_prefix="ex/")
    + data_files("jsonexamples/small", "*.json", id_prefix="ex/small/")
)


@pytest.mark.parametrize("file", FILES)
def test_generated_paths_agree_with_a_reference_walker(file: Any) -> None:
    data = file.read_bytes()
    expected = reference_loads(data)
    d = qjson.parse(data)
    for segs in generate(expected, seed=zlib.crc32(file.name.encode())):
        text = path_text(segs)
        want = reference_all(expected, segs)
        got = d.get_all(text)
        assert same(got, want), (text, len(got), len(want))
        assert same(d.get_all(qjson.Path(text)), want), text


# ---------------------------------------------------------------- scaling


def _best_time(fn: Any, runs: int = 7) -> float:
    """The least CPU time of this thread over `runs` calls (CPU time, so that
    being preempted on a busy machine does not count)."""
    best = float("inf")
    for _ in range(runs):
        t0 = time.thread_time()
        fn()
        best = min(best, time.thread_time() - t0)
    return best


def _wide(n: int) -> tuple[qjson.Doc, list[str]]:
    keys = [f"key{i}" for i in range(n)]
    return qjson.parse(json.dumps(dict.fromkeys(keys, 1))), keys


@pytest.mark.parametrize(
    "read",
    [
        lambda d, keys: [d.get(k) for k in keys],
        lambda d, keys: d.get_many(keys),
        lambda d, keys: [d.get(p) for p in [qjson.Path(k) for k in keys]],
        lambda d, keys: d.get_all("*"),
    ],
    ids=["get", "get_many", "Path", "get_all"],
)
def test_reads_of_every_key_of_a_wide_object_stay_linear(read: Any) -> None:
    """Reading every key of an object of 10 000 members costs about 10x the
    same for 1 000 members, not 100x (checked loosely: a ratio of 40 or less,
    best of 7 runs; each run reads every key twice, so the second pass is
    the repeated lookup)."""
    small, large = _wide(1_000), _wide(10_000)

    def work(d: qjson.Doc, keys: list[str]) -> None:
        for _ in range(2):
            read(d, keys)

    t_small = _best_time(lambda: work(*small))
    t_large = _best_time(lambda: work(*large))
    ratio = t_large / max(t_small, 20e-6)
    assert ratio < 40, f"{t_small * 1e3:.2f} ms -> {t_large * 1e3:.2f} ms (x{ratio:.0f})"
