"""qjson.encode of plain Lua tables: byte for byte lua-cjson's output (Debian's
lua-cjson 2.1.0, loaded into the same lupa LuaJIT runtime), on the Fleece
tables and on the edge cases of cjson's rules.

The comparisons run in one Lua state, so a table's hash order is the same for
both encoders and the outputs must be identical; the hash-order cases are
also compared after sorting keys (decoded in Python), as a runtime-order-free
check."""

from __future__ import annotations

import glob
import json
import os

import pytest

pytest.importorskip("lupa", reason="lupa is not installed (pip install 'qjson[lua]')")

import qjson.luajit  # noqa: E402

CJSON_GLOBS = [
    "/usr/lib/*/lua/5.1/cjson.so",
    "/usr/lib/lua/5.1/cjson.so",
    "/usr/local/lib/lua/5.1/cjson.so",
]


def cjson_path() -> str | None:
    if os.environ.get("QJSON_CJSON_SO"):
        return os.environ["QJSON_CJSON_SO"]
    for g in CJSON_GLOBS:
        found = sorted(glob.glob(g))
        if found:
            return found[0]
    return None


@pytest.fixture(scope="module")
def lua():
    return qjson.luajit.runtime(lua_modules=True, encoding=None)


@pytest.fixture(scope="module")
def cjson(lua):
    path = cjson_path()
    if path is None:
        pytest.skip(
            "lua-cjson not found (Debian package `lua-cjson`; scripts/install-lua-deps.sh), "
            "or set QJSON_CJSON_SO"
        )
    load = lua.eval(
        """function(dir)
            package.cpath = dir .. "/?.so;" .. package.cpath
            local ok, cjson = pcall(require, "cjson")
            if not ok then return nil, tostring(cjson) end
            return cjson, ""
        end"""
    )
    mod, errmsg = load(os.path.dirname(path).encode())
    if mod is None:
        pytest.skip(f"lua-cjson at {path} does not load into lupa: {errmsg!r}")
    return mod


# Fleece's four tables (1000 elements each), plus a few more in the same spirit.
FLEECE = {
    "t[i]=i": "for i = 1, N do t[i] = i end",
    't["x"..i]=i': 'for i = 1, N do t["x" .. i] = i end',
    "t[i]=random string": "for i = 1, N do t[i] = rnd() end",
    "t[random string]=random string": "for i = 1, N do t[rnd()] = rnd() end",
    # (Integral values in [1e14, 1e15) are left out: there qjson writes %d on
    # purpose; see test_integers_up_to_1e15_are_exact.)
    "t[i]=float": """for i = 1, N do
        local v = (math.random() - 0.5) * 10 ^ math.random(-20, 20)
        if math.abs(v) >= 1e14 and math.abs(v) < 1e15 and v == math.floor(v) then v = v / 7 end
        t[i] = v
    end""",
    "t[i]={i, x=i}": 'for i = 1, N do t[i] = {i, {x = i, ["y/" .. i] = true}} end',
}
HASH_ORDER = {'t["x"..i]=i', "t[random string]=random string"}

BUILD = """function(code, seed, alphabet)
    math.randomseed(seed)
    local N = 1000
    local function rnd()
        local n = math.random(0, 24)
        local b = {}
        for j = 1, n do
            local k = math.random(1, #alphabet)
            b[j] = alphabet:sub(k, k)
        end
        return table.concat(b)
    end
    local t = {}
    assert(loadstring("local t, N, rnd = ...; " .. code))(t, N, rnd)
    return t
end"""

# Every byte class cjson treats differently: ASCII letters, '"', '\\', '/',
# control characters, DEL, and UTF-8 / raw high bytes.
ALPHABET = bytes(range(0, 128)) + "é€😀".encode() + bytes([0x80, 0xFF])


@pytest.mark.parametrize("name", list(FLEECE))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fleece_tables_equal_cjson(lua, cjson, name, seed):
    t = lua.eval(BUILD)(FLEECE[name].encode(), seed, ALPHABET)
    ours = lua.eval('function(t) return require("qjson").encode(t) end')(t)
    theirs = cjson.encode(t)
    assert ours == theirs
    if name in HASH_ORDER:
        a = json.loads(ours.decode("utf-8", "surrogateescape"))
        b = json.loads(theirs.decode("utf-8", "surrogateescape"))
        assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


CASES = [
    "{}",
    "{1, 2, 3}",
    "{1, 2, nil, 4}",  # a hole: null
    "{[1] = 1, [2] = 2, [4] = 4}",
    "{[10] = 1}",  # sparse but within cjson's "safe" 10
    "{[1] = 1, x = 2}",
    "{[1.5] = 1}",
    "{[-1] = 1}",
    "{[0] = 1}",
    "{[2^53] = 1}",
    "{true, false}",
    "{'a/b', '\"', '\\\\', '\\0\\1\\31\\127', 'é'}",
    "{{}, {{}}, {{{}}}}",
    "{a = {b = {c = {1, 2, {d = 'e'}}}}}",
    "{1, 12345678901234, -12345678901234, 0.1, 1/3, -0.0, 1e300, 1e-300, 3.0, -5, 1e-7}",
    "{2^-21, 2^-30, 1e15, 2^53, 1234567890123456, 1e21, 5e-324}",
    "{[1] = 'a', [2] = 'b', [3] = 'c', [5] = 'e'}",
    "{cjson_null}",
    "{x = cjson_null}",
    "''",
    "'plain'",
    "42",
    "true",
    "cjson_null",
]


