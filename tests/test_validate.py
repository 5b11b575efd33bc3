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
