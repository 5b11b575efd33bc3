"""The memo of a document's last path steps (src/doc/memo.rs): repeated
path reads (a key of the same object again, the next element of the same
array) answer from the member or element a previous read found.

Every read is checked against json.loads with the first occurrence of a
repeated key winning, in the orders loops use (forward, backward, strided,
the same element twice, negative indices), from a Doc and from a Cursor,
and from several threads sharing one document.
"""

from __future__ import annotations

import json
import random
import threading

import pytest
import qjson
from conftest import reference_loads


def _chat(n: int) -> bytes:
    """A chat request: the messages key far into the root, a duplicate of
    it after, messages of several shapes (a duplicate content key, an
    escaped key that decodes to `role`)."""
    msgs = []
    for i in range(n):
        if i % 3 == 0:
            msgs.append(f'{{"role":"user","content":"m{i}","content":"dup"}}')
        elif i % 3 == 1:
            msgs.append(f'{{"\\u0072ole":"esc","role":"r{i}","content":[{i},{{"type":"text"}}]}}')
        else:
            msgs.append(f'{{ "role" : "assistant" , "content" : {i} }}')
    return (
        '{"model":"m","temperature":0.5,"max_tokens":9,"stream":false,"user":"u",'
        f'"messages":[{",".join(msgs)}],"tools":[],"messages":"dup"}}'
    ).encode()


def _paths(n: int) -> list[str]:
    out = ["model", "temperature", "stream", "messages", "tools", "nope"]
    for i in range(-n - 1, n + 1):
        out += [f"messages[{i}]", f"messages[{i}].role", f"messages[{i}].content"]
        out += [f"messages[{i}].content[1].type", f"messages[{i}].nope"]
    return out


def _want(data: bytes, path: str):
    v = reference_loads(data)
    for seg in path.replace("[", ".[").split("."):
        if not seg:
            continue
        if seg.startswith("["):
            i = int(seg[1:-1])
            if not isinstance(v, list) or not -len(v) <= i < len(v):
                return KeyError
            v = v[i]
        else:
            if not isinstance(v, dict) or seg not in v:
                return KeyError
            v = v[seg]
    return v


def _read(doc, path: str):
    try:
        return qjson.materialize(doc.get(path))
    except KeyError:
        return KeyError


@pytest.mark.parametrize("n", [1, 3, 8, 17, 40])
@pytest.mark.parametrize("lazy", [False, True])
def test_loops_of_path_reads_agree_with_json(n: int, lazy: bool) -> None:
    data = _chat(n)
    paths = _paths(n)
    want = {p: _want(data, p) for p in paths}
    doc = qjson.parse(data, lazy=lazy)
    orders = [
        paths,
        paths[::-1],
        [p for p in paths for _ in range(2)],
        paths[::3] + paths[1::3] + paths[2::3],
        random.Random(n).choices(paths, k=4 * len(paths)),
    ]
    for order in orders:
        for p in order:
            assert _read(doc, p) == want[p], p
    # From a cursor, relative paths; through compiled paths.
    cur = doc.open("messages")
    for i in list(range(n)) + list(range(n - 1, -1, -1)):
        assert _read(cur, f"[{i}].content") == want[f"messages[{i}].content"]
        assert _read(cur, qjson.Path(f"[{i}].role")) == want[f"messages[{i}].role"]


def test_threads_share_one_document() -> None:
    n = 24
    data = _chat(n)
    paths = _paths(n)
    want = {p: _want(data, p) for p in paths}
    doc = qjson.parse(data)
    errors: list[str] = []

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(3000):
            p = rng.choice(paths)
            if _read(doc, p) != want[p]:
                errors.append(p)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("key", ['a":', 'a":"x', 'a":"x"'])
def test_a_key_holding_a_quote_is_not_the_remembered_member(lazy: bool, key: str) -> None:
    # The remembered member `"a":"x"` runs on into its value: the bytes of
    # such a key match it up to one of the value's quotes.
    member = json.dumps(key).encode()
    text = b'{"k0":0,"k1":1,"k2":2,"k3":3,"a":"x",' + member + b':"y"}'
    pointer = "/" + key
    bracket = "[" + json.dumps(key) + "]"
    d = qjson.parse(text, lazy=lazy)
    for _ in range(2):
        assert d.get("a") == "x"
        assert d.get(pointer) == "y"
        assert d.get("a") == "x"
        assert d.get(bracket) == "y"
    d = qjson.parse(b'{"k0":0,"k1":1,"k2":2,"k3":3,"a":"x"}', lazy=lazy)
    assert d.get("a") == "x"
    assert d.get(pointer, None) is None
    assert d.open("").get(bracket, None) is None
