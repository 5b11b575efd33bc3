"""qjson.loads: equal to json.loads on every accepted file, JSONDecodeError
(with the right pos / lineno / colno) on every rejected one."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest
import qjson
from conftest import data_files, same

SUITE = "JSONTestSuite/test_parsing"
Y_FILES = data_files(SUITE, "y_*.json")
N_FILES = data_files(SUITE, "n_*.json")
I_FILES = data_files(SUITE, "i_*.json")
EXAMPLES = data_files("jsonexamples", "*.json") + data_files(
    "jsonexamples/small", "*.json", id_prefix="small/"
)


def expected_line_col(data: bytes, pos: int) -> tuple[int, int]:
    lineno = data.count(b"\n", 0, pos) + 1
    return lineno, pos - data.rfind(b"\n", 0, pos)


def error_of(data: object) -> qjson.JSONDecodeError:
    with pytest.raises(qjson.JSONDecodeError) as info:
        qjson.loads(data)
    return info.value


@pytest.mark.parametrize("path", Y_FILES)
def test_y_equals_json(path: Path) -> None:
    data = path.read_bytes()
    assert same(qjson.loads(data), json.loads(data))


@pytest.mark.parametrize("path", EXAMPLES)
def test_jsonexamples_equal_json(path: Path) -> None:
    data = path.read_bytes()
    try:
        expected = json.loads(data)
    except ValueError as e:
        pytest.skip(f"{path.name} is not valid JSON per json.loads ({e})")
    assert same(qjson.loads(data), expected)


@pytest.mark.parametrize("path", N_FILES)
def test_n_rejected(path: Path) -> None:
    data = path.read_bytes()
    err = error_of(data)
    assert isinstance(err, json.JSONDecodeError) and isinstance(err, ValueError)
    assert 0 <= err.pos <= len(data)
    assert (err.lineno, err.colno) == expected_line_col(data, err.pos)
    assert err.doc is data


@pytest.mark.parametrize("path", I_FILES)
def test_i_same_outcome_as_parse(path: Path) -> None:
    data = path.read_bytes()
    try:
        doc = qjson.parse(data)
    except qjson.JSONDecodeError as e:
        assert error_of(data).pos == e.pos
    else:
        assert same(qjson.loads(data), qjson.materialize(doc.root))


# (input, byte offset of the error)
ERRORS: list[tuple[bytes, int]] = [
    (b"", 0),
    (b"   ", 3),
    (b"[1,2", 4),
    (b"[1,2,]", 5),
    (b"[1 2]", 3),
    (b'{"a" 1}', 5),
    (b'{"a":1,}', 7),
    (b"{1:2}", 1),
    (b'{"a":1 "b":2}', 7),
    (b"[01]", 2),
    (b"[1.]", 2),
    (b"[-]", 1),
    (b"[1e+]", 2),
    (b"[tru]", 1),
    (b"[nul]", 1),
    (b'["a\\x"]', 3),
    (b'["\\u12G4"]', 3),
    (b'["\\ud800"]', 2),
    (b'["a\x01"]', 3),
    (b'["\xff"]', 2),
    (b'["\xc0\x80"]', 2),
    (b'["\xed\xa0\x80"]', 2),
    (b"[1] x", 4),
    (b"[1]\n\n  ]", 7),
    (b'{"a":\n  [1,\n   2 3]}', 17),
    (b"\xef\xbb\xbf[1]", 0),
    (b'"abc', 0),
    (b"[1,\n\n\tnull x]", 11),
]


# loads leaves numbers and literals to its builder (checked as they are
# parsed); whichever error comes first must still be the one reported, with
# the message and offset `validate` gives: scalar errors before and after
# string, UTF-8 and grammar errors, deep inside large documents, and
# garbage after valid scalars.
SCALAR_CASES: list[bytes] = [
    b"1 2",
    b"[1x]",
    b"[truex]",
    b"[true x]",
    b'{"a":nul}',
    b'{"a":1 x}',
    b'[1,"\x01"]',
    b'[01,"\x01"]',
    b'["\x01", 01]',
    b'[1,"\\q", 01]',
    b'[01,"\\q"]',
    b'[01, "\xff"]',
    b'["\xff", 01]',
    b"[1e5.2]",
    b"[1.5e]",
    b"[-01]",
    b"[0x1]",
    b"[1,2,3,]",
    b"[1,2 ,3 4]",
    b"[--1]",
    b"[+1]",
    b"[.5]",
    b"[Infinity]",
    b"[1,2]]",
    b"[[1] 2]",
    b"[1, nulll]",
    b"[1, falsey, 01]",
    b"[" + b"1.5," * 50_000 + b"01]",
    b"[" + b"1.5," * 50_000 + b'"a\x01"]',
    b"[" + b"1.5," * 50_000 + b"1.5 1.5]",
    b"[" + b"1.5," * 50_000 + b"1.5]" + b"[",
    b"[" + b"true," * 30_000 + b"tru]",
    b'{"k": [' + b"12345678901234567890123," * 1000 + b"1e]}",
]


@pytest.mark.parametrize("data", SCALAR_CASES, ids=[repr(d)[:40] for d in SCALAR_CASES])
def test_scalar_errors_agree_with_validate(data: bytes) -> None:
    with pytest.raises(qjson.JSONDecodeError) as v:
        qjson.validate(data)
    err = error_of(data)
    assert (err.pos, err.msg) == (v.value.pos, v.value.msg)


def test_valid_scalars_everywhere() -> None:
    values = [
        "0",
        "-0",
        "1",
        "-1.5",
        "1e5",
        "1E-5",
        "-0.0e+0",
        "true",
        "false",
        "null",
        "123456789012345678",
        "1234567890123456789",
        "-9223372036854775808",
        "99999999999999999999",
        "0.1",
        "1.7976931348623157e308",
        "5e-324",
        "1e400",
    ]
    for sep in (",", " ,", ", ", "\n,\n  "):
        doc = "[" + sep.join(values) + "]"
        assert same(qjson.loads(doc), json.loads(doc))
        obj = "{" + sep.join(f'"k{i}": {v} ' for i, v in enumerate(values)) + "}"
        assert same(qjson.loads(obj), json.loads(obj))
    for v in values:
        assert same(qjson.loads(f" {v} "), json.loads(v))


@pytest.mark.parametrize(("data", "pos"), ERRORS, ids=[repr(d)[:40] for d, _ in ERRORS])
def test_error_positions(data: bytes, pos: int) -> None:
    err = error_of(data)
    assert err.pos == pos, (err.pos, err.msg)
    assert (err.lineno, err.colno) == expected_line_col(data, pos)
    assert err.msg and str(err).startswith(err.msg)
    with pytest.raises(qjson.JSONDecodeError) as info:
        qjson.validate(data)
    assert info.value.pos == pos


def test_input_types() -> None:
    text = '{"a": [1, 2.5, "é", null, true, false], "b": {}}'
    expected = json.loads(text)
    raw = text.encode()
    for data in (raw, bytearray(raw), memoryview(raw), text):
        assert same(qjson.loads(data), expected)
    with pytest.raises(TypeError):
        qjson.loads(123)  # type: ignore[arg-type]


def test_scalars_and_numbers() -> None:
    cases = [
        "0",
        "-0",
        "-0.0",
        "1e400",
        "-1e400",
        "1e-400",
        "123456789012345678901234567890",
        "-9223372036854775808",
        "9223372036854775807",
        "9223372036854775808",
        "18446744073709551616",
        "1.5",
        "2.2250738585072014e-308",
        '"x"',
        "true",
        "false",
        "null",
        '  "\\ud83d\\ude00 \\u00e9 \\n\\t\\"\\\\\\/"  ',
    ]
    for text in cases:
        assert same(qjson.loads(text), json.loads(text)), text


def test_duplicate_keys_last_wins() -> None:
    data = b'{"a": 1, "b": 2, "a": 3, "\\u0061": 4}'
    got = qjson.loads(data)
    assert got == json.loads(data) == {"a": 4, "b": 2}
    assert list(got) == ["a", "b"]


def test_keys_cached_correctly() -> None:
    # Many distinct short keys (more than the cache holds), repeated, with
    # escapes and non-ASCII: every key must come back exactly.
    obj = [{f"k{i}": i, f"é{i % 7}": "v", "a\\nb": 0} for i in range(5000)]
    data = json.dumps(obj).encode()
    assert qjson.loads(data) == json.loads(data)
    assert qjson.loads(data) == json.loads(data)  # warm cache


def test_cached_keys_at_the_length_limit() -> None:
    # Keys around the cache's length limit (48 bytes) and the old one (64),
    # sharing prefixes, equal lengths with different bytes, in turns: each
    # comes back exactly, from a cold and a warm cache.
    keys = [("k" * n)[:-1] + c for n in (1, 7, 8, 9, 16, 47, 48, 49, 63, 64, 65) for c in "xy"]
    keys += ["é" * 24, "é" * 23 + "x", "\u00e9" * 8, "a\\nb" * 12]
    obj = [{k: i for i, k in enumerate(keys[j:] + keys[:j])} for j in range(len(keys))]
    data = json.dumps(obj, ensure_ascii=False).encode()
    for _ in range(3):
        got = qjson.loads(data)
        assert got == json.loads(data)
        assert [list(d) for d in got] == [list(d) for d in json.loads(data)]


def test_keys_after_a_learned_order() -> None:
    # Objects of one shape teach the key cache which key follows which (it
    # looks there first); keys of the same length but other bytes in the
    # learnt places, the empty key, an escaped spelling, a changed order
    # and nesting all still come back exactly (the cache is process-wide: warm here).
    learn = b'{"ab":1,"cd":2,"ef":3,"gh":4}'
    variants = [
        b'{"ab":1,"cx":2,"ef":3,"gh":4}',
        b'{"ab":1,"":2,"ef":3}',
        b'{"ab":1,"dc":2,"gh":3,"ef":4}',
        b'{"ab":1,"c\\u0064":2,"cd":5}',
        b'{"ab":1,"cd":{"ab":2,"cd":3,"ef":[{"gh":4}]},"ef":4}',
        b'{"gh":1,"ab":2,"cd":3}',
    ]
    for v in variants:
        data = b"[" + b",".join([learn] * 3 + [v, learn, v]) + b"]"
        for _ in range(2):
            got = qjson.loads(data)
            want = json.loads(data)
            assert got == want, v
            assert [list(d) for d in got] == [list(d) for d in want], v


def test_max_depth() -> None:
    deep = b"[" * 100 + b"]" * 100
    assert qjson.loads(deep, max_depth=100) is not None
    err = error_of_depth(deep, 99)
    assert err.pos == 99
    very = b"[" * 100_000 + b"]" * 100_000
    nested = qjson.loads(very, max_depth=100_000)  # no recursion, no overflow
    depth = 0
    while nested:
        nested = nested[0]
        depth += 1
    assert depth == 99_999
    with pytest.raises(qjson.JSONDecodeError):
        qjson.loads(very)


def error_of_depth(data: bytes, max_depth: int) -> qjson.JSONDecodeError:
    with pytest.raises(qjson.JSONDecodeError) as info:
        qjson.loads(data, max_depth=max_depth)
    assert "depth" in info.value.msg
    return info.value


def test_large_containers_and_strings() -> None:
    obj = {"s": "x" * 1_000_000, "l": list(range(100_000)), "e": ["a\\" * 1000]}
    data = json.dumps(obj).encode()
    assert qjson.loads(data) == obj


# loads builds from the token index (stage 1 marks where each scalar
# starts) and falls back to the exact structural index when the token walk
# gives up: on any error, and on nesting deeper than its inline stack (256).
# Wrapping a document in 300 arrays forces the second path: both must give
# the same objects and the same errors.
DEEP = 300


def wrapped(data: bytes) -> bytes:
    return b"[" * DEEP + data + b"]" * DEEP


def unwrap(v: object) -> object:
    for _ in range(DEEP):
        assert isinstance(v, list) and len(v) == 1
        v = v[0]
    return v


BOTH_PATHS: list[bytes] = [
    b'{"a": [1, -2.5e3, "x\\n\\u00e9", true, false, null, {}, []], "b": {"c": "d"}}',
    b"[0,1e5,1E+5,1.0e-5,-0,123456789012345678901234567890, 0.1, 5e-324]",
    '["é", "日本", "😀", "\\ud83d\\ude00", {"ключ": "значение"}]'.encode(),
    b'[ 1 , "x" , [ ] , { } , {"k" :\n -1 } ]',
    b"[" + b"1.5, 2, true, null, " * 200 + b"0]",
]


@pytest.mark.parametrize("data", BOTH_PATHS + EXAMPLES[:4])
def test_token_and_exact_paths_agree(data: bytes | Path) -> None:
    if isinstance(data, Path):
        data = data.read_bytes()
    fast = qjson.loads(data)
    assert same(fast, json.loads(data))
    assert same(unwrap(qjson.loads(wrapped(data), max_depth=2 * DEEP)), fast)


@pytest.mark.parametrize("data", SCALAR_CASES[:27] + [d for d, _ in ERRORS[2:]])
def test_token_and_exact_paths_report_the_same_error(data: bytes) -> None:
    for doc in (data, wrapped(data)):
        with pytest.raises(qjson.JSONDecodeError) as v:
            qjson.validate(doc, max_depth=2 * DEEP)
        with pytest.raises(qjson.JSONDecodeError) as info:
            qjson.loads(doc, max_depth=2 * DEEP)
        assert (info.value.pos, info.value.msg) == (v.value.pos, v.value.msg)


# Non-ASCII strings are decoded straight into a str of the narrowest width
# (1, 2 or 4 bytes per character), which CPython requires: equal strings of
# different widths would compare unequal.
WIDTH_CASES = [
    "é",
    "ÿ",
    "\u0080",
    "aé",
    "éa",
    "Ā",
    "\u07ff",
    "\u0800",
    "日本語",
    "Леонард Никитин",
    "\uffff",
    "\U00010000",
    "😀",
    "a😀b",
    "é日😀",
    "\U0010ffff",
    "x" * 100 + "é" + "y" * 50,
    "é" * 1000,
    "日" * 500 + "a",
    "\u00e9\\n",
    "tab\there",
]


@pytest.mark.parametrize("text", WIDTH_CASES, ids=[repr(t)[:20] for t in WIDTH_CASES])
def test_non_ascii_strings_have_the_narrowest_width(text: str) -> None:
    for doc in (
        json.dumps(text, ensure_ascii=False),
        json.dumps(text),
        json.dumps({text: [text]}, ensure_ascii=False),
    ):
        got = qjson.loads(doc.encode())
        want = json.loads(doc)
        assert got == want
        s = got if isinstance(got, str) else next(iter(got))
        assert s == text and hash(s) == hash(text)
        # sys.getsizeof reveals the width (1, 2 or 4 bytes per character,
        # plus the NUL). (Not compared with `text` itself: a str that was
        # ever encoded to UTF-8 also counts that cached copy.)
        kind = max(1 if ord(c) < 256 else 2 if ord(c) < 65536 else 4 for c in text)
        header = sys.getsizeof(("a" if text.isascii() else "é") * 10) - 11
        assert sys.getsizeof(s) == header + (len(text) + 1) * kind


def test_floats_are_correctly_rounded() -> None:
    """Every shape of decimal the token path reads (short ones at once, long
    ones by the float parser, the rest through the general path) against
    Python's float(), which rounds correctly."""
    import random

    rng = random.Random(11)
    texts = []
    for _ in range(20_000):
        int_digits = rng.choice([1, 1, 2, 3, 8, 9, 12, 17])
        frac_digits = rng.choice([1, 2, 6, 8, 9, 12, 14, 15, 16, 17, 20, 25])
        head = str(rng.randrange(1, 10)) + "".join(
            rng.choice("0123456789") for _ in range(int_digits - 1)
        )
        if rng.random() < 0.2:
            head = "0"
        frac = "".join(rng.choice("0123456789") for _ in range(frac_digits))
        sign = "-" if rng.random() < 0.5 else ""
        texts.append(f"{sign}{head}.{frac}")
    texts += [repr(rng.uniform(-1e6, 1e6)) for _ in range(5_000)]
    texts += [
        "0.1",
        "-0.0",
        "0.0000000000000000001",
        "9007199254740993.0",
        "-65.613616999999977",
        "1.7976931348623157",
        "4.9406564584124654",
        "2.2250738585072011",
        "123456789.5",
    ]
    for sep in (",", ", ", " ,\n"):
        doc = "[" + sep.join(texts) + "]"
        got = qjson.loads(doc.encode())
        want = [float(t) for t in texts]
        assert len(got) == len(want)
        for t, g, w in zip(texts, got, want):
            assert g == w and str(g) == str(w), t


