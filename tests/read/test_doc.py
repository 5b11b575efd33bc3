"""Hand-written tests of the Python API: qjson.parse, Doc, Cursor, the lazy
Object / Array views, and the error types (see the "foundation" contract)."""

from __future__ import annotations

import collections.abc
import gc
import json
import math

import pytest
import qjson
from conftest import full_walk, same

# --------------------------------------------------------------------------
# Paths
# --------------------------------------------------------------------------

SAMPLE = (
    b'{"messages": [{"role": "user", "content": "hi"},'
    b' {"role": "assistant", "content": "yo"},'
    b' {"role": "user", "content": "third"}],'
    b' "a.b": 1, "a": {"b": 2}, "": "empty", "q\\"uote": 3, "br[ack": 4,'
    b' "sl/ash": 5, "ti~lde": 6, "t~1": 7, "\\u0061lpha": 8,'
    b' "x": [10, [20, 30], {"y": null}], "/lead": 9, "uni\\u00e9": 10,'
    b' "\xc3\xa9": 11, "sp ace": 12, "0": "zero-key", "close]": 13,'
    b' "nl\\n": 14, "back\\\\slash": 15, "emoji\\ud83d\\ude00": 16}'
)
SAMPLE_PY = json.loads(SAMPLE)

PATH_CASES = [
    # root
    ("", SAMPLE_PY),
    # dotted keys and indices
    ("messages", SAMPLE_PY["messages"]),
    ("messages[0]", SAMPLE_PY["messages"][0]),
    ("messages[0].role", "user"),
    ("messages[2].content", "third"),
    ("messages[1].content", "yo"),
    ("a.b", 2),
    ("x[0]", 10),
    ("x[1][0]", 20),
    ("x[1][1]", 30),
    ("x[2].y", None),
    ("sp ace", 12),
    ("0", "zero-key"),
    ("alpha", 8),  # the document spells it "\u0061lpha"
    ("unié", 10),  # the document spells it "uni\u00e9"
    ("é", 11),  # the document has raw UTF-8
    # negative indices
    ("messages[-1].content", "third"),
    ("messages[-3].content", "hi"),
    ("x[-1].y", None),
    ("x[1][-1]", 30),
    ("x[-2][-2]", 20),
    # quoted keys
    ('["a.b"]', 1),
    ('["a"].b', 2),
    ('["a"]["b"]', 2),
    ('a["b"]', 2),
    ('[""]', "empty"),
    ('["q\\"uote"]', 3),
    ('["br[ack"]', 4),
    ('["close]"]', 13),
    ('["sl/ash"]', 5),
    ('["/lead"]', 9),
    ('["\\u0061.b"]', 1),  # escapes in a quoted key
    ('["\\u0061"].b', 2),
    ('["\\u00e9"]', 11),
    ('["\xe9"]', 11),
    ('["nl\\n"]', 14),
    ('["back\\\\slash"]', 15),
    ('["emoji\\ud83d\\ude00"]', 16),
    ('["emoji\U0001f600"]', 16),
    ('["messages"][1]["role"]', "assistant"),
    ('messages[1]["role"]', "assistant"),
    ('["x"][1][-1]', 30),
    # JSON Pointer (RFC 6901)
    ("/messages/2/content", "third"),
    ("/messages/0/role", "user"),
    ("/a/b", 2),
    ("/a.b", 1),
    ("/", "empty"),
    ("/sl~1ash", 5),
    ("/ti~0lde", 6),
    ("/t~01", 7),  # ~01 is "~1" (not "/")
    ("/~1lead", 9),
    ("/x/1/0", 20),
    ("/x/2/y", None),
    ("/0", "zero-key"),  # a number token on an object is a key
    ("/alpha", 8),
    ("/é", 11),
    ('/q"uote', 3),
    ("/br[ack", 4),
    ("/sp ace", 12),
    ("/nl\n", 14),
    ("/emoji\U0001f600", 16),
]


@pytest.fixture(scope="module")
def sample() -> qjson.Doc:
    return qjson.parse(SAMPLE)


@pytest.mark.parametrize(("path", "expected"), PATH_CASES, ids=[repr(p) for p, _ in PATH_CASES])
def test_path_forms(sample: qjson.Doc, path: str, expected: object) -> None:
    assert same(sample.get(path), expected)
    if isinstance(expected, (dict, list)):
        assert sample.get(path) == expected
    # The same path through a cursor opened on the root.
    assert same(sample.open("").get(path), expected)


def test_get_default_path_is_root(sample: qjson.Doc) -> None:
    assert sample.get() == SAMPLE_PY
    assert sample.root == SAMPLE_PY
    assert sample.len() == len(SAMPLE_PY)
    assert sample.raw() == SAMPLE


@pytest.mark.parametrize(
    ("data", "path", "expected"),
    [
        (b'[{"user": {"login": "octo"}}, 1, [2, 3]]', "[0].user.login", "octo"),
        (b'[{"user": {"login": "octo"}}, 1, [2, 3]]', "/0/user/login", "octo"),
        (b'[{"user": {"login": "octo"}}, 1, [2, 3]]', "[1]", 1),
        (b'[{"user": {"login": "octo"}}, 1, [2, 3]]', "[-1][0]", 2),
        (b'[{"user": {"login": "octo"}}, 1, [2, 3]]', "[2][-1]", 3),
        (b'[{"user": {"login": "octo"}}, 1, [2, 3]]', "/2/1", 3),
        (b'[[[["deep"]]]]', "[0][0][0][0]", "deep"),
        (b'[[[["deep"]]]]', "/0/0/0/0", "deep"),
        (b'"just a string"', "", "just a string"),
        (b" 42 ", "", 42),
        (b"null", "", None),
        (b'{"":{"":{"":1}}}', '[""][""][""]', 1),
        (b'{"":{"":{"":1}}}', "///", 1),
        (b'{"a/b": {"~": 1}}', "/a~1b/~0", 1),
        (b'{"a\\/b": 1}', "/a~1b", 1),  # "\/" escape in the document key
        (b'{"a\\/b": 1}', '["a/b"]', 1),
        (b'{"\\u0061": 1}', "a", 1),
        (b'{"\\u0061": 1}', "/a", 1),
        (b'{"\\u0061": 1}', '["a"]', 1),
        (b'{"\\u0061": 1}', '["\\u0061"]', 1),
        (b'{"a": [1, 2, 3]}', "a[-1]", 3),
        (b'{"a": [1, 2, 3]}', "a[-3]", 1),
        (b'{"a": [1, 2, 3]}', "/a/2", 3),
        (b'{"-1": "key"}', "-1", "key"),
        (b'{"-1": "key"}', "/-1", "key"),
        (b'{"[": 1}', '["["]', 1),
        (b'{"]": 1}', '["]"]', 1),
        (b'{"\\"": 1}', '["\\""]', 1),
        (b'{".": 1}', '["."]', 1),
    ],
)
def test_path_forms_on_small_docs(data: bytes, path: str, expected: object) -> None:
    doc = qjson.parse(data)
    assert same(doc.get(path), expected)


MISSING_PATHS = [
    "nope",
    "messages[3]",
    "messages[-4]",
    "messages[0].nope",
    "a.c",
    "a.b.c",  # a.b is a number: it has no members
    "a[0]",  # an object has no index
    "messages.role",  # an array has no keys
    "x[1][2]",
    "x[1][-3]",
    "x[2].y.z",  # into null
    '["A.B"]',  # keys are case-sensitive
    '["a.b "]',
    "/nope",
    "/messages/3",
    "/messages/-",  # RFC 6901 "-" (past the end) names no value for a read
    "/messages/-1",
    "/messages/01",  # not a canonical index
    "/messages/+1",
    "/messages/ 1",
    "/a/b/c",
    "/a.b/c",
    "//",
    "/sl/ash",
    "/ti~1lde",
]


