"""qjson.loads: equal to json.loads on every accepted file, JSONDecodeError
(with the right pos / lineno / colno) on every rejected one."""

from __future__ import annotations

import json
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
    (b"[1.]", 3),
    (b"[-]", 2),
    (b"[1e+]", 4),
    (b"[tru]", 1),
    (b"[nul]", 1),
    (b'["a\\x"]', 3),
    (b'["\\u12G4"]', 2),
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
