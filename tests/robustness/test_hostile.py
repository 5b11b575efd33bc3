"""Hostile inputs: deep nesting, huge strings and numbers, invalid
UTF-8 of every class, very wide containers, inputs changed after parse, and
lifetimes of views and cursors. Each answer must be a clean result or one of
qjson's documented exceptions: never a crash, a hang or a Rust panic.

The largest inputs (100 MB string, 50 MB array, 10^6 keys) are marked
``heavy``: they take a few seconds each and about 1 GB of RAM at peak, and
run by default; ``QJSON_SKIP_HEAVY=1`` skips them on a small machine.
"""

from __future__ import annotations

import gc
import json
import mmap
import os
import subprocess
import sys
import time

import pytest
import qjson

heavy = pytest.mark.skipif(os.environ.get("QJSON_SKIP_HEAVY") == "1", reason="QJSON_SKIP_HEAVY=1")
ALLOWED = (qjson.JSONDecodeError, qjson.PathError, ValueError, KeyError, IndexError, TypeError)


def decode_error(data, **kw) -> qjson.JSONDecodeError:
    with pytest.raises(qjson.JSONDecodeError) as ei:
        qjson.parse(data, **kw)
    return ei.value


def assert_names_offset(e: qjson.JSONDecodeError, data: bytes | str) -> None:
    """The message says what was expected and where (byte offset)."""
    n = len(data.encode() if isinstance(data, str) else data)
    assert 0 <= e.pos <= n
    assert e.msg and e.msg[0].isupper()
    assert f"(char {e.pos})" in str(e)
    assert e.lineno >= 1 and e.colno >= 1


# --------------------------------------------------------------------------
# Deep nesting
# --------------------------------------------------------------------------

DEEP = 10**6


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("closed", [False, True])
def test_million_nested_arrays_stop_at_max_depth(lazy: bool, closed: bool) -> None:
    data = b"[" * DEEP + (b"]" * DEEP if closed else b"")
    e = decode_error(data, lazy=lazy)
    assert "depth" in e.msg
    assert e.pos == 1024  # the first bracket beyond max_depth
    assert_names_offset(e, data)


