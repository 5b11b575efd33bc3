"""Many documents: parse_many, loads_many, open_many, dumps_many (NDJSON /
JSON Lines, or JSON texts separated by whitespace), their errors (doc_index,
stream-wide pos / lineno / colno, errors="skip") and open_many's memory bound."""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import qjson
from conftest import REPO_DIR, data_path
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(REPO_DIR))
from benchmarks.payloads import batch_file, batch_lines  # noqa: E402

CHUNKS = [1024, 64 * 1024, 1 << 20]


def amazon() -> bytes:
    return data_path("jsonexamples", "amazon_cellphones.ndjson").read_bytes()


def expected_lines(data: bytes) -> list[object]:
    return [json.loads(line) for line in data.splitlines() if line.strip()]


# ------------------------------------------------------------------ corpus


def test_amazon_parse_many_and_loads_many():
    data = amazon()
    want = expected_lines(data)
    assert len(want) > 100
    docs = list(qjson.parse_many(data))
    assert len(docs) == len(want)
    for d, w in zip(docs, want):
        assert qjson.materialize(d.root) == w
    assert qjson.loads_many(data) == want
    # str input and a memoryview behave the same
    assert qjson.loads_many(data.decode()) == want
    assert [qjson.materialize(d.root) for d in qjson.parse_many(memoryview(data))] == want


@pytest.mark.parametrize("chunk", CHUNKS)
def test_amazon_open_many(tmp_path, chunk):
    data = amazon()
    want = expected_lines(data)
    path = tmp_path / "a.ndjson"
    path.write_bytes(data)
    got = [qjson.materialize(d.root) for d in qjson.open_many(path, chunk_size=chunk)]
    assert got == want
    got = [qjson.materialize(d.root) for d in qjson.open_many(str(path), chunk_size=chunk)]
    assert got == want
    with open(path, "rb") as f:
        got = [qjson.materialize(d.root) for d in qjson.open_many(f, chunk_size=chunk)]
    assert got == want


def test_lazy_docs_and_getters():
    data = (
        b'{"custom_id": "a", "body": {"model": "m1"}}\n'
        b'{"custom_id": "b", "body": {"model": "m2"}}\n'
    )
    for lazy in (False, True):
        docs = list(qjson.parse_many(data, lazy=lazy))
        assert [d.get_str("custom_id") for d in docs] == ["a", "b"]
        assert [d.get_str("body.model") for d in docs] == ["m1", "m2"]
        assert docs[1].raw() == data.splitlines()[1]


def plain(d: qjson.Doc) -> object:
    r = d.root
    return qjson.materialize(r) if d.type() in ("object", "array") else r


def test_separators_and_bom():
    data = b'\xef\xbb\xbf{"a": 1}\r\n\n\n  [1,\n 2]\t"x" 3 true null {"b":\n  {"c": []}\n}\n\n'
    want = [{"a": 1}, [1, 2], "x", 3, True, None, {"b": {"c": []}}]
    assert qjson.loads_many(data) == want
    assert [plain(d) for d in qjson.parse_many(data)] == want
    for chunk in (1, 2, 5, 1024):
        assert [plain(d) for d in qjson.open_many(io.BytesIO(data), chunk_size=chunk)] == want
    assert qjson.loads_many(b"") == []
    assert qjson.loads_many(b" \n\n \r\n") == []
    assert list(qjson.open_many(io.BytesIO(b""))) == []


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b" \t\n"])
@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_lines_ending_at_and_around_block_borders(eol, bom):
    """The line path's scan stops at each line's newline: lines of 60 to 70
    bytes (and 127 to 129), so that the newline falls on every place of
    the last 64-byte block, a line of exactly 64 bytes among them, with
    CRLF, trailing blanks and a BOM; a line with a raw newline in a string
    makes its two lines errors (as `json.loads` of each says), and the line
    after them still comes out."""
    lines = []
    for n in [*range(60, 71), 127, 128, 129]:
        # `{"k": "` ... `"}` is 9 bytes around the string.
        lines.append(b'{"k": "' + b'a\\"' + b"z" * (n - 12) + b'"}')
    assert [len(x) for x in lines[:11]] == list(range(60, 71))
    data = bom + eol.join(lines) + eol
    want = [json.loads(x) for x in lines]
    assert qjson.loads_many(data) == want
    assert [plain(d) for d in qjson.parse_many(data)] == want
    assert [d.get_str("k") for d in qjson.parse_many(data)] == [w["k"] for w in want]
    for chunk in (64, 65, 100):
        got = [plain(d) for d in qjson.open_many(io.BytesIO(data), chunk_size=chunk)]
        assert got == want
    broken = bom + lines[3] + eol + b'{"k": "x\ny"}' + eol + lines[4] + eol
    it = qjson.parse_many(broken, errors="skip")
    assert [plain(d) for d in it] == [want[3], json.loads(lines[4])]
    assert [e.doc_index for e in it.errors] == [1, 2]


