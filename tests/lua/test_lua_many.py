"""qjson.parse_many in Lua (lupa's LuaJIT): the documents of a stream, as
Docs, in a generic for; bad documents raise with their index and offset, or
are skipped into the iterator's `errors` table."""

from __future__ import annotations

import json

import pytest
from conftest import data_path

pytest.importorskip("lupa", reason="lupa is not installed (pip install 'qjson[lua]')")

import qjson  # noqa: E402
import qjson.luajit  # noqa: E402


@pytest.fixture(scope="module")
def lua():
    return qjson.luajit.runtime(lua_modules=True)


@pytest.fixture(scope="module")
def read_all(lua):
    """read_all(s, opts_json) -> JSON text: [{raw, type, values}], errors."""
    return lua.eval(
        """function(s, opts_json)
            local qjson = require("qjson")
            local opts = opts_json and qjson.materialize(qjson.decode(opts_json)) or nil
            local out = {}
            local it = qjson.parse_many(s, opts)
            for d in it do
                local t = d:typeof("")
                local values = {}
                if t == "array" then
                    for i = 0, d:len("") - 1 do
                        local p = "[" .. i .. "]"
                        local v = d:get(p)
                        if type(v) == "cdata" then v = tonumber(v) end
                        values[#values + 1] = v == nil and qjson.null or v
                    end
                elseif t == "object" then
                    values[1] = d:raw("")
                end
                out[#out + 1] = { d:raw(""), t, values }
            end
            local errs = {}
            for _, e in ipairs(it.errors) do
                errs[#errs + 1] = { e.message, e.offset, e.doc_index }
            end
            return qjson.encode({ out, errs })
        end"""
    )


def test_amazon_every_document(read_all):
    data = data_path("jsonexamples", "amazon_cellphones.ndjson").read_bytes()
    lines = [line for line in data.splitlines() if line.strip()]
    docs, errs = json.loads(read_all(data, None))
    assert not errs
    assert len(docs) == len(lines)
    for (raw, t, values), line in zip(docs, lines):
        want = json.loads(line)
        assert raw.encode() == line
        assert t == "array"
        assert values == want


def test_batch_objects(read_all):
    data = b'{"custom_id": "a", "body": {"model": "m"}}\n\n  {"x": [1, {"y": null}]}\r\n'
    docs, errs = json.loads(read_all(data, None))
    assert [json.loads(d[2][0]) for d in docs] == [
        json.loads(x) for x in data.split(b"\n") if x.strip()
    ]
    assert not errs


def test_errors_raise_and_skip(lua, read_all):
    data = b'[1]\n{"a": "open}\n[2]\n[[[[[[]]]]]]\n[3]\n\\\n[4]'
    docs, errs = json.loads(read_all(data, '{"errors": "skip", "max_depth": 4}'))
    assert [d[0] for d in docs] == ["[1]", "[2]", "[3]", "[4]"]
    assert [e[2] for e in errs] == [1, 3, 5]
    assert "Unterminated string" in errs[0][0]
    assert "depth" in errs[1][0]
    assert "Backslash" in errs[2][0]
    lines = data.split(b"\n")
    starts = [sum(len(x) + 1 for x in lines[:i]) for i in range(len(lines))]
    for (_, off, _i), line_no in zip(errs, (1, 3, 5)):
        assert starts[line_no] <= off <= starts[line_no] + len(lines[line_no])
    first = lua.eval(
        """function(s)
            local qjson = require("qjson")
            local seen = {}
            local ok, e = pcall(function()
                for d in qjson.parse_many(s) do seen[#seen + 1] = d:raw("") end
            end)
            return ok, tostring(e), #seen
        end"""
    )
    ok, msg, n = first(data)
    assert not ok and n == 1
    assert "Unterminated string" in msg and "document 1" in msg


def test_docs_keep_the_input_alive(lua):
    """A Doc points into the input string: the string must live as long as
    the Doc (and its cursors), not as long as the caller's variable."""
    f = lua.eval(
        """function(n)
            local qjson = require("qjson")
            local docs, cursors = {}, {}
            local function line(i)
                local fmt = '{"id": %d, "s": "%s", "a": [%d]}'
                return string.format(fmt, i, string.rep("v", i % 40), i)
            end
            do
                local parts = {}
                for i = 1, n do
                    parts[i] = line(i)
                end
                local s = table.concat(parts, "\\n")
                for d in qjson.parse_many(s) do
                    docs[#docs + 1] = d
                    cursors[#cursors + 1] = d:open("a")
                end
            end
            for _ = 1, 3 do collectgarbage() end
            local junk = {}
            for i = 1, 20000 do
                junk[i] = string.rep(string.char(65 + i % 26), 64) .. i
            end
            junk = nil
            collectgarbage()
            local bad = 0
            for i, d in ipairs(docs) do
                local c = cursors[i]:raw("")
                if d:raw("") ~= line(i) or d:get("id") ~= i or c ~= "[" .. i .. "]" then
                    bad = bad + 1
                end
            end
            return #docs, bad
        end"""
    )
    assert tuple(f(500)) == (500, 0)


@pytest.fixture(scope="module")
def open_all(lua):
    """open_all(path, opts_json, how) -> JSON text: [raw of every doc], errors;
    how: "path", "file" (an io file) or "reader" (a table whose read(n)
    returns at most 7 bytes at a time)."""
    return lua.eval(
        """function(path, opts_json, how)
            local qjson = require("qjson")
            local opts = opts_json and qjson.materialize(qjson.decode(opts_json)) or nil
            local src = path
            if how == "file" then
                src = assert(io.open(path, "rb"))
            elseif how == "reader" then
                local f = assert(io.open(path, "rb"))
                src = { read = function(self, n) return f:read(n < 7 and n or 7) end }
            end
            local out = {}
            local it = qjson.open_many(src, opts)
            for d in it do
                out[#out + 1] = d:raw("")
            end
            local errs = {}
            for _, e in ipairs(it.errors) do
                errs[#errs + 1] = { e.message, e.offset, e.doc_index }
            end
            return qjson.encode({ out, errs })
        end"""
    )