def test_reused_buffers_between_calls() -> None:
    """The index vectors and builder stack kept between calls on a thread
    change no result: large and small, deep and flat, valid and invalid
    documents in turns."""
    big = json.dumps([{"k": i, "v": [i, "s\\n", None]} for i in range(20_000)]).encode()
    deep = b"[" * 3000 + b"]" * 3000
    docs: list[bytes] = [
        big,
        b'{"a":[1,2,{"b":null}],"c":"\\u00e9"}',
        deep,
        b"[1,2,",
        b"[]",
        big[:-1],
        b'["x", 1.5, true]',
        b"[" * 300 + b"1" + b"]" * 300,
    ]
    for _ in range(3):
        for d in docs:
            if d is deep:
                nested, depth = qjson.loads(d, max_depth=5000), 0
                while nested:
                    nested, depth = nested[0], depth + 1
                assert depth == 2999
                continue
            try:
                want = json.loads(d)
            except ValueError:
                with pytest.raises(qjson.JSONDecodeError) as info:
                    qjson.loads(d, max_depth=5000)
                assert info.value.pos == error_of(d).pos
                continue
            assert same(qjson.loads(d, max_depth=5000), want)
            qjson.validate(d, max_depth=5000)


def test_reentrant_loads_from_a_gc_callback() -> None:
    """A collection during `loads` (its allocations trigger them) may run
    Python code that calls `loads` again: the inner call must not share the
    outer one's buffers."""
    import gc

    inner = b'{"inner": [1, 2, 3, "x"], "more": {"a": [true, null]}}'
    seen: list[object] = []

    def callback(phase: str, info: dict) -> None:
        if phase == "start" and len(seen) < 1000:
            seen.append(qjson.loads(inner))
            qjson.validate(inner)

    doc = json.dumps([{"a": [i, {"b": "c"}]} for i in range(500)]).encode()
    old = gc.get_threshold()
    gc.callbacks.append(callback)
    gc.set_threshold(10)
    try:
        for _ in range(20):
            assert qjson.loads(doc) == json.loads(doc)
    finally:
        gc.set_threshold(*old)
        gc.callbacks.remove(callback)
    assert seen, "no collection ran during the test"
    assert all(x == json.loads(inner) for x in seen)


