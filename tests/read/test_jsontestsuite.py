"""JSONTestSuite (nst/JSONTestSuite, test_parsing): y_ must parse, n_ must be
rejected, i_ must behave as docs/conformance.md says."""

from __future__ import annotations

import collections.abc
import json
import re
from pathlib import Path

import pytest
import qjson
from conftest import (
    DATA_DIR,
    JSON_WS,
    REPO_DIR,
    check_value,
    data_files,
    data_path,
    full_walk,
    reference_loads,
    same,
    walk_json,
)

SUITE = "JSONTestSuite/test_parsing"
CONFORMANCE_MD = REPO_DIR / "docs" / "conformance.md"

Y_FILES = data_files(SUITE, "y_*.json")
N_FILES = data_files(SUITE, "n_*.json")
I_FILES = data_files(SUITE, "i_*.json")


def expected_line_col(data: bytes, pos: int) -> tuple[int, int]:
    """lineno / colno as json.JSONDecodeError computes them, on bytes."""
    lineno = data.count(b"\n", 0, pos) + 1
    colno = pos - data.rfind(b"\n", 0, pos)
    return lineno, colno


def assert_decode_error(err: BaseException, data: bytes) -> None:
    assert isinstance(err, qjson.JSONDecodeError)
    assert isinstance(err, json.JSONDecodeError)
    assert isinstance(err, ValueError)
    assert type(err.pos) is int
    assert 0 <= err.pos <= len(data), (err.pos, len(data))
    assert (err.lineno, err.colno) == expected_line_col(data, err.pos)
    assert isinstance(err.msg, str) and err.msg


def test_suite_counts() -> None:
    d = data_path(SUITE)
    names = [p.name for p in d.iterdir()]
    counts = {pre: sum(n.startswith(pre) and n.endswith(".json") for n in names) for pre in "yni"}
    assert counts == {"y": 95, "n": 188, "i": 35}


# --------------------------------------------------------------------------
# y_: must be accepted, every value readable
# --------------------------------------------------------------------------


def check_whole_document(doc: qjson.Doc, data: bytes, expected: object) -> int:
    """Read every value reachable in ``expected`` through ``doc`` by dotted path
    and by JSON Pointer, with all getters. Returns the number of values."""
    n = 0
    for e in walk_json(expected):
        n += 1
        check_value(doc, e.dotted, e.value, check_wrong_types=True)
        check_value(doc, e.pointer, e.value)
        # The raw bytes of the value decode to the same value.
        raw = doc.raw(e.dotted)
        assert type(raw) is bytes
        assert raw == raw.strip(JSON_WS), (e.dotted, raw)
        assert same(reference_loads(raw), e.value), (e.dotted, raw)
        assert doc.raw(e.pointer) == raw
    return n


@pytest.mark.parametrize("path", Y_FILES)
def test_y_accepted(path: Path) -> None:
    data = path.read_bytes()
    expected = reference_loads(data)
    doc = qjson.parse(data)
    n = check_whole_document(doc, data, expected)
    assert n >= 1
    # The whole document: root view, get(""), raw("").
    root = doc.root
    assert same(root, expected)
    assert same(doc.get(), expected)
    assert doc.raw() == data.strip(JSON_WS)
    if isinstance(expected, dict):
        assert isinstance(root, collections.abc.Mapping)
        if not expected.had_duplicates:
            assert root == json.loads(data)
            assert json.loads(data) == root
    elif isinstance(expected, list):
        assert isinstance(root, collections.abc.Sequence)
        assert root == json.loads(data)
        assert json.loads(data) == root
    else:
        assert same(root, json.loads(data))


@pytest.mark.parametrize("path", Y_FILES)
def test_y_accepted_lazy(path: Path) -> None:
    data = path.read_bytes()
    expected = reference_loads(data)
    doc = qjson.parse(data, lazy=True)
    for e in walk_json(expected):
        check_value(doc, e.dotted, e.value)
    assert same(doc.root, expected)


@pytest.mark.parametrize("path", Y_FILES)
def test_y_accepted_from_other_input_types(path: Path) -> None:
    data = path.read_bytes()
    expected = reference_loads(data)
    for inp in (bytearray(data), memoryview(data), data.decode("utf-8")):
        doc = qjson.parse(inp)
        assert same(doc.root, expected), type(inp)