@pytest.mark.parametrize("chunk", [1024, 64 * 1024, 1 << 20])
def test_open_many_amazon(open_all, chunk):
    path = data_path("jsonexamples", "amazon_cellphones.ndjson")
    lines = [line for line in path.read_bytes().splitlines() if line.strip()]
    docs, errs = json.loads(open_all(str(path), json.dumps({"chunk_size": chunk}), "path"))
    assert not errs
    assert [d.encode() for d in docs] == lines
    assert [json.loads(d) for d in docs] == [json.loads(line) for line in lines]


@pytest.mark.parametrize("how", ["path", "file", "reader"])
@pytest.mark.parametrize("chunk", [1, 5, 64, 1 << 20])
def test_open_many_matches_parse_many(tmp_path, read_all, open_all, how, chunk):
    data = (
        b'\xef\xbb\xbf[1]\n{"a": "open}\n[2]\n[[[[[[]]]]]]\n\n  {"b": {"c": "%s"}}\n'
        b'{\n  "pretty": [1,],\n  "x": 2\n}\n[3]\n\\\n{"long": "%s"}\n[4'
    ) % (b"y" * 100, b"z" * 300)
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    opts = {"errors": "skip", "max_depth": 4}
    want = json.loads(read_all(data, json.dumps(opts)))
    opts["chunk_size"] = chunk
    docs, errs = json.loads(open_all(str(path), json.dumps(opts), how))
    assert docs == [d[0] for d in want[0]]
    assert errs == want[1]
    assert [e[2] for e in errs] == [1, 3, 5, 7, 9]


def test_open_many_raises_with_stream_offset(tmp_path, lua):
    path = tmp_path / "bad.jsonl"
    good = b'{"n": %d}\n'
    data = b"".join(good % i for i in range(100)) + b'{"n": tru}\n'
    path.write_bytes(data)
    f = lua.eval(
        """function(path)
            local qjson = require("qjson")
            local n = 0
            local ok, e = pcall(function()
                for d in qjson.open_many(path, { chunk_size = 16 }) do n = n + 1 end
            end)
            return ok, tostring(e), n
        end"""
    )
    ok, msg, n = f(str(path))
    assert not ok and n == 100
    at = data.index(b"tru}")
    assert f"document 100, byte {at}" in msg, msg


def test_bad_arguments(lua):
    f = lua.eval(
        """function(code)
            local qjson = require("qjson")
            local ok, e = pcall(loadstring("local qjson = ...; " .. code), qjson)
            return ok, tostring(e)
        end"""
    )
    ok, msg = f("qjson.parse_many(12)")
    assert not ok and "expected a string" in msg
    ok, msg = f('qjson.parse_many("1", {errors = "ignore"})')
    assert not ok and "errors" in msg
    ok, msg = f("qjson.open_many(12)")
    assert not ok and "expected a path or a file" in msg
    ok, msg = f('qjson.open_many("/nonexistent/qjson-many.jsonl")')
    assert not ok and "No such file" in msg
    ok, msg = f('qjson.open_many({read = function() return "" end}, {chunk_size = 0})')
    assert not ok and "chunk_size" in msg
    # An option a function does not take, or of the wrong type, raises (as
    # Python's keywords do) instead of being ignored.
    ok, msg = f('qjson.parse_many("1", {chunk_size = 4096})')
    assert not ok and msg.endswith('qjson.parse_many: unknown option "chunk_size"')
    ok, msg = f('qjson.open_many({read = function() return "" end}, {error = "skip"})')
    assert not ok and msg.endswith('qjson.open_many: unknown option "error"')
    ok, msg = f('qjson.parse_many("1", {lazy = "yes"})')
    assert not ok and msg.endswith("qjson.parse_many: lazy must be a boolean, got string")
    ok, msg = f('qjson.parse_many("1", {max_depth = 0})')
    assert not ok and msg.endswith("qjson.parse_many: max_depth must be a positive integer")
    ok, msg = f('qjson.parse_many("1", 5)')
    assert not ok and msg.endswith("qjson.parse_many: options must be a table, got number")


STANDALONE = r"""
local qjson = require("qjson")
local f = assert(io.open(arg[1], "rb"))
local s = f:read("*a")
f:close()
local n = 0
local it = qjson.parse_many(s .. '\n{"a": "open}\n[1]\n', {errors = "skip"})
for d in it do
    n = n + 1
end
local m = 0
for d in qjson.open_many(arg[1], {chunk_size = 4096}) do
    m = m + 1
end
io.write(n, " ", #it.errors, " ", it.errors[1].doc_index, " ", m, "\n")
"""


def test_standalone_luajit(tmp_path):
    """The same iterators in standalone LuaJIT over the C-ABI build."""
    import os
    import shutil
    import subprocess

    from test_lua_capi import LUA, capi_library

    lib = capi_library()
    luajit = shutil.which("luajit")
    if luajit is None:
        pytest.skip("luajit not on PATH (Debian package `luajit`)")
    data = data_path("jsonexamples", "amazon_cellphones.ndjson")
    lines = sum(1 for line in data.read_bytes().splitlines() if line.strip())
    script = tmp_path / "many.lua"
    script.write_text(STANDALONE)
    env = dict(os.environ, QJSON_LIB=str(lib), LUA_PATH=f"{LUA.parent}/?.lua;;")
    out = subprocess.run([luajit, str(script), str(data)], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(lines + 1), "1", str(lines), str(lines)]