@pytest.mark.parametrize("pad", [0, 1, 7, 8, 20])
def test_literals_fast_and_near_the_end(pad: int) -> None:
    """Literals read 8 bytes at a time (and the byte-wise path in the last
    7 bytes of input): every near miss is rejected where validate says, and
    every literal followed by whitespace or a delimiter is read."""
    words = ["true", "null", "false", "tru", "nul", "fals", "truee", "nulll", "falsey", "True"]
    ends = ["", " ", "\n", ",1", "x", "]", "}", '"a"', "\t ,2"]
    tail = " " * pad
    for w in words:
        for e in ends:
            for doc in (f"[{w}{e}]{tail}", f'{{"k":{w}{e}}}{tail}', f"{w}{e}{tail}"):
                data = doc.encode()
                try:
                    want = json.loads(data)
                except ValueError:
                    assert error_of(data).pos == validate_error(data).pos, doc
                    continue
                assert same(qjson.loads(data), want), doc


def validate_error(data: bytes) -> qjson.JSONDecodeError:
    with pytest.raises(qjson.JSONDecodeError) as info:
        qjson.validate(data)
    return info.value


def test_unclosed_containers_after_a_larger_document() -> None:
    # A valid document leaves the thread's spare tables with room; an
    # invalid one that opens more containers than a valid document of its
    # size could must still be an error (the table's growth once subtracted
    # past zero: a panic).
    for n in range(1, 40):
        valid = "[" * n + "]" * n
        for m in range(1, 90):
            assert qjson.loads(valid) == json.loads(valid)
            bad = "[" * m + '"a" 1'
            with pytest.raises(qjson.JSONDecodeError):
                qjson.loads(bad)
            with pytest.raises(qjson.JSONDecodeError):
                qjson.parse(bad)