# ------------------------------------------------------------------ batch files


def test_batch_views_round_trip_byte_for_byte(tmp_path):
    data = batch_file(3 << 20)
    assert data.count(b"base64,") > 10
    out = qjson.dumps_many(d.root for d in qjson.parse_many(data))
    assert out == data
    path = tmp_path / "batch.jsonl"
    path.write_bytes(data)
    out = qjson.dumps_many(d.root for d in qjson.open_many(path, chunk_size=64 * 1024))
    assert out == data
    # an edit is spliced in, the rest passes through
    docs = list(qjson.parse_many(data))
    for d in docs:
        d.root["body"]["model"] = "gpt-5"
    edited = qjson.dumps_many(d.root for d in docs)
    want = [json.loads(line) for line in data.splitlines()]
    for w in want:
        w["body"]["model"] = "gpt-5"
    assert [json.loads(line) for line in edited.splitlines()] == want


def test_large_outputs_round_trip():
    # From 8 MiB the output buffer asks for huge pages (dumps/out.rs): the
    # first call grows into the scratch buffer, the second is sized from
    # the first's hint up front; both the same bytes, and plain dumps too.
    data = batch_file(12 << 20)
    roots = [d.root for d in qjson.parse_many(data)]
    assert qjson.dumps_many(roots) == data
    assert qjson.dumps_many(roots) == data
    one = b"[" + data.rstrip(b"\n").replace(b"\n", b",") + b"]"
    view = qjson.decode(one)
    assert qjson.dumps(view) == one
    assert qjson.dumps(view) == one


def test_dumps_many_plain_objects_and_options():
    assert qjson.dumps_many([]) == b""
    assert qjson.dumps_many([{"b": 1, "a": [1]}, 2, "x"]) == b'{"b":1,"a":[1]}\n2\n"x"\n'
    assert qjson.dumps_many([{"b": 1, "a": 2}], sort_keys=True) == b'{"a":2,"b":1}\n'
    with pytest.raises(qjson.JSONEncodeError):
        qjson.dumps_many([object()])


def test_dumps_many_is_dumps_of_each_object_in_one_buffer():
    """One output buffer for all objects: the same bytes as dumps per
    object, views (untouched, edited, Docs) and plain objects mixed, with
    every option; a failure part way raises and keeps nothing."""
    data = batch_file(256 * 1024)
    docs = list(qjson.parse_many(data))
    docs[1].root["body"]["model"] = "gpt-5"
    del docs[2].root["body"]["messages"][0]
    objs = [d.root for d in docs[:4]] + [docs[4], {"z": [1.5, None]}, "s", [docs[5].root["body"]]]
    for opts in ({}, {"sort_keys": True}, {"indent": 2}, {"default": str}):
        want = b"".join(qjson.dumps(o, **opts) + b"\n" for o in objs)
        assert qjson.dumps_many(iter(objs), **opts) == want, opts
        assert qjson.dumps_many(objs * 3, **opts) == want * 3, opts
    assert qjson.dumps_many([1, {2}], default=sorted) == b"1\n[2]\n"

    def gen():
        yield docs[0].root
        raise KeyError("from the iterable")

    with pytest.raises(KeyError):
        qjson.dumps_many(gen())
    with pytest.raises(qjson.JSONEncodeError):
        qjson.dumps_many([docs[0].root, object()])
    with pytest.raises(TypeError):
        qjson.dumps_many(5)