@pytest.mark.parametrize("expr", CASES)
def test_edge_cases_equal_cjson(lua, cjson, expr):
    f = lua.eval(
        """function(cjson, expr)
            local v = assert(loadstring("local cjson_null = ...; return " .. expr))(cjson.null)
            return require("qjson").encode(v), cjson.encode(v)
        end"""
    )
    ours, theirs = f(cjson, expr.encode())
    assert ours == theirs


ERRORS = {
    "0/0": "Cannot serialise number: must not be NaN or Inf",
    "1/0": "Cannot serialise number: must not be NaN or Inf",
    "{-1/0}": "Cannot serialise number: must not be NaN or Inf",
    "{[1] = 1, [20] = 2}": "Cannot serialise table: excessively sparse array",
    "{[true] = 1}": "Cannot serialise boolean: table key must be a number or string",
    "{print}": "Cannot serialise function: type not supported",
    "print": "Cannot serialise function: type not supported",
}


@pytest.mark.parametrize("expr", list(ERRORS))
def test_errors_match_cjson(lua, cjson, expr):
    f = lua.eval(
        """function(cjson, expr)
            local v = assert(loadstring("return " .. expr))()
            local ok1, e1 = pcall(require("qjson").encode, v)
            local ok2, e2 = pcall(cjson.encode, v)
            return ok1, tostring(e1), ok2, tostring(e2)
        end"""
    )
    ok1, e1, ok2, e2 = f(cjson, expr.encode())
    assert not ok1 and not ok2
    assert e1 == e2 == ERRORS[expr].encode()


def test_depth_and_cycles(lua, cjson):
    f = lua.eval(
        """function(cjson, n)
            local t = {}
            local cur = t
            for i = 2, n do cur[1] = {}; cur = cur[1] end
            local ok1, r1 = pcall(require("qjson").encode, t)
            local ok2, r2 = pcall(cjson.encode, t)
            return ok1, r1, ok2, r2
        end"""
    )
    ok1, r1, ok2, r2 = f(cjson, 1000)
    assert ok1 and ok2 and r1 == r2
    ok1, r1, ok2, r2 = f(cjson, 1001)
    assert not ok1 and not ok2
    assert r1 == r2 == b"Cannot serialise, excessive nesting (1001)"
    cyc = lua.eval(
        """function()
            local t = {a = {}}
            t.a.b = t
            local ok, e = pcall(require("qjson").encode, t)
            local u = {}
            u[1] = u
            local ok2, e2 = pcall(require("qjson").encode, u)
            return ok, e, ok2, e2
        end"""
    )
    ok, e, ok2, e2 = cyc()
    assert not ok and e == b"Cannot serialise table: cycle detected"
    assert not ok2 and e2 == b"Cannot serialise table: cycle detected"
    # After an error the encoder is usable again.
    assert lua.eval('require("qjson").encode({1, {2}})') == b"[1,[2]]"


def test_encode_keeps_no_tables_alive(lua):
    # The encoder's frame stack drops each table as its frame closes, and a
    # walk that failed half-way leaves frames that the next successful call
    # drops: after either, the tables encoded can be collected.
    f = lua.eval(
        """function()
            local qjson = require("qjson")
            local weak = setmetatable({}, {__mode = "k"})
            local t = {a = {b = {c = {1, {2}}}}}
            weak[t.a.b.c] = true
            local out = qjson.encode(t)
            t = nil
            collectgarbage(); collectgarbage()
            local kept_ok = next(weak) ~= nil
            local bad = {x = {y = {z = {function() end}}}}
            weak[bad.x.y] = true
            local ok = pcall(qjson.encode, bad)
            bad = nil
            local again = qjson.encode({1, {2}})
            collectgarbage(); collectgarbage()
            return out, kept_ok, ok, again, next(weak) ~= nil
        end"""
    )
    out, kept_ok, ok, again, kept_bad = f()
    assert out == b'{"a":{"b":{"c":[1,[2]]}}}'
    assert not kept_ok
    assert not ok and again == b"[1,[2]]"
    assert not kept_bad


def test_integers_up_to_1e15_are_exact(lua):
    # Where qjson differs from Debian's lua-cjson 2.1.0 on purpose: integers
    # with 15 digits are written exactly (%d) instead of with %.14g.
    enc = lua.eval('function(v) return require("qjson").encode(v) end')
    assert enc(123456789012345) == b"123456789012345"
    assert enc(-999999999999999) == b"-999999999999999"
    assert enc(100000000000000) == b"100000000000000"
    assert enc(1e15) == b"1e+15"
    assert enc(12345678901234) == b"12345678901234"
    assert enc(-0.0) == b"-0"


