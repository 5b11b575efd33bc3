"""Scalars read from a document (getters, views, `value`): integers take a
short path (up to 19 digits within i64, read straight from the input; loads
reads them in one pass too) and ASCII
strings a copy; both must agree with `json.loads` whatever ends the token,
and a lazy document must still report a malformed value when it is read.
"""

from __future__ import annotations

import json

import pytest
import qjson

NUMBERS = [
    "0",
    "-0",
    "7",
    "-7",
    "10",
    "12345",
    "-12345",
    "99999999999999999",
    "999999999999999999",
    "-999999999999999999",
    "1000000000000000000",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "9223372036854775806",
    "-9223372036854775807",
    "-9223372036854775809",
    "9999999999999999999",
    "-9999999999999999999",
    "10000000000000000",
    "-10000000000000000",
    "1234567890123456789",
    "-1000000000000000000",
    "123456789012345678901234567890",
    "505874924095815681",
    "1.5",
    "-0.0",
    "1e5",
    "1E+2",
    "0.1e-3",
    "12.0",
]

# What may follow a value: the next member or element, the closer, whitespace.
SHAPES = [
    ("[{}]", "[0]"),
    ("[{}, 1]", "[0]"),
    ("[1,{}]", "[1]"),
    ('{{"a":{}}}', "a"),
    ('{{"a": {} }}', "a"),
    ('{{"a":{},"b":2}}', "a"),
    ('{{\n  "a": {}\n}}', "a"),
    ('{{"a":{}\t,"b":2}}', "a"),
    ('{{"a":{}\r\n}}', "a"),
    ("{}", ""),
    (" {} ", ""),
]


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("text", NUMBERS)
def test_numbers_agree_with_json(text: str, lazy: bool) -> None:
    for shape, path in SHAPES:
        data = shape.format(text).encode()
        want = json.loads(data)
        for step in [p for p in path.replace("[", ".[").split(".") if p]:
            want = want[int(step[1:-1])] if step.startswith("[") else want[step]
        loaded = qjson.loads(data)
        assert repr(loaded) == repr(json.loads(data)), data  # types too: 1 == 1.0
        doc = qjson.parse(data, lazy=lazy)
        got = doc.get(path)
        assert got == want and type(got) is type(want), (data, got)
        if isinstance(want, int):
            assert doc.get_int(path) == want
            assert doc.open(path).value == want
        assert doc.get_float(path) == float(want)
        if path:
            parent = doc.root
            for step in [p for p in path.replace("[", ".[").split(".") if p]:
                parent = parent[int(step[1:-1])] if step.startswith("[") else parent[step]
            assert parent == want and type(parent) is type(want)


@pytest.mark.parametrize(
    "data",
    [b"[01]", b"[-]", b"[-01]", b"[1x]", b"[12 x]", b'{"a": 1 2}', b"[--1]", b"[0x1]", b"[1.]"],
)
def test_malformed_numbers_in_lazy_documents_raise_when_read(data: bytes) -> None:
    with pytest.raises(qjson.JSONDecodeError):
        qjson.validate(data)
    try:
        doc = qjson.parse(data, lazy=True)
    except qjson.JSONDecodeError:
        return  # the structure check already refused it
    path = "a" if data.startswith(b"{") else "[0]"
    with pytest.raises(qjson.JSONDecodeError):
        doc.get(path)
    with pytest.raises(qjson.JSONDecodeError):
        doc.root["a" if path == "a" else 0]


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize(
    "value",
    ["", "a", "login", "x" * 100, "é", "naïve café", "日本語", "emoji \U0001f600", "\x7f", "a\nb"],
)
def test_strings_agree_with_json(value: str, lazy: bool) -> None:
    for ensure_ascii in (False, True):
        data = json.dumps({"s": value, "l": [value]}, ensure_ascii=ensure_ascii).encode()
        doc = qjson.parse(data, lazy=lazy)
        for got in (
            doc.get("s"),
            doc.get_str("s"),
            doc.get("l[0]"),
            doc.root["s"],
            doc.root["l"][0],
        ):
            assert got == value and type(got) is str
            # A str made in place must be a well-formed, hashable str.
            assert hash(got) == hash(value)
            assert got.isascii() == value.isascii()


# Around the 16 bytes of the quick string read, with and without an escape
# or a byte it must leave to the full decoder.
QUICK_EDGE = [
    "x" * 15,
    "x" * 16,
    "x" * 17,
    "abcdefghijklmnop",
    'a"b',
    "a\\b",
    "a/b",
    "\u00e9" * 8,
    "x" * 15 + "\u00e9",
    "x" * 14 + "\t",
    "~" * 16,
]


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("value", QUICK_EDGE)
def test_short_strings_agree_with_json(value: str, lazy: bool) -> None:
    for ensure_ascii in (False, True):
        data = json.dumps({"s": value, "n": 12}, ensure_ascii=ensure_ascii).encode()
        doc = qjson.parse(data, lazy=lazy)
        for got in (doc.get("s"), doc.get_str("s"), doc.root["s"], doc.root.get("s")):
            assert got == value and type(got) is str
        # The getter of the other type still refuses the value.
        with pytest.raises(TypeError):
            doc.get_int("s")
        with pytest.raises(TypeError):
            doc.get_str("n")


@pytest.mark.parametrize("raw", [b"ab\x01cd", b"\x1f", b"abcdefghijklmno\x00", b"a\x7fb"])
def test_raw_control_bytes_in_lazy_strings_raise_when_read(raw: bytes) -> None:
    data = b'{"s":"' + raw + b'","t":1}'
    try:
        want: object = json.loads(data)["s"]
    except json.JSONDecodeError:
        want = None
    doc = qjson.parse(data, lazy=True)
    if want is None:
        with pytest.raises(qjson.JSONDecodeError):
            doc.get("s")
        with pytest.raises(qjson.JSONDecodeError):
            doc.root["s"]
    else:
        assert doc.get("s") == want == doc.root["s"]