@pytest.mark.parametrize("seed", range(4))
def test_ascii_strings_with_short_escapes(seed: int) -> None:
    """ASCII strings whose escapes are all two bytes long are unescaped by
    loads_many straight into their str from stage 1's escape offsets
    (builder.rs, ascii_escaped): escapes first, last, back to back, between runs of every
    length around the 8- and 16-byte copy steps, an escaped backslash before
    a `u`, keys and values, beside strings with a \\u escape (the other
    path); loads and loads_many must give what json.loads gives."""
    rng = random.Random(seed)
    escapes = ['\\"', "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\\\\u0041"]
    lines = []
    for i in range(300):
        parts = []
        for _ in range(rng.randint(1, 6)):
            parts.append("x" * rng.choice([0, 1, 3, 7, 8, 9, 15, 16, 17, 31, 40, 100]))
            parts.append(rng.choice(escapes))
        if i % 3 == 0:
            parts.append("x" * rng.randint(0, 20))
        body = "".join(parts)
        if i % 10 == 0:
            body += "\\u00e9"  # one `\u` escape: new_str_escapes (ASCII input)
        short = rng.choice(escapes) + "ab"  # a short value (shared by loads_many)
        lines.append(f'{{"k{body}": "{body}", "s": ["{body}", "{short}"]}}'.encode())
    data = b"\n".join(lines)
    want = [json.loads(line) for line in lines]
    assert qjson.loads_many(data) == want
    for line, w in zip(lines, want):
        assert qjson.loads(line) == w
    assert qjson.loads(b"[" + b",".join(lines) + b"]") == want