@pytest.mark.parametrize("path", MISSING_PATHS)
def test_missing_path_raises_path_error(sample: qjson.Doc, path: str) -> None:
    with pytest.raises(qjson.PathError) as ei:
        sample.get(path)
    assert isinstance(ei.value, KeyError)
    assert not isinstance(ei.value, ValueError)
    for name in ("get_str", "get_int", "get_float", "get_bool", "type", "len", "raw", "open"):
        with pytest.raises(qjson.PathError):
            getattr(sample, name)(path)
    assert sample.get(path, default="dflt") == "dflt"


MALFORMED_PATHS = [
    "a..b",
    "a[",
    "[x]",
    "[",
    ".a",
    "a.",
    "..",
    ".",
    "a[0",
    "a[]",
    "a[1.5]",
    "a[0x1]",
    "a[--1]",
    "a[-]",
    "a[0]b",
    '["a"]b',
    '["a"',
    '["a]',
    '["a"x]',
    "[a]",
    '["a\\x"]',  # bad escape in a quoted key
    '["\\u12"]',
    "/~",
    "/~2",
    "/a~",
    "/a~x/b",
]


@pytest.mark.parametrize("path", MALFORMED_PATHS)
def test_malformed_path_raises_value_error(sample: qjson.Doc, path: str) -> None:
    with pytest.raises(ValueError) as ei:
        sample.get(path)
    assert not isinstance(ei.value, KeyError)
    assert not isinstance(ei.value, qjson.PathError)
    assert not isinstance(ei.value, json.JSONDecodeError)
    # default= is for missing values only, never for a malformed path.
    with pytest.raises(ValueError):
        sample.get(path, default=1)
    for name in ("get_str", "get_int", "get_float", "get_bool", "type", "len", "raw", "open"):
        with pytest.raises(ValueError):
            getattr(sample, name)(path)


# Keys and indices joined into paths of up to three pieces: the shapes that
# the one-pass reader of `Doc::find` takes (bare keys, plain indices), the
# ones it leaves to the path parser (quoted keys, pointers, wildcards, long
# indices, leading zeros) and malformed joins.
PIECES = [
    "messages",
    "x",
    "a",
    "b",
    "content",
    "role",
    "y",
    "a.b",
    "close]",
    "0",
    "nope",
    "[0]",
    "[1]",
    "[2]",
    "[-1]",
    "[-3]",
    "[-4]",
    "[3]",
    "[-0]",
    "[01]",
    "[*]",
    '["a.b"]',
    "[1234567890123456789]",
    ".",
    ".content",
    ".role",
    ".y",
    ".*",
    "[",
    "]x",
    "/x",
]


def _outcome(at, path):
    try:
        return ("ok", qjson.materialize(at.get(path)))
    except Exception as e:  # the type and the message are the answer
        return (type(e), str(e))


def test_simple_paths_read_as_compiled_paths(sample: qjson.Doc) -> None:
    """A str path and the same path compiled (qjson.Path: no one-pass reader)
    give the same value or the same error, whichever reader took the str."""
    seen = {"ok": 0, "missing": 0}
    for a in PIECES:
        for b in ["", *PIECES]:
            for c in ["", ".content", "[1]", "[-1]"]:
                path = a + b + c
                try:
                    compiled = qjson.Path(path)
                except ValueError:
                    # (The message may name another problem of the path: a
                    # read reports a wildcard it meets before a later error.)
                    with pytest.raises(ValueError):
                        sample.get(path)
                    continue
                for at in (sample, sample.open("messages")):
                    got = _outcome(at, path)
                    want = _outcome(at, compiled)
                    assert got == want, path
                    seen["ok" if got[0] == "ok" else "missing"] += 1
    assert seen["ok"] > 40 and seen["missing"] > 1000, seen


def test_path_must_be_str(sample: qjson.Doc) -> None:
    for bad in (0, 1.5, b"a", ["a"]):
        with pytest.raises(TypeError):
            sample.get(bad)


def test_path_error_carries_no_value_error() -> None:
    assert issubclass(qjson.PathError, KeyError)
    assert issubclass(qjson.JSONDecodeError, json.JSONDecodeError)
    assert issubclass(qjson.JSONDecodeError, ValueError)


# --------------------------------------------------------------------------
# Typed getters, types, big numbers, default=
# --------------------------------------------------------------------------

TYPED = (
    b'{"s": "x", "i": 1, "f": 1.5, "t": true, "fa": false, "n": null, "o": {"k": 1},'
    b' "a": [1], "big": 1267650600228229401496703205376, "nbig": -1180591620717411303424,'
    b' "fint": 2.0, "e": 1e2, "E": 1E+2, "z": -0.0, "mz": -0, "huge": 1e400, "nhuge": -1e400,'
    b' "tiny": 1e-400, "ntiny": -1e-400, "u64": 18446744073709551615,'
    b' "i64min": -9223372036854775808, "i64max": 9223372036854775807,'
    b' "i64over": 9223372036854775808, "i64under": -9223372036854775809,'
    b' "s_num": "1", "s_true": "true", "s_null": "null", "zero": 0, "one_f": 1.0,'
    b' "vbig": 1' + b"0" * 400 + b"}"
)
TYPED_PY = json.loads(TYPED)

# key -> (type name, get_str, get_int, get_float, get_bool); TypeError marks a mismatch.
T = TypeError
GETTER_TABLE = {
    "s": ("string", "x", T, T, T),
    "s_num": ("string", "1", T, T, T),
    "s_true": ("string", "true", T, T, T),
    "s_null": ("string", "null", T, T, T),
    "i": ("number", T, 1, 1.0, T),
    "zero": ("number", T, 0, 0.0, T),
    "mz": ("number", T, 0, 0.0, T),  # -0 is the int 0, like json.loads
    "big": ("number", T, 2**100, float(2**100), T),
    "nbig": ("number", T, -(2**70), float(-(2**70)), T),
    "u64": ("number", T, 2**64 - 1, float(2**64 - 1), T),
    "i64min": ("number", T, -(2**63), float(-(2**63)), T),
    "i64max": ("number", T, 2**63 - 1, float(2**63 - 1), T),
    "i64over": ("number", T, 2**63, float(2**63), T),
    "i64under": ("number", T, -(2**63) - 1, float(-(2**63) - 1), T),
    "f": ("number", T, T, 1.5, T),
    "fint": ("number", T, T, 2.0, T),  # get_int rejects floats, even integral ones
    "one_f": ("number", T, T, 1.0, T),
    "e": ("number", T, T, 100.0, T),
    "E": ("number", T, T, 100.0, T),
    "z": ("number", T, T, -0.0, T),
    "huge": ("number", T, T, math.inf, T),
    "nhuge": ("number", T, T, -math.inf, T),
    "tiny": ("number", T, T, 0.0, T),
    "ntiny": ("number", T, T, -0.0, T),
    "t": ("bool", T, T, T, True),  # get_int / get_float reject bools
    "fa": ("bool", T, T, T, False),
    "n": ("null", T, T, T, T),
    "o": ("object", T, T, T, T),
    "a": ("array", T, T, T, T),
}
GETTERS = ("get_str", "get_int", "get_float", "get_bool")


@pytest.fixture(scope="module")
def typed() -> qjson.Doc:
    return qjson.parse(TYPED)


