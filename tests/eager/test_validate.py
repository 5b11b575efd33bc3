"""qjson.validate: builds nothing, and raises exactly where loads raises."""

from __future__ import annotations

from pathlib import Path

import pytest
import qjson
from conftest import data_files

SUITE = "JSONTestSuite/test_parsing"
FILES = (
    data_files(SUITE, "*.json")
    + data_files("jsonexamples", "*.json", id_prefix="ex/")
    + data_files("jsonexamples/small", "*.json", id_prefix="ex/small/")
)


def outcome(f: object, data: bytes) -> object:
    try:
        f(data)
    except qjson.JSONDecodeError as e:
        return ("error", e.pos, e.lineno, e.colno, e.msg)
    return "ok"


@pytest.mark.parametrize("path", FILES)
def test_validate_agrees_with_loads(path: Path) -> None:
    data = path.read_bytes()
    got = outcome(qjson.validate, data)
    assert got == outcome(qjson.loads, data)
    if path.name.startswith("y_"):
        assert got == "ok"
    if path.name.startswith("n_"):
        assert got != "ok"


def test_returns_none_for_every_input_type() -> None:
    raw = b'{"a": [1, 2, {"b": null}]}'
    for data in (raw, bytearray(raw), memoryview(raw), raw.decode()):
        assert qjson.validate(data) is None


def test_large_input_with_error_at_the_end() -> None:
    data = b"[" + b"1," * 100_000 + b"]"
    with pytest.raises(qjson.JSONDecodeError) as info:
        qjson.validate(data)
    assert info.value.pos == len(data) - 1


def test_max_depth() -> None:
    data = b"[" * 50 + b"]" * 50
    assert qjson.validate(data, max_depth=50) is None
    with pytest.raises(qjson.JSONDecodeError):
        qjson.validate(data, max_depth=49)


# Arrays of scalars take a shortcut in stage 2 (the value after a comma is
# checked where the comma is read); the outcomes, strict and lazy, are the
# ones the general path gives (recorded from it; the strict offsets are
# json's).
ARRAY_GAPS: list[tuple[bytes, tuple[int, str] | None, tuple[int, str] | None]] = [
    (b"[1,2x]", (4, "Invalid number"), None),
    (b"[1, 2 x]", (6, "Expecting ',' or ']' in array"), None),
    (b'[1,\n 2"a"]', (6, "Expecting ',' or ']' in array"), (6, "Expecting ',' or ']' in array")),
    (b"[1,{}2]", (5, "Expecting ',' or ']' in array"), (5, "Expecting ',' or ']' in array")),
    (b"[1,,2]", (3, "Expecting value"), (3, "Expecting value")),
    (b"[1, ]", (4, "Expecting value"), (4, "Expecting value")),
    (b"[1,2 3]", (5, "Expecting ',' or ']' in array"), None),
    (b"[1,\t-]", (4, "Invalid number"), None),
    (b"[1,  01]", (6, "Invalid number"), None),
    (b"[1,true1]", (7, "Expecting ',' or ']' in array"), None),
    (b"[1,[2]3]", (6, "Expecting ',' or ']' in array"), (6, "Expecting ',' or ']' in array")),
    (b"[1,2", (4, "Unexpected end of input"), (4, "Unexpected end of input")),
    (b"[1,2,", (5, "Unexpected end of input"), (5, "Unexpected end of input")),
    (b"[1, 2 ,]", (7, "Expecting value"), (7, "Expecting value")),
    (b'[1,"a" 2]', (7, "Expecting ',' or ']' in array"), (7, "Expecting ',' or ']' in array")),
    (b"[0,\n\n  1.5e3 ,\n 2]", None, None),
    (b"[1,nul]", (3, "Expecting value: invalid literal"), None),
]


@pytest.mark.parametrize(
    ("data", "strict", "lazy"), ARRAY_GAPS, ids=[repr(d) for d, _, _ in ARRAY_GAPS]
)
def test_array_scalar_gaps(
    data: bytes, strict: tuple[int, str] | None, lazy: tuple[int, str] | None
) -> None:
    def outcome(f: object) -> tuple[int, str] | None:
        try:
            f()  # type: ignore[operator]
        except qjson.JSONDecodeError as e:
            return (e.pos, e.msg)
        return None

    assert outcome(lambda: qjson.validate(data)) == strict
    assert outcome(lambda: qjson.parse(data)) == strict
    assert outcome(lambda: qjson.parse(data, lazy=True)) == lazy
    loads = outcome(lambda: qjson.loads(data))
    assert loads == strict
