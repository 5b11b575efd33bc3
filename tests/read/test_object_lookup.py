"""Key lookup in objects: the member walk, the per-object key tables built
for objects read again and again (fingerprints up to 64 members, a hash map
beyond), and how the cost of repeated reads grows with the object's width.

Every read is checked against a reference built from `json.loads` with the
first occurrence of a repeated key winning, as for every qjson read.
"""

from __future__ import annotations

import json
import time

import pytest
import qjson
from conftest import reference_loads


def _readers(data: bytes, *, lazy: bool = False):
    """(name, read(key) -> value) for every way of reading a key."""
    doc = qjson.parse(data, lazy=lazy)
    cur = doc.open("")
    root = doc.root

    def pointer(k: str):
        return doc.get("/" + k.replace("~", "~0").replace("/", "~1"))

    def quoted(k: str):
        return doc.get("[" + json.dumps(k) + "]")

    return [
        ("quoted", quoted),
        ("pointer", pointer),
        ("cursor", lambda k: cur.get("[" + json.dumps(k) + "]")),
        ("view", lambda k: root[k]),
    ]


# Keys chosen to collide in the fingerprint (length and first eight bytes)
# or to need unescaping; some repeat (the first occurrence wins).
_TRICKY_MEMBERS = [
    ('"created_at"', "1"),
    ('"created_by"', "2"),
    ('"created_at"', '"dup"'),
    ('"id"', "3"),
    ('"\\u0069d"', '"escaped dup of id"'),
    ('"\\u0061bc"', "4"),
    ('"abc"', '"dup of escaped abc"'),
    ('""', "5"),
    ('"a\\\\b"', "6"),
    ('"a\\"b"', "7"),
    ('"long_key_sharing_prefix_1"', "8"),
    ('"long_key_sharing_prefix_2"', "9"),
    ('"\\u00e9t\\u00e9"', "10"),
    ('"été"', '"dup of escaped été"'),
    ('"x.y"', "11"),
    ('"k~/"', "12"),
    ('"nested"', '{"a": [1, {"b": 2}], "c": "d"}'),
    ('"list"', "[1, 2, [3]]"),
    ('"t"', "true"),
    ('"n"', "null"),
]


@pytest.mark.parametrize("width", [5, 9, 20, 64, 65, 200])
@pytest.mark.parametrize("lazy", [False, True])
def test_repeated_reads_agree_with_the_first_occurrence(width: int, lazy: bool) -> None:
    """Read every key of objects of several widths many times (so that any
    table is built and used) in several orders, in compact and spaced form."""
    members = list(_TRICKY_MEMBERS)
    i = 0
    while len(members) < width:
        members.append((f'"k{i}"', str(i)))
        i += 1
    members = members[:width]
    for sep in (",", " ,\n  "):
        data = ("{" + sep.join(f"{k}:{v}" for k, v in members) + "}").encode()
        want = reference_loads(data)
        absent = ["created_a", "created_atx", "zz", "\\u0069d", "long_key_sharing_prefix_3"]
        for name, read in _readers(data, lazy=lazy):
            for rnd in range(4):
                keys = list(want) if rnd % 2 == 0 else list(reversed(want))
                for k in keys:
                    assert read(k) == want[k], (name, k)
                for k in absent:
                    if k not in want:
                        with pytest.raises(KeyError):
                            read(k)


def test_lazy_document_with_an_undecodable_key() -> None:
    """A key with a bad escape in a lazy document matches nothing; the other
    keys read as usual, before and after any table is built."""
    members = [f'"k{i}": {i}' for i in range(30)] + ['"bad\\x": 1', '"k5": "dup"']
    data = ("{" + ", ".join(members) + "}").encode()
    doc = qjson.parse(data, lazy=True)
    root = doc.root
    for _ in range(5):
        for i in range(30):
            assert doc.get_int(f"k{i}") == i
            assert root[f"k{i}"] == i
        with pytest.raises(KeyError):
            doc.get("badx")


def test_repeated_reads_of_a_wide_array_element() -> None:
    arr = list(range(100))
    doc = qjson.parse(json.dumps(arr).encode())
    for _ in range(3):
        for i in range(100):
            assert doc.get_int(f"[{i}]") == i
            assert doc.get_int(f"[{i - 100}]") == i
    with pytest.raises(KeyError):
        doc.get("[100]")


def _best_time(fn, repeat: int = 7) -> float:
    """The least CPU time of `repeat` calls (CPU time, not wall time: on a
    busy machine a run longer than a scheduler slice waits for the CPU)."""
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


@pytest.mark.parametrize("order", ["forward", "reverse", "same-last-key"])
@pytest.mark.parametrize("reader", ["get_int", "cursor", "view", "pointer"])
def test_reads_of_every_key_of_a_wide_object_stay_linear(order: str, reader: str) -> None:
    """n reads into an object of n members cost O(n) in total, not O(n^2):
    10x the width (10 000 members) may cost at most 40x (a walk per read
    would cost 100x). Checked loosely, on the best of 7 runs."""

    def setup(n: int):
        data = ("{" + ",".join(f'"key{i}":{i}' for i in range(n)) + "}").encode()
        if order == "forward":
            keys = [f"key{i}" for i in range(n)]
        elif order == "reverse":
            keys = [f"key{i}" for i in reversed(range(n))]
        else:
            keys = [f"key{n - 1}"] * n
        if reader == "pointer":
            keys = ["/" + k for k in keys]
        want = [int(k.rpartition("y")[2]) for k in keys]

        def run() -> list:
            # A fresh document each time: no table left from a previous run.
            doc = qjson.parse(data)
            if reader == "cursor":
                read = doc.open("").get_int
            elif reader == "view":
                read = doc.root.__getitem__
            else:
                read = doc.get_int
            return [read(k) for k in keys]

        assert run() == want
        return run

    small, large = setup(1_000), setup(10_000)
    t_small = _best_time(small)
    t_large = _best_time(large)
    ratio = t_large / max(t_small, 50e-6)
    assert ratio < 40, f"{t_small * 1e3:.2f} ms -> {t_large * 1e3:.2f} ms (x{ratio:.0f})"


@pytest.mark.parametrize("n", [0, 1, 6, 7, 8, 9, 15, 16, 17])
@pytest.mark.parametrize("lazy", [False, True])
def test_keys_at_the_very_end_of_the_input(n: int, lazy: bool) -> None:
    """The last key of the input sits a few bytes before its end (no
    whitespace after the closing brace): the word reads of the member walk
    must not run past the input, and must still find or miss the key."""
    key = "k" * n
    for value in ("1", '"s"', "[]", "{}", "null"):
        data = ('{"a":0,"' + key + '":' + value + "}").encode()
        want = json.loads(data)
        for name, read in _readers(data, lazy=lazy):
            assert read(key) == want[key], (name, data)
            assert read("a") == 0, (name, data)
            for miss in (key + "x", key[:-1] + "j" if n else "j"):
                with pytest.raises((KeyError, qjson.PathError)):
                    read(miss)
        # The same object last in an array: get_all walks each element.
        rows = ("[" + ",".join([data.decode()] * 3) + "]").encode()
        assert (
            qjson.parse(rows, lazy=lazy).get_all("[*]." + key if key else '[*][""]')
            == [want[key]] * 3
        )