def test_batch_lines_generator_is_valid_json_lines():
    lines = list(batch_lines(200 * 1024))
    assert all(line.endswith(b"\n") and line.count(b"\n") == 1 for line in lines)
    objs = [json.loads(line) for line in lines]
    assert {o["method"] for o in objs} == {"POST"}
    assert len({o["custom_id"] for o in objs}) == len(objs)
    assert {"gpt-4o", "gpt-4o-mini"} <= {o["body"]["model"] for o in objs}


# ------------------------------------------------------------------ bad input

GOOD = [b'{"a": 1}', b"[1, 2]", b'{"z": "last"}']
DEEP = b"[" * 40 + b"]" * 40
BAD_LINES = {
    "unterminated": (b'{"a": "open}', "Unterminated string"),
    "utf8": (b'{"a": "\xff\xfe"}', "Invalid UTF-8"),
    "deep": (DEEP, "Maximum nesting depth exceeded"),
    "trailing-comma": (b"[1,]", "Expecting value"),
    "stray-backslash": (b'{"a": 1} \\', "Backslash outside a string"),
    "bad-number": (b'{"n": 01}', "Invalid number"),
}


def stream_with(bad: bytes) -> tuple[bytes, int, int]:
    """GOOD[0], bad, GOOD[1], bad, GOOD[2]: the data, the offsets of the two bad lines."""
    first = GOOD[0] + b"\n"
    a = len(first)
    mid = bad + b"\n" + GOOD[1] + b"\n"
    b = a + len(mid)
    return first + mid + bad + b"\n" + GOOD[2] + b"\n", a, b


def all_readers(data: bytes, **kw):
    yield "parse_many", qjson.parse_many(data, max_depth=16, **kw)
    for chunk in (3, 16, 1 << 20):
        yield (
            f"open_many/{chunk}",
            qjson.open_many(io.BytesIO(data), chunk_size=chunk, max_depth=16, **kw),
        )


@pytest.mark.parametrize("case", sorted(BAD_LINES))
def test_bad_line_raises_with_doc_index_and_stream_offset(case):
    bad, msg = BAD_LINES[case]
    data, at1, _ = stream_with(bad)
    for name, it in all_readers(data):
        first = next(it)
        assert first.raw() == GOOD[0], name
        with pytest.raises(qjson.JSONDecodeError) as ei:
            next(it)
        e = ei.value
        assert e.doc_index == 1, name
        assert e.msg == msg, name
        assert at1 <= e.pos <= at1 + len(bad), (name, e.pos)
        assert e.lineno == 2, name
        assert e.colno == e.pos - at1 + 1, name
    with pytest.raises(qjson.JSONDecodeError) as ei:
        qjson.loads_many(data, max_depth=16)
    assert ei.value.doc_index == 1 and ei.value.msg == msg


@pytest.mark.parametrize("case", sorted(BAD_LINES))
def test_bad_lines_skipped(case):
    bad, msg = BAD_LINES[case]
    data, at1, at2 = stream_with(bad)
    want = [json.loads(g) for g in GOOD]
    for name, it in all_readers(data, errors="skip"):
        got = [qjson.materialize(d.root) for d in it]
        assert got == want, name
        errs = it.errors
        assert [e.doc_index for e in errs] == [1, 3], name
        assert [e.msg for e in errs] == [msg, msg], name
        assert at1 <= errs[0].pos <= at1 + len(bad)
        assert at2 <= errs[1].pos <= at2 + len(bad)
        assert [e.lineno for e in errs] == [2, 4]
        assert all(isinstance(e, qjson.JSONDecodeError) for e in errs)
    got = qjson.loads_many(data, max_depth=16, errors="skip")
    assert got == want
    assert [e.doc_index for e in got.errors] == [1, 3]


