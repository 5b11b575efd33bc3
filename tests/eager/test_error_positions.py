"""Where JSONDecodeError points: the first error in the input, at json's offset.

Every strict entry point (``loads``, ``validate``, ``parse``, ``decode``)
reports the error a left-to-right parser meets first, with ``pos`` /
``lineno`` / ``colno`` equal to ``json.loads``'s (counted in bytes of the
UTF-8 input). The differential test below holds qjson to that on every
JSONTestSuite ``n_`` file and on a few hundred broken documents made from
valid ones, except in the classes where json does not report an error there
at all (it accepts NaN, Infinity and lone surrogate escapes, decodes bytes
before parsing, and raises RecursionError on deep nesting).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import pytest
import qjson
from conftest import DATA_DIR, data_path

STRICT: dict[str, Callable[[Any], object]] = {
    "loads": qjson.loads,
    "validate": qjson.validate,
    "parse": qjson.parse,
    "decode": qjson.decode,
}


def error_of(f: Callable[[Any], object], data: bytes | str) -> qjson.JSONDecodeError:
    with pytest.raises(qjson.JSONDecodeError) as info:
        f(data)
    return info.value


def line_col(data: bytes, pos: int) -> tuple[int, int]:
    """json's lineno / colno formula, on bytes."""
    return data.count(b"\n", 0, pos) + 1, pos - data.rfind(b"\n", 0, pos)


# The first error comes before an unterminated string or a stray backslash
# later in the input (stage 1 finds those over the whole input first).
# (input, json's offset, a word of the message)
FIRST_ERROR: list[tuple[str, int, str]] = [
    ('{"d: "qwe"}', 6, "':'"),
    ("[x]" + " " * 10000 + '"', 1, "value"),
    ('["\\x"] \\', 2, "escape"),
    ('["\x0ba"\\f]', 2, "control"),
    ('["\\{["\\{["\\{', 2, "escape"),
    ('[1 "a', 3, "','"),
    ('{"a" "b', 5, "':'"),
    ("[1 \\", 3, "','"),
    ('{"a" \\', 5, "':'"),
    ("{\\", 1, "property name"),
    ("[\\", 1, "value"),
    ("1 \\", 2, "Extra data"),
    ("[1] \\", 4, "Extra data"),
    ('[1] "a', 4, "Extra data"),
    ('"a\nb', 2, "control"),
    ('"a\\qb', 2, "escape"),
    ('[1,"\\u12', 5, "\\u"),
    ('"abc\\', 0, "Unterminated"),
    ('["abc', 1, "Unterminated"),
    ('{"a": 1, "b', 9, "Unterminated"),
]


@pytest.mark.parametrize(
    ("text", "pos", "word"), FIRST_ERROR, ids=[repr(t)[:30] for t, _, _ in FIRST_ERROR]
)
@pytest.mark.parametrize("entry", list(STRICT))
def test_first_error_is_reported(entry: str, text: str, pos: int, word: str) -> None:
    with pytest.raises(json.JSONDecodeError) as j:
        json.loads(text)
    assert j.value.pos == pos  # the table is json's
    for data in (text, text.encode()):
        e = error_of(STRICT[entry], data)
        assert (e.pos, e.lineno, e.colno) == (pos, j.value.lineno, j.value.colno), e.msg
        assert word in e.msg


def test_lazy_parse_reports_structure_errors_first() -> None:
    # Lazy parsing checks structure only; a structural error before the
    # unterminated string still wins, a bad literal does not.
    e = error_of(lambda d: qjson.parse(d, lazy=True), '{"d: "qwe"}')
    assert (e.pos, e.msg) == (6, "Expecting ':' delimiter")
    e = error_of(lambda d: qjson.parse(d, lazy=True), "[1]] \\")
    assert e.pos == 3
    e = error_of(lambda d: qjson.parse(d, lazy=True), '[x, "abc')
    assert (e.pos, e.msg) == (4, "Unterminated string")


