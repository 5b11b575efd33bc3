"""loads_many over windows of lines: stage 1 runs once per window of about
16 KiB of whole lines and each line is walked on its own tokens
(src/index/tokens/eager.rs, LinesIndex). Streams of many windows, with bad
lines at every kind of place (first or last line of a window, lines that
make a whole window unusable, documents over several lines), must give
exactly what the Doc path (parse_many) and json.loads give."""

from __future__ import annotations

import json
import random

import pytest
import qjson


def good_line(rng: random.Random, i: int) -> bytes:
    """One valid document of one line, of the shapes the builder reads
    differently: literals and numbers last in their container or alone on
    their line, escapes, non-ASCII, empty containers, nesting."""
    kind = i % 12
    if kind == 0:
        return b"true" if i % 24 else b"null"
    if kind == 1:
        return str(rng.randint(-(10**20), 10**20)).encode()
    if kind == 2:
        return b"%r" % (rng.random() * 10 ** rng.randint(-5, 5))
    if kind == 3:
        return json.dumps(f's\u00e9\\"\n{i}\U0001f600').encode()
    if kind == 4:
        return b'{"a": [], "b": {}, "c": [[]], "d": false}'
    if kind == 5:
        return json.dumps([i, -i, 1.5, "x" * rng.randint(0, 40), None, True]).encode()
    if kind == 6:
        return json.dumps({f"k{j}": j * 0.25 for j in range(rng.randint(1, 30))}).encode()
    if kind == 7:
        text = "caf\u00e9 \u4e2d\u6587 " * rng.randint(0, 9)
        return json.dumps({"text": text}, ensure_ascii=False).encode()
    if kind == 8:
        return b'  {"x" : 1 , "y" : [ true , false , null ] }  \t'
    if kind == 9:
        return json.dumps({"n": {"m": {"o": [{"p": "\\u00e9\\ud83d\\ude00"}]}}}).encode()
    if kind == 10:
        return b"[1,2,3,true]"
    return json.dumps({"id": i, "url": "https://example.com/" + "p" * rng.randint(0, 200)}).encode()


# Lines that are not one valid document each (some are several, some part
# of a pretty-printed one, some errors that make stage 1 fail for their
# whole window: a control byte or an unterminated string, a stray
# backslash, invalid UTF-8, a bad escape).
ODD = [
    b'{"open": "x',
    b'{"ctl": "a\tb"}',
    b'{"a": 1} \\',
    b'{"a": "\xff"}',
    b'{"e": "\\x"}',
    b'{"e": "\\ud800"}',
    b"[1,]",
    b'{"n": 01}',
    b"[tru]",
    b"[1] [2]",
    b'1 2 "three"',
    b"[3]x",
    b"nul",
    b"{",
    b'  "pretty": [',
    b"    true",
    b"  ]",
    b"}",
    b"[" * 40 + b"]" * 40,
]


def reference(data: bytes) -> tuple[list[object], list[tuple[int, int, str]]]:
    it = qjson.parse_many(data, max_depth=16, errors="skip")
    docs = [qjson.materialize(d.root) if d.type() in ("object", "array") else d.get() for d in it]
    return docs, [(e.doc_index, e.pos, e.msg) for e in it.errors]


def check(data: bytes) -> None:
    want, errs = reference(data)
    got = qjson.loads_many(data, max_depth=16, errors="skip")
    assert list(got) == want
    assert [(e.doc_index, e.pos, e.msg) for e in got.errors] == errs
    if errs:
        with pytest.raises(qjson.JSONDecodeError) as ei:
            qjson.loads_many(data, max_depth=16)
        assert (ei.value.doc_index, ei.value.pos, ei.value.msg) == errs[0]
    else:
        assert qjson.loads_many(data, max_depth=16) == want


