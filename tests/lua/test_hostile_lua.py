"""Hostile inputs and lifetimes on the Lua side, through lupa's
LuaJIT: deep nesting stops cleanly at max_depth, invalid UTF-8 and bad
numbers are Lua errors naming the byte offset, and documents collected while
cursors and proxies are alive do not free what those still use."""

from __future__ import annotations

import pytest

pytest.importorskip("lupa", reason="lupa is not installed (pip install 'qjson[lua]')")

import qjson  # noqa: E402
import qjson.luajit  # noqa: E402


@pytest.fixture(scope="module")
def lua():
    # Same loading mode as the other Lua tests: the first import of
    # lupa.luajit21 in the process decides whether lua-cjson can load later.
    return qjson.luajit.runtime(lua_modules=True)


@pytest.fixture(scope="module")
def run(lua):
    """run(s, code) -> the results of the Lua chunk `code` (with `qjson`, `s`)."""
    return lua.eval(
        """function(s, code)
            local f = assert(loadstring("local qjson, s = ...; " .. code))
            return f(require("qjson"), s)
        end"""
    )


@pytest.fixture(scope="module")
def err(lua):
    """err(s, code) -> the message of the error `code` raises."""
    return lua.eval(
        """function(s, code)
            local f = assert(loadstring("local qjson, s = ...; " .. code))
            local ok, e = pcall(f, require("qjson"), s)
            assert(not ok, "no error raised")
            return tostring(e)
        end"""
    )


DEEP = 10**6


@pytest.mark.parametrize("closed", [False, True])
@pytest.mark.parametrize(
    "call", ["qjson.parse(s)", "qjson.parse(s, {lazy = true})", "qjson.decode(s)"]
)
def test_million_nested_arrays(err, closed: bool, call: str) -> None:
    s = b"[" * DEEP + (b"]" * DEEP if closed else b"")
    msg = err(s, call)
    assert "Maximum nesting depth exceeded at byte 1024" in msg


def test_deep_document_with_a_large_max_depth(run) -> None:
    n = 100_000
    s = b"[" * n + b"1" + b"]" * n
    depth = run(
        s,
        """
        local d = qjson.parse(s, {max_depth = 100000})
        local c = d:open(string.rep("[0]", 99999))
        assert(c:get_f64("[0]") == 1)
        assert(d:get_f64(string.rep("/0", 100000)) == 1)
        return d:len("")
        """,
    )
    assert depth == 1


def test_encode_of_a_deeply_nested_lua_table_is_an_error_not_a_crash(run) -> None:
    ok = run(
        b"",
        """
        local t = {}
        for _ = 1, 1000000 do t = {t} end
        local ok, e = pcall(qjson.encode, t)
        return ok or tostring(e)
        """,
    )
    assert ok is True or isinstance(ok, str)


@pytest.mark.parametrize(
    "bad,pos",
    [
        (b'["\x80"]', 2),
        (b'["\xc0\x80"]', 2),
        (b'["\xe0\x80\xaf"]', 2),
        (b'["\xed\xa0\x80"]', 2),
        (b'["\xf4\x90\x80\x80"]', 2),
        (b'["ok", "\xff"]', 8),
        (b'{"\xc3": 1}', 2),
        (b'["a\x00b"]', 3),
        (b'["\\ud800"]', 2),
    ],
)
def test_invalid_strings(err, run, bad: bytes, pos: int) -> None:
    msg = err(bad, "qjson.parse(s)")
    assert f"at byte {pos}" in msg, msg
    assert f"at byte {pos}" in err(bad, "qjson.decode(s)")
    # Lazy: the error surfaces when the value is read.
    msg = run(
        bad,
        """
        local d = qjson.parse(s, {lazy = true})
        local ok, e = pcall(function()
            if d:typeof("") == "array" then
                for i = 0, d:len("") - 1 do d:get_str("[" .. i .. "]") end
            else
                for k, v in pairs(qjson.materialize(qjson.decode(s))) do end
            end
        end)
        return ok and "ok" or tostring(e)
        """,
    )
    assert msg == "ok" or "qjson" in msg


def test_numbers(run) -> None:
    big = b"1" * 100_000
    assert run(
        b"[1e400, -1e400, 1e-400]",
        "local d = qjson.parse(s); return d:get_f64('[0]'), d:get_f64('[1]'), d:get_f64('[2]')",
    ) == (
        float("inf"),
        float("-inf"),
        0.0,
    )
    assert run(big, "return qjson.parse(s):get_f64('')") == float("inf")
    assert (
        run(big, "local ok = pcall(function() return qjson.parse(s):get_i64('') end); return ok")
        is False
    )


def test_large_string_and_nul(run) -> None:
    n = 20 * 1024 * 1024
    s = b'{"a": "' + b"x" * n + b'", "z": "a\\u0000b"}'
    got = run(s, "local d = qjson.parse(s); return #d:get_str('a'), d:get_str('z')")
    assert got[0] == n
    assert got[1] in (b"a\x00b", "a\x00b")


def test_docs_collected_while_cursors_are_alive(run) -> None:
    s = b'{"a": {"b": [1, "two", {"c": null}], "s": "\\u00e9t\\u00e9"}}'
    out = run(
        s,
        """
        local cursors = {}
        for i = 1, 200 do
            -- The Doc itself is garbage at once; only the cursor remains.
            cursors[i] = qjson.parse(s .. string.rep(" ", i)):open("a")
        end
        collectgarbage("collect")
        collectgarbage("collect")
        local n = 0
        for i = 1, 200 do
            local c = cursors[i]
            assert(c:get_str("b[1]") == "two")
            assert(c:len("b") == 3)
            assert(c:typeof("b[2].c") == "null")
            assert(c:get_str("s") == "\\195\\169t\\195\\169")
            local inner = c:open("b[2]")
            cursors[i] = nil
            collectgarbage("collect")
            assert(inner:typeof("c") == "null")
            n = n + 1
        end
        return n
        """,
    )
    assert out == 200


def test_proxies_outlive_their_decode(run) -> None:
    s = b'{"a": {"b": [1, 2, {"c": "deep"}]}, "k": "v"}'
    out = run(
        s,
        """
        local inner = qjson.decode(s).a.b
        collectgarbage("collect")
        collectgarbage("collect")
        local third = inner[3]
        inner = nil
        collectgarbage("collect")
        local n = 0
        for k, v in qjson.pairs(third) do n = n + 1 end
        return third.c, n, qjson.encode(third)
        """,
    )
    assert out[0] == "deep" and out[1] == 1 and out[2] == '{"c": "deep"}'  # passthrough


def test_many_docs_with_gc_pressure(run) -> None:
    """Parse and drop many documents while keeping a few cursors: the GC
    paces itself on the index memory, and kept cursors keep their handles."""
    s = b"[" + b'{"a": "xxxxxxxx"},' * 2000 + b"0]"
    out = run(
        s,
        """
        local keep = {}
        for i = 1, 2000 do
            local d = qjson.parse(s)
            if i % 100 == 0 then keep[#keep + 1] = d:open("[1999]") end
        end
        collectgarbage("collect")
        local ok = 0
        for _, c in ipairs(keep) do
            if c:get_str("a") == "xxxxxxxx" then ok = ok + 1 end
        end
        return ok
        """,
    )
    assert out == 20
