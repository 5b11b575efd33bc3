"""Floats read by ``qjson.loads`` are exactly Python's ``float(text)``.

``loads`` reads numbers on several paths (short plain decimals, plain
fractions of up to 19 digits, everything else through the general number
reader and the float parser), chosen by the token's shape and by whether 32
bytes can be read past its start. Each generated number is therefore read
alone, inside an array next to others, and followed by padding, and must
give the float ``json.loads`` gives: equal, and with the same ``repr`` (so
the sign of zero and every last bit count).
"""

from __future__ import annotations

import json
import math
import struct
from decimal import Decimal, localcontext

import pytest
import qjson
from conftest import data_path
from hypothesis import given, settings
from hypothesis import strategies as st


def same(a: object, b: object) -> bool:
    """Equal, and written alike (``-0.0`` vs ``0.0``, every digit of a float)."""
    return a == b and json.dumps(a) == json.dumps(b)


def check_number(text: str) -> None:
    """``text`` read by ``loads`` as every kind of document gives json's value."""
    want = json.loads(text)
    docs = [
        text,
        f"[{text}]",
        f"[{text}]" + " " * 40,
        f"[1.5,{text},{text},-2]" + " " * 40,
        '{"k":' + text + "}",
        f"[{text}" + " " * 40 + "]",
    ]
    for doc in docs:
        got = qjson.loads(doc)
        ref = json.loads(doc)
        assert same(got, ref), (doc, got, ref)
        assert same(qjson.loads(doc.encode()), ref), doc
    assert isinstance(want, (int, float))
    if isinstance(want, float):
        assert repr(qjson.loads(text)) == repr(float(text)), text


def exact_decimal(x: float) -> Decimal:
    """The exact value of ``x``."""
    return Decimal(x)


def next_up(x: float) -> float:
    """The float after ``x`` (positive, finite)."""
    return struct.unpack("<d", struct.pack("<q", struct.unpack("<q", struct.pack("<d", x))[0] + 1))[
        0
    ]


digits = st.text(alphabet="0123456789", min_size=1, max_size=30)


@st.composite
def number_texts(draw: st.DrawFn) -> str:
    """Any number the grammar allows: sign, integer part, fraction, exponent."""
    sign = draw(st.sampled_from(["", "-"]))
    lead = draw(st.sampled_from(["0", "nonzero"]))
    integer = (
        "0"
        if lead == "0"
        else draw(st.integers(1, 9)).__str__() + draw(st.text(alphabet="0123456789", max_size=25))
    )
    frac = draw(st.one_of(st.just(""), digits.map(lambda d: "." + d)))
    exp = draw(
        st.one_of(
            st.just(""),
            st.builds(
                lambda e, p, n: f"{e}{p}{n}",
                st.sampled_from("eE"),
                st.sampled_from(["", "+", "-"]),
                st.one_of(st.integers(0, 30), st.integers(0, 400), st.integers(280, 360)),
            ),
        )
    )
    return sign + integer + frac + exp


@st.composite
def coordinates(draw: st.DrawFn) -> str:
    """Plain fractions with 12 to 21 significant digits (canada.json's shape)."""
    whole = draw(st.integers(0, 10**6))
    frac_len = draw(st.integers(1, 20))
    frac = draw(st.integers(0, 10**frac_len - 1))
    sign = draw(st.sampled_from(["", "-"]))
    return f"{sign}{whole}.{frac:0{frac_len}d}"


@st.composite
def near_halfway(draw: st.DrawFn) -> str:
    """Decimals at, just below and just above the midpoint of two floats."""
    bits = draw(st.integers(1, 0x7FEF_FFFF_FFFF_FFFE))
    x = struct.unpack("<d", struct.pack("<q", bits))[0]
    sig = draw(st.integers(15, 40))
    nudge = draw(st.sampled_from([-1, 0, 1]))
    with localcontext() as ctx:
        ctx.prec = 800
        mid = (exact_decimal(x) + exact_decimal(next_up(x))) / 2
        _, all_digits, exp = mid.as_tuple()
        assert isinstance(exp, int)
        ds = all_digits[:sig]
        exp += len(all_digits) - len(ds)
        m = int("".join(map(str, ds))) + nudge
    return f"{max(m, 0)}e{exp}"


@st.composite
def subnormals(draw: st.DrawFn) -> str:
    """Subnormal and near-subnormal floats, shortest and long forms."""
    bits = draw(st.integers(1, 0x0020_0000_0000_0000))
    x = struct.unpack("<d", struct.pack("<q", bits))[0]
    form = draw(st.sampled_from(["repr", "long", "exact"]))
    if form == "repr":
        return repr(x)
    if form == "long":
        return f"{x:.25e}"
    with localcontext() as ctx:
        ctx.prec = 1200
        return str(exact_decimal(x)).replace("E", "e")