@pytest.mark.parametrize("end", [b"\n", b"\r\n"])
def test_many_windows_of_good_lines_equal_json_loads(end):
    rng = random.Random(7)
    lines = [good_line(rng, i) for i in range(6000)]
    data = end.join(lines) + end
    assert len(data) > 8 * 32 * 1024
    want = [json.loads(line) for line in lines]
    assert qjson.loads_many(data) == want
    assert qjson.loads_many(data.decode()) == want
    # No newline after the last line; blank lines between.
    data = (end + b" \t" + end).join(lines)
    assert qjson.loads_many(data) == want


@pytest.mark.parametrize("seed", range(6))
def test_odd_lines_anywhere_match_the_doc_path(seed):
    rng = random.Random(seed)
    lines = [good_line(rng, i) for i in range(3000)]
    for _ in range(12):
        odd = rng.choice(ODD)
        at = rng.randrange(len(lines))
        if odd == b"{":  # a whole pretty-printed document
            lines[at:at] = ODD[ODD.index(b"{") : ODD.index(b"}") + 1]
        else:
            lines.insert(at, odd)
    check(b"\n".join(lines) + b"\n")


def test_odd_lines_at_window_borders():
    """An odd line as the first or last line of a window, or right after
    one: the windows start at a line and end after the first newline 16 KiB
    on, so lines of 1 KiB put the borders near every 16th line (32 and 64
    among them)."""
    for odd in ODD:
        for at in (0, 1, 30, 31, 32, 33, 62, 63, 64, 65, 99):
            lines = [json.dumps({"i": i, "pad": "x" * 1000}).encode() for i in range(100)]
            lines.insert(at, odd)
            check(b"\n".join(lines))
            check(b"\n".join(lines) + b"\n")


def test_one_bad_window_leaves_the_next_ones_fast_and_right():
    """A window stage 1 rejects (a string with a raw tab) is read line by
    line; the windows after it are used again, and agree."""
    rng = random.Random(3)
    lines = [good_line(rng, i) for i in range(4000)]
    for at in (5, 1500, 3999):
        lines[at] = b'{"ctl": "a\tb", "i": %d}' % at
    check(b"\n".join(lines))


def test_top_level_scalars_at_window_ends():
    lines = [b"%d" % i if i % 3 else b"true" for i in range(20000)]
    data = b"\n".join(lines)
    assert qjson.loads_many(data) == [json.loads(x) for x in lines]
    assert qjson.loads_many(data + b"  \r\n") == [json.loads(x) for x in lines]


def test_lines_after_a_fallback_match_the_doc_path():
    """A line the line path does not take goes to the splitter with a small
    region (about 1 KiB of whole lines, doubled while the line path keeps
    failing right after it): documents and errors stay those of the Doc
    path whatever the region, also for pretty-printed documents, bad ones
    among them, longer than the region, and bad lines longer than it."""
    rng = random.Random(11)
    pretty_good = json.dumps({"k": ["v" * 40] * 60, "n": {"m": list(range(50))}}, indent=2)
    pretty_bad = pretty_good.replace('"m": [', '"m": [,', 1)
    long_bad = b'{"pad": "' + b"x" * 5000 + b'", "bad": tru}'
    long_good = json.dumps({"pad": "y" * 5000, "ok": [1, 2.5, None]}).encode()
    lines: list[bytes] = []
    for i in range(1500):
        r = rng.random()
        if r < 0.02:
            lines.extend(p.encode() for p in pretty_good.split("\n"))
        elif r < 0.04:
            lines.extend(p.encode() for p in pretty_bad.split("\n"))
        elif r < 0.06:
            lines.append(long_bad)
        elif r < 0.08:
            lines.append(long_good)
        elif r < 0.12:
            lines.append(rng.choice(ODD))
        else:
            lines.append(good_line(rng, i))
    check(b"\n".join(lines) + b"\n")
    # A stream of pretty-printed documents only (the region grows to a
    # window), then good lines again.
    stream = [p.encode() for _ in range(40) for p in pretty_good.split("\n")]
    stream += [good_line(rng, i) for i in range(300)]
    check(b"\n".join(stream))