# json's offsets for malformed numbers (where the longest valid number
# ends) and bad \u escapes (at the `u`).
JSON_OFFSETS = [
    "[1.]",
    "[-]",
    "[-a]",
    "[.5]",
    "[01]",
    "[-01]",
    "[1e]",
    "[1e+]",
    "[1.e5]",
    "[1.5.]",
    "[1e5.3]",
    "[0x1]",
    "[1true]",
    "[truex]",
    "[nulll]",
    "[tru]",
    "1.",
    "01 ",
    "truex",
    '{"a": 1.e3}',
    '["\\u00A"]',
    '["\\uqqqq"]',
    '["\\u12',
    '["\\ud800\\u00zz"]',
    '["\\uD834\\uDd"]',
    '["\\U0041"]',
]


@pytest.mark.parametrize("text", JSON_OFFSETS)
def test_number_and_escape_offsets_are_jsons(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as j:
        json.loads(text)
    for f in STRICT.values():
        e = error_of(f, text)
        assert (e.pos, e.lineno, e.colno) == (j.value.pos, j.value.lineno, j.value.colno), e.msg


# --- a str holding a lone surrogate has no UTF-8 form -----------------------

SURROGATE_STRS = [
    ('"\ud800"', 1),
    ('[1, "ab\udc00"]', 7),
    ('{"é": "\ud83d"}\n', 8),
    ("\ud800", 0),
]


@pytest.mark.parametrize(("text", "pos"), SURROGATE_STRS)
@pytest.mark.parametrize("entry", [*STRICT, "lazy"])
def test_lone_surrogate_in_str_is_a_decode_error(entry: str, text: str, pos: int) -> None:
    f = STRICT.get(entry) or (lambda d: qjson.parse(d, lazy=True))
    e = error_of(f, text)
    assert e.pos == pos
    assert (e.lineno, e.colno) == line_col(text.encode("utf-8", "surrogatepass"), pos)
    assert "surrogate" in e.msg
    assert e.doc is text


# --- UTF-16 and UTF-32 bytes are rejected, naming the encoding --------------

ENCODINGS = ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"]


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("text", ['{"a": [1, "é"]}', "[]", "1", '"x"'])
def test_utf16_and_utf32_input_is_rejected_by_name(encoding: str, text: str) -> None:
    data = text.encode(encoding)
    assert json.loads(data) == json.loads(text)  # what json does instead
    family = "UTF-16" if "16" in encoding else "UTF-32"
    for f in STRICT.values():
        e = error_of(f, data)
        assert e.pos == 0
        assert family in e.msg and "UTF-8" in e.msg


def test_valid_input_with_zero_bytes_in_strings_is_not_taken_for_utf16() -> None:
    # Only invalid input is looked at: a NUL byte is never valid JSON, but
    # an escaped one is.
    assert qjson.loads(b'"\\u0000"') == "\x00"
    e = error_of(qjson.loads, b"[\x00]\x00")
    assert "UTF-16" in e.msg  # json.loads would decode this as UTF-16
    e = error_of(qjson.loads, b"[\x00]")
    assert e.pos == 1  # and this as UTF-8


# --- the differential test --------------------------------------------------

# Classes where json does not report an error at the offset qjson does,
# decided from qjson's error (so the test cannot pass by excluding
# everything: every excluded case must belong to one of these, and the test
# checks that each class seen is one of them).
EXCLUDED = {
    "not UTF-8": "json.loads decodes bytes first: UnicodeDecodeError",
    "NaN/Infinity": "json accepts NaN, Infinity and -Infinity",
    "lone surrogate": "json accepts lone \\uD800-style escapes",
    "depth": "json raises RecursionError",
}


def excluded_class(data: bytes, e: qjson.JSONDecodeError) -> str | None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "not UTF-8"
    if "lone surrogate" in e.msg:
        return "lone surrogate"
    if "nesting depth" in e.msg:
        return "depth"
    token = data[e.pos : e.pos + 9]
    if token.startswith((b"NaN", b"Infinity", b"-Infinity")):
        return "NaN/Infinity"
    return None


def json_outcome(data: bytes) -> tuple[int, int, int] | str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "UnicodeDecodeError"
    try:
        json.loads(text)
    except json.JSONDecodeError as e:
        pos = len(text[: e.pos].encode("utf-8"))
        return (pos, *line_col(data, pos))
    except RecursionError:
        return "RecursionError"
    return "ok"


def check_against_json(cases: list[tuple[str, bytes]]) -> dict[str, list[str]]:
    """Compare every case; return the excluded ones by class."""
    excluded: dict[str, list[str]] = {}
    mismatches = []
    for name, data in cases:
        try:
            qjson.loads(data)
        except qjson.JSONDecodeError as e:
            got: tuple[int, int, int] | str = (e.pos, e.lineno, e.colno)
            cls = excluded_class(data, e)
            want = json_outcome(data)
            if got != want:
                if cls is None:
                    mismatches.append((name, data[:60], got, want, e.msg))
                else:
                    excluded.setdefault(cls, []).append(name)
            for f in (qjson.validate, qjson.parse, qjson.decode):
                assert error_of(f, data).pos == e.pos, name
        else:
            # Valid for qjson: json must agree (broken documents can be valid).
            assert json_outcome(data) == "ok", name
    assert not mismatches, mismatches[:20]
    assert set(excluded) <= set(EXCLUDED), set(excluded) - set(EXCLUDED)
    return excluded


def test_jsontestsuite_n_files_report_jsons_position() -> None:
    d = data_path("JSONTestSuite", "test_parsing")
    cases = [(p.name, p.read_bytes()) for p in sorted(d.glob("n_*.json"))]
    assert len(cases) > 150
    excluded = check_against_json(cases)
    # Each class occurs in the suite, and nothing else is excluded: the
    # four classes hold 19 of the 188 files.
    assert set(excluded) == set(EXCLUDED)
    assert sum(len(v) for v in excluded.values()) == 19, excluded


def broken_documents(seed: int, count: int) -> list[tuple[str, bytes]]:
    """Truncations and single-byte corruptions of valid documents."""
    sources: list[tuple[str, bytes]] = []
    suite = DATA_DIR / "JSONTestSuite" / "test_parsing"
    for p in sorted(suite.glob("y_*.json")):
        sources.append((p.name, p.read_bytes()))
    small = DATA_DIR / "jsonexamples" / "small"
    for p in sorted(small.glob("*.json")):
        sources.append((p.name, p.read_bytes()[:4000]))
    rng = random.Random(seed)
    alphabet = b'{}[]:,"\\ \n0123456789.-+eEtrufalsnx\x01\x7f\xc3\xa9'
    out = []
    for i in range(count):
        name, src = sources[rng.randrange(len(sources))]
        if not src:
            continue
        if i % 2 == 0:
            cut = rng.randrange(len(src))
            out.append((f"{name}[:{cut}]", src[:cut]))
        else:
            at = rng.randrange(len(src))
            b = alphabet[rng.randrange(len(alphabet))]
            out.append((f"{name}@{at}={b:#x}", src[:at] + bytes([b]) + src[at + 1 :]))
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_broken_documents_report_jsons_position(seed: int) -> None:
    data_path("JSONTestSuite", "test_parsing")
    cases = broken_documents(seed, 300)
    assert len(cases) >= 280
    check_against_json(cases)


def test_exclusions_are_decided_by_class() -> None:
    # The classifier itself: one example of each class, and a mismatch of
    # no class is not excluded.
    examples = {
        "not UTF-8": b'["\xff"]',
        "NaN/Infinity": b"[NaN]",
        "lone surrogate": b'["\\ud800"]',
        "depth": b"[" * 2000,
    }
    for cls, data in examples.items():
        assert excluded_class(data, error_of(qjson.loads, data)) == cls
    assert excluded_class(b"[1.]", error_of(qjson.loads, b"[1.]")) is None


def test_error_positions_without_data_need_no_files() -> None:
    # A document made here, independent of ../shared/data.
    doc = b'{\n  "a": [1, 2,\n        3 4]\n}'
    e = error_of(qjson.loads, doc)
    assert (e.pos, e.lineno, e.colno) == json_outcome(doc) == (doc.index(b"4"), 3, 11)
