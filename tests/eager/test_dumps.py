"""qjson.dumps: round trips, byte-identical to orjson where orjson has an
answer, every supported type, indent / sort_keys / default, and errors."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import math
import sys
import uuid
from collections import OrderedDict, namedtuple
from pathlib import Path
from typing import Any, ClassVar

import pytest
import qjson
from conftest import data_files
from hypothesis import given, settings
from hypothesis import strategies as st

orjson = pytest.importorskip("orjson", reason="orjson is a test dependency (the test extra)")

# --------------------------------------------------------------------------
# Generated values
# --------------------------------------------------------------------------

# Text without lone surrogates (those raise; see test_lone_surrogate).
text = st.text(st.characters(exclude_categories=("Cs",)))
finite = st.floats(allow_nan=False, allow_infinity=False)
i64 = st.integers(min_value=-(2**63), max_value=2**64 - 1)  # orjson's int range
leaves = st.none() | st.booleans() | i64 | finite | text
json_values = st.recursive(
    leaves,
    lambda kids: st.lists(kids, max_size=6) | st.dictionaries(text, kids, max_size=6),
    max_leaves=40,
)
big_values = st.recursive(
    leaves | st.integers(),  # any size
    lambda kids: st.lists(kids, max_size=6) | st.dictionaries(text, kids, max_size=6),
    max_leaves=40,
)


@given(big_values)
@settings(max_examples=300, deadline=None)
def test_round_trip(value: Any) -> None:
    out = qjson.dumps(value)
    assert type(out) is bytes
    assert json.loads(out) == value
    assert qjson.loads(out) == value


@given(json_values)
@settings(max_examples=300, deadline=None)
def test_same_bytes_as_orjson(value: Any) -> None:
    assert qjson.dumps(value) == orjson.dumps(value)


@given(json_values)
@settings(max_examples=150, deadline=None)
def test_indent_2_and_sort_keys_same_as_orjson(value: Any) -> None:
    assert qjson.dumps(value, indent=2) == orjson.dumps(value, option=orjson.OPT_INDENT_2)
    assert qjson.dumps(value, sort_keys=True) == orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


@given(json_values, st.integers(min_value=0, max_value=8), st.booleans())
@settings(max_examples=150, deadline=None)
def test_indent_like_json(value: Any, indent: int, sort_keys: bool) -> None:
    got = qjson.dumps(value, indent=indent, sort_keys=sort_keys)
    expected = json.dumps(
        value, indent=indent, sort_keys=sort_keys, ensure_ascii=False, separators=(",", ": ")
    )
    # json writes floats with repr (1e-05, 1e+16); compare as values then.
    if any(isinstance(v, float) for v in _leaves(value)):
        assert json.loads(got) == value
    else:
        assert got == expected.encode()


def _leaves(v: Any) -> list[Any]:
    out, stack = [], [v]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
        else:
            out.append(x)
    return out


EXAMPLES = data_files("jsonexamples", "*.json") + data_files(
    "jsonexamples/small", "*.json", id_prefix="small/"
)


@pytest.mark.parametrize("path", EXAMPLES)
def test_corpus_same_bytes_as_orjson(path: Path) -> None:
    try:
        value = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as e:
        pytest.skip(f"{path.name}: orjson rejects it ({e})")
    try:
        expected = orjson.dumps(value)
    except orjson.JSONEncodeError as e:  # e.g. integers beyond 64 bits
        pytest.skip(f"{path.name}: orjson cannot write it ({e})")
    assert qjson.dumps(value) == expected
    assert qjson.dumps(value, indent=2) == orjson.dumps(value, option=orjson.OPT_INDENT_2)


# --------------------------------------------------------------------------
# Scalars
# --------------------------------------------------------------------------


def test_scalars() -> None:
    assert qjson.dumps(None) == b"null"
    assert qjson.dumps(True) == b"true"
    assert qjson.dumps(False) == b"false"
    assert qjson.dumps(0) == b"0"
    assert qjson.dumps(-(2**63)) == b"-9223372036854775808"
    assert qjson.dumps(2**64 - 1) == b"18446744073709551615"
    assert qjson.dumps(2**64) == b"18446744073709551616"
    assert qjson.dumps(-(10**40)) == b"-" + b"1" + b"0" * 40
    assert qjson.dumps("") == b'""'


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0, b"0.0"),
        (-0.0, b"-0.0"),
        (1.0, b"1.0"),
        (0.1, b"0.1"),
        (1e16, b"1e+16"),
        (1e15, b"1000000000000000.0"),
        (1e-5, b"0.00001"),
        (1e-7, b"1e-7"),
        (5e-324, b"5e-324"),
        (1.7976931348623157e308, b"1.7976931348623157e+308"),
    ],
)
def test_floats(value: float, text: bytes) -> None:
    assert qjson.dumps(value) == text == orjson.dumps(value)
    assert float(text) == value and math.copysign(1, float(text)) == math.copysign(1, value)


def _positional_floats() -> list[float]:
    """Every digit count 1..17 at every positional exponent (-5..15) and
    just outside, both signs, and their neighbours: the forms vendor/zmij
    writes with fixed-size moves."""
    out = []
    for digits in range(1, 18):
        m = int("123456789" * 2) // 10 ** (18 - digits)
        for e in range(-8, 19):
            v = float(f"{m}e{e - digits + 1}")
            for w in (v, math.nextafter(v, 0), math.nextafter(v, math.inf)):
                out += [w, -w]
    return out


def test_floats_like_orjson_every_form() -> None:
    values = _positional_floats()
    assert qjson.dumps(values) == orjson.dumps(values)
    assert [qjson.dumps(v) for v in values] == [orjson.dumps(v) for v in values]
    # In a dict and behind a long string: other buffer positions.
    d = {"k" * 70 + str(i): v for i, v in enumerate(values)}
    assert qjson.dumps(d) == orjson.dumps(d)


@settings(max_examples=2000, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_any_float_like_orjson(value: float) -> None:
    assert qjson.dumps([value, "x", value]) == orjson.dumps([value, "x", value])


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_nan_and_infinity_raise(value: float) -> None:
    with pytest.raises(qjson.JSONEncodeError, match="Out of range float"):
        qjson.dumps([value])


def test_string_escapes() -> None:
    s = '\x00\x1f\x7f\u2028<>&\\"/é😀\x08\x0c\n\r\t' + "x" * 40 + '"'
    assert qjson.dumps(s) == orjson.dumps(s)
    assert json.loads(qjson.dumps(s)) == s
    for i in range(0x80):
        c = chr(i)
        for t in (c, c * 17, "abc" + c + "x" * 20):
            assert qjson.dumps(t) == orjson.dumps(t)


def test_lone_surrogate() -> None:
    for s in ("\ud800", "a\udfffb", {"k": "\ud83d"}, {"\udc00": 1}):
        with pytest.raises(qjson.JSONEncodeError, match="surrogates") as info:
            qjson.dumps(s)
        assert isinstance(info.value, TypeError)
    assert qjson.dumps("\ud83d\ude00".encode("utf-16", "surrogatepass").decode("utf-16")) == (
        '"😀"'.encode()
    )


def test_blns() -> None:
    path = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "orjson-data"
    blns = path / "blns.txt"
    if not blns.exists():
        pytest.skip(f"test data not found: {blns}")
    lines = blns.read_text(encoding="utf-8", errors="surrogateescape").splitlines()
    lines = [s for s in lines if not any(0xD800 <= ord(c) <= 0xDFFF for c in s)]
    assert qjson.dumps(lines) == orjson.dumps(lines)


# --------------------------------------------------------------------------
# Containers and types
# --------------------------------------------------------------------------


def test_containers() -> None:
    assert qjson.dumps({}) == b"{}"
    assert qjson.dumps([]) == b"[]"
    assert qjson.dumps(()) == b"[]"
    assert qjson.dumps((1, "a", None)) == b'[1,"a",null]'
    assert qjson.dumps({"a": [1, {"b": ()}]}) == b'{"a":[1,{"b":[]}]}'


def test_dict_keys_must_be_str() -> None:
    for bad in ({1: 2}, {None: 1}, {(1,): 1}, {b"k": 1}):
        with pytest.raises(qjson.JSONEncodeError, match="Dict key must be str"):
            qjson.dumps(bad)
        with pytest.raises(qjson.JSONEncodeError, match="Dict key must be str"):
            qjson.dumps(bad, sort_keys=True)


class Str(str):
    pass


class Int(int):
    def __str__(self) -> str:
        return "not an int"


class Float(float):
    pass


class Dict(dict):
    pass


class List(list):
    pass


Point = namedtuple("Point", "x y")


def test_subclasses() -> None:
    assert qjson.dumps(Str("a")) == b'"a"'
    assert qjson.dumps(Int(5)) == b"5"
    assert qjson.dumps(Int(2**80)) == str(2**80).encode()
    assert qjson.dumps(Float(1.5)) == b"1.5"
    assert qjson.dumps(Dict(a=List([1]))) == b'{"a":[1]}'
    assert qjson.dumps(OrderedDict([("b", 1), ("a", 2)])) == b'{"b":1,"a":2}'
    assert qjson.dumps(Point(1, 2)) == b"[1,2]"
    assert qjson.dumps({Str("k"): 1}) == b'{"k":1}'


class Color(enum.Enum):
    RED = 1
    NAME = "x"
    NESTED = (1, 2)


class Level(enum.IntEnum):
    HIGH = 3


class Mode(str, enum.Enum):
    FAST = "fast"


def test_enum() -> None:
    assert qjson.dumps([Color.RED, Color.NAME, Level.HIGH, Mode.FAST]) == b'[1,"x",3,"fast"]'
    assert qjson.dumps(Color.NESTED) == b"[1,2]"
    assert qjson.dumps([Color.RED, Level.HIGH, Mode.FAST]) == orjson.dumps(
        [Color.RED, Level.HIGH, Mode.FAST]
    )


@dataclasses.dataclass
class Item:
    name: str
    price: float
    tags: list[str] = dataclasses.field(default_factory=list)
    _private: int = 0


@dataclasses.dataclass
class Slotted:
    __slots__ = ("a", "b")
    a: int
    b: Item


def test_dataclass() -> None:
    item = Item("x", 1.5, ["a"])
    assert qjson.dumps(item) == b'{"name":"x","price":1.5,"tags":["a"]}' == orjson.dumps(item)
    s = Slotted(1, item)
    assert qjson.dumps(s) == orjson.dumps(s)
    assert qjson.dumps(item, sort_keys=True) == b'{"name":"x","price":1.5,"tags":["a"]}'
    assert json.loads(qjson.dumps(s, indent=3)) == json.loads(orjson.dumps(s))


@dataclasses.dataclass
class SlottedWithPseudoFields:
    __slots__ = ("a", "_b")
    a: int
    _b: int
    c: dataclasses.InitVar[int]
    d: ClassVar[int] = 7

    def __post_init__(self, c: int) -> None:
        self._b = c


def test_slotted_dataclass_writes_only_its_fields() -> None:
    # InitVar and ClassVar entries of __dataclass_fields__ are not fields
    # (dataclasses.fields), and a slotted class has no attribute for an
    # InitVar: orjson writes {"a": 1}.
    v = SlottedWithPseudoFields(1, 2, 3)
    assert [f.name for f in dataclasses.fields(v)] == ["a", "_b"]
    assert qjson.dumps(v) == b'{"a":1}' == orjson.dumps(v)
    assert qjson.dumps([v], indent=2) == orjson.dumps([v], option=orjson.OPT_INDENT_2)
    if sys.version_info >= (3, 10):

        @dataclasses.dataclass(slots=True)
        class Auto:
            x: int
            y: dataclasses.InitVar[int]
            z: ClassVar[str] = "no"

        w = Auto(1, 2)
        assert qjson.dumps(w) == b'{"x":1}' == orjson.dumps(w)


def test_dataclass_subclass_of_a_slotted_base_uses_its_dict() -> None:
    # orjson reads the instance __dict__ unless the class itself defines
    # __slots__: a subclass without its own __slots__ writes its __dict__.
    @dataclasses.dataclass
    class Child(Slotted):
        extra: int = 0

    c = Child(1, Item("x", 1.0))
    c.extra = 5
    assert qjson.dumps(c) == orjson.dumps(c)


def offset_zones() -> list[datetime.tzinfo]:
    """Fixed offsets with seconds and microseconds, both signs, every
    rounding boundary."""
    out = []
    for s in (1, 29, 30, 31, 59, 60, 89, 90, 1172, 1170, 3599, 3600 + 1799, 5400, 86399 - 60):
        for sign in (1, -1):
            out.append(datetime.timezone(datetime.timedelta(seconds=sign * s)))
    out.append(datetime.timezone(datetime.timedelta(seconds=30, microseconds=5)))
    out.append(datetime.timezone(datetime.timedelta(microseconds=-1)))
    return out


@pytest.mark.parametrize("tz", offset_zones(), ids=str)
def test_datetime_offsets_with_seconds_same_as_orjson(tz: datetime.tzinfo) -> None:
    d = datetime.datetime(2020, 1, 2, 3, 4, 5, tzinfo=tz)
    assert qjson.dumps(d) == orjson.dumps(d)
    assert (
        qjson.dumps(
            datetime.datetime(
                2020, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(minutes=19, seconds=32))
            )
        )
        == b'"2020-01-01T00:00:00+00:20"'
    )


class NoOffset(datetime.tzinfo):
    def utcoffset(self, dt: datetime.datetime | None) -> None:
        return None

    def dst(self, dt: datetime.datetime | None) -> None:
        return None


def test_aware_datetime_without_offset_same_as_orjson() -> None:
    d = datetime.datetime(2020, 1, 1, tzinfo=NoOffset())
    assert qjson.dumps(d) == orjson.dumps(d) == b'"2020-01-01T00:00:00+00:00"'


ZONES = [
    "Europe/Amsterdam",
    "Asia/Shanghai",
    "America/St_Johns",
    "Asia/Kolkata",
    "UTC",
    "Africa/Monrovia",
    "Pacific/Chatham",
    "America/Los_Angeles",
]
MOMENTS = [
    datetime.datetime(1800, 1, 1, 12),
    datetime.datetime(1900, 1, 1),
    datetime.datetime(1937, 7, 1, 12, 30),
    datetime.datetime(2020, 3, 29, 2, 30),
    datetime.datetime(2020, 7, 1, 12, 0, 0, 5),
    datetime.datetime(2020, 11, 1, 1, 30),
]


@pytest.mark.parametrize("zone", ZONES)
def test_zoneinfo_same_as_orjson(zone: str) -> None:
    zoneinfo = pytest.importorskip("zoneinfo")
    try:
        tz = zoneinfo.ZoneInfo(zone)
    except zoneinfo.ZoneInfoNotFoundError:
        pytest.skip(f"no tz database entry for {zone}")
    for m in MOMENTS:
        d = m.replace(tzinfo=tz)
        assert qjson.dumps(d) == orjson.dumps(d), d


@pytest.mark.parametrize("zone", ZONES)
def test_pytz_same_as_orjson(zone: str) -> None:
    # pytz is a test dependency (pyproject's test extra).
    import pytz

    tz = pytz.timezone(zone)
    for m in MOMENTS:
        attached = m.replace(tzinfo=tz)  # the zone's first (LMT) entry
        localized = tz.localize(m)
        for d in (attached, localized, localized.astimezone(pytz.utc)):
            assert qjson.dumps(d) == orjson.dumps(d), d
    d = datetime.datetime(2020, 1, 1, 12, tzinfo=pytz.timezone("Asia/Shanghai"))
    assert d.utcoffset() == datetime.timedelta(hours=8, minutes=6)
    assert qjson.dumps(d) == b'"2020-01-01T12:00:00+08:00"'


def test_datetime() -> None:
    tz = datetime.timezone
    values = [
        datetime.datetime(2020, 1, 2, 3, 4, 5),
        datetime.datetime(2020, 1, 2, 3, 4, 5, 123),
        datetime.datetime(2020, 1, 2, 3, 4, 5, tzinfo=tz.utc),
        datetime.datetime(1, 1, 1, tzinfo=tz(datetime.timedelta(hours=-8))),
        datetime.datetime(
            9999, 12, 31, 23, 59, 59, 999999, tzinfo=tz(datetime.timedelta(hours=5, minutes=30))
        ),
        datetime.date(2020, 1, 2),
        datetime.date(1, 1, 1),
        datetime.time(1, 2, 3, 4),
        datetime.time(0, 0),
    ]
    for v in values:
        assert qjson.dumps(v) == orjson.dumps(v), v
    assert (
        qjson.dumps(datetime.datetime(2020, 1, 2, tzinfo=tz.utc)) == b'"2020-01-02T00:00:00+00:00"'
    )
    with pytest.raises(qjson.JSONEncodeError, match="tzinfo"):
        qjson.dumps(datetime.time(1, tzinfo=tz.utc))


def test_uuid() -> None:
    for u in (uuid.UUID(int=0), uuid.UUID(int=2**128 - 1), uuid.uuid4()):
        assert qjson.dumps(u) == orjson.dumps(u) == f'"{u}"'.encode()


# --------------------------------------------------------------------------
# Options
# --------------------------------------------------------------------------


def test_indent_format() -> None:
    value = {"a": {}, "b": [], "c": [1, {"d": 2}], "e": "x"}
    assert qjson.dumps(value, indent=2) == orjson.dumps(value, option=orjson.OPT_INDENT_2)
    for n in (0, 1, 4, 7):
        assert qjson.dumps(value, indent=n) == json.dumps(value, indent=n).encode()
    assert qjson.dumps([1], indent=-3) == json.dumps([1], indent=-3).encode()
    assert qjson.dumps(1, indent=2) == b"1"


def test_sort_keys() -> None:
    value = {"b": 1, "a": {"z": 1, "é": 2, "y": [{"d": 1, "c": 2}]}, "A": 0, "": 1}
    assert (
        qjson.dumps(value, sort_keys=True)
        == json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    )
    assert qjson.dumps(value, sort_keys=True, indent=2) == orjson.dumps(
        value, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2
    )


class Custom:
    def __init__(self, v: Any) -> None:
        self.v = v


def test_default() -> None:
    assert qjson.dumps(Custom(5), default=lambda o: o.v) == b"5"
    assert qjson.dumps([Custom(Custom([1]))], default=lambda o: o.v) == b"[[1]]"
    assert qjson.dumps({"s": {1, 2}}, default=sorted) == b'{"s":[1,2]}'


def test_default_errors_are_chained() -> None:
    def fail(o: Any) -> Any:
        raise ValueError("nope")

    with pytest.raises(qjson.JSONEncodeError, match="Custom") as info:
        qjson.dumps(Custom(1), default=fail)
    assert isinstance(info.value.__cause__, ValueError)
    assert str(info.value.__cause__) == "nope"


class Chain:
    def __init__(self, n: int) -> None:
        self.n = n


def test_default_recursion_limit_same_as_orjson() -> None:
    # A hook that returns a further object 254 times (255 calls) is fine,
    # as in orjson; one more level raises.
    def down(o: Chain) -> Any:
        return Chain(o.n - 1) if o.n > 0 else "end"

    def down_in_list(o: Chain) -> Any:
        return [Chain(o.n - 1)] if o.n > 0 else "end"

    for hook in (down, down_in_list):
        assert qjson.dumps(Chain(254), default=hook) == orjson.dumps(Chain(254), default=hook)
        with pytest.raises(qjson.JSONEncodeError, match="recursion"):
            qjson.dumps(Chain(255), default=hook)
        with pytest.raises(orjson.JSONEncodeError):
            orjson.dumps(Chain(255), default=hook)


def test_unsupported_type() -> None:
    with pytest.raises(qjson.JSONEncodeError, match="not JSON serializable: Custom"):
        qjson.dumps([Custom(1)])
    with pytest.raises(TypeError):
        qjson.dumps(b"bytes")
    with pytest.raises(qjson.JSONEncodeError):
        qjson.dumps(Custom(1), default=lambda o: o)  # default returns itself forever


def test_circular_references() -> None:
    a: list[Any] = []
    a.append(a)
    d: dict[str, Any] = {}
    d["self"] = [d]
    for v in (a, d):
        with pytest.raises(qjson.JSONEncodeError, match="Circular"):
            qjson.dumps(v)
        with pytest.raises(qjson.JSONEncodeError, match="Circular"):
            qjson.dumps(v, indent=2, sort_keys=True)
    shared = [1]
    assert qjson.dumps([shared, shared]) == b"[[1],[1]]"  # not a cycle


def test_deep_but_acyclic() -> None:
    v: Any = 1
    for _ in range(1000):
        v = [v]
    assert qjson.dumps(v) == b"[" * 1000 + b"1" + b"]" * 1000
    for _ in range(100):
        v = [v]
    with pytest.raises(qjson.JSONEncodeError, match="depth"):
        qjson.dumps(v)


def test_views() -> None:
    data = b'{"b": [1, {"c": "x"}], "a": 2.5, "b": 0}'
    root = qjson.parse(data).root
    # Untouched views pass their original bytes through.
    assert qjson.dumps(root) == data
    assert qjson.dumps(root["b"]) == b'[1, {"c": "x"}]'
    assert qjson.dumps(root, sort_keys=True, indent=2) == qjson.dumps(
        {"a": 2.5, "b": [1, {"c": "x"}]}, sort_keys=True, indent=2
    )
    assert qjson.dumps({"wrapped": root["b"][1]}) == b'{"wrapped":{"c": "x"}}'
