"""Leaks: 10^5 iterations of parse / get / open / views / loads /
validate / dumps (and decode / edit / dumps when the build has it) keep RSS
stable and reference counts unchanged.

RSS is read from /proc/self/statm (Linux; the RSS checks skip elsewhere).
After a warm-up (allocator pools, interned strings, caches), the growth over
10^5 more iterations must stay under a few MB: a leak of even 100 bytes per
iteration would be 10 MB.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable

import pytest
import qjson

N = 100_000
RSS_BOUND = 4 * 1024 * 1024

BODY = (
    b'{"model": "gpt-4o", "temperature": 0.7, "n": 12345678901234567890123,'
    b' "esc": "a\\n\\u00e9\\ud83d\\ude00", "messages": ['
    + b",".join(b'{"role": "user", "content": "hello %d"}' % i for i in range(30))
    + b"]}"
)
BAD = b'{"model": "gpt-4o", "messages": [1, 2,, 3]}'


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


needs_proc = pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")


def run(fn: Callable[[], object], n: int) -> None:
    for _ in range(n):
        fn()


def assert_stable(fn: Callable[[], object], n: int = N) -> None:
    run(fn, n // 10)  # warm-up
    gc.collect()
    objects_before = len(gc.get_objects())
    before = rss()
    run(fn, n)
    gc.collect()
    grown = rss() - before
    objects_after = len(gc.get_objects())
    assert grown < RSS_BOUND, f"RSS grew by {grown / 1e6:.1f} MB over {n} iterations"
    assert objects_after - objects_before < 100, (objects_before, objects_after)


def parse_and_read() -> None:
    doc = qjson.parse(BODY)
    doc.get("model")
    doc.get_float("temperature")
    doc.get("n")
    doc.get_str("esc")
    doc.get("messages[29].content")  # second lookup: the child table
    doc.get("messages[28].content")
    doc.len("messages")
    doc.raw("messages[3]")
    doc.type("/messages/2/role")
    doc.get("missing", None)
    cur = doc.open("messages[5]")
    cur.get_str("role")


def views() -> None:
    root = qjson.parse(BODY).root
    msgs = root["messages"]
    for m in msgs[:3]:
        m["content"]
        list(m.items())
    qjson.materialize(msgs[0])
    root == {"x": 1}  # noqa: B015


def errors() -> None:
    try:
        qjson.parse(BAD)
    except qjson.JSONDecodeError:
        pass
    doc = qjson.parse(b'{"a": [1]}')
    for path, exc in (("b", qjson.PathError), ("a[", ValueError), ("a", TypeError)):
        try:
            if exc is TypeError:
                doc.get_str(path)
            else:
                doc.get(path)
        except exc:
            pass
    try:
        qjson.dumps({1j: 1})
    except TypeError:
        pass


def eager() -> None:
    v = qjson.loads(BODY)
    qjson.validate(BODY)
    qjson.dumps(v)
    qjson.dumps(v, indent=2, sort_keys=True)
    qjson.dumps([1.5, None, True, "é", 2**70], default=str)


def decode_edit_dumps() -> None:
    v = qjson.decode(BODY)
    v["model"] = "gpt-5"
    v["messages"][0]["content"] = "edited"
    del v["temperature"]
    qjson.dumps(v)


CASES = {
    "parse-get": parse_and_read,
    "views": views,
    "errors": errors,
    "loads-validate-dumps": eager,
}
if hasattr(qjson, "decode"):
    CASES["decode-edit-dumps"] = decode_edit_dumps


@needs_proc
@pytest.mark.parametrize("name", sorted(CASES))
def test_rss_stays_flat(name: str) -> None:
    assert_stable(CASES[name])


@needs_proc
def test_large_documents_are_freed() -> None:
    big = b"[" + b'"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",' * 100_000 + b"1]"

    def once() -> None:
        doc = qjson.parse(big)
        doc.get("[99999]")
        doc.root[5]
        qjson.loads(big)

    assert_stable(once, n=200)


@pytest.mark.parametrize("kind", ["bytes", "str", "memoryview", "bytearray"])
def test_refcounts_of_inputs_and_results_are_unchanged(kind: str) -> None:
    data: object = {
        "bytes": bytes(BODY),
        "str": BODY.decode(),
        "memoryview": memoryview(bytes(BODY)),
        "bytearray": bytearray(BODY),
    }[kind]
    path = "messages[3].content"
    default = object()
    base = sys.getrefcount(data), sys.getrefcount(path), sys.getrefcount(default)
    for _ in range(1000):
        doc = qjson.parse(data)
        doc.get(path)
        doc.get("nope", default)
        doc.open(path).raw()
        doc.root["messages"][0]
        qjson.loads(data)
        qjson.validate(data)
        try:
            qjson.parse(data, max_depth=1)
        except qjson.JSONDecodeError as e:
            del e
    del doc
    gc.collect()
    assert (sys.getrefcount(data), sys.getrefcount(path), sys.getrefcount(default)) == base


def test_refcounts_in_dumps_are_unchanged() -> None:
    key, value, inner = "key", object(), [1, 2]
    obj = {key: inner, "o": value}
    base = [sys.getrefcount(x) for x in (key, value, inner, obj)]

    def default(o: object) -> str:
        return "x"

    for _ in range(1000):
        qjson.dumps(obj, default=default)
        qjson.dumps(obj, default=default, sort_keys=True, indent=1)
        try:
            qjson.dumps(obj)
        except TypeError:
            pass
    gc.collect()
    assert [sys.getrefcount(x) for x in (key, value, inner, obj)] == base
