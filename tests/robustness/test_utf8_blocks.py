"""Invalid UTF-8 at the 64-byte block borders of stage 1.

With the AVX-512 backend the token scan (validate, parse, loads, and the
line scan of parse_many / loads_many) checks UTF-8 block by block, carrying
the validator's state from one block to the next, and across the blocks it
skips inside long strings; stage 2 then runs no pass of its own. These
tests put each class of bad sequence across a block border (split between
two blocks, truncated at a block's end, right after a long skipped string,
in keys and values) and check that every entry point reports the same
error, at the same offset, as the exact path; and that valid text at the
same places still passes.
"""

from __future__ import annotations

import json

import pytest
import qjson

# (bytes inside a JSON string, offset of the first bad byte within them)
BAD = {
    "lone-continuation": (b"\x80", 0),
    "truncated-2": (b"\xc3", 0),
    "truncated-3": (b"\xe2\x82", 0),
    "truncated-4": (b"\xf0\x9f\x98", 0),
    "overlong-2": (b"\xc0\xaf", 0),
    "overlong-3": (b"\xe0\x80\xaf", 0),
    "surrogate": (b"\xed\xa0\x80", 0),
    "above-10ffff": (b"\xf4\x90\x80\x80", 0),
    "valid-then-truncated": (b"\xe2\x82\xac\xf0\x9f\x98", 3),
}

# Multibyte filler before the bad bytes (valid 2-, 3- and 4-byte forms).
FILL = "é€😀ßa".encode()


def filler(n: int) -> bytes:
    """`n` bytes of valid UTF-8 text: multibyte characters while they fit,
    then ASCII."""
    out = b""
    chars = [c.encode() for c in FILL.decode()]
    i = 0
    while len(out) + len(chars[i % len(chars)]) <= n:
        out += chars[i % len(chars)]
        i += 1
    return out + b"a" * (n - len(out))


def errors_of(data: bytes) -> set[tuple[str, int]]:
    got = set()
    for fn in (qjson.validate, qjson.loads, qjson.parse):
        with pytest.raises(qjson.JSONDecodeError) as ei:
            fn(data)
        got.add((ei.value.msg, ei.value.pos))
    return got


def test_filler_is_valid() -> None:
    for n in range(0, 300):
        assert len(filler(n)) == n
        filler(n).decode()