def test_typed_matches_json_loads() -> None:
    # The float edge cases of the table are what json.loads gives.
    assert TYPED_PY["huge"] == math.inf and TYPED_PY["nhuge"] == -math.inf
    assert TYPED_PY["tiny"] == 0.0 and math.copysign(1, TYPED_PY["ntiny"]) == -1
    assert type(TYPED_PY["mz"]) is int and type(TYPED_PY["e"]) is float
    assert json.loads(b"1e400") == math.inf


@pytest.mark.parametrize(("key", "getter"), [(k, g) for k in GETTER_TABLE for g in GETTERS])
def test_typed_getters(typed: qjson.Doc, key: str, getter: str) -> None:
    expected = GETTER_TABLE[key][1 + GETTERS.index(getter)]
    fn = getattr(typed, getter)
    if expected is TypeError:
        with pytest.raises(TypeError):
            fn(key)
        with pytest.raises(TypeError):
            fn("/" + key)
        cur = typed.open("")
        with pytest.raises(TypeError):
            getattr(cur, getter)(key)
        return
    got = fn(key)
    assert same(got, expected), (got, expected)
    assert same(fn("/" + key), expected)
    assert same(getattr(typed.open(""), getter)(key), expected)


@pytest.mark.parametrize("key", list(GETTER_TABLE))
def test_get_and_type(typed: qjson.Doc, key: str) -> None:
    assert typed.type(key) == GETTER_TABLE[key][0]
    assert same(typed.get(key), TYPED_PY[key])
    if GETTER_TABLE[key][0] in ("object", "array"):
        assert typed.len(key) == len(TYPED_PY[key])
    else:
        with pytest.raises(TypeError):
            typed.len(key)


def test_get_vbig_int_exact(typed: qjson.Doc) -> None:
    assert typed.get_int("vbig") == 10**400
    assert typed.get("vbig") == 10**400
    assert type(typed.get("vbig")) is int


def test_int_beyond_cpython_digit_limit() -> None:
    """Ints are exact at any size; CPython's int/str digit limit (4300 by
    default, guarding against quadratic conversion) applies as in json.loads."""
    import sys

    data = b"[1" + b"0" * 5000 + b", 7]"
    doc = qjson.parse(data)  # the limit is not a syntax error
    assert doc.type("[0]") == "number"
    assert doc.get_int("[1]") == 7
    if not hasattr(sys, "set_int_max_str_digits"):
        pytest.skip("no int digit limit in this Python")
    old = sys.get_int_max_str_digits()
    try:
        sys.set_int_max_str_digits(0)
        assert doc.get("[0]") == 10**5000
        assert doc.get_int("[0]") == 10**5000
        sys.set_int_max_str_digits(4300)
        try:
            got = doc.get_int("[0]")
        except ValueError as e:  # as json.loads does
            assert not isinstance(e, json.JSONDecodeError)
        else:
            assert got == 10**5000
    finally:
        sys.set_int_max_str_digits(old)


@pytest.mark.parametrize(
    "text",
    [
        "0.1",
        "-0.1",
        "3.141592653589793",
        "2.2250738585072011e-308",  # subnormal boundary
        "2.2250738585072014e-308",
        "1.7976931348623157e308",
        "1.7976931348623159e308",  # rounds to inf
        "4.9e-324",
        "2.4703282292062327e-324",  # rounds to 0 (halfway, to even)
        "2.4703282292062328e-324",  # rounds up to the smallest subnormal
        "9007199254740993.0",
        "9007199254740993e0",
        "1.00000000000000011102230246251565404236316680908203125",  # halfway: even
        "1.00000000000000011102230246251565404236316680908203126",
        "123456789012345678901234567890e-30",
        "0." + "0" * 400 + "1e400",
        "1" + "0" * 400 + "e-400",
        "-0.0",
        "0e10",
        "-0E-0",
        "1E22",
        "1e23",
        "8.98846567431158e307",
    ],
)
def test_floats_correctly_rounded(text: str) -> None:
    expected = float(text)
    assert json.loads(text) == expected
    doc = qjson.parse(f'{{"v": {text}, "a": [{text}]}}'.encode())
    assert same(doc.get("v"), expected)
    assert same(doc.get_float("v"), expected)
    assert same(doc.get("a[0]"), expected)
    with pytest.raises(TypeError):
        doc.get_int("v")


def test_default_returned_on_missing_only(sample: qjson.Doc) -> None:
    sentinel = object()
    assert sample.get("nope", default=sentinel) is sentinel
    assert sample.get("nope", default=None) is None  # None is a real default
    assert sample.get("nope", sentinel) is sentinel  # default may be positional
    assert sample.get("/messages/9", default=0) == 0
    assert sample.get("messages[-9]", default=0) == 0
    assert sample.get("a.b.c", default=0) == 0
    # present: the value, not the default (even when it is null or false)
    assert sample.get("x[2].y", default=sentinel) is None
    assert sample.get("a.b", default=sentinel) == 2
    assert sample.get("messages", default=sentinel) == SAMPLE_PY["messages"]
    # default= does not silence other errors
    with pytest.raises(ValueError):
        sample.get("a..b", default=sentinel)
    lazy = qjson.parse(b'{"bad": tru, "s": "\\ud800"}', lazy=True)
    with pytest.raises(qjson.JSONDecodeError):
        lazy.get("bad", default=sentinel)
    with pytest.raises(qjson.JSONDecodeError):
        lazy.get("s", default=sentinel)
    assert lazy.get("nope", default=sentinel) is sentinel
    # on a cursor too
    cur = sample.open("messages")
    assert cur.get("[5]", default=sentinel) is sentinel
    assert cur.get("[0].role", default=sentinel) == "user"


def test_type_errors_are_not_silenced_by_default() -> None:
    doc = qjson.parse(b'{"s": "x"}')
    # the typed getters raise TypeError; get() with a default still returns the value
    with pytest.raises(TypeError):
        doc.get_int("s")
    assert doc.get("s", default=5) == "x"


# --------------------------------------------------------------------------
# JSONDecodeError: exact byte positions
# --------------------------------------------------------------------------

BOM = b"\xef\xbb\xbf"

POS_CASES = [
    (b"", 0),
    (b"   ", 3),
    (b" \t\n\r", 4),
    (b"[", 1),
    (b"[1,", 3),
    (b"[1,]", 3),
    (b"[,1]", 1),
    (b"[1 2]", 3),
    (b"1 2", 2),
    (b'{"a" 1}', 5),
    (b'{"a"}', 4),
    (b'{"a":}', 5),
    (b'{"a":1 "b":2}', 7),
    (b"{1:2}", 1),
    (b"{a:1}", 1),
    (b'{"a":1,}', 7),
    (b"[1]x", 3),
    (b"[1] [2]", 4),
    (b"[1]]", 3),
    (b'{"a":1}}', 7),
    (b"[] x", 3),
    (b"[[]", 3),
    (b"[01]", 2),
    (b"[-01]", 3),
    (b"[.5]", 1),
    (b"[+1]", 1),
    (b"[0x10]", 2),
    (b"[1.5x]", 4),
    (b"[tru]", 1),
    (b"[nul]", 1),
    (b"nul", 0),
    (b"[NaN]", 1),
    (b"[Infinity]", 1),
    (b'["a\\x"]', 3),
    (b'["\\\'"]', 2),
    (b'["\\u12"]', 3),
    (b'["\\uZZZZ"]', 3),
    (b'["\\ud800"]', 2),
    (b'["ab\\udc00"]', 4),
    (b'["\\ud800\\u0041"]', 2),
    (b'["a\x01"]', 3),
    (b'["a\tb"]', 3),
    (b'["a\nb"]', 3),
    (b'["\xff"]', 2),
    (b'["abc', 1),
    (b'{"abc', 1),
    (b"[\\]", 1),
    (b'["a" x]', 5),
    (b"]", 0),
    (b"[}", 1),
    (b"{]", 1),
    (BOM + b"[]", 0),
    (BOM + b"{}", 0),
    (BOM, 0),
]


