"""dumps: the paths the container loops take without calls, and their edges.

The loops write short and medium strings (compact ASCII data, or the UTF-8
copy CPython caches on other strings), ints below 2**60 (read in place),
finite floats, empty containers, True/False/None straight into the output,
and hand everything else to the general path. Long strings take a 64-byte
AVX-512 path when the CPU has it (the Rust tests cover both block paths).
Each case here is checked against orjson, byte for byte, both as a list
item and as a dict key/value, compact, indented and with sorted keys.
"""

from __future__ import annotations

import enum
from typing import Any

import pytest
import qjson

orjson = pytest.importorskip("orjson", reason="orjson is a test dependency (the test extra)")

SPECIAL = ['"', "\\", "\n", "\x00", "\x1f", "\x7f", "é", "Ж", "😀", "\u2028", "/"]


def check(value: Any) -> None:
    """Same bytes as orjson, as a top-level value, a list item, a dict value,
    indented and with sorted keys; twice (the second call sees cached UTF-8
    forms and a different output-size hint)."""
    for _ in range(2):
        for v in (value, [value], [value, value], {"k": value}, {"a": [value], "b": {"c": value}}):
            assert qjson.dumps(v) == orjson.dumps(v), v
            assert qjson.dumps(v, indent=2) == orjson.dumps(v, option=orjson.OPT_INDENT_2), v
            assert qjson.dumps(v, sort_keys=True) == orjson.dumps(v, option=orjson.OPT_SORT_KEYS)