# Lines of one shape: after a line it took, the line path guesses where the
# next line ends from that line's token count (LinesIndex::line_end), with
# no newline search. Odd lines of the same token count (a document spread
# over two lines, two documents on a line, a wrong closer, a bad literal,
# whitespace or a carriage return before the newline) must not fool it.
SAME_SHAPE_ODD = [
    b'[1,\n"s", 2.5]',
    b'[1, "s",\n2.5]',
    b'[1, "s", 2.5] [3]',
    b'[1, "s", 2.5] 7',
    b'[1, "s", 2.5]x',
    b'[1, "s", 2.5}',
    b'{1, "s", 2.5]',
    b'[1, "s", tru]',
    b'[1, "s", 2.5]  \t',
    b'[1, "s", 2.5]\r',
    b'[1, "s\xc3\xa9", 2.5]',
    b'[1, "\xff", 2.5]',
    b'[1, "a\tb", 2.5]',
    b'{"a": 1, "b": 2}',
    b'{"a": 1 "b": 2}',
    b'[1, "s", 2.5, 4]',
    b"[[1], [2]]",
    b"[1,\n",
    b"",
    b"   ",
]


def test_lines_of_one_shape_match_the_doc_path():
    """Each odd line after a run of good ones (the guess is then armed:
    after an odd line the splitter takes about 1 KiB of lines)."""
    lines = [b'[%d, "s%d", %d.5]' % (i, i % 7, i) for i in range(6000)]
    for j, odd in enumerate(SAME_SHAPE_ODD * 2):
        lines[100 + 140 * j] = odd
    check(b"\n".join(lines))
    check(b"\n".join(lines) + b"\n")
    objects = [b'{"a": %d, "b": "x"}' % i for i in range(4000)]
    for j, odd in enumerate(SAME_SHAPE_ODD):
        objects[100 + 140 * j] = odd
    check(b"\r\n".join(objects) + b"\r\n")


@pytest.mark.parametrize("seed", range(4))
def test_odd_lines_among_lines_of_one_shape(seed):
    """Odd lines at random places (also two in a row, and at window ends)."""
    rng = random.Random(seed)
    lines = [b'[%d, "s%d", %d.5]' % (i, i % 7, i) for i in range(6000)]
    for _ in range(100):
        lines.insert(rng.randrange(len(lines)), rng.choice(SAME_SHAPE_ODD))
    check(b"\n".join(lines))
    check(b"\n".join(lines) + b"\n")


def test_lines_of_one_shape_equal_json_loads():
    lines = [b'["B%07d", "Brand", "t\\"itle", %d, %d.5, ""]' % (i, i, i) for i in range(20000)]
    data = b"\n".join(lines) + b"\n"
    assert qjson.loads_many(data) == [json.loads(x) for x in lines]


# Lines of a few shapes interleaved: the line path remembers up to four
# shapes, one per token count (LinesIndex: classes and child counts), and
# guesses a line's end from each remembered count. Shapes of one token count
# with other child counts, more shapes than it remembers, and odd lines,
# empty lines and carriage returns between them.
MANY_SHAPES = [
    b"[[%d], %d]",
    b"[%d, [%d]]",
    b'{"a": %d, "b": [%d, 3]}',
    b'{"a": [%d, 3], "b": %d}',
    b'[%d, "s", %d.5]',
    b'{"k": {"m": [%d, %d]}}',
    b'{"custom_id": "r-%d", "body": {"model": "m", "n": %d, "messages": [{"role": "user"}]}}',
]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("end", [b"\n", b"\r\n"])
def test_lines_of_many_shapes_match_the_doc_path(seed, end):
    rng = random.Random(seed)
    lines: list[bytes] = []
    i = 0
    while len(lines) < 5000:
        r = rng.random()
        if r < 0.03:
            lines.append(rng.choice(ODD + SAME_SHAPE_ODD))
        elif r < 0.05:
            lines.append(b"")
        else:
            shape = MANY_SHAPES[rng.randrange(len(MANY_SHAPES) if r < 0.5 else 3)]
            for _ in range(rng.randint(1, 8)):
                lines.append(shape % (i, -i))
                i += 1
    check(end.join(lines) + end)