def _escaped_body(rng: random.Random) -> str:
    """A JSON string body (as it appears between the quotes) mixing plain
    runs of every width and length around the 8- and 16-byte steps with
    escapes of every kind, `\\u` ones to each width and surrogate pairs,
    back to back or first or last."""
    runs = ["", "x", "abc", "x" * 7, "y" * 8, "z" * 9, "w" * 16, "v" * 17, "é", "ññ", "日本", "😀"]
    escapes = ['\\"', "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\\u0041", "\\u007f"]
    escapes += ["\\u00e9", "\\u00ff", "\\u0100", "\\u65e5", "\\uffff", "\\ud83d\\ude0b"]
    escapes += ["\\u0000", "\\\\u00e9", "\\\\\\u00e9"]
    parts = []
    for _ in range(rng.randint(1, 8)):
        parts.append(rng.choice(runs) * rng.choice([1, 1, 2, 5]))
        parts.append(rng.choice(escapes) * rng.choice([1, 1, 3]))
    if rng.random() < 0.5:
        parts.append(rng.choice(runs))
    return "".join(parts)


@pytest.mark.parametrize("seed", range(6))
def test_escaped_strings_from_escape_offsets(seed: int) -> None:
    """loads writes every escaped string straight into its str from stage
    1's escape offsets (objects.rs, new_str_escapes): each escape read
    once, the plain runs copied (ASCII) or decoded, the str made at its
    final length and narrowest width. Keys and values, in an ASCII input
    and in one with non-ASCII bytes elsewhere (unescaped, then counted);
    the same as json.loads, width included."""
    rng = random.Random(seed)
    bodies = [_escaped_body(rng) for _ in range(200)]
    for i, body in enumerate(bodies):
        want = json.loads(f'"{body}"')
        docs = [f'"{body}"', f'{{"k{body}": ["{body}", 1]}}']
        if body.isascii():
            docs.append(f'["é", "{body}"]')  # a non-ASCII input
        for doc in docs:
            got = qjson.loads(doc.encode())
            assert got == json.loads(doc), (i, doc)
            s = (
                got
                if isinstance(got, str)
                else (got[1] if isinstance(got, list) else next(iter(got)))
            )
            if isinstance(got, dict):
                assert s == "k" + want
                assert got[s][0] == want
                continue
            assert s == want
            kind = max((1 if ord(c) < 256 else 2 if ord(c) < 65536 else 4 for c in want), default=1)
            header = sys.getsizeof(("a" if want.isascii() else "é") * 10) - 11
            assert sys.getsizeof(s) == header + (len(want) + 1) * kind, (i, doc)
            assert sys.getrefcount(s) == 3  # `got` or its list, `s`, the argument
    # One document holding them all (many escaped strings, one index).
    doc = json.dumps(bodies)  # bodies as raw text: re-escaped once more
    assert qjson.loads(doc) == json.loads(doc)
    doc = "[" + ", ".join(f'"{b}"' for b in bodies) + "]"
    assert qjson.loads(doc) == json.loads(doc)
    assert qjson.loads(doc.encode("utf-8")) == [json.loads(f'"{b}"') for b in bodies]