def test_truncated_last_line():
    data = b'{"a": 1}\n{"b": [1, 2'
    for name, it in all_readers(data):
        assert next(it).raw() == b'{"a": 1}'
        with pytest.raises(qjson.JSONDecodeError) as ei:
            next(it)
        assert ei.value.doc_index == 1, name
        assert ei.value.pos == len(data), name
        assert ei.value.msg == "Unexpected end of input"
        with pytest.raises(StopIteration):
            next(it)
    for name, it in all_readers(data, errors="skip"):
        assert [d.raw() for d in it] == [b'{"a": 1}'], name
        assert [e.doc_index for e in it.errors] == [1]


def test_unterminated_string_does_not_swallow_following_lines():
    lines = [b'{"id": %d, "s": "%s"}' % (i, b"x" * (i % 50)) for i in range(2000)]
    lines[100] = b'{"id": 100, "s": "never closed}'
    lines[1500] = b'{"id": 1500, "s": "open again'
    data = b"\n".join(lines) + b"\n"
    want = [json.loads(line) for i, line in enumerate(lines) if i not in (100, 1500)]
    for name, it in all_readers(data, errors="skip"):
        got = [qjson.materialize(d.root) for d in it]
        assert got == want, name
        assert [e.doc_index for e in it.errors] == [100, 1500], name
        assert [e.lineno for e in it.errors] == [101, 1501], name


def test_bad_pretty_printed_document_is_one_error():
    bad = b'{\n  "a": [1,],\n  "b": 2\n}\n'
    data = b'{"c": 3}\n' + bad + b'[\n  4\n]\n{"d": 5}\n'
    for name, it in all_readers(data, errors="skip"):
        assert [qjson.materialize(d.root) for d in it] == [{"c": 3}, [4], {"d": 5}], name
        assert [(e.doc_index, e.lineno, e.pos) for e in it.errors] == [(1, 3, 21)], name


def test_error_on_a_later_line_is_not_the_pretty_documents():
    # After an unterminated string the splitter goes line by line; a
    # pretty-printed document there is read on over several lines, which
    # must not make a later line's error its own (or report it twice).
    data = b'[1]\n{"a": "open}\n{\n  "p": [1,],\n  "x": 2\n}\n[3]\n\\\n{"n": 4}\n{\n  "q": 5\n}\n[6'
    for name, it in all_readers(data, errors="skip"):
        assert [qjson.materialize(d.root) for d in it] == [[1], [3], {"n": 4}, {"q": 5}], name
        got = [(e.doc_index, e.msg, e.pos) for e in it.errors]
        assert got == [
            (1, "Unterminated string", 10),
            (2, "Expecting value", data.index(b"],")),
            (4, "Backslash outside a string", data.index(b"\\")),
            (7, "Unexpected end of input", len(data)),
        ], name


def test_lazy_defers_value_errors():
    data = b'{"a": 01}\n{"a": 2}\n'
    docs = list(qjson.parse_many(data, lazy=True))
    assert len(docs) == 2
    with pytest.raises(qjson.JSONDecodeError):
        docs[0].get("a")
    assert docs[1].get("a") == 2


def test_lazy_read_errors_count_in_the_whole_stream():
    bad = b'{"b": 1, "a": 01}'
    with pytest.raises(qjson.JSONDecodeError) as one:
        qjson.parse(bad, lazy=True).get("a")
    rel = one.value.pos
    data = b'{"a": 1}\n\n{"a": 2}\n' + bad + b"\n[3]\n"
    start = data.index(bad)
    readers = [("parse_many", qjson.parse_many(data, lazy=True))]
    for chunk in (4, 1 << 20):
        readers.append(
            (f"open_many/{chunk}", qjson.open_many(io.BytesIO(data), chunk_size=chunk, lazy=True))
        )
    for name, it in readers:
        docs = list(it)
        assert len(docs) == 4, name
        with pytest.raises(qjson.JSONDecodeError) as ei:
            docs[2].get("a")
        e = ei.value
        assert (e.pos, e.lineno, e.colno, e.doc_index) == (start + rel, 4, rel + 1, 2), name