def expected_line_col(data: bytes, pos: int) -> tuple[int, int]:
    return data.count(b"\n", 0, pos) + 1, pos - data.rfind(b"\n", 0, pos)


@pytest.mark.parametrize(("data", "pos"), POS_CASES, ids=[repr(d) for d, _ in POS_CASES])
def test_decode_error_pos(data: bytes, pos: int) -> None:
    with pytest.raises(qjson.JSONDecodeError) as ei:
        qjson.parse(data)
    e = ei.value
    assert isinstance(e, json.JSONDecodeError) and isinstance(e, ValueError)
    assert e.pos == pos, (e.pos, e.msg)
    assert (e.lineno, e.colno) == expected_line_col(data, pos)
    assert isinstance(e.msg, str) and e.msg
    # pickle-able like json.JSONDecodeError
    import pickle

    e2 = pickle.loads(pickle.dumps(e))
    assert type(e2) is type(e) and e2.pos == e.pos and e2.msg == e.msg


def test_decode_error_messages_say_what_was_expected() -> None:
    def msg(data: bytes) -> str:
        with pytest.raises(qjson.JSONDecodeError) as ei:
            qjson.parse(data)
        return ei.value.msg.lower()

    assert ":" in msg(b'{"a" 1}')
    assert "," in msg(b"[1 2]") and "]" in msg(b"[1 2]")
    assert "," in msg(b'{"a":1 "b":2}') and "}" in msg(b'{"a":1 "b":2}')
    assert "depth" in msg(b"[" * 2000) or "nest" in msg(b"[" * 2000)
    assert "utf-8" in msg(b'["\xff"]')
    assert "surrogate" in msg(b'["\\ud800"]')


def test_lineno_colno_multiline() -> None:
    data = b"[\n  1,\n  2\n  3\n]"
    with pytest.raises(qjson.JSONDecodeError) as ei:
        qjson.parse(data)
    e = ei.value
    assert (e.pos, e.lineno, e.colno) == (13, 4, 3)
    assert str(e).startswith(e.msg)
    assert "line 4 column 3" in str(e)
    # columns are counted in bytes: "é" is two
    data = b'{"\xc3\xa9":\n "\xc3\xa9" x}'
    with pytest.raises(qjson.JSONDecodeError) as ei:
        qjson.parse(data)
    assert (ei.value.pos, ei.value.lineno, ei.value.colno) == (13, 2, 7)
    # an error on the first byte of a line
    data = b'{"a": 1,\n"b": 2,\n}'
    with pytest.raises(qjson.JSONDecodeError) as ei:
        qjson.parse(data)
    assert (ei.value.pos, ei.value.lineno, ei.value.colno) == (17, 3, 1)
    # CRLF: lines are counted at the \n (as json does)
    data = b"[1,\r\n2,\r\n]"
    with pytest.raises(qjson.JSONDecodeError) as ei:
        qjson.parse(data)
    assert (ei.value.pos, ei.value.lineno, ei.value.colno) == (9, 3, 1)


def test_str_input_error_pos_is_utf8_byte_offset() -> None:
    # '["é", x]': the x is char 6 but byte 7 of the UTF-8 encoding.
    with pytest.raises(qjson.JSONDecodeError) as ei:
        qjson.parse('["é", x]')
    assert ei.value.pos == 7
    assert (ei.value.lineno, ei.value.colno) == (1, 8)


# --------------------------------------------------------------------------
# Invalid UTF-8, every class
# --------------------------------------------------------------------------

UTF8_CASES = (
    [
        # overlong encodings
        ("overlong-2-C0", b'["\xc0\x80"]', 2),
        ("overlong-2-C1", b'["\xc1\xbf"]', 2),
        ("overlong-2-slash", b'["a\xc0\xaf"]', 3),
        ("overlong-3", b'["\xe0\x80\x80"]', 2),
        ("overlong-3-max", b'["\xe0\x9f\xbf"]', 2),
        ("overlong-4", b'["\xf0\x80\x80\x80"]', 2),
        ("overlong-4-max", b'["\xf0\x8f\xbf\xbf"]', 2),
        # UTF-8-encoded surrogates
        ("surrogate-D800", b'["\xed\xa0\x80"]', 2),
        ("surrogate-DFFF", b'["\xed\xbf\xbf"]', 2),
        ("surrogate-pair-encoded", b'["\xed\xa0\xbd\xed\xb8\x80"]', 2),
        # above U+10FFFF
        ("above-10FFFF", b'["\xf4\x90\x80\x80"]', 2),
        ("above-10FFFF-F7", b'["\xf7\xbf\xbf\xbf"]', 2),
        # stray continuation bytes
        ("stray-80", b'["\x80"]', 2),
        ("stray-BF", b'["\xbf"]', 2),
        ("stray-mid", b'["ab\x80cd"]', 4),
        ("stray-after-2byte", b'["\xc3\xa9\xa9"]', 4),
        # truncated sequences
        ("truncated-2-of-3-mid", b'["\xe2\x82x"]', 2),
        ("truncated-1-of-2-mid", b'["\xc3x"]', 2),
        ("truncated-3-of-4-end-of-string", b'["\xf0\x9f\x98"]', 2),
        ("truncated-1-of-2-end-of-string", b'["ab\xc3"]', 4),
        ("truncated-at-end-of-input", b"[]\xe2\x82", 2),
        ("truncated-top-level-string", b'"abc\xe2\x82"', 4),
        # in a key
        ("in-key", b'{"\xff": 1}', 2),
        ("in-key-overlong", b'{"k\xc0\x80": 1}', 3),
        # after valid multibyte text
        ("after-valid", b'["\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xff"]', 11),
    ]
    + [(f"byte-{b:02X}", b'["a' + bytes([b]) + b'"]', 3) for b in range(0xF5, 0x100)]
    + [
        (f"byte-{b:02X}-with-tail", b'["' + bytes([b]) + b'\x80\x80\x80"]', 2)
        for b in (0xF5, 0xF8, 0xFC)
    ]
)


@pytest.mark.parametrize(
    ("data", "pos"), [c[1:] for c in UTF8_CASES], ids=[c[0] for c in UTF8_CASES]
)
def test_invalid_utf8_strict(data: bytes, pos: int) -> None:
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")  # the case really is invalid UTF-8
    with pytest.raises(qjson.JSONDecodeError) as ei:
        qjson.parse(data)
    assert ei.value.pos == pos, (ei.value.pos, ei.value.msg)


LAZY_UTF8_CASES = [c for c in UTF8_CASES if c[1].startswith(b'["') and c[1].endswith(b'"]')]


@pytest.mark.parametrize(
    ("data", "pos"), [c[1:] for c in LAZY_UTF8_CASES], ids=[c[0] for c in LAZY_UTF8_CASES]
)
def test_invalid_utf8_in_string_lazy(data: bytes, pos: int) -> None:
    doc = qjson.parse(data, lazy=True)  # structure is fine
    assert doc.len() == 1
    assert doc.type("[0]") == "string"
    assert doc.raw("[0]") == data[1:-1]
    with pytest.raises(qjson.JSONDecodeError) as ei:
        doc.get("[0]")
    assert ei.value.pos == pos
    with pytest.raises(qjson.JSONDecodeError) as ei:
        doc.get_str("[0]")
    assert ei.value.pos == pos


