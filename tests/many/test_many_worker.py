"""parse_many's splitting thread (src/python/many/worker.rs: streams of 2 MiB
and more left get a thread of their own once the caller lags behind the
inline split): the same documents, errors and offsets as the inline split
(open_many over a file object, which never uses the thread), the thread gone
once the iterator is, and documents that outlive both. Most tests force the
thread from the first window (`_many_thread("always")`); the last ones check
when the default policy starts it."""

from __future__ import annotations

import gc
import io
import os
import sys
import time

import pytest
import qjson
from conftest import REPO_DIR
from qjson import _qjson

sys.path.insert(0, str(REPO_DIR))
from benchmarks.payloads import batch_file  # noqa: E402

WORKER_MIN = 2 * 1024 * 1024

BAD = [
    b'{"a": "open}',
    b'{"a": "\xff\xfe"}',
    b"[" * 40 + b"]" * 40,
    b"[1,]",
    b'{"a": 1} \\',
    b'{"n": 01}',
    b'{\n  "pretty": [1,],\n  "b": 2\n}',
    b'{"a": 1} {"b": 2}',
    b"\n\n   \n",
]


def mixed_stream(size: int) -> bytes:
    """Batch-API lines with a bad (or odd) line after every ninth good one."""
    good = batch_file(size, seed=5).splitlines(keepends=True)
    out = []
    for i, line in enumerate(good):
        out.append(line)
        if i % 9 == 4:
            out.append(BAD[(i // 9) % len(BAD)] + b"\n")
    return b"".join(out)


def outcomes(it) -> list:
    """Each step of the iterator: the document's bytes, or the error's fields."""
    got = []
    while True:
        try:
            d = next(it)
        except StopIteration:
            return got
        except qjson.JSONDecodeError as e:
            got.append(("error", e.doc_index, e.msg, e.pos, e.lineno, e.colno))
        else:
            got.append(d.raw())


def errors_of(it) -> list:
    return [(e.doc_index, e.msg, e.pos, e.lineno, e.colno) for e in it.errors]


def threads() -> int:
    """parse_many's splitting threads in this process (by their name).

    Counting every task instead let another library's thread that starts or
    ends meanwhile change the count.
    """
    n = 0
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm") as f:
                # (comm holds 15 bytes of "qjson-parse-many".)
                n += f.read().startswith("qjson-parse-man")
        except (FileNotFoundError, ProcessLookupError):
            pass  # a task that ended while the directory was read
    return n


def threads_left(want: int) -> int:
    """threads(), once it is `want` or after 5 s.

    A thread that was joined may still be listed for a moment: Linux wakes
    the joining thread (pthread_join) when the exiting one clears its tid,
    a step before it unlists the task. On a busy 2-core machine the reader
    can come in between (it did once in CI).
    """
    deadline = time.monotonic() + 5.0
    n = threads()
    while n != want and time.monotonic() < deadline:
        time.sleep(0.001)
        n = threads()
    return n


@pytest.fixture(autouse=True)
def always_thread(request):
    """The thread from the first window (tests named test_auto_* keep the default)."""
    policy = "auto" if request.node.name.startswith("test_auto_") else "always"
    old = _qjson._many_thread(policy)
    yield
    _qjson._many_thread(old)


@pytest.fixture(scope="module")
def stream() -> bytes:
    data = mixed_stream(5 * 1024 * 1024)
    assert len(data) >= 2 * WORKER_MIN
    return data


@pytest.mark.parametrize("lazy", [False, True])
def test_skip_mode_equals_the_inline_split(stream, lazy):
    it = qjson.parse_many(stream, errors="skip", max_depth=16, lazy=lazy)
    got = [d.raw() for d in it]
    ref = qjson.open_many(io.BytesIO(stream), errors="skip", max_depth=16, lazy=lazy)
    want = [d.raw() for d in ref]
    assert got == want
    assert errors_of(it) == errors_of(ref)
    assert len(it.errors) > 30  # (lazy: value errors wait for a read)
    assert len(got) > 500


def test_raise_mode_equals_the_inline_split(stream):
    got = outcomes(qjson.parse_many(stream, max_depth=16))
    want = outcomes(qjson.open_many(io.BytesIO(stream), max_depth=16))
    assert got == want
    errors = [g for g in got if isinstance(g, tuple)]
    assert len(errors) > 50
    # doc_index counts every document, good or bad
    first = next(i for i, g in enumerate(got) if isinstance(g, tuple))
    assert errors[0][1] == first


def test_good_stream_reads_every_line():
    data = batch_file(3 * 1024 * 1024, seed=6)
    lines = [line for line in data.splitlines() if line.strip()]
    docs = list(qjson.parse_many(data))
    assert [d.raw() for d in docs] == lines
    assert [d.get_str("custom_id") for d in docs] == [f"request-{i}" for i in range(len(lines))]


def test_the_thread_ends_with_the_iterator(stream):
    gc.collect()
    before = threads()
    it = qjson.parse_many(stream, errors="skip")
    next(it)
    assert threads() == before + 1
    del it  # abandoned early: the thread is told to stop and joined
    assert threads_left(before) == before
    it = qjson.parse_many(stream, errors="skip")
    for _ in it:
        pass
    assert threads_left(before) == before  # finished: the thread has ended
    del it
    small = qjson.parse_many(stream[: WORKER_MIN // 2].rsplit(b"\n", 1)[0], errors="skip")
    next(small)
    assert threads() == before  # small streams are split inline


def test_docs_outlive_the_iterator_and_the_input():
    data = batch_file(WORKER_MIN * 2, seed=7)
    it = qjson.parse_many(data)
    docs = [next(it) for _ in range(20)]
    want = [line for line in data.splitlines() if line.strip()][:20]
    del it, data
    gc.collect()
    assert [d.raw() for d in docs] == want
    assert docs[19].get_str("custom_id") == "request-19"


@pytest.mark.parametrize("policy", ["always", "never"])
def test_recycled_index_vectors_read_right(policy):
    # Each Doc dropped as the loop moves on gives its index vectors back to
    # the thread that builds later lines' indexes in them: the splitting
    # thread, or the caller itself when it splits inline.
    data = batch_file(6 * 1024 * 1024, seed=8)
    lines = [line for line in data.splitlines() if line.strip()]
    old = _qjson._many_thread(policy)
    try:
        n = 0
        kept = []
        for i, d in enumerate(qjson.parse_many(data)):
            assert d.get_str("custom_id") == f"request-{i}"
            assert d.raw() == lines[i]
            if i % 50 == 0:
                kept.append(d)  # (not returned while kept)
            n += 1
        assert n == len(lines)
        assert [d.raw() for d in kept] == lines[::50]
    finally:
        _qjson._many_thread(old)


def test_docs_kept_past_the_stream_drop_later_and_elsewhere():
    import threading

    data = batch_file(6 * 1024 * 1024, seed=9)
    lines = [line for line in data.splitlines() if line.strip()]
    it = qjson.parse_many(data)
    kept = {}
    for i, d in enumerate(it):
        if i % 7 == 0:
            kept[i] = d  # the others are dropped (and returned) as it goes
        if i == len(lines) // 2:
            break
    del it, d  # the stream closes: later drops free as usual
    gc.collect()
    assert all(kept[i].raw() == lines[i] for i in kept)
    half = sorted(kept)[: len(kept) // 2]
    elsewhere = [kept.pop(i) for i in half]

    def drop_there():
        assert all(d.get_str("custom_id").startswith("request-") for d in elsewhere)
        elsewhere.clear()

    t = threading.Thread(target=drop_there)
    t.start()
    t.join()
    assert not elsewhere
    # A new stream on this thread, then the old Docs dropped here.
    again = [d.get_str("custom_id") for d in qjson.parse_many(data)]
    assert again == [f"request-{i}" for i in range(len(lines))]
    assert all(kept[i].get_str("custom_id") == f"request-{i}" for i in kept)
    kept.clear()


def test_a_str_and_a_bytearray_input(stream):
    want = [d.raw() for d in qjson.parse_many(stream, errors="skip")]
    text = stream.decode("utf-8", errors="replace")
    got = [d.raw() for d in qjson.parse_many(bytearray(stream), errors="skip")]
    assert got == want
    # (the replacement characters make the bad-UTF-8 lines valid)
    fixed = stream.count(b'"\xff\xfe"')
    assert fixed > 0
    assert len(list(qjson.parse_many(text, errors="skip"))) == len(want) + fixed


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_neither_hangs_nor_reads_on(stream):
    it = qjson.parse_many(stream, errors="skip")
    next(it)
    pid = os.fork()
    if pid == 0:  # the child: no splitting thread here
        code = 1
        try:
            try:
                for _ in it:
                    pass
            except RuntimeError as e:
                code = 0 if "forked" in str(e) else 2
            del it  # must not wait for the parent's thread
        finally:
            os._exit(code)
    for _ in range(200):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("the forked child hung")
    assert os.waitstatus_to_exitcode(status) == 0
    # the parent's iterator goes on
    assert len(list(it)) > 500


def busy(seconds: float) -> None:
    """Spend `seconds` of this thread's CPU time."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_auto_a_caller_that_lags_gets_the_thread():
    # Each document takes the caller (by its thread's CPU clock) longer
    # than its share of the split: from the third window on, the thread
    # splits ahead.
    data = batch_file(6 * 1024 * 1024, seed=10)
    lines = [line for line in data.splitlines() if line.strip()]
    gc.collect()
    before = threads()
    it = qjson.parse_many(data)
    seen = []
    most = before
    for i, d in enumerate(it):
        if len(seen) < len(lines) // 2:
            busy(0.0002)
        most = max(most, threads())
        seen.append(d.get_str("custom_id"))
        assert d.raw() == lines[i]
    assert most == before + 1
    assert seen == [f"request-{i}" for i in range(len(lines))]
    del it
    assert threads_left(before) == before


def test_auto_never_and_short_streams_split_inline():
    data = batch_file(6 * 1024 * 1024, seed=11)
    gc.collect()
    before = threads()
    old = _qjson._many_thread("never")
    try:
        for _ in qjson.parse_many(data):
            busy(0.0001)
            assert threads() == before
    finally:
        _qjson._many_thread(old)
    # Less than two windows: no thread even when the caller lags.
    short = data[: 3 * WORKER_MIN // 4].rsplit(b"\n", 1)[0]
    for _ in qjson.parse_many(short):
        busy(0.0002)
        assert threads() == before
    with pytest.raises(ValueError):
        _qjson._many_thread("sometimes")