# --------------------------------------------------------------------------
# n_: must be rejected
# --------------------------------------------------------------------------


@pytest.mark.parametrize("path", N_FILES)
def test_n_rejected(path: Path) -> None:
    data = path.read_bytes()
    with pytest.raises(qjson.JSONDecodeError) as ei:
        qjson.parse(data)
    assert_decode_error(ei.value, data)


@pytest.mark.parametrize("path", N_FILES)
def test_n_rejected_lazy(path: Path) -> None:
    """Lazy mode checks only structure at parse; a value error must surface
    when the values are read. Either way, an n_ file never reads as valid."""
    data = path.read_bytes()
    with pytest.raises(qjson.JSONDecodeError) as ei:
        doc = qjson.parse(data, lazy=True)
        full_walk(doc.root)
    assert_decode_error(ei.value, data)


# --------------------------------------------------------------------------
# i_: as docs/conformance.md says
# --------------------------------------------------------------------------

_ROW = re.compile(r"^\|(.*)\|\s*$")


def load_conformance_table() -> dict[str, dict[str, str]]:
    """The i_ table of docs/conformance.md: file name -> {strict, pos, lazy, why}."""
    text = CONFORMANCE_MD.read_text(encoding="utf-8")
    rows: dict[str, dict[str, str]] = {}
    header: list[str] | None = None
    for line in text.splitlines():
        m = _ROW.match(line.strip())
        if not m:
            header = None
            continue
        cells = [c.strip() for c in m.group(1).split("|")]
        if header is None:
            header = [c.lower() for c in cells]
            continue
        if all(set(c) <= set("-: ") for c in cells):
            continue  # the separator row
        if header[:4] != ["file", "strict", "pos", "lazy"]:
            continue
        row = dict(zip(header, cells))
        name = row["file"].strip("`")
        assert name not in rows, f"{name} appears twice in {CONFORMANCE_MD}"
        rows[name] = row
    return rows


def test_conformance_table_complete() -> None:
    d = data_path(SUITE)
    table = load_conformance_table()
    files = sorted(p.name for p in d.glob("i_*.json"))
    missing = [f for f in files if f not in table]
    stale = [f for f in table if f not in files]
    assert not missing, f"i_ files missing from {CONFORMANCE_MD}: {missing}"
    assert not stale, f"rows in {CONFORMANCE_MD} for files that do not exist: {stale}"
    for name, row in table.items():
        assert row["strict"] in ("accept", "reject"), (name, row)
        assert row["why"], f"{name}: the why column is empty"
        if row["strict"] == "accept":
            assert row["pos"] == "" and row["lazy"] == "accept", (name, row)
        else:
            assert row["pos"].isdigit(), (name, row)
            assert row["lazy"] in ("parse", "read"), (name, row)


@pytest.mark.parametrize("path", I_FILES)
def test_i_as_documented(path: Path) -> None:
    data = path.read_bytes()
    table = load_conformance_table()
    assert path.name in table, f"{path.name} is missing from {CONFORMANCE_MD}"
    row = table[path.name]
    if row["strict"] == "accept":
        expected = json.loads(data)
        doc = qjson.parse(data)
        assert same(doc.root, expected)
        lazy_doc = qjson.parse(data, lazy=True)
        assert same(lazy_doc.root, expected)
        return

    assert row["strict"] == "reject", row
    pos = int(row["pos"])
    with pytest.raises(qjson.JSONDecodeError) as ei:
        qjson.parse(data)
    assert_decode_error(ei.value, data)
    assert ei.value.pos == pos, (ei.value.pos, ei.value.msg)

    if row["lazy"] == "parse":
        with pytest.raises(qjson.JSONDecodeError) as ei:
            qjson.parse(data, lazy=True)
        assert_decode_error(ei.value, data)
    else:
        assert row["lazy"] == "read", row
        doc = qjson.parse(data, lazy=True)  # structure is fine: no error yet
        with pytest.raises(qjson.JSONDecodeError) as ei:
            full_walk(doc.root)
        assert_decode_error(ei.value, data)
        assert ei.value.pos == pos, (ei.value.pos, ei.value.msg)


def test_data_dir_is_beside_checkout() -> None:
    # The location contract of shared/data/README.md.
    assert DATA_DIR.resolve() == (REPO_DIR.parent / "shared" / "data").resolve()