def test_invalid_utf8_outside_strings() -> None:
    for data, pos in [(b"[1]\xff", 3), (b"\xff", 0), (b"[\xc3\xa9]", 1), (b"[1,\x80]", 3)]:
        with pytest.raises(qjson.JSONDecodeError) as ei:
            qjson.parse(data)
        assert ei.value.pos == pos, data


def test_valid_utf8_boundaries_accepted() -> None:
    text = "\u0080\u07ff\u0800\ud7ff\ue000\uffff\U00010000\U0010ffff é€😀"
    data = json.dumps({"k\u00e9": [text]}, ensure_ascii=False).encode()
    doc = qjson.parse(data)
    assert doc.get("kéy[0]", default=None) is None
    assert doc.get_str("ké[0]") == text
    assert doc.get_str("/ké/0") == text
    assert doc.raw("ké[0]") == json.dumps(text, ensure_ascii=False).encode()


# --------------------------------------------------------------------------
# Escapes and surrogates
# --------------------------------------------------------------------------


def test_escapes_decoded() -> None:
    data = b'["\\"\\\\\\/\\b\\f\\n\\r\\t\\u0000\\u00e9\\u20AC\\ud83d\\ude00\\uD83D\\uDE00"]'
    doc = qjson.parse(data)
    assert doc.get("[0]") == json.loads(data)[0] == '"\\/\b\f\n\r\t\x00é€😀😀'
    assert doc.raw("[0]") == data[1:-1]


@pytest.mark.parametrize(
    ("data", "pos"),
    [
        (b'["\\ud800"]', 2),
        (b'["\\udc00"]', 2),
        (b'["\\uDBFF"]', 2),
        (b'["x\\ud800y"]', 3),
        (b'["\\ud800\\ud800"]', 2),
        (b'["\\udc00\\ud800"]', 2),  # inverted pair
        (b'["\\ud83d\\u0041"]', 2),
        (b'["\\ud83d\\n"]', 2),
        (b'["\\ud83d"]', 2),
        (b'["ok", "\\ud83d\\ude00", "\\ude00"]', 24),
    ],
)
def test_lone_surrogate_escape(data: bytes, pos: int) -> None:
    json.loads(data)  # json accepts these (into a str holding a surrogate)
    with pytest.raises(qjson.JSONDecodeError) as ei:
        qjson.parse(data)
    assert ei.value.pos == pos
    # lazy: parse succeeds; reading the string raises a readable error
    doc = qjson.parse(data, lazy=True)
    path = f"[{doc.len() - 1}]"
    assert doc.type(path) == "string"
    with pytest.raises(qjson.JSONDecodeError) as ei:
        doc.get(path)
    assert ei.value.pos == pos
    assert "surrogate" in ei.value.msg.lower()
    with pytest.raises(qjson.JSONDecodeError):
        doc.get_str(path)
    with pytest.raises(qjson.JSONDecodeError):
        list(doc.root)
    # the other values of the document stay readable
    if doc.len() > 1:
        assert doc.get("[0]") == "ok"


def test_lone_surrogate_in_key_lazy() -> None:
    data = b'{"\\udfaa": 0, "ok": 1}'
    with pytest.raises(qjson.JSONDecodeError) as ei:
        qjson.parse(data)
    assert ei.value.pos == 2
    doc = qjson.parse(data, lazy=True)
    with pytest.raises(qjson.JSONDecodeError):
        list(doc.root.keys())


# --------------------------------------------------------------------------
# Input types
# --------------------------------------------------------------------------

INPUT = b'{"k": [1, "two", 3.5, true, null], "\xc3\xa9": "\xe2\x82\xac"}'


@pytest.mark.parametrize(
    "make",
    [bytes, bytearray, memoryview, lambda b: b.decode("utf-8"), lambda b: memoryview(bytearray(b))],
    ids=["bytes", "bytearray", "memoryview", "str", "memoryview-of-bytearray"],
)
def test_input_types(make: object) -> None:
    doc = qjson.parse(make(INPUT))  # type: ignore[operator]
    assert doc.root == json.loads(INPUT)
    assert doc.get_str("k[1]") == "two"
    assert doc.get_str("é") == "€"
    assert doc.raw("é") == b'"\xe2\x82\xac"'
    assert type(doc.raw("k")) is bytes
    assert doc.raw("k") == b'[1, "two", 3.5, true, null]'


def test_non_ascii_str_input() -> None:
    s = '{"ключ": "значение", "emoji": "😀", "list": ["α", "β"], "n": 1}'
    doc = qjson.parse(s)
    assert doc.get("ключ") == "значение"
    assert doc.get("emoji") == "😀"
    assert doc.get("list[-1]") == "β"
    assert doc.get_int("/n") == 1
    assert doc.raw("emoji") == '"😀"'.encode()
    assert doc.raw() == s.encode("utf-8")
    assert doc.root == json.loads(s)


def test_str_with_lone_surrogate_rejected() -> None:
    with pytest.raises(ValueError):  # UnicodeEncodeError or JSONDecodeError
        qjson.parse('["\ud800"]')


def test_memoryview_of_a_slice() -> None:
    buf = b'garbage{"a": [1, 2]}trailing'
    mv = memoryview(buf)[7:20]
    assert bytes(mv) == b'{"a": [1, 2]}'
    doc = qjson.parse(mv)
    assert doc.get("a[1]") == 2
    assert doc.raw() == b'{"a": [1, 2]}'
    assert doc.raw("a") == b"[1, 2]"
    # an error position is relative to the slice
    with pytest.raises(qjson.JSONDecodeError) as ei:
        qjson.parse(memoryview(b"xx[1,]yy")[2:6])
    assert ei.value.pos == 3
    # a slice of a bytearray
    ba = bytearray(b"[[1,2],[3,4]]")
    doc = qjson.parse(memoryview(ba)[1:6])
    assert doc.root == [1, 2]


@pytest.mark.parametrize("bad", [123, None, 1.5, ["[]"], {"a": 1}, object()])
def test_unsupported_input_type(bad: object) -> None:
    with pytest.raises(TypeError):
        qjson.parse(bad)  # type: ignore[arg-type]


def test_parse_options_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        qjson.parse(b"[]", True)  # type: ignore[misc]
    assert qjson.parse(b"[]", lazy=True).len() == 0
    assert qjson.parse(b"[]", max_depth=1).len() == 0


# --------------------------------------------------------------------------
# raw()
# --------------------------------------------------------------------------

RAW_DOC = (
    b' \n{ "s" : "a\\nb\\u00e9" , "i" : -12 , "f" : 1.5e3 , "t" : true , "fa":false,'
    b' "n" : null ,\t"o" : { "k" : [ 1 , 2 ] } , "a" : [ ] , "e" : {} ,'
    b' "big": 123456789012345678901234567890, "neg0": -0.0 }\r\n '
)


@pytest.mark.parametrize(
    ("path", "raw"),
    [
        ("s", b'"a\\nb\\u00e9"'),
        ("i", b"-12"),
        ("f", b"1.5e3"),
        ("t", b"true"),
        ("fa", b"false"),
        ("n", b"null"),
        ("o", b'{ "k" : [ 1 , 2 ] }'),
        ("o.k", b"[ 1 , 2 ]"),
        ("o.k[0]", b"1"),
        ("o.k[-1]", b"2"),
        ("/o/k/1", b"2"),
        ("a", b"[ ]"),
        ("e", b"{}"),
        ("big", b"123456789012345678901234567890"),
        ("neg0", b"-0.0"),
        ("", RAW_DOC.strip()),
    ],
)
def test_raw(path: str, raw: bytes) -> None:
    doc = qjson.parse(RAW_DOC)
    assert doc.raw(path) == raw
    assert type(doc.raw(path)) is bytes
    lazy = qjson.parse(RAW_DOC, lazy=True)
    assert lazy.raw(path) == raw