def strings() -> list[str]:
    out = []
    widths = [0, 1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48, 62, 63, 64, 65, 127, 129, 200]
    for n in widths:
        base = "".join(chr(ord("a") + i % 26) for i in range(n))
        out.append(base)
        for at in sorted({0, n // 2, max(n - 1, 0)}):
            if n == 0:
                continue
            for ch in SPECIAL:
                out.append(base[:at] + ch + base[at + 1 :])
    return out


@pytest.mark.parametrize("s", strings())
def test_strings_at_every_width(s: str) -> None:
    check(s)
    # As keys, too (short keys take the same fast path as values).
    d = {s: 1, s + "x": [s]}
    assert qjson.dumps(d) == orjson.dumps(d)
    assert qjson.dumps(d, sort_keys=True) == orjson.dumps(d, option=orjson.OPT_SORT_KEYS)


def test_utf8_cache_first_and_second_call() -> None:
    # Fresh non-ASCII strings have no cached UTF-8 form: the first dumps
    # takes the general path (which creates it), the second the fast path.
    for kind in ("é", "Ж", "😀"):
        fresh = [f"{i}" + kind * (i % 40) for i in range(300)]
        first = qjson.dumps(fresh)
        assert first == orjson.dumps(fresh)
        assert qjson.dumps(fresh) == first


@pytest.mark.parametrize(
    "n",
    [
        0,
        1,
        9,
        10,
        99,
        100,
        9999,
        10000,
        2**30 - 1,
        2**30,
        2**31,
        2**32,
        10**9,
        10**10,
        2**60 - 1,
        2**60,
        2**62,
        2**63 - 1,
        10**18,
        10**19 - 1,
    ],
)
def test_ints_around_digit_boundaries(n: int) -> None:
    for v in (n, -n, n + 1, -(n + 1)):
        if -(2**63) <= v < 2**64:
            check(v)
        assert qjson.dumps([v]) == b"[" + str(v).encode() + b"]"


def test_ints_beyond_64_bits_and_subclasses() -> None:
    for v in (2**63, 2**64 - 1, 2**64, -(2**63) - 1, 10**30, -(10**30)):
        assert qjson.dumps([v, {"k": v}]) == f'[{v},{{"k":{v}}}]'.encode()

    class MyInt(int):
        pass

    class Color(enum.IntEnum):
        RED = 1
        BIG = 2**40

    vals = [MyInt(5), MyInt(-(2**61)), Color.RED, Color.BIG, True, False]
    assert qjson.dumps(vals) == b"[5,-2305843009213693952,1,1099511627776,true,false]"


def test_floats_and_non_finite() -> None:
    for v in (0.0, -0.0, 1.0, 0.1, 1e16, 1e-7, 5e-324, 1.7976931348623157e308, 123.456):
        check(v)
    for bad in (float("nan"), float("inf"), float("-inf")):
        for v in ([bad], {"k": bad}, [1, [2.5, bad]]):
            with pytest.raises(qjson.JSONEncodeError):
                qjson.dumps(v)


def test_empty_containers_and_subclasses() -> None:
    class D(dict):  # type: ignore[type-arg]
        pass

    class L(list):  # type: ignore[type-arg]
        pass

    for v in ([], {}, [[]], [{}], {"a": []}, {"a": {}}, [D(), L(), D(a=1), L([1])], (), [()]):
        if any(isinstance(x, (D, L)) for x in (v if isinstance(v, list) else [])):
            assert qjson.dumps(v) == b'[{},[],{"a":1},[1]]'
            assert qjson.dumps(v, indent=2) == orjson.dumps(
                [{}, [], {"a": 1}, [1]], option=orjson.OPT_INDENT_2
            )
        else:
            check(v)


def test_short_lists_of_scalars() -> None:
    # Lists of 1 to 8 fast scalars are written inline; 9 items, a nested
    # non-empty list, a long or escaped string, a big int, a subclass or a
    # non-finite float send the list (and only it) to the general path.
    items: list[Any] = [
        0,
        -1,
        2**59,
        2**63 - 1,
        -(2**63),
        1.5,
        -0.0,
        1e-7,
        True,
        False,
        None,
        "a",
        "é",
        "x" * 63,
    ]
    items += ["x" * 64, 'q"', [], {}, [1], {"a": 1}, (), (1, 2)]
    for n in range(1, 10):
        for i in range(len(items)):
            v = [items[(i + j) % len(items)] for j in range(n)]
            check(v)
            check([v, v])
    check([[1.0, 2.0]] * 5000)  # pairs across the buffer's growth
    check([[[1, 2], [3, 4]], [[5, 6]]])
    # The first item picks the loop (lists of lists write short items
    # inline); the others may be anything.
    check([1, [1, 2], {"a": [3]}, [4.5], "s"])
    check([[1, 2], 3, {"a": [3]}, [[4]], (5, 6), [7] * 9, "s"])
    check(([1, 2], [3, 4]))

    class L(list):  # type: ignore[type-arg]
        pass

    assert qjson.dumps([L([1, 2]), [L([3])]]) == b"[[1,2],[[3]]]"
    for bad in (float("nan"), float("inf")):
        with pytest.raises(qjson.JSONEncodeError):
            qjson.dumps([[1.0, bad]])
    with pytest.raises(qjson.JSONEncodeError, match="surrogates"):
        qjson.dumps([[1, "\ud800"]])
    a: list[Any] = [1]
    a.append(a)
    with pytest.raises(qjson.JSONEncodeError, match="Circular"):
        qjson.dumps([a])


def test_singletons_mixed() -> None:
    v = [True, None, False] * 300 + [{"t": True, "n": None, "f": False}] * 50
    check(v)


def test_output_sizes_across_calls() -> None:
    # The result is sized from the previous call: a big result after small
    # ones, small ones after a big one, and sizes around the small-object
    # limit, all exact (length, content, hash).
    sizes = [0, 1, 400, 440, 445, 446, 447, 448, 449, 500, 5000, 300_000, 10, 300_000, 260_000, 2]
    for n in sizes:
        v = "x" * n
        got = qjson.dumps(v)
        want = orjson.dumps(v)
        assert got == want
        assert len(got) == n + 2
        assert hash(got) == hash(want)
        assert got + b"!" == want + b"!"
    big = [{"id": i, "name": f"n{i}", "tags": ["a", "b"], "v": i / 7} for i in range(20_000)]
    for v in (big, [1], big, big[:100], big):
        assert qjson.dumps(v) == orjson.dumps(v)


def test_output_growth_paths() -> None:
    # Results far above and far below the size guess (the previous
    # result), in a mixed order: misses of the guess, large buffers mostly
    # unused, small ones cut.
    def doc(n: int) -> list:
        return [{"k": "v" * 90, "n": i, "f": i / 3, "s": "é" * (i % 5)} for i in range(n)]

    # ~130 B per member: 0.4 MB, 1.3 MB, 4 MB, 13 KB results.
    mid, big, huge, small = doc(3_000), doc(10_000), doc(30_000), doc(100)
    order = [small, big, [1], big, mid, big, [1], huge, [1], mid, small, huge, mid, [], big]
    for v in order:
        got = qjson.dumps(v)
        want = orjson.dumps(v)
        assert got == want
        assert hash(got) == hash(want)
        assert got + b"!" == want + b"!"

    # Growth from a result written into a fresh object midway (default=).
    class Marker:
        pass

    qjson.dumps([1])
    v = [doc(200), Marker(), doc(5_000)]
    assert qjson.dumps(v, default=lambda o: doc(3)) == orjson.dumps(v, default=lambda o: doc(3))


def test_deep_cycles_found_past_inline_stack() -> None:
    # The first 32 open containers are kept inline, deeper ones on the
    # heap; a cycle entered at any depth is found.
    for depth in (0, 5, 31, 32, 33, 60):
        outer: list[Any] = []
        cur = outer
        for _ in range(depth):
            nxt: list[Any] = []
            cur.append(nxt)
            cur = nxt
        cur.append(outer)  # back to the top: a cycle of length depth + 1
        with pytest.raises(qjson.JSONEncodeError, match="Circular"):
            qjson.dumps(outer)
        inner: dict[str, Any] = {}
        cur.append({"x": inner})
        inner["self"] = inner
        cur.pop(0)
        with pytest.raises(qjson.JSONEncodeError, match="Circular"):
            qjson.dumps(outer)


def test_lone_surrogates_in_fast_positions() -> None:
    for v in (["ok", "\ud800"], {"k": "a\udfff"}, {"\ud800": 1}, ["x" * 70 + "\ud800"]):
        with pytest.raises(qjson.JSONEncodeError, match="surrogates"):
            qjson.dumps(v)
    assert qjson.dumps(["fine"]) == b'["fine"]'  # the buffer is usable again


def test_default_shrinking_the_list() -> None:
    items: list[Any] = [1, object(), 3, 4]

    def default(o: object) -> Any:
        del items[2:]
        return "gone"

    assert qjson.dumps(items, default=default) == b'[1,"gone"]'


def test_reentrant_dumps_from_default_while_growing() -> None:
    # The outer call outgrows its size guess (scratch buffer), and the hook
    # runs whole dumps calls of its own, big and small, meanwhile.
    class Marker:
        pass

    inner_big = {"k": ["v" * 50] * 2000}

    def default(o: object) -> Any:
        return [qjson.dumps(inner_big).decode(), qjson.dumps([1]).decode()]

    # A small size guess for the outer call: the hint is kept per shape
    # (top-level type and length), so a small list of the outer's length.
    qjson.dumps([1, 2, 3, 4])
    outer = [["x" * 100] * 500, Marker(), ["y" * 100] * 500, Marker()]
    want = orjson.dumps(outer, default=lambda o: default(o))
    assert qjson.dumps(outer, default=default) == want
    assert qjson.dumps(outer, default=default) == want


class _Slots:
    def __init__(self) -> None:
        self.a = 1
        self.b = "two"
        self.c = [3.0]


def test_dict_tables_of_every_kind() -> None:
    # str-keyed tables with holes (deleted entries), tables of the general
    # kind (a non-str key was once inserted) holding only str keys, split
    # tables (an instance's __dict__), and big tables (wide index entries).
    holes = {f"k{i}": i for i in range(40)}
    for i in range(0, 40, 3):
        del holes[f"k{i}"]
    general: dict[Any, Any] = {1: "x", "a": 1}
    del general[1]
    general["b"] = [True, None]
    split = vars(_Slots())
    big = {str(i): i for i in range(70000)}
    for i in range(0, 70000, 7):
        del big[str(i)]
    all_deleted = {"a": 1}
    del all_deleted["a"]
    for d in (holes, general, split, big, all_deleted, {"a": {"b": holes}}, [general, split]):
        check(d)
    assert qjson.dumps(general) == b'{"a":1,"b":[true,null]}'
    with pytest.raises(qjson.JSONEncodeError, match="str"):
        qjson.dumps({"a": 1, 2: 3})


def test_default_mutating_the_dict() -> None:
    # A hook that grows the dict (its table is replaced) or deletes members
    # not yet written: memory-safe, valid JSON, the members before it kept.
    class Marker:
        pass

    grow: dict[str, Any] = {"a": 1, "m": Marker(), "z": 2}

    def add(o: object) -> Any:
        for i in range(100):
            grow[f"n{i}"] = i
        return "hooked"

    out = qjson.loads(qjson.dumps(grow, default=add))
    assert out["a"] == 1 and out["m"] == "hooked"

    shrink: dict[str, Any] = {"a": 1, "m": Marker(), "y": 2, "z": 3}

    def delete(o: object) -> Any:
        del shrink["y"]
        return "hooked"

    assert qjson.dumps(shrink, default=delete) == b'{"a":1,"m":"hooked","z":3}'


def test_default_replacing_the_dict_table() -> None:
    # The dict writer reads a table's entries once and again only after a
    # value that may run user code: a hook that grows the dict (its table is
    # replaced by a larger one) and then sets a member not yet written must
    # be seen, as a walk that re-reads the table at every step sees it (the
    # old table would still say "z": 2 and end there). Also after a nested
    # container whose item runs the hook, and with a long str value
    # (written without user code) in between.
    class Marker:
        pass

    for shape in ("direct", "nested"):
        d: dict[str, Any] = {"a": 1, "m": Marker(), "s": "x" * 100, "z": 2}
        if shape == "nested":
            d["m"] = [Marker()]

        def grow(o: object, d: dict[str, Any] = d) -> Any:
            for i in range(20):
                d[f"n{i}"] = i
            d["z"] = "new"
            return "hooked"

        hooked: Any = "hooked" if shape == "direct" else ["hooked"]
        want = {"a": 1, "m": hooked, "s": "x" * 100, "z": "new"}
        want.update({f"n{i}": i for i in range(20)})
        assert qjson.dumps(d, default=grow) == orjson.dumps(want)


def test_size_hints_of_alternating_shapes() -> None:
    # dumps sizes its buffer from the last result of the same shape (top-level
    # type and length): large and small documents in turn, shapes that share
    # a length, a shape whose size changes a lot between calls, and non-dict
    # tops all give orjson's bytes, with each guess too large, too small or right.
    big = {"k": ["x" * 100] * 20_000, "n": list(range(5000))}
    small = {"a": 1, "b": [2.5, None]}
    grown = {"a": ["y" * 50] * 30_000, "b": {}}  # the same shape as `small`
    docs: list[Any] = [big, small, big, grown, small, grown, grown, big]
    docs += [[big], [1], "s" * 70_000, 1.5]
    for _ in range(3):
        for d in docs:
            assert qjson.dumps(d) == orjson.dumps(d)
        for d in reversed(docs):
            assert qjson.dumps(d) == orjson.dumps(d)
