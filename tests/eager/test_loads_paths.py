"""loads: the unescape fast path and the known-hash dict insert.

Escapes at every offset around the 8-byte copy steps, in keys and values,
ASCII and not; keys cached (hash known) and not (longer than the cache's
48 bytes, or new), with duplicates (last value wins, first position kept).
All compared with json.loads.
"""

from __future__ import annotations

import json

import pytest
import qjson

ESCAPES = [
    r"\/",
    r"\\",
    r"\"",
    r"\n",
    r"\t",
    r"\b",
    r"\f",
    r"\r",
    r"\u0041",
    r"\u00e9",
    r"\u07FF",
    r"\u0800",
    r"\u30c0",
    r"\uffff",
    r"\ud83d\ude00",
    r"\uDBFF\uDFFF",
    r"\u0000",
]


@pytest.mark.parametrize("esc", ESCAPES)
def test_escapes_at_every_offset(esc: str) -> None:
    items = []
    for pre in range(18):
        for post in range(10):
            for second in ("", r"\/", r"\u00e9", "é"):
                items.append("a" * pre + esc + second + "b" * post + esc)
    doc = "[" + ",".join(f'"{s}"' for s in items) + "]"
    for data in (doc, doc.encode()):
        assert qjson.loads(data) == json.loads(doc)
    # Also as keys (cached up to 48 bytes, longer ones not).
    obj = "{" + ",".join(f'"{s}": {i}' for i, s in enumerate(items)) + "}"
    assert qjson.loads(obj) == json.loads(obj)
    assert list(qjson.loads(obj)) == list(json.loads(obj))


def test_escaped_strings_long_and_many() -> None:
    s = (r"https:\/\/si0.twimg.com\/profile_images\/1665180289\/" * 40) + r"\u00f1\n"
    doc = json.dumps([s, {"k": s}]).replace("\\\\", "\\")
    assert qjson.loads(doc) == json.loads(doc)
    # A big escaped string, then small ones (the reused buffer is longer
    # than they are), in the same call and in the next ones.
    big = "[" + json.dumps("x\n" * 5000) + "," + json.dumps('a"b') + "]"
    for _ in range(3):
        assert qjson.loads(big) == json.loads(big)
        assert qjson.loads('["q\\"r", "\\u00e9"]') == ['q"r', "é"]


def test_duplicate_keys_with_known_and_unknown_hashes() -> None:
    long_key = "k" * 60  # not cached: its hash is computed by the dict
    doc = json.dumps({"a": 1, long_key: 2, "b": 3})
    doc = doc[:-1] + f', "a": 4, "{long_key}": 5, "c\\u0041": 6, "cA": 7}}'
    for _ in range(3):  # first call fills the key cache, later ones hit it
        got = qjson.loads(doc)
        assert got == json.loads(doc)
        assert list(got) == list(json.loads(doc))


def test_many_keys_presized_and_repeated() -> None:
    keys = [f"key{i}" for i in range(300)] + ["é" * 5, "\u30c0" * 3, "😀"]
    doc = json.dumps([{k: i for i, k in enumerate(keys)}] * 4, ensure_ascii=False)
    for _ in range(2):
        assert qjson.loads(doc) == json.loads(doc)
        assert qjson.loads(doc.encode()) == json.loads(doc)


@pytest.mark.parametrize("wide", ["é", "ÿ", "Ā", "\u30c0", "\uffff", "😀", "\U0010ffff"])
def test_non_ascii_strings_with_ascii_runs(wide: str) -> None:
    # Each width (1, 2, 4 bytes a character) with ASCII runs of every
    # length around the 8-byte steps before, between and after.
    items = [
        "a" * pre + wide + "b" * mid + wide + "c" * post
        for pre in range(0, 20, 3)
        for mid in range(0, 18)
        for post in (0, 1, 7, 8, 9, 16)
    ]
    doc = json.dumps(items, ensure_ascii=False)
    assert qjson.loads(doc) == items
    assert qjson.loads(doc.encode()) == items


LITERAL_ENDS = [
    b"true",
    b"false",
    b"null",
    b"[true]",
    b"[1,false]",
    b'{"a":null}',
    b"[null] ",
    b"true\n",
    b"tru",
    b"fals",
    b"nul",
    b"[tru]",
    b"[truex]",
    b"[nulll]",
    b"truee",
    b"[true,]",
    b'{"a":fals}',
    b"[false\t]",
]


@pytest.mark.parametrize("doc", LITERAL_ENDS)
def test_literals_in_the_last_bytes_of_input(doc: bytes) -> None:
    """A literal within the last 8 bytes of input (read padded with
    spaces): the same value as json.loads, or the same error as validate."""
    try:
        want = json.loads(doc)
    except ValueError:
        with pytest.raises(qjson.JSONDecodeError) as ei:
            qjson.loads(doc)
        with pytest.raises(qjson.JSONDecodeError) as ev:
            qjson.validate(doc)
        assert (ei.value.pos, ei.value.msg) == (ev.value.pos, ev.value.msg)
        return
    assert qjson.loads(doc) == want
    assert qjson.loads_many(doc + b"\n" + doc) == [want, want]


def test_keys_that_share_a_cache_slot_stay_cached() -> None:
    # `retweet_count` and `notifications` pick the same slot of the key
    # cache; with its pairs of slots both stay cached, so every occurrence
    # of each is the same `str` object.
    doc = "[" + ",".join(['{"retweet_count": 1, "notifications": false}'] * 20) + "]"
    for _ in range(2):
        got = qjson.loads(doc)
        assert got == json.loads(doc)
        for name in ("retweet_count", "notifications"):
            keys = {id(k) for d in got for k in d if k == name}
            assert len(keys) == 1, name
    # Many distinct keys (slots and their pairs overwritten), twice.
    many = "{" + ",".join(f'"key{i}": {i}' for i in range(6000)) + "}"
    for _ in range(2):
        assert qjson.loads(many) == json.loads(many)