def test_escaped_strings_released_when_a_later_scalar_fails() -> None:
    """Escaped strings built before a number fails its check (the builder
    stops, the strict path reports the error) are all released: no memory
    is kept across many failing calls, and the error has its offset."""
    import tracemalloc

    doc = '{"a\\u00e9": ["x\\u65e5y\\n", "\\ud83d\\ude0b\\"", "\\u00e9\\t"], "b": [1, 2, 01]}'
    pos = doc.encode().index(b"01") + 1  # the digit after a leading zero (a byte offset)
    for _ in range(50):
        with pytest.raises(qjson.JSONDecodeError) as info:
            qjson.loads(doc)
    assert info.value.pos == pos
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(2000):
            with pytest.raises(qjson.JSONDecodeError):
                qjson.loads(doc)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 20_000, grown  # four strings a call leaked would be > 200 KB


@pytest.mark.parametrize(
    ("doc", "pos"),
    [
        ('["\\u00e9\\x"]', 8),
        ('["ab\\u65e5\\u12"]', 11),
        ('{"\\u00e9": "\\ud83d\\u0041"}', 12),
        ('["é\\n", "\\/\\q"]', 12),
    ],
)
def test_bad_escapes_after_good_ones(doc: str, pos: int) -> None:
    """A bad escape after good ones is reported at its own offset (in
    bytes: the escaped byte, or the `\\u`'s first bad hex digit or
    lone surrogate), before any string is built."""
    err = error_of(doc)
    assert err.pos == pos, (err.pos, err.msg)