@pytest.mark.parametrize("name", sorted(BAD))
@pytest.mark.parametrize("where", ["value", "key"])
def test_bad_sequence_across_block_borders(name: str, where: str) -> None:
    bad, rel = BAD[name]
    # The bad bytes start at every offset from 58 to 66 and 122 to 130 of
    # the document, so that they straddle the first and second borders.
    head = b'{"a": "' if where == "value" else b'{"'
    tail = b'"}' if where == "value" else b'": 1}'
    for at in [*range(58, 67), *range(122, 131)]:
        pad = filler(at - len(head))
        data = head + pad + bad + tail
        pos = len(head) + len(pad) + rel
        assert errors_of(data) == {("Invalid UTF-8", pos)}, at
        # The same bytes made valid pass (the border alone is no error).
        good = head + pad + "€😀".encode() + tail
        qjson.validate(good)
        assert qjson.loads(good) == json.loads(good)


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_sequence_after_a_long_string(name: str) -> None:
    """A string of hundreds of bytes of multibyte text (whole blocks the
    scan skips), then a bad sequence in it or in the next string."""
    bad, rel = BAD[name]
    for n in (300, 301, 302, 303, 600):
        long = filler(n)
        for data, pos in (
            (b'["' + long + bad + b'"]', 2 + n + rel),
            (b'["' + long + b'", "' + bad + b'"]', 2 + n + 4 + rel),
        ):
            assert errors_of(data) == {("Invalid UTF-8", pos)}, n
        good = b'["' + long + b'", "' + filler(n // 2) + b'"]'
        qjson.validate(good)
        assert qjson.loads(good) == json.loads(good)


def test_truncated_at_end_of_input() -> None:
    """A sequence cut short by the end of the input, the end at every place
    of the last block: the same error (here the open string) on every
    entry point, never success."""
    for n in range(56, 72):
        for bad in (b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98"):
            data = b'"' + filler(n) + bad
            got = errors_of(data)
            assert len(got) == 1, (n, bad, got)
            data = b'["' + filler(n) + b'"]' + bad
            assert len(errors_of(data)) == 1


@pytest.mark.parametrize("name", sorted(BAD))
def test_lines_with_bad_utf8(name: str) -> None:
    """parse_many / loads_many: the bad line is an error with its
    stream-wide offset, the lines around it come out; a line that ends
    with multibyte text right before its newline is valid whatever
    follows the newline in its 64-byte block (a continuation byte, or the
    rest of a bad sequence)."""
    bad, rel = BAD[name]
    for n in range(50, 70):
        first = b'{"k": "' + filler(n) + b'"}'
        broken = b'{"k": "' + bad + b'"}'
        last = b'{"k": "' + filler(n + 7) + "é".encode() + b'"}'
        data = first + b"\n" + broken + b"\n" + last + b"\n"
        want = [json.loads(first), json.loads(last)]
        it = qjson.parse_many(data, errors="skip")
        assert [d.get("k") for d in it] == [w["k"] for w in want]
        assert [e.doc_index for e in it.errors] == [1]
        assert qjson.loads_many(data, errors="skip") == want
        with pytest.raises(qjson.JSONDecodeError) as ei:
            list(qjson.parse_many(data))
        assert ei.value.pos == len(first) + 1 + 7 + rel
        with pytest.raises(qjson.JSONDecodeError) as ei:
            qjson.loads_many(data)
        assert ei.value.pos == len(first) + 1 + 7 + rel
        # A line followed (in its block) by bytes that are not UTF-8 alone.
        tail = b"\n" + bad + b"\n"
        it = qjson.parse_many(first + tail, errors="skip")
        assert [d.get("k") for d in it] == [want[0]["k"]]
        assert [e.doc_index for e in it.errors] == [1]


# Sequences a block can end with that leave it open (its last 1-3 bytes).
OPEN = [b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98", b"\xf0\x9f", b"\xe2", b"\xf0"]


@pytest.mark.parametrize("ascii_blocks", [1, 2, 3, 9])
def test_open_sequence_then_ascii_blocks(ascii_blocks: int) -> None:
    """A block with multibyte text ends inside a sequence, then whole
    blocks of ASCII (a short run, or a long string the scan skips), then
    valid multibyte text or none: the open sequence is the error (the
    fused check steps only blocks with a byte >= 0x80, so the ASCII run
    in between is where it must not be lost)."""
    for k in (0, 1, 3):
        for bad in OPEN:
            head = b'["' + filler(64 * (k + 1) - 2 - len(bad))
            pos = len(head)
            assert (pos + len(bad)) % 64 == 0
            ascii_run = b"b" * (64 * ascii_blocks)
            for after in (b"", "é".encode(), "x€😀".encode()):
                for data in (
                    head + bad + ascii_run + after + b'"]',
                    head + bad + b'", "' + ascii_run + after + b'"]',
                ):
                    assert errors_of(data) == {("Invalid UTF-8", pos)}, (k, bad, after)
            good = head + ascii_run + "é".encode() + b'"]'
            qjson.validate(good)
            assert qjson.loads(good) == json.loads(good)


@pytest.mark.parametrize("name", sorted(BAD))
def test_first_high_byte_after_ascii_blocks(name: str) -> None:
    """The first byte >= 0x80 of the input, at the start, middle and end
    of block k after k blocks of ASCII only (read by the block loop), after
    a long ASCII string (skipped), and in the last partial block."""
    bad, rel = BAD[name]
    for k in (0, 1, 2, 5):
        for off in (0, 1, 31, 61, 62, 63):
            at = 64 * k + off
            if at < 2:
                continue
            head = b'["' + b"a" * (at - 2)
            for tail in (b'"]', b'", "' + b"c" * 200 + b'"]', b'"' + b" " * 70 + b"]"):
                data = head + bad + tail
                assert errors_of(data) == {("Invalid UTF-8", at + rel)}, (k, off)
            good = head + "€😀é".encode() + b'"]'
            qjson.validate(good)
            assert qjson.loads(good) == json.loads(good)
    # After a long ASCII string the scan skips, in it or in the next one.
    for n in (256, 300, 511, 700, 1100):
        for data, pos in (
            (b'["' + b"s" * n + bad + b'"]', 2 + n + rel),
            (b'["' + b"s" * n + b'", "' + bad + b'"]', 2 + n + 4 + rel),
        ):
            assert errors_of(data) == {("Invalid UTF-8", pos)}, n
        good = b'["' + b"s" * n + "é€".encode() + b"s" * n + b'"]'
        qjson.validate(good)
        assert qjson.loads(good) == json.loads(good)


@pytest.mark.parametrize("name", sorted(BAD))
def test_first_high_byte_in_last_partial_block(name: str) -> None:
    """ASCII only, then the first byte >= 0x80 in the input's last
    (partial) block, at every place of it."""
    bad, rel = BAD[name]
    for blocks in (0, 1, 3):
        for end in range(len(bad) + 4, 64):
            n = 64 * blocks + end
            head = b'["' + b"a" * (n - 2 - len(bad) - 2)
            data = head + bad + b'"]'
            assert len(data) == n
            assert errors_of(data) == {("Invalid UTF-8", len(head) + rel)}, (blocks, end)