def test_qjson_null_and_int64(lua):
    f = lua.eval(
        """function()
            local qjson = require("qjson")
            return qjson.encode({qjson.null, x = 1}), qjson.encode({qjson.null}),
                   qjson.encode({9007199254740993LL, -5LL, 18446744073709551615ULL}),
                   tostring(qjson.null)
        end"""
    )
    a, b, c, d = f()
    assert a == b'{"1":null,"x":1}' or json.loads(a) == {"1": None, "x": 1}
    assert b == b"[null]"
    assert c == b"[9007199254740993,-5,18446744073709551615]"
    assert d == b"qjson.null"


def test_small_object_equals_cjson(lua, cjson):
    # The seeds' small object: a short string, and an array of four
    # two-member objects (the key cache's first / other member forms).
    f = lua.eval(
        """function(cjson)
            local t = {key = "hello", conf = {}}
            for i = 1, 4 do t.conf[i] = {name = "foo", value = "foo"} end
            local a = require("qjson").encode(t)
            return a, cjson.encode(t), require("qjson").encode(t)
        end"""
    )
    ours, theirs, again = f(cjson)
    assert ours == theirs == again
    assert json.loads(ours) == {"key": "hello", "conf": [{"name": "foo", "value": "foo"}] * 4}


def test_long_strings_equal_cjson(lua, cjson):
    # Strings over 64 KiB are escaped in pieces: escapes on and around the
    # piece borders, and a long clean string.
    f = lua.eval(
        """function(cjson)
            local parts = {}
            for i = 1, 3 * 65536 + 17 do parts[i] = "a" end
            for _, at in ipairs({1, 65535, 65536, 65537, 131072, 131073, 3 * 65536 + 17}) do
                parts[at] = ({"/", '"', "\\\\", "\\n", "\\1", "\\127"})[at % 6 + 1]
            end
            local s = table.concat(parts)
            local clean = string.rep("xyz", 50000)
            local t = {s, clean, {[s] = clean}}
            return require("qjson").encode(t), cjson.encode(t)
        end"""
    )
    ours, theirs = f(cjson)
    assert ours == theirs
    assert len(ours) > 2 * 3 * 65536


def test_keys_equal_cjson_past_the_key_cache(lua, cjson):
    # More distinct keys than the key cache holds (it is emptied and filled
    # again), keys too long to cache, keys with escapes, number keys next to
    # the same number as a string, and every table encoded twice.
    f = lua.eval(
        """function(cjson)
            local t = {}
            for i = 1, 5000 do t["k" .. i] = i end
            t[string.rep("long/", 60)] = "x"
            t['q"/\\\\\\0\\31\\127'] = true
            local mixed = {[1] = "one", ["1"] = "string one", [2.5] = "f", x = {}}
            local nested = {}
            for i = 1, 50 do
                nested["n" .. i] = (i % 3 == 0) and {i, {deep = i}} or i
            end
            local out = {}
            for _, v in ipairs({t, mixed, nested, t, mixed, nested}) do
                out[#out + 1] = require("qjson").encode(v)
                out[#out + 1] = cjson.encode(v)
            end
            return unpack(out)
        end"""
    )
    r = f(cjson)
    for ours, theirs in zip(r[::2], r[1::2]):
        assert ours == theirs
    assert len(json.loads(r[0])) == 5002
    assert json.loads(r[4])["n3"] == [3, {"deep": 3}]


def test_nested_tables_at_every_position_equal_cjson(lua, cjson):
    # The walk leaves a table for a nested one and comes back: nested tables
    # first, last, in a row, between scalars, in arrays with holes, and
    # after an empty table.
    f = lua.eval(
        """function(cjson)
            local cases = {
                {{}, {1}, {{}}, 2, {a = {}}, nil, {b = {c = {}}}, "s"},
                {a = {}, b = {1, {2, {3}}}, c = 3, d = {e = {f = {}}}, g = "h"},
                {{{{{{{{{{1}}}}}}}}}},
                {[1] = {x = 1}, [3] = {y = {}}, [4] = cjson.null},
            }
            local out = {}
            for _, v in ipairs(cases) do
                out[#out + 1] = require("qjson").encode(v)
                out[#out + 1] = cjson.encode(v)
            end
            return unpack(out)
        end"""
    )
    r = f(cjson)
    for ours, theirs in zip(r[::2], r[1::2]):
        assert ours == theirs


def test_proxies_inside_plain_tables(lua):
    # A proxy met by the plain walk is written by the proxy writer (its
    # original bytes, or its edits), and the walk resumes after it.
    f = lua.eval(
        """function()
            local qjson = require("qjson")
            local p = qjson.decode('{"a": [1, 2], "b": {"c": "x/y"}}')
            local e = qjson.decode('[1, {"z": 2}]')
            e[2].z = 3
            return qjson.encode({p, {p.b, "after"}, e, 4}), qjson.encode({k = e})
        end"""
    )
    a, b = f()
    assert json.loads(a) == [
        {"a": [1, 2], "b": {"c": "x/y"}},
        [{"c": "x/y"}, "after"],
        [1, {"z": 3}],
        4,
    ]
    assert json.loads(b) == {"k": [1, {"z": 3}]}