def test_million_nested_objects_and_mixed() -> None:
    data = b'{"a":' * DEEP
    assert decode_error(data).pos == 1024 * 5
    data = b'[{"a":' * (DEEP // 2)
    assert "depth" in decode_error(data).msg


@pytest.mark.parametrize("fn", [qjson.loads, qjson.validate])
def test_million_nested_arrays_eager(fn) -> None:
    data = b"[" * DEEP + b"]" * DEEP
    with pytest.raises(qjson.JSONDecodeError, match="depth"):
        fn(data)


def test_max_depth_is_exact() -> None:
    for depth in (1, 2, 100, 1024):
        ok = b"[" * depth + b"]" * depth
        qjson.parse(ok, max_depth=depth)
        with pytest.raises(qjson.JSONDecodeError):
            qjson.parse(b"[" + ok + b"]", max_depth=depth)


def test_deep_document_with_a_large_max_depth_reads_without_recursion() -> None:
    """max_depth raised far beyond the C stack: the index has no recursion;
    reads down to the bottom and loads work (loads uses an explicit stack)."""
    n = 200_000
    data = b"[" * n + b"1" + b"]" * n
    doc = qjson.parse(data, max_depth=n)
    assert doc.len() == 1
    path = "[0]" * (n - 1)
    cur = doc.open(path)
    assert cur.get("[0]") == 1
    assert doc.get("/0" * n) == 1
    v = qjson.loads(data, max_depth=n)
    for _ in range(n):
        v = v[0]
    assert v == 1


def test_dumps_of_a_million_nested_lists_is_an_error_not_a_crash() -> None:
    x: list = []
    for _ in range(DEEP):
        x = [x]
    with pytest.raises(qjson.JSONEncodeError, match="depth"):
        qjson.dumps(x)
    d: dict = {}
    for _ in range(DEEP):
        d = {"a": d}
    with pytest.raises(qjson.JSONEncodeError, match="depth"):
        qjson.dumps(d)


def run_isolated(code: str) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter: a crash there fails the test
    instead of killing the test run."""
    return subprocess.run(
        [sys.executable, "-c", "import qjson, threading, json\n" + code],
        capture_output=True,
        text=True,
        timeout=120,
    )


def assert_no_crash(r: subprocess.CompletedProcess) -> None:
    assert r.returncode == 0, f"exit {r.returncode} (negative: a signal)\n{r.stderr[-2000:]}"


def test_materialize_of_a_deep_view_at_the_default_depth() -> None:
    data = b"[" * 1024 + b"]" * 1024
    m = qjson.materialize(qjson.parse(data).root)
    for _ in range(1023):
        m = m[0]
    assert m == []


def test_materialize_of_a_very_deep_view_does_not_crash() -> None:
    """max_depth raised to 100 000: materialize must give a result or a clean
    RecursionError, never a stack overflow."""
    r = run_isolated(
        "n = 100_000\n"
        "root = qjson.parse(b'[' * n + b']' * n, max_depth=n).root\n"
        "try:\n    qjson.materialize(root)\nexcept RecursionError:\n    pass\n"
    )
    assert_no_crash(r)


def test_materialize_at_the_default_depth_in_a_small_thread_stack() -> None:
    """A thread with a 512 KiB stack (the default for secondary threads on
    macOS; musl gives 128 KiB) and a document at the default max_depth."""
    r = run_isolated(
        "threading.stack_size(512 * 1024)\n"
        "data = b'[' * 1024 + b']' * 1024\n"
        "out = []\n"
        "def f():\n"
        "    try:\n        out.append(qjson.materialize(qjson.parse(data).root))\n"
        "    except RecursionError:\n        out.append(None)\n"
        "    out.append(qjson.loads(data))\n"
        "    out.append(qjson.dumps(out[-1]))\n"
        "t = threading.Thread(target=f)\nt.start()\nt.join()\n"
        "assert len(out) == 3, out\n"
    )
    assert_no_crash(r)


# --------------------------------------------------------------------------
# Huge strings and numbers
# --------------------------------------------------------------------------


@heavy
def test_single_100mb_string() -> None:
    n = 100 * 1024 * 1024
    data = b'"' + b"x" * n + b'"'
    doc = qjson.parse(data)
    assert doc.type() == "string"
    s = doc.get_str("")
    assert len(s) == n and s[:3] == "xxx" and s[-1] == "x"
    del s
    assert len(doc.raw()) == n + 2
    qjson.validate(data)
    # Unterminated: a clean error at the opening quote.
    e = decode_error(data[:-1])
    assert e.pos == 0 and "Unterminated" in e.msg
    # With escapes at both ends (the unescaping path).
    data = b'["\\n' + b"y" * n + b'\\u00e9"]'
    assert qjson.parse(data).get("[0]")[-2:] == "y\u00e9"


def test_huge_numbers() -> None:
    doc = qjson.parse(b"[1e400, -1e400, 1e-400, -1e-400, 1E+999999999999999999999]")
    assert doc.get("[0]") == float("inf")
    assert doc.get("[1]") == float("-inf")
    assert doc.get("[2]") == 0.0
    assert str(doc.get("[3]")) == "-0.0"
    assert doc.get("[4]") == float("inf")
    assert qjson.loads(b"1e400") == float("inf")
    big = "9" * 4000
    assert qjson.parse(big).get() == int(big)
    assert qjson.parse(big).get_int("") == int(big)
    assert qjson.parse(big).get_float("") == float("inf")


def test_100k_digit_integer_is_a_value_error_like_json() -> None:
    """Python limits int(str) to 4300 digits by default (sys.int_info): qjson
    raises the same ValueError json.loads does, never a crash; the float
    reading and the raw bytes still work."""
    big = b"1" * 100_000
    doc = qjson.parse(big)
    assert doc.type() == "number"
    assert doc.raw() == big
    assert doc.get_float("") == float("inf")
    with pytest.raises(ValueError):
        json.loads(big)
    with pytest.raises(ValueError):
        doc.get()
    with pytest.raises(ValueError):
        qjson.loads(big)


def _best_time(fn, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


@pytest.mark.parametrize(
    "make,read",
    [
        (lambda n: b"1" * n, lambda d: d.get_float("")),
        (lambda n: b"1." + b"2" * n, lambda d: d.get_float("")),
        (lambda n: b"0." + b"0" * n + b"1e5", lambda d: d.get()),
        (lambda n: b"1e" + b"9" * n, lambda d: d.get()),
        (lambda n: b"[" + b"1" * n + b"]", lambda d: d.raw("[0]")),
    ],
    ids=["int", "fraction", "zeros", "exponent", "in-array"],
)
def test_long_numbers_scale_linearly(make, read) -> None:
    """10x more digits may cost about 10x, not 100x (checked loosely: a
    ratio of 40 or less, on the best of 5 runs)."""

    def work(data: bytes) -> None:
        qjson.validate(data)
        read(qjson.parse(data))
        read(qjson.parse(data, lazy=True))

    small, large = make(10_000), make(100_000)
    t_small = _best_time(lambda: work(small))
    t_large = _best_time(lambda: work(large))
    # Floor the small time so that timer noise on tiny runs cannot fail it.
    ratio = t_large / max(t_small, 20e-6)
    assert ratio < 40, f"{t_small * 1e3:.2f} ms -> {t_large * 1e3:.2f} ms (x{ratio:.0f})"


@pytest.mark.parametrize("kind", ["object", "array", "edited", "lazy"])
def test_dumps_of_a_deep_edited_chain_of_views_scales_linearly(kind: str) -> None:
    """A chain of cached views edited at the bottom: dumps works out which
    views are dirty once, not again at every level it descends (which cost
    levels x views: 87x for 10x the depth). Checked loosely: 10x deeper may
    cost at most 50x, on the best of 5 runs. `object` and `array` are
    spliced; `edited` (every level unfolded by an append) and `lazy` (a
    lazy document) are written member by member."""

    def chain(n: int):
        if kind == "object":
            data = b'{"k":' * n + b"1" + b"}" * n
        else:
            data = b"[" * n + b"1" + b"]" * n
        model = x_model = json.loads(data)
        root = x = qjson.parse(data, lazy=True).root if kind == "lazy" else qjson.decode(data)
        key = "k" if kind == "object" else 0
        for _ in range(n - 1):
            if kind == "edited":
                x.append(0)
                x_model.append(0)
            x, x_model = x[key], x_model[key]
        x[key] = x_model[key] = 2
        out = qjson.dumps(root)
        assert json.loads(out) == model
        if kind != "edited":
            assert out == data.replace(b"1", b"2")
        return root

    small, large = chain(90), chain(900)
    t_small = _best_time(lambda: qjson.dumps(small))
    t_large = _best_time(lambda: qjson.dumps(large))
    ratio = t_large / max(t_small, 20e-6)
    assert ratio < 50, f"{t_small * 1e3:.2f} ms -> {t_large * 1e3:.2f} ms (x{ratio:.0f})"


def test_dumps_writes_views_edited_by_a_default_hook() -> None:
    """A `default` hook that edits a view dumps has already looked at: the
    edit is written (its dirty answer is worked out again once Python code
    has run)."""
    d = qjson.decode(b'[0,{"x":1}]')
    inner = d[1]

    class Opaque:
        pass

    d[0] = Opaque()

    def hook(o: object) -> None:
        inner["x"] = 2
        return None

    assert qjson.dumps(d, default=hook) == b'[null,{"x":2}]'


@heavy
def test_50mb_array_of_small_ints() -> None:
    n = 25 * 1024 * 1024
    data = b"[" + b"7," * (n - 1) + b"7]"
    assert len(data) > 50 * 1024 * 1024
    doc = qjson.parse(data)
    assert doc.len() == n
    assert doc.get("[0]") == 7 and doc.get("[-1]") == 7 and doc.get(f"[{n // 2}]") == 7
    assert doc.get(f"[{n}]", None) is None
    arr = doc.root
    assert len(arr) == n and arr[n - 1] == 7
    qjson.validate(data)
    assert len(qjson.loads(data)) == n


@heavy
def test_object_with_a_million_keys() -> None:
    n = 10**6
    data = ("{" + ",".join(f'"k{i}":{i}' for i in range(n)) + "}").encode()
    doc = qjson.parse(data)
    assert doc.len() == n
    # Repeated lookups go through the child table (built on the second one).
    for i in (0, n - 1, n // 2, 12345, 999_998):
        assert doc.get(f"k{i}") == i
        assert doc.get(f"/k{i}") == i
    assert doc.get("k1000000", None) is None
    obj = doc.root
    assert len(obj) == n and obj["k999999"] == 999_999
    loaded = qjson.loads(data)
    assert len(loaded) == n and loaded["k500000"] == 500_000
    # The same with every key duplicated: first one wins, Doc.len counts both.
    data = data[:-1] + b"," + data[1:]
    doc = qjson.parse(data)
    assert doc.len() == 2 * n and doc.get("k7") == 7


# The 4 GiB boundary (inputs of 4 GiB - 1 bytes or more raise "Input too
# large") is tested in Rust, tests/hardening.rs: building such an input in
# Python would cost 4 GiB of RAM.


# --------------------------------------------------------------------------
# Invalid UTF-8, surrogates, NUL
# --------------------------------------------------------------------------

# (bytes inside a JSON string, offset of the first bad byte within them)
BAD_UTF8 = {
    "lone-continuation-80": (b"\x80", 0),
    "lone-continuation-bf": (b"a\xbf", 1),
    "continuation-run": (b"\x80\x80\x80\x80", 0),
    "truncated-2": (b"\xc3", 0),
    "truncated-2-then-ascii": (b"\xc3a", 0),
    "truncated-3": (b"\xe2\x82", 0),
    "truncated-4": (b"\xf0\x9f\x98", 0),
    "overlong-2-c0": (b"\xc0\x80", 0),
    "overlong-2-c1": (b"\xc1\xbf", 0),
    "overlong-3": (b"\xe0\x80\xaf", 0),
    "overlong-3-max": (b"\xe0\x9f\xbf", 0),
    "overlong-4": (b"\xf0\x80\x80\xaf", 0),
    "overlong-4-max": (b"\xf0\x8f\xbf\xbf", 0),
    "surrogate-d800": (b"\xed\xa0\x80", 0),
    "surrogate-dfff": (b"\xed\xbf\xbf", 0),
    "surrogate-pair-cesu": (b"\xed\xa0\xbd\xed\xb8\x80", 0),
    "above-10ffff": (b"\xf4\x90\x80\x80", 0),
    "f5": (b"\xf5\x80\x80\x80", 0),
    "f8-5byte": (b"\xf8\x88\x80\x80\x80", 0),
    "fc-6byte": (b"\xfc\x84\x80\x80\x80\x80", 0),
    "fe": (b"\xfe", 0),
    "ff": (b"\xff", 0),
    "valid-then-bad": (b"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xc3", 9),
    "bad-second-byte": (b"\xe2\x28\xa1", 0),
}


@pytest.mark.parametrize("name", sorted(BAD_UTF8))
@pytest.mark.parametrize("where", ["value", "key", "deep-value", "outside"])
def test_invalid_utf8_every_class(name: str, where: str) -> None:
    bad, rel = BAD_UTF8[name]
    if where == "value":
        prefix, data = b'{"a": "', b'{"a": "' + bad + b'"}'
    elif where == "key":
        prefix, data = b'{"', b'{"' + bad + b'": 1}'
    elif where == "deep-value":
        prefix = b'[[[{"x": ["ok", "' + b"z" * 70
        data = prefix + bad + b'"]}]]]'
    else:
        prefix, data = b"[1, ", b"[1, " + bad + b"]"
    e = decode_error(data)
    assert_names_offset(e, data)
    if where != "outside":
        assert e.msg == "Invalid UTF-8"
        assert e.pos == len(prefix) + rel
    for fn in (qjson.loads, qjson.validate):
        with pytest.raises(qjson.JSONDecodeError) as ei:
            fn(data)
        assert ei.value.pos == e.pos
    # Lazy: structure only; reading the bad value raises, other reads work.
    try:
        doc = qjson.parse(data, lazy=True)
    except qjson.JSONDecodeError:
        assert where == "outside"
        return
    if where == "value":
        with pytest.raises(qjson.JSONDecodeError, match="UTF-8"):
            doc.get("a")
        assert doc.type("a") == "string"
        assert doc.raw("a") == b'"' + bad + b'"'
    elif where == "key":
        with pytest.raises(ALLOWED):
            doc.get("a")
        with pytest.raises(ALLOWED):
            qjson.materialize(doc.root)
    elif where == "deep-value":
        assert doc.get("[0][0][0].x[0]") == "ok"
        with pytest.raises(qjson.JSONDecodeError, match="UTF-8"):
            doc.get("[0][0][0].x[1]")


@pytest.mark.parametrize(
    "esc",
    [
        rb"\ud800",
        rb"\udbff",
        rb"\udc00",
        rb"\udfff",
        rb"\ud800x",
        rb"\ud800\u0041",
        rb"\ud800\ud800",
        rb"\udc00\ud800",
        rb"\ud800\n",
        rb"\uD83D",
    ],
)
def test_lone_surrogate_escapes(esc: bytes) -> None:
    data = b'{"s": "' + esc + b'"}'
    e = decode_error(data)
    assert_names_offset(e, data)
    assert "surrogate" in e.msg
    assert 7 <= e.pos < 7 + len(esc)
    doc = qjson.parse(data, lazy=True)
    with pytest.raises(qjson.JSONDecodeError, match="surrogate"):
        doc.get("s")
    with pytest.raises(qjson.JSONDecodeError):
        qjson.loads(data)
    # A valid pair decodes.
    assert qjson.parse(rb'"\ud83d\ude00"').get() == "\U0001f600"


def test_str_input_with_lone_surrogates() -> None:
    """A Python str holding a lone surrogate has no UTF-8 form: as input
    JSON, a JSONDecodeError at the surrogate (as orjson raises); as a path,
    a UnicodeEncodeError (a ValueError); never a crash."""
    for fn in (qjson.parse, qjson.loads, qjson.validate, qjson.decode):
        with pytest.raises(qjson.JSONDecodeError) as info:
            fn('["\ud800"]')
        assert info.value.pos == 2
    doc = qjson.parse('{"a": 1}')
    with pytest.raises(UnicodeEncodeError):
        doc.get("\udc00")
    with pytest.raises(qjson.JSONEncodeError):  # a TypeError, as in orjson
        qjson.dumps("\ud800")


def test_nul_bytes() -> None:
    # A raw NUL inside a string is a control character.
    e = decode_error(b'["a\x00b"]')
    assert e.pos == 3 and "control" in e.msg
    # Outside a string, anywhere.
    for data in (b"\x00", b"[\x00]", b"[1]\x00", b"\x00[1]", b'{"a"\x00:1}', b"[1\x00]"):
        e = decode_error(data)
        assert_names_offset(e, data)
        assert e.pos == data.index(b"\x00")
    # The \u0000 escape is fine, in values, keys and paths.
    doc = qjson.parse(b'{"a\\u0000b": "x\\u0000y"}')
    assert doc.get('["a\\u0000b"]') == "x\x00y"
    assert doc.get("/a\x00b") == "x\x00y"
    assert doc.get("a\x00b") == "x\x00y"
    assert qjson.loads(b'"\\u0000"') == "\x00"
    assert qjson.dumps("\x00") == b'"\\u0000"'
    # NUL in a path that names nothing.
    with pytest.raises(qjson.PathError):
        doc.get("a\x00")


def test_bom_and_other_encodings_are_rejected() -> None:
    for data in (b"\xef\xbb\xbf[1]", "[1]".encode("utf-16"), "[1]".encode("utf-32")):
        e = decode_error(data)
        assert e.pos == 0


def test_every_single_byte_input() -> None:
    for b in range(256):
        data = bytes([b])
        try:
            doc = qjson.parse(data)
        except qjson.JSONDecodeError as e:
            assert_names_offset(e, data)
            continue
        assert doc.get() == json.loads(data)


# --------------------------------------------------------------------------
# Inputs changed after parse
# --------------------------------------------------------------------------


def test_bytearray_is_copied_at_parse() -> None:
    ba = bytearray(b'{"a": "hello", "b": [1, 2, 3]}')
    doc = qjson.parse(ba)
    ba[7:12] = b"XXXXX"
    ba[:] = b"garbage"  # even a resize is allowed: no export is held
    assert doc.get("a") == "hello"
    assert doc.get("b[2]") == 3
    assert doc.raw() == b'{"a": "hello", "b": [1, 2, 3]}'


def test_writable_memoryview_is_copied_at_parse() -> None:
    ba = bytearray(b'{"a": "hello"}')
    mv = memoryview(ba)
    doc = qjson.parse(mv)
    mv[7:12] = b"\xff\xff\xff\xff\xff"
    mv.release()
    ba.extend(b"more")  # no export left on the bytearray
    assert doc.get("a") == "hello"
    ba2 = bytearray(b'{"a": "hello"}')
    cur = qjson.parse(memoryview(ba2)[:14]).open("")
    ba2[0:1] = b"["
    assert cur.get("a") == "hello"


def test_readonly_memoryview_holds_an_export() -> None:
    data = b'{"a": "hello"}'
    mv = memoryview(data)
    doc = qjson.parse(mv)
    # The export is held by the Doc: the view cannot be released under it.
    with pytest.raises(BufferError):
        mv.release()
    assert doc.get("a") == "hello"
    del doc
    gc.collect()
    mv.release()


def test_readonly_view_of_a_bytearray_is_copied() -> None:
    """A read-only memoryview over a bytearray is still writable through the
    bytearray, so it is copied like a writable buffer (the hardening review found it
    used to be held by export, and writes through the bytearray showed up
    in later reads)."""
    ba = bytearray(b'{"a": "hello", "b": [1, 2, 3]}')
    doc = qjson.parse(memoryview(ba).toreadonly())
    cur = qjson.parse(memoryview(ba)[1:-1].toreadonly().cast("B")[5:12]).open("")
    ba[7:12] = b"\xff\xfe\x00\x22\x5c"  # invalid UTF-8, NUL, quote, backslash
    ba[0] = ord("[")
    assert doc.get("a") == "hello"
    assert doc.get("b[2]") == 3
    assert doc.raw() == b'{"a": "hello", "b": [1, 2, 3]}'
    assert cur.get() == "hello"
    # A read-only view of bytes, and of a read-only view of bytes: no copy
    # needed, an export is held.
    data = b'{"a": 1}'
    mv = memoryview(memoryview(data).toreadonly())
    doc = qjson.parse(mv)
    with pytest.raises(BufferError):
        mv.release()
    assert doc.get("a") == 1


def test_readonly_mmap_input(tmp_path) -> None:
    p = tmp_path / "doc.json"
    p.write_bytes(b'{"a": [1, 2, {"b": "c"}]}')
    with open(p, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        doc = qjson.parse(m)
        assert doc.get("a[2].b") == "c"
        # Copied (another process could write the file under a read-only
        # map), so the map can close while the Doc lives on.
        m.close()
        assert doc.get("a[2].b") == "c"
        del doc
        gc.collect()


# --------------------------------------------------------------------------
# Lifetimes
# --------------------------------------------------------------------------


def test_views_and_cursors_outlive_the_doc_and_the_input() -> None:
    data = b'{"a": {"b": [1, "two", {"c": null}]}, "s": "\\u00e9t\\u00e9"}'
    data = bytes(bytearray(data))  # a fresh object nobody else refers to
    doc = qjson.parse(data)
    cur = doc.open("a.b")
    view = doc.get("a")
    inner = view["b"]
    root = doc.root
    it = iter(root.items())
    del doc, data
    gc.collect()
    assert cur.get("[1]") == "two" and cur.len() == 3 and cur.raw("[2]") == b'{"c": null}'
    assert view["b"][2]["c"] is None
    assert list(inner) == [1, "two", {"c": None}]
    assert root["s"] == "été"
    assert dict(it) == {"a": {"b": [1, "two", {"c": None}]}, "s": "été"}
    sub = cur.open("[2]")
    del cur, view, inner, root
    gc.collect()
    assert sub.get("c") is None and sub.type("c") == "null"


def test_views_outlive_str_and_memoryview_inputs() -> None:
    s = "".join(['{"k": ', '"v', "é" * 3, '"}'])
    doc = qjson.parse(s)
    v = doc.root
    del doc, s
    gc.collect()
    assert v["k"] == "vééé"
    b = b'[1, [2, 3], "x"]'
    mv = memoryview(b)
    cur = qjson.parse(mv).open("[1]")
    del b, mv
    gc.collect()
    assert cur.get("[1]") == 3


def test_many_cursors_and_views_dropped_in_any_order() -> None:
    data = json.dumps({"a": [{"b": i, "c": [i] * 3} for i in range(50)]}).encode()
    keep = []
    for _ in range(20):
        doc = qjson.parse(data)
        keep.append(doc.open("a[3]"))
        keep.append(doc.get("a[4]"))
        keep.append(doc.get("a"))
    gc.collect()
    for i, k in enumerate(reversed(keep)):
        if i % 3 == 0:
            assert len(k) == 50
        elif i % 3 == 1:
            assert k["b"] == 4
        else:
            assert k.get("c[2]") == 3


# --------------------------------------------------------------------------
# dumps with hostile objects
# --------------------------------------------------------------------------


def test_dumps_default_that_mutates_the_container() -> None:
    d = {"a": object(), "b": 1, "c": [object(), 2]}

    def default(o):
        d.clear()
        d.update({f"x{i}": i for i in range(100)})
        return "replaced"

    try:
        qjson.dumps(d, default=default)
    except (*ALLOWED, RuntimeError):
        pass
    lst = [object(), 1, 2, 3]

    def shrink(o):
        lst.clear()
        return None

    out = qjson.dumps(lst, default=shrink)
    assert out.startswith(b"[null")


def test_dumps_cycles_and_bad_keys() -> None:
    a: list = []
    a.append(a)
    with pytest.raises(qjson.JSONEncodeError, match="Circular"):
        qjson.dumps(a)
    d: dict = {}
    d["self"] = d
    with pytest.raises(qjson.JSONEncodeError, match="Circular"):
        qjson.dumps(d)
    with pytest.raises(TypeError):
        qjson.dumps({1: 2, (1,): 3})
    with pytest.raises(TypeError):
        qjson.dumps(object())

    def loop(o):
        return o

    with pytest.raises((TypeError, ValueError, RecursionError)):
        qjson.dumps(object(), default=loop)


def _guarded_buffer(size: int):
    """An anonymous mapping of `size` bytes (rounded up to pages) followed by
    an inaccessible page, and the offset where that page begins; None when
    mprotect is not reachable (non-POSIX)."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    except OSError:
        return None
    page = mmap.PAGESIZE
    pages = (size + page - 1) // page + 1
    m = mmap.mmap(-1, pages * page)
    base = ctypes.addressof(ctypes.c_char.from_buffer(m))
    guard = (pages - 1) * page
    if libc.mprotect(ctypes.c_void_p(base + guard), page, 0) != 0:
        return None
    return m, guard


@pytest.mark.parametrize("tail", [0, 1, 2, 7, 8, 31, 32, 33, 56, 57, 63])
def test_inputs_ending_at_an_inaccessible_page(tail: int) -> None:
    # The scanner's last, incomplete block (`tail` bytes) must not read
    # past the input: a read of the guard page would kill the process. The
    # input starts at different offsets, so the block's 64-byte window
    # stays on one page or crosses into the next.
    got = _guarded_buffer(4096)
    if got is None:
        pytest.skip("mprotect is not available here")
    m, guard = got
    for blocks in (0, 1, 3):
        n = 64 * blocks + tail
        if n < 3:
            continue
        text = b"[" + b" " * (n - 3) + b"0]"
        off = guard - n
        m[off:guard] = text
        with memoryview(m)[off:guard] as view:
            qjson.validate(view)
            assert qjson.loads(view) == [0]
            assert qjson.parse(view).get("[0]") == 0
        m[guard - 1 : guard] = b"}"
        with memoryview(m)[off:guard] as view, pytest.raises(qjson.JSONDecodeError):
            qjson.validate(view)