def test_raw_top_level_scalars() -> None:
    for text in (b'"x"', b"1", b"-1.5e-3", b"true", b"false", b"null", b'""'):
        doc = qjson.parse(b"\t " + text + b" \n")
        assert doc.raw() == text
        assert doc.raw("") == text


# --------------------------------------------------------------------------
# Cursor
# --------------------------------------------------------------------------

CURSOR_DOC = (
    b'{"user": {"name": "ada", "id": 7, "score": 9.5, "admin": false, "tags": ["x", "y"],'
    b' "addr": {"city": "London", "zip": null}}, "list": [{"v": 1}, {"v": 2}, {"v": 3}]}'
)


def test_cursor_getters() -> None:
    doc = qjson.parse(CURSOR_DOC)
    cur = doc.open("user")
    assert isinstance(cur, qjson.Cursor)
    assert cur.get("name") == "ada"
    assert cur.get_str("name") == "ada"
    assert cur.get_int("id") == 7
    assert cur.get_float("id") == 7.0
    assert cur.get_float("score") == 9.5
    assert cur.get_bool("admin") is False
    assert cur.type("addr") == "object"
    assert cur.type("tags") == "array"
    assert cur.type("addr.zip") == "null"
    assert cur.type("") == "object"
    assert cur.len() == 6
    assert cur.len("tags") == 2
    assert cur.raw("tags") == b'["x", "y"]'
    assert cur.raw() == doc.raw("user")
    assert cur.get("tags[-1]") == "y"
    assert cur.get("/tags/0") == "x"  # pointers are relative to the cursor
    assert cur.get("/addr/city") == "London"
    assert cur.get('["addr"]["city"]') == "London"
    assert cur.get() == json.loads(CURSOR_DOC)["user"]
    with pytest.raises(qjson.PathError):
        cur.get("user")  # paths are relative: "user" is not inside user
    with pytest.raises(qjson.PathError):
        cur.get("/user/name")
    with pytest.raises(TypeError):
        cur.get_int("name")
    with pytest.raises(TypeError):
        cur.get_str("id")
    with pytest.raises(TypeError):
        cur.get_bool("addr.zip")
    with pytest.raises(TypeError):
        cur.len("id")
    with pytest.raises(ValueError):
        cur.get("a..b")


def test_cursor_nested_open() -> None:
    doc = qjson.parse(CURSOR_DOC)
    addr = doc.open("user").open("addr")
    assert addr.get_str("city") == "London"
    assert addr.get("zip") is None
    assert addr.raw() == doc.raw("user.addr")
    lst = doc.open("list")
    assert lst.len() == 3
    for i in range(3):
        item = lst.open(f"[{i}]")
        assert item.get_int("v") == i + 1
        assert lst.open(f"/{i}").get_int("v") == i + 1
    assert lst.open("[-1]").get_int("v") == 3
    assert doc.open("/user/tags").get("[1]") == "y"
    with pytest.raises(qjson.PathError):
        lst.open("[3]")
    with pytest.raises(ValueError):
        lst.open("[")


def test_cursor_on_root() -> None:
    doc = qjson.parse(b"[1, [2, 3]]")
    root = doc.open("")
    assert root.len() == 2
    assert root.get("[1][0]") == 2
    assert root.open("[1]").get("[-1]") == 3


def test_cursor_and_views_outlive_doc_and_input() -> None:
    data = b"".join([b'{"a": {"b": {"c": 42, "s": "str\\u00e9"}}, ', b'"l": [1, 2, 3]}'])
    doc = qjson.parse(data)
    cur = doc.open("a")
    inner = cur.open("b")
    view = doc.get("a")
    root = doc.root
    lst = doc.get("l")
    del doc, data
    gc.collect()
    # filler allocations to reuse freed memory if anything was freed
    junk = [bytes(range(256)) * 64 for _ in range(200)]
    assert cur.get_int("b.c") == 42
    assert inner.get_str("s") == "stré"
    assert inner.raw("c") == b"42"
    assert cur.raw() == b'{"b": {"c": 42, "s": "str\\u00e9"}}'
    assert view["b"]["c"] == 42
    assert root["l"] == [1, 2, 3]
    assert list(lst) == [1, 2, 3]
    del cur, view, root
    gc.collect()
    assert inner.get_int("c") == 42
    del junk


def test_cursor_outlives_bytearray_input() -> None:
    data = bytearray(b'{"k": "value", "n": 5}')
    doc = qjson.parse(data)
    cur = doc.open("")
    del doc
    gc.collect()
    del data
    gc.collect()
    assert cur.get_str("k") == "value"
    assert cur.get_int("n") == 5


def test_doc_keeps_memoryview_source_alive() -> None:
    src = bytearray(b'  ["a", {"b": [true]}]  ')
    doc = qjson.parse(memoryview(src)[2:-2])
    del src
    gc.collect()
    assert doc.get_bool("[1].b[0]") is True
    assert doc.raw() == b'["a", {"b": [true]}]'


# --------------------------------------------------------------------------
# Depth
# --------------------------------------------------------------------------


def test_depth_100k_open_brackets_is_an_error() -> None:
    data = b"[" * 100_000
    with pytest.raises(qjson.JSONDecodeError) as ei:
        qjson.parse(data)
    assert ei.value.pos == 1024  # the first bracket past max_depth=1024
    with pytest.raises(qjson.JSONDecodeError):
        qjson.parse(data, lazy=True)
    with pytest.raises(qjson.JSONDecodeError):  # unterminated, not a crash
        qjson.parse(data, max_depth=100_000)
    with pytest.raises(qjson.JSONDecodeError):
        qjson.parse(data, max_depth=200_000)


def test_depth_limit_boundary() -> None:
    ok = b"[" * 1024 + b"]" * 1024
    assert qjson.parse(ok).len() == 1
    too_deep = b"[" * 1025 + b"]" * 1025
    with pytest.raises(qjson.JSONDecodeError) as ei:
        qjson.parse(too_deep)
    assert ei.value.pos == 1024
    with pytest.raises(qjson.JSONDecodeError):
        qjson.parse(too_deep, lazy=True)
    assert qjson.parse(too_deep, max_depth=1025).len() == 1
    with pytest.raises(qjson.JSONDecodeError):
        qjson.parse(b'{"a": {"b": [1]}}', max_depth=2)
    assert qjson.parse(b'{"a": {"b": [1]}}', max_depth=3).get("a.b[0]") == 1
    assert qjson.parse(b"1", max_depth=0).get() == 1