def test_arguments():
    with pytest.raises(ValueError, match="errors"):
        qjson.parse_many(b"1", errors="ignore")
    with pytest.raises(ValueError, match="chunk_size"):
        qjson.open_many(io.BytesIO(b"1"), chunk_size=0)
    with pytest.raises(TypeError):
        qjson.parse_many(12)
    with pytest.raises(FileNotFoundError):
        qjson.open_many("/nonexistent/qjson-many.jsonl")
    assert qjson.JSONDecodeError("m", "", 0, 1, 1).doc_index is None


def test_docs_outlive_the_iterator_and_input():
    data = bytearray(b'{"a": [1, 2, 3]}\n{"b": "x"}\n')
    docs = list(qjson.parse_many(data))
    data[:] = b"0" * len(data)  # a bytearray is copied, so this changes nothing
    assert docs[0].get("a[2]") == 3 and docs[1].get_str("b") == "x"


# ------------------------------------------------------------------ memory

RSS_SCRIPT = textwrap.dedent(
    """
    import resource, sys
    import qjson
    def rss():
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    base = rss()
    n = 0
    ids = 0
    for doc in qjson.open_many(sys.argv[1]):
        ids += len(doc.get_str("custom_id"))
        n += 1
    print(n, rss() - base)
    """
)