@pytest.mark.parametrize(
    "body",
    [
        "x" * 100 + "\\u2019" + "y" * 50,  # sparse: decoded straight into the str
        "\\u2019" + "x" * 200,
        "é" * 40 + "\\n" + "\\u00e9" + "日" * 30,
        "\\u540d\\u524d:\\u524d\\u7530\\n\\ud83d\\ude0b\\u2728",  # dense: the u32 buffer
        "\\u00e9\\u00ff\\u0041" * 20,
        "\\u00e9" * 3 + "x" * 48,
        "ab\\u00e9" * 30 + "é" * 5 + "\\ud83d\\ude0b",
        "\\n\\t\\u0041" * 10 + "\\u0100",
        "x" * 100 + "\\u65e5" + "y" * 50,  # sparse, two bytes a character
        "x" * 100 + "\\ud83d\\ude0b" + "y" * 50 + "\\u00e9",  # sparse, four bytes
        "\\u00e9" * 40 + "\\n" + "\\u00e9" + "\\u65e5" * 30,  # dense, ASCII input
    ],
)
def test_escaped_strings_sparse_and_dense(body: str) -> None:
    """Escaped strings beyond ASCII take the one-pass u32 writer when they
    hold at least one escape per 16 bytes, else the writer over recorded
    escapes: both give json.loads' str at the narrowest width, after
    strings of other widths (the u32 buffer is reused, never cleared).
    Those writers serve ASCII inputs; a body with literal non-ASCII text
    makes the whole input non-ASCII (unescaped, then counted)."""
    want = json.loads(f'"{body}"')
    wide = "\\u65e5" * 300  # dense escapes first: the u32 buffer is in use before
    doc = f'["{wide}", "\\ud83d\\ude0b" , "{body}", {{"{body}": 1}}]'
    got = qjson.loads(doc)
    assert got == json.loads(doc)
    s = got[2]
    kind = max(1 if ord(c) < 256 else 2 if ord(c) < 65536 else 4 for c in want)
    header = sys.getsizeof("é" * 10) - 11
    assert s == want and sys.getsizeof(s) == header + (len(want) + 1) * kind