@settings(max_examples=3000, deadline=None)
@given(number_texts())
def test_any_number_text(text: str) -> None:
    check_number(text)


@settings(max_examples=3000, deadline=None)
@given(coordinates())
def test_plain_fractions(text: str) -> None:
    check_number(text)


@settings(max_examples=2000, deadline=None)
@given(near_halfway())
def test_near_halfway(text: str) -> None:
    check_number(text)


@settings(max_examples=1000, deadline=None)
@given(subnormals())
def test_subnormals(text: str) -> None:
    check_number(text)


@settings(max_examples=2000, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False), st.integers(0, 25))
def test_floats_written_with_extra_digits(x: float, extra: int) -> None:
    check_number(repr(x))
    check_number(f"{x:.{17 + extra}g}")
    if abs(x) < 1e6:
        check_number(f"{x:.{12 + extra}f}")


@pytest.mark.parametrize(
    "text",
    [
        "0.0",
        "-0.0",
        "-0.000000000000000000",
        "0.1",
        "0.30000000000000004",
        "9007199254740993.0",
        "9007199254740992.5",
        "-65.613616999999977",
        "1.0000000000000000001",
        "9999999999999999999.0",
        "0.9999999999999999999",
        "123456789012345678.9",
        "2.2250738585072011e-308",
        "2.2250738585072014e-308",
        "4.9e-324",
        "2.4703282292062327e-324",
        "2.4703282292062328e-324",
        "1.7976931348623157e308",
        "1.7976931348623158e308",
        "1e400",
        "-1e400",
        "1e-400",
        "1" + "0" * 400 + ".0",
        "0." + "0" * 400 + "1",
        "1e23",
        "8.589973e9",
    ],
)
def test_edge_cases(text: str) -> None:
    check_number(text)


def test_huge_values_are_infinite() -> None:
    assert qjson.loads("[1e400, -1e400]") == [math.inf, -math.inf]


@pytest.mark.parametrize("name", ["canada.json", "mesh.json", "marine_ik.json"])
def test_number_heavy_files(name: str) -> None:
    raw = data_path("jsonexamples", name).read_bytes()
    got = qjson.loads(raw)
    want = json.loads(raw)
    assert got == want
    assert json.dumps(got) == json.dumps(want)


def test_floats_are_ordinary_objects() -> None:
    # `loads` makes its floats itself on the interpreters that allow it
    # (allocation and header, no `PyFloat_FromDouble`): each is an exact
    # `float` with one reference (the list's), untracked by the collector,
    # hashes and compares as `float(text)`, and its memory is the object
    # allocator's, traced by tracemalloc and given back when released.
    import gc
    import sys
    import tracemalloc

    texts = ["1.5", "-0.0", "2.2250738585072014e-308", "1e400", "-65.61361699999997", "0.1"]
    got = qjson.loads("[" + ", ".join(texts) + "]")
    assert len(got) == len(texts)
    for i, t in enumerate(texts):
        x = got[i]
        assert type(x) is float
        assert sys.getrefcount(x) == 3  # the list's, `x`'s and the call's
        assert not gc.is_tracked(x)
        assert hash(x) == hash(float(t)) and repr(x) == repr(float(t))
    del got, x
    doc = ("[" + ", ".join(["-65.61361699999997"] * 20000) + "]").encode()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        big = qjson.loads(doc)
        held = tracemalloc.get_traced_memory()[0] - before
        del big
        after = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held >= 20000 * 24  # every float's block is traced
    assert after < 20000 * 2


@pytest.mark.parametrize(
    "text",
    [
        "0.123456789012345",
        "-0.123456789012345",
        "0.1234567890123456",
        "-0.12345678901234567",
        "0.000000000000001",
        "-0.0000123456789012",
        "0.99999999999999999",
        "12345678901234567.8",
        "-1234567890.12345678",
        "9999999999999999999.9",
        "0.100000000000000005551",
        "-65.61361699999997",
        "00.5",
    ],
)
def test_long_decimals_with_leading_zeros(text: str) -> None:
    # 17-21-byte decimals (the SSE2 mantissa's range), with a leading 0
    # before the dot, a sign, runs of zeros after the dot, 19+ digits: the
    # value of float(text), in a list and alone; "00.5" is no JSON number.
    doc = f"[{text}, {text}]"
    if text.lstrip("-").startswith("00"):
        with pytest.raises(qjson.JSONDecodeError):
            qjson.loads(doc)
        return
    want = float(text)
    got = qjson.loads(doc)
    assert got == [want, want] and all(repr(x) == repr(want) for x in got)
    assert repr(qjson.loads(text)) == repr(want)
