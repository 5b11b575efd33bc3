"""Threads: one Doc (and its cursors and views) read from several
threads at once gives the same answers as a single thread, including while
the child tables of large containers are being built (they are created
lazily, on the second lookup, behind a mutex); parses on several threads at
once, with the GIL released for large inputs, are independent.

The GIL's release itself is tested in test_gil.py; the 2-thread throughput
is a benchmark (benchmarks/threads_bench.py), not a timed test.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Callable

import qjson
from conftest import walk_json

THREADS = 4


def run_threads(fn: Callable[[int], None], n: int = THREADS) -> None:
    """Run fn(i) on n threads started together; re-raise the first failure."""
    barrier = threading.Barrier(n)
    errors: list[BaseException] = []

    def target(i: int) -> None:
        try:
            barrier.wait()
            fn(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=target, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def make_body(n: int = 300) -> tuple[bytes, object]:
    value = {
        "model": "gpt-4o",
        "messages": [
            {"role": "user" if i % 2 else "system", "content": f"m{i} é\n", "n": i}
            for i in range(n)
        ],
        "wide": {f"k{i}": [i, str(i)] for i in range(n)},
    }
    return json.dumps(value).encode(), value


def test_one_doc_read_from_many_threads() -> None:
    body, value = make_body()
    entries = [e for e in walk_json(value) if not isinstance(e.value, (dict, list))]
    for _ in range(5):  # fresh docs: child tables get built under contention
        doc = qjson.parse(body)

        def read(i: int, doc: qjson.Doc = doc) -> None:
            rng = random.Random(i)
            mine = entries[:]
            rng.shuffle(mine)
            for e in mine:
                assert doc.get(e.dotted) == e.value, e.dotted
                assert doc.get(e.pointer) == e.value, e.pointer
            for j in range(300):
                k = rng.randrange(300)
                assert doc.get_int(f"messages[{k}].n") == k
                assert doc.get(f"wide.k{k}[1]") == str(k)
                assert doc.len(f"wide.k{k}") == 2
                if j % 50 == 0:
                    assert doc.len("wide") == 300

        run_threads(read)


def test_cursors_and_views_shared_between_threads() -> None:
    body, value = make_body()
    doc = qjson.parse(body)
    cur = doc.open("messages")
    wide = doc.get("wide")
    root = doc.root
    del doc

    def read(i: int) -> None:
        for k in range(i, 300, 7):
            assert cur.get_str(f"[{k}].content") == f"m{k} é\n"
            assert wide[f"k{k}"][0] == k
            assert root["messages"][k]["n"] == k
        assert qjson.materialize(root) == value
        assert dict(wide.items()) == value["wide"]

    run_threads(read)


def test_lazy_doc_errors_from_many_threads() -> None:
    body = b'{"ok": [1, 2, 3], "bad": "\\x", "big": [' + b"1," * 100 + b'"\xff"]}'
    doc = qjson.parse(body, lazy=True)

    def read(i: int) -> None:
        for _ in range(500):
            assert doc.get("ok[2]") == 3
            try:
                doc.get("bad")
                raise AssertionError("no error")
            except qjson.JSONDecodeError as e:
                assert e.pos == body.index(b"\\x")
            try:
                doc.get("big[100]")
                raise AssertionError("no error")
            except qjson.JSONDecodeError as e:
                assert "UTF-8" in e.msg

    run_threads(read)


def test_parallel_parses_of_large_inputs() -> None:
    """Large inputs are indexed with the GIL released: parses on several
    threads at once must not mix their state (scan buffers, errors)."""
    good = b"[" + b'{"a": [1, 2, "x"], "b": null},' * 40_000 + b"0]"
    bad = good[:-2] + b"]"  # a trailing comma

    def work(i: int) -> None:
        for _ in range(3):
            if i % 2:
                doc = qjson.parse(good)
                assert doc.len() == 40_001
                assert doc.get("[39999].a[2]") == "x"
            else:
                try:
                    qjson.parse(bad)
                    raise AssertionError("no error")
                except qjson.JSONDecodeError as e:
                    assert e.pos == len(bad) - 1
            assert len(qjson.loads(good)) == 40_001

    run_threads(work)


def test_dumps_and_loads_from_many_threads() -> None:
    _, value = make_body(100)

    def work(i: int) -> None:
        for _ in range(50):
            out = qjson.dumps(value, sort_keys=bool(i % 2))
            assert json.loads(out) == value
            assert qjson.loads(out) == value

    run_threads(work)