def test_depth_100k_with_high_max_depth_parses() -> None:
    n = 100_000
    data = b"[" * n + b"]" * n
    doc = qjson.parse(data, max_depth=200_000)
    assert doc.len() == 1
    assert doc.type("") == "array"
    deepest = "[0]" * (n - 1)
    assert doc.type(deepest) == "array"
    assert doc.len(deepest) == 0
    assert doc.raw(deepest) == b"[]"
    assert doc.get(deepest) == []
    assert doc.get("/0" * (n - 1)) == []
    with pytest.raises(qjson.PathError):
        doc.get("[0]" * n)
    cur = doc.open("[0]" * (n // 2))
    assert cur.len("[0]" * (n // 2 - 2)) == 1
    # exactly at the limit
    assert qjson.parse(data, max_depth=n).len() == 1
    with pytest.raises(qjson.JSONDecodeError):
        qjson.parse(data, max_depth=n - 1)
    # lazy too
    assert qjson.parse(data, lazy=True, max_depth=200_000).len() == 1


def test_deep_objects() -> None:
    n = 3000
    data = b'{"a":' * n + b"1" + b"}" * n
    with pytest.raises(qjson.JSONDecodeError):
        qjson.parse(data)
    doc = qjson.parse(data, max_depth=n)
    assert doc.get_int(".".join(["a"] * n)) == 1
    assert doc.get_int("/a" * n) == 1


# --------------------------------------------------------------------------
# Empty input, whitespace, BOM
# --------------------------------------------------------------------------


EMPTY_WS_BOM = [
    b"",
    b" ",
    b"\n\n",
    b" \t\r\n",
    BOM,
    BOM + b"{}",
    BOM + b"[1]",
    BOM + b'"x"',
    "\ufeff{}",
    "",
    "  ",
]


@pytest.mark.parametrize("data", EMPTY_WS_BOM)
def test_empty_whitespace_bom_rejected(data: bytes | str) -> None:
    with pytest.raises(qjson.JSONDecodeError) as ei:
        qjson.parse(data)
    raw = data.encode() if isinstance(data, str) else data
    if raw.startswith(BOM):
        assert ei.value.pos == 0
    else:
        assert ei.value.pos == len(raw)  # nothing but whitespace: a value expected at the end


@pytest.mark.parametrize("data", EMPTY_WS_BOM)
def test_empty_whitespace_bom_rejected_lazy(data: bytes | str) -> None:
    raw = data.encode() if isinstance(data, str) else data
    if raw == BOM:
        # A BOM alone is one (bad) scalar token: lazy mode may defer it to the read.
        with pytest.raises(qjson.JSONDecodeError) as ei:
            qjson.parse(data, lazy=True).root  # noqa: B018
    else:
        # Nothing at all, or a BOM before a value: a structure error.
        with pytest.raises(qjson.JSONDecodeError) as ei:
            qjson.parse(data, lazy=True)
    assert 0 <= ei.value.pos <= len(raw)
    if not raw.startswith(BOM):
        assert ei.value.pos == len(raw)


# --------------------------------------------------------------------------
# Lazy mode
# --------------------------------------------------------------------------

STRUCTURE_ERRORS = [
    b"[1,]",
    b'{"a" 1}',
    b"[",
    b"{1:2}",
    b"[1]x",
    b"]",
    b"[}",
    b"{]",
    b'["abc',
    b"[1]]",
    b'{"a":1,}',
    b"[,1]",
    b'["a" x]',
    b'{"a":1 "b":2}',
    b'{"a"}',
    b"[[]",
    b"[1] [2]",
]


@pytest.mark.parametrize("data", STRUCTURE_ERRORS)
def test_lazy_structure_errors_raise_at_parse(data: bytes) -> None:
    with pytest.raises(qjson.JSONDecodeError) as strict_err:
        qjson.parse(data)
    with pytest.raises(qjson.JSONDecodeError) as lazy_err:
        qjson.parse(data, lazy=True)
    assert lazy_err.value.pos == strict_err.value.pos


VALUE_ERRORS = [
    # (input, path of the bad value, strict pos or None when not pinned)
    (b"[01]", "[0]", 2),
    (b"[tru]", "[0]", 1),
    (b"[nul]", "[0]", 1),
    (b"[NaN]", "[0]", 1),
    (b'["a\\x"]', "[0]", 3),
    (b'["\\ud800"]', "[0]", 2),
    (b'["a\x01"]', "[0]", 3),
    (b'["\xff"]', "[0]", 2),
    (b'{"k": "\\u12zz"}', "k", 8),
    (b"[-]", "[0]", None),
    (b"[1.]", "[0]", None),
    (b"[1e]", "[0]", None),
    (b"[.5]", "[0]", 1),
    (b"[+1]", "[0]", 1),
    (b'{"a": 1, "b": 1.2.3}', "b", None),
    (b"tru", "", 0),
    (b"-", "", None),
    # A good token with more after it: the strict parse's error, at the
    # byte after it, in the enclosing container's words.
    (b"[1 2]", "[0]", 3),
    (b'{"a": 1 2}', "a", 8),
    (b"[true x]", "[0]", 6),
    (b"[truex]", "[0]", 5),
    (b'{"a": [[1 ], 2 3], "b": {}}', "a[1]", 15),
    (b'[{"k": null 0}, 1]', "[0].k", 12),
]


@pytest.mark.parametrize(("data", "path", "pos"), VALUE_ERRORS)
def test_lazy_value_errors_raise_at_read(data: bytes, path: str, pos: int | None) -> None:
    with pytest.raises(qjson.JSONDecodeError) as strict_err:
        qjson.parse(data)
    if pos is not None:
        assert strict_err.value.pos == pos
    doc = qjson.parse(data, lazy=True)  # no error yet
    with pytest.raises(qjson.JSONDecodeError) as lazy_err:
        doc.get(path)
    assert lazy_err.value.pos == strict_err.value.pos
    assert isinstance(lazy_err.value, json.JSONDecodeError)
    with pytest.raises(qjson.JSONDecodeError):
        full_walk(doc.root)


def test_lazy_other_values_stay_readable() -> None:
    doc = qjson.parse(b'[1, tru, "ok", 01, {"a": [2]}]', lazy=True)
    assert doc.len() == 5
    assert doc.get("[0]") == 1
    assert doc.get("[2]") == "ok"
    assert doc.get("[4].a[0]") == 2
    assert doc.raw("[1]") == b"tru"
    with pytest.raises(qjson.JSONDecodeError) as ei:
        doc.get("[1]")
    assert ei.value.pos == 4
    with pytest.raises(qjson.JSONDecodeError) as ei:
        doc.get_int("[3]")
    assert ei.value.pos == 16
    with pytest.raises(qjson.JSONDecodeError):
        list(doc.root)


def test_lazy_ambiguous_tokens_never_read_as_valid() -> None:
    # "1 2" may be seen as one bad token (read error) or two values (parse
    # error): either way it must not read as a value, and the error is the
    # strict parse's.
    for data, path in [(b"[1 2]", "[0]"), (b"1 2", ""), (b'{"a": 1 2}', "a")]:
        with pytest.raises(qjson.JSONDecodeError) as strict_err:
            qjson.validate(data)
        with pytest.raises(qjson.JSONDecodeError) as lazy_err:
            doc = qjson.parse(data, lazy=True)
            doc.get(path)
        assert lazy_err.value.pos == strict_err.value.pos, data
        with pytest.raises(qjson.JSONDecodeError):
            full_walk(qjson.parse(data, lazy=True).root)


def test_lazy_valid_document_reads_like_strict() -> None:
    doc = qjson.parse(SAMPLE, lazy=True)
    for path, expected in PATH_CASES:
        assert same(doc.get(path), expected), path


# --------------------------------------------------------------------------
# Keys: duplicates, escapes
# --------------------------------------------------------------------------


def test_duplicate_keys_first_wins() -> None:
    doc = qjson.parse(b'{"a": 1, "b": 2, "a": 3, "o": {"k": "first", "k": "second"}}')
    assert doc.get("a") == 1
    assert doc.get_int("/a") == 1
    assert doc.get('["a"]') == 1
    assert doc.get("o.k") == "first"
    assert doc.root["a"] == 1
    assert doc.get("o")["k"] == "first"
    assert doc.open("o").get("k") == "first"
    assert "a" in doc.root


@pytest.mark.parametrize(
    "data",
    [
        b'{"a": "b", "a": "c"}',
        b'{"a": 1, "b": 2, "a": 1}',
        ("{" + ", ".join([f'"k{i}": {i}' for i in range(40)] + ['"k1": -1']) + "}").encode(),
    ],
    ids=["two", "same-value", "wide"],
)
def test_duplicate_keys_view_is_a_consistent_mapping(data: bytes) -> None:
    """A Mapping has unique keys: the view shows each key once, with the value
    of its first occurrence, and len/iteration/items/keys agree."""
    first: dict = {}
    for k, v in json.loads(data, object_pairs_hook=lambda p: p):
        first.setdefault(k, v)
    view = qjson.parse(data).root
    assert list(view) == list(first)
    assert len(view) == len(first)
    assert list(view.keys()) == list(first)
    assert [(k, v) for k, v in view.items()] == list(first.items())
    assert dict(view) == first
    assert view == first


def test_duplicate_keys_first_wins_in_wide_object() -> None:
    # Wide enough for any per-container key table.
    pairs = [f'"k{i}": {i}' for i in range(100)] + ['"k5": "dup"', '"k99": "dup"']
    doc = qjson.parse(("{" + ", ".join(pairs) + "}").encode())
    assert doc.get("k5") == 5
    assert doc.get("k99") == 99
    assert doc.get("/k5") == 5
    assert doc.root["k5"] == 5
    for i in range(100):
        assert doc.get_int(f"k{i}") == i


def test_escaped_keys_compare_unescaped() -> None:
    doc = qjson.parse(b'{"\\u0061": 1}')
    assert doc.get("a") == 1
    assert list(doc.root) == ["a"]
    assert doc.root == {"a": 1}
    assert "a" in doc.root
    # in a wide object too
    pairs = [f'"k{i}": {i}' for i in range(100)] + ['"\\u006bx": "kx"', '"\\"q\\"": "q"']
    doc = qjson.parse(("{" + ", ".join(pairs) + "}").encode())
    assert doc.get("kx") == "kx"
    assert doc.get('["\\"q\\""]') == "q"
    assert doc.get('/"q"') == "q"
    assert doc.root["kx"] == "kx"
    assert doc.root['"q"'] == "q"
    # a key that is a prefix of another, or differs only after an escape
    doc = qjson.parse(b'{"ab": 1, "a": 2, "a\\u0062c": 3, "a\\\\b": 4}')
    assert doc.get("ab") == 1
    assert doc.get("a") == 2
    assert doc.get("abc") == 3
    assert doc.get("a\\b") == 4
    assert doc.get('["a\\\\b"]') == 4


# --------------------------------------------------------------------------
# Wide and long containers
# --------------------------------------------------------------------------


def test_wide_object_10k_keys() -> None:
    obj = {f"key{i}": (i if i % 3 else f"s{i}") for i in range(10_000)}
    obj["key.dot"] = "dot"
    obj[""] = "empty"
    data = json.dumps(obj).encode()
    doc = qjson.parse(data)
    assert doc.len() == len(obj)
    for k, v in obj.items():
        if k in ("key.dot", ""):
            assert doc.get(f"[{json.dumps(k)}]") == v
            continue
        assert doc.get(k) == v
        assert doc.get(f"/{k}") == v
    root = doc.root
    assert len(root) == len(obj)
    assert list(root) == list(obj)
    assert root == obj
    for k, v in obj.items():
        assert root[k] == v


def test_long_array_10k_elements() -> None:
    arr = [i * 3 if i % 2 else str(i) for i in range(10_000)]
    data = json.dumps(arr).encode()
    doc = qjson.parse(data)
    assert doc.len() == len(arr)
    for i, v in enumerate(arr):
        assert doc.get(f"[{i}]") == v
        assert doc.get(f"/{i}") == v
        assert doc.get(f"[{i - len(arr)}]") == v
    root = doc.root
    assert list(root) == arr
    assert root == arr
    for i in range(len(arr)):
        assert root[i] == arr[i]
    assert root[-1] == arr[-1]


# --------------------------------------------------------------------------
# The Object / Array views
# --------------------------------------------------------------------------

VIEW_DOC = (
    b'{"o": {"x": 1, "y": [1, 2, {"z": null}], "s": "t"}, "a": [3, "b", [], {}, false, 3], "e": {}}'
)
VIEW_PY = json.loads(VIEW_DOC)


def test_object_view_is_a_mutable_mapping() -> None:
    doc = qjson.parse(VIEW_DOC)
    o = doc.get("o")
    assert isinstance(o, qjson.Object)
    assert isinstance(o, collections.abc.Mapping)
    assert isinstance(o, collections.abc.MutableMapping)
    assert o == VIEW_PY["o"]
    assert VIEW_PY["o"] == o
    assert o != {"x": 1}
    assert o != [1]
    assert len(o) == 3
    assert list(o) == ["x", "y", "s"]
    assert list(o.keys()) == ["x", "y", "s"]
    assert list(o.values())[0] == 1 and list(o.values())[1] == [1, 2, {"z": None}]
    assert [k for k, _ in o.items()] == ["x", "y", "s"]
    assert "x" in o and "nope" not in o and 1 not in o
    assert o["x"] == 1
    assert o.get("nope") is None
    assert o.get("nope", 5) == 5
    assert o.get("s") == "t"
    with pytest.raises(KeyError):
        o["nope"]
    assert dict(o) == {"x": 1, "y": o["y"], "s": "t"}
    # nested views
    y = o["y"]
    assert isinstance(y, qjson.Array)
    assert y[2]["z"] is None
    assert isinstance(y[2], qjson.Object)
    # keys in an object view are strings, not paths
    assert doc.get("e") == {}
    assert len(doc.get("e")) == 0
    assert list(doc.get("e")) == []


def test_array_view_is_a_mutable_sequence() -> None:
    doc = qjson.parse(VIEW_DOC)
    a = doc.get("a")
    assert isinstance(a, qjson.Array)
    assert isinstance(a, collections.abc.Sequence)
    assert isinstance(a, collections.abc.MutableSequence)
    assert a == VIEW_PY["a"]
    assert VIEW_PY["a"] == a
    assert a != VIEW_PY["a"][:-1]
    assert len(a) == 6
    assert list(a) == [3, "b", [], {}, False, 3]
    assert a[0] == 3 and a[-1] == 3 and a[-6] == 3
    assert a[4] is False
    with pytest.raises(IndexError):
        a[6]
    with pytest.raises(IndexError):
        a[-7]
    assert "b" in a and 3 in a and "nope" not in a
    assert a.index("b") == 1
    assert a.count(3) == 2
    assert list(reversed(a)) == list(reversed(VIEW_PY["a"]))
    assert isinstance(a[2], qjson.Array) and a[2] == []
    assert isinstance(a[3], qjson.Object) and a[3] == {}


def test_views_compare_with_each_other() -> None:
    d1 = qjson.parse(VIEW_DOC)
    d2 = qjson.parse(json.dumps(VIEW_PY, indent=2))
    assert d1.root == d2.root
    assert d1.get("o.y") == d2.get("o.y")
    assert d1.get("o") != d2.get("a")


def test_root_scalar_and_types() -> None:
    for text, expected in [
        (b"1", 1),
        (b'"s"', "s"),
        (b"true", True),
        (b"null", None),
        (b"2.5", 2.5),
    ]:
        doc = qjson.parse(text)
        assert same(doc.root, expected)
        assert doc.type("") == {int: "number", float: "number", str: "string", bool: "bool"}.get(
            type(expected), "null"
        )
        with pytest.raises(TypeError):
            doc.len()