def test_open_many_memory_is_bounded(tmp_path):
    if not Path("/proc/self/status").exists():
        pytest.skip("needs /proc/self/status (Linux) to read peak RSS")
    sys.path.insert(0, str(REPO_DIR))
    from benchmarks.payloads import write_batch_file

    path = tmp_path / "big.jsonl"
    size = write_batch_file(path, 200 * 1024 * 1024)
    assert size >= 200 * 1024 * 1024
    out = subprocess.run(
        [sys.executable, "-c", RSS_SCRIPT, str(path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    ).stdout.split()
    n, growth = int(out[0]), int(out[1])
    with open(path, "rb") as f:
        lines = sum(1 for _ in f)
    assert n == lines
    assert growth < 64 * 1024 * 1024, growth


def test_kept_docs_outlive_the_reuse_of_chunk_buffers(tmp_path):
    """open_many reuses a chunk's buffer once no Doc holds it: the Docs kept
    (every third, and so some chunks only) read their own bytes to the end."""
    lines = [json.dumps({"i": i, "s": "x" * (i % 97), "a": [i, None]}).encode() for i in range(600)]
    path = tmp_path / "k.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    kept = []
    for i, d in enumerate(qjson.open_many(path, chunk_size=1024)):
        assert d.get("i") == i
        if i % 3 == 0 or i > 590:
            kept.append((i, d))
    for i, d in kept:
        assert d.raw() == lines[i]
        assert qjson.materialize(d.root) == json.loads(lines[i])


class FailingReader:
    """A binary file object whose read fails once, on its `fail_at`-th call."""

    def __init__(self, data: bytes, fail_at: int):
        self.f = io.BytesIO(data)
        self.calls = 0
        self.fail_at = fail_at

    def read(self, n: int) -> bytes:
        self.calls += 1
        if self.calls == self.fail_at:
            raise OSError("disk on fire")
        return self.f.read(n)


def test_a_failed_read_loses_nothing():
    """A read that raises is reported; the next call reads on, and every
    document (also the one cut by the chunk end) still comes out."""
    data = b"".join(b'{"n": %d, "pad": "%s"}\n' % (i, b"p" * (i % 50)) for i in range(200))
    it = qjson.open_many(FailingReader(data, 3), chunk_size=256)
    got = []
    failed = 0
    while True:
        try:
            d = next(it)
        except StopIteration:
            break
        except OSError as e:
            assert "disk on fire" in str(e)
            failed += 1
            continue
        got.append(d.get("n"))
    assert failed == 1
    assert got == list(range(200))


def test_document_longer_than_many_chunks(tmp_path):
    big = b'{"image": "' + b"QUJD" * (512 * 1024) + b'", "n": [1, 2, 3]}'
    data = b'{"a": 1}\n' + big + b"\n" + b'{"b": 2}\n'
    path = tmp_path / "big.jsonl"
    path.write_bytes(data)
    docs = list(qjson.open_many(path, chunk_size=1024))
    assert [d.raw() for d in docs] == [b'{"a": 1}', big, b'{"b": 2}']
    assert docs[1].get("n[2]") == 3


def test_collector_state_is_kept():
    """loads_many pauses the collector while it builds, and leaves it as it
    found it; so does loads, also after a large document made it pause once
    (a guard built for nothing used to re-enable a caller-paused collector)."""
    import gc

    data = b"\n".join([b'{"a": [1, {"b": 2}]}'] * 3000)
    large = b"[" + b",".join([b"[]"] * 3000) + b"]"
    seen: list[bool] = []
    gc.callbacks.append(lambda phase, info: seen.append(True))
    try:
        assert len(qjson.loads_many(data)) == 3000
    finally:
        gc.callbacks.pop()
    assert seen == [] and gc.isenabled()
    qjson.loads(large)
    gc.disable()
    try:
        qjson.loads(b'{"a": [1]}')
        qjson.loads_many(b"[1]\n[2]")
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_loads_many_shares_string_values():
    """loads_many gives equal string values of up to 48 raw bytes one shared
    str, escaped or not (as fastsimdjson does for short ones; lines repeat
    enum-like values, model names, endpoints); longer values, and every
    value of loads, stay their own objects. Values never collide with keys
    or each other."""
    short = ["user", "", "é", r"\u00e9", r"\"q\"", "a" * 16, "日本語", r"\ud83d\ude00"]
    mid = ["b" * 17, "c" * 40, "/v1/chat/completions", "d" * 46 + r"\n", "é" * 24, "e" * 48]
    long = ["f" * 49, "g" * 100, "h" * 47 + r"\n"]
    values = short + mid + long
    lines = []
    for i in range(3):
        members = ",".join(f'"k{j}":"{v}"' for j, v in enumerate(values))
        lines.append(f'{{{members},"user":"k0","i":{i}}}'.encode())
    data = b"\n".join(lines)
    got = qjson.loads_many(data)
    assert got == [json.loads(line) for line in lines]
    a, b = got[0], got[1]
    shared = len(short) + len(mid)
    for j in range(shared):
        assert a[f"k{j}"] is b[f"k{j}"], values[j]
    assert a["k2"] == a["k3"]  # "é" written raw and escaped: two entries
    for j in range(shared, len(values)):
        assert a[f"k{j}"] == b[f"k{j}"] and a[f"k{j}"] is not b[f"k{j}"], values[j]
    assert a["user"] == "k0" and a["k0"] == "user"
    one = qjson.loads(b"[" + b",".join(lines) + b"]")
    assert one[0]["k0"] == one[1]["k0"] and one[0]["k0"] is not one[1]["k0"]
    assert one[0]["k9"] == one[1]["k9"] and one[0]["k9"] is not one[1]["k9"]


def test_loads_many_shared_values_differ_anywhere():
    """Shared values of one length that differ in one byte only, at any
    place up to the 48th (the comparison covers every byte), or only in
    being escaped, and more distinct values than the table has slots
    (evictions, colliding slots): each line's values are its own."""
    rng = random.Random(7)
    base = "x" * 48
    variants = []
    for n in (17, 24, 25, 31, 33, 40, 47, 48):
        for at in range(n):
            variants.append(base[:at] + "y" + base[at + 1 : n])
        variants.append(base[:n])
    variants += [f"id-{i:040d}" for i in range(3000)]  # 43 bytes, distinct
    variants += ["tab\\there-" + "z" * 20, "tab\\u0009here-" + "z" * 20, "caf\u00e9-" + "w" * 20]
    lines = []
    for _ in range(400):
        vals = rng.sample(variants, 12)
        lines.append(json.dumps({"v": vals, "w": vals[0], "u": vals[1:3]}).encode())
    data = b"\n".join(lines)
    assert qjson.loads_many(data) == [json.loads(line) for line in lines]


def test_loads_many_leaves_the_young_collection_to_the_caller():
    """In a fresh process (the interpreter has not specialized the wrapper
    yet), loads_many runs no collection itself: the one that everything it
    built has made due is left to the caller's next allocation, as
    fastsimdjson does; and it does happen then."""
    code = textwrap.dedent(
        """
        import gc, qjson
        seen = []
        gc.callbacks.append(lambda phase, info: seen.append(phase))
        r = qjson.loads_many(b"\\n".join([b'{"a": [1, {"b": [2]}]}'] * 5000))
        inside = len(seen)
        x = [[]]
        print(inside, len(seen) > 0, len(r), gc.isenabled())
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "True", "5000", "True"]


# ------------------------------------------------------------------ properties

_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(_TEXT, kids, max_size=4),
    max_leaves=12,
)


def _ends_in_string(prefix: bytes) -> bool:
    inside = escaped = False
    for b in prefix:
        if escaped:
            escaped = False
        elif b == 0x5C and inside:
            escaped = True
        elif b == 0x22:
            inside = not inside
    return inside


def _line(value: object, cut: int | None) -> bytes:
    """The compact JSON of value, cut short if `cut` falls inside a string
    (an unterminated string: the line is bad whatever follows it; a line
    cut elsewhere may be continued by the next, as whitespace-separated
    JSON texts allow)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    if cut is not None:
        i = cut % (len(text) + 1)
        if _ends_in_string(text[:i]):
            return text[:i]
    return text


def _reference(line: bytes) -> tuple[bool, object]:
    try:
        return True, json.loads(line)
    except ValueError:
        return False, None


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(_JSON, st.none() | st.integers(0, 10**6)), max_size=30),
    st.integers(1, 200),
)
def test_skip_mode_matches_json_loads_line_by_line(rows, chunk):
    """Every line that json.loads accepts comes out (equal), and every line
    holding an unterminated string is one error with its index: it never
    swallows or disturbs the lines after it, whatever the chunk size."""
    lines = [_line(value, cut) for value, cut in rows]
    data = b"\n".join(lines) + b"\n"
    want, bad, i = [], [], 0
    for line in lines:
        if not line.strip():
            continue
        ok, v = _reference(line)
        if ok:
            want.append(v)
        else:
            bad.append(i)
        i += 1
    for it in (
        qjson.parse_many(data, errors="skip"),
        qjson.open_many(io.BytesIO(data), chunk_size=chunk, errors="skip"),
    ):
        assert [plain(d) for d in it] == want
        assert [e.doc_index for e in it.errors] == bad
    got = qjson.loads_many(data, errors="skip")
    assert list(got) == want and [e.doc_index for e in got.errors] == bad


MIXED = [
    b"\xef\xbb\xbf" + b'{"a": 1}',
    b"  [1, 2]  \r",
    b"",
    b"  \t ",
    b'1 2 "three"',
    b"{",
    b'  "pretty": [',
    b"    true",
    b"  ]",
    b"}",
    b'{"bad": 01}',
    b'{"open": "x',
    b'[1, {"b": null}] [2]',
    b"[3]x",
    b'{"after": "errors"}',
    b"[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]",
    b'"last"',
]


@pytest.mark.parametrize("end", [b"", b"\n", b"\r\n"])
def test_loads_many_line_path_matches_the_exact_path(end):
    """loads_many reads a line that is one valid document on its own; every
    other line goes through the same splitter as parse_many: documents,
    doc_index and stream offsets agree with parse_many's."""
    data = b"\n".join(MIXED) + end
    it = qjson.parse_many(data, max_depth=16, errors="skip")
    want = [qjson.materialize(d.root) if d.type() in ("object", "array") else d.get() for d in it]
    got = qjson.loads_many(data, max_depth=16, errors="skip")
    assert list(got) == want
    assert len(want) == 10
    assert [(e.doc_index, e.pos, e.msg) for e in got.errors] == [
        (e.doc_index, e.pos, e.msg) for e in it.errors
    ]
    assert [e.doc_index for e in got.errors] == [6, 7, 10, 12]
    with pytest.raises(qjson.JSONDecodeError) as ei:
        qjson.loads_many(data, max_depth=16)
    assert ei.value.doc_index == 6 and ei.value.pos == it.errors[0].pos
