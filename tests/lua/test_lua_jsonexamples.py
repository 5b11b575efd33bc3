"""The simdjson corpus through the Lua API: every value read in Lua (by dotted
path and by JSON Pointer, through Doc methods and through qjson.decode
proxies) equals the value json.loads gives, and raw() equals the Python Doc's.

Each file costs a few Lua calls: Lua reads every path and returns its answers
as one JSON text (built with qjson.encode; numbers travel as %.17g strings,
so nothing is lost on the way)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from conftest import data_files, reference_loads, walk_json

pytest.importorskip("lupa", reason="lupa is not installed (pip install 'qjson[lua]')")

import qjson  # noqa: E402
import qjson.luajit  # noqa: E402

FILES = data_files("jsonexamples", "*.json") + data_files(
    "jsonexamples/small", "*.json", id_prefix="small/"
)

READ_ALL = """
function(s, paths_json)
    local qjson = require("qjson")
    local d = qjson.parse(s)
    local paths = qjson.decode(paths_json)
    local out = {}
    for i = 1, qjson.len(paths) do
        local p = paths[i]
        local t = d:typeof(p)
        local r
        if t == "string" then
            r = {t, d:get_str(p), d:raw(p)}
        elseif t == "number" then
            local ok, i64 = pcall(d.get_i64, d, p)
            r = {t, string.format("%.17g", d:get_f64(p)),
                 ok and (tostring(i64):gsub("LL$", "")) or false, d:raw(p)}
        elseif t == "bool" then
            r = {t, d:get_bool(p), d:raw(p)}
        elseif t == "null" then
            r = {t, false, d:raw(p)}
        else
            r = {t, d:len(p), d:open(p):len()}
        end
        out[i] = r
    end
    return qjson.encode(out)
end
"""

# A canonical form of a value read through proxies: containers tagged
# (["O", [k, v], ...] keeps key order; ["A", ...]), numbers as %.17g
# strings, null as ["null"].
CANON = """
function(s)
    local qjson = require("qjson")
    local function canon(v)
        if v == qjson.null then return {"null"} end
        local tv = type(v)
        if tv == "number" then return {"n", string.format("%.17g", v)} end
        if tv ~= "table" then return v end
        if getmetatable(v).__qjson == 1 then
            local r = {"O"}
            for k, x in qjson.pairs(v) do r[#r + 1] = {k, canon(x)} end
            return r
        end
        local r = {"A"}
        for i, x in qjson.ipairs(v) do r[#r + 1] = canon(x) end
        assert(#r == qjson.len(v) + 1)
        return r
    end
    local root = qjson.decode(s)
    assert(qjson.encode(root) == s) -- the whole input, as Python writes it
    return qjson.encode(canon(root))
end
"""


def canon(v: Any) -> Any:
    if v is None:
        return ["null"]
    if isinstance(v, bool) or isinstance(v, str):
        return v
    if isinstance(v, (int, float)):
        return ["n", float(v)]
    if isinstance(v, dict):
        return ["O"] + [[k, canon(x)] for k, x in v.items()]
    return ["A"] + [canon(x) for x in v]


def uncanon_numbers(v: Any) -> Any:
    """Turn the ["n", "%.17g"] pairs from Lua into floats."""
    if isinstance(v, list):
        if len(v) == 2 and v[0] == "n" and isinstance(v[1], str):
            return ["n", float(v[1])]
        return [uncanon_numbers(x) for x in v]
    return v


@pytest.fixture(scope="module")
def lua():
    return qjson.luajit.runtime(lua_modules=True)


def load(path: Path) -> tuple[bytes, Any]:
    data = path.read_bytes()
    try:
        json.loads(data)
    except ValueError as e:
        pytest.skip(f"{path.name} is not valid JSON per json.loads ({e}); not a qjson test")
    return data, reference_loads(data)


def same_float(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


@pytest.mark.parametrize("path", FILES)
def test_every_value_read_in_lua(lua, path: Path) -> None:
    data, expected = load(path)
    doc = qjson.parse(data)
    entries = list(walk_json(expected))
    for kind in ("dotted", "pointer"):
        paths = [getattr(e, kind) for e in entries]
        got = json.loads(lua.eval(READ_ALL)(data, json.dumps(paths).encode()))
        assert len(got) == len(entries)
        for e, p, r in zip(entries, paths, got):
            v = e.value
            t = r[0]
            if isinstance(v, dict):
                assert t == "object", p
                if not getattr(v, "had_duplicates", False):
                    assert r[1] == r[2] == len(v), p
            elif isinstance(v, list):
                assert t == "array" and r[1] == r[2] == len(v), p
            elif isinstance(v, str):
                assert t == "string" and r[1] == v, p
            elif isinstance(v, bool):
                assert t == "bool" and r[1] is v, p
            elif v is None:
                assert t == "null", p
            else:
                assert t == "number", p
                assert same_float(float(r[1]), float(v)), (p, r, v)
                if isinstance(v, int) and -(2**63) <= v < 2**63:
                    assert r[2] is not False and int(r[2]) == v, (p, r, v)
                else:
                    assert r[2] is False, (p, r, v)
            if t not in ("object", "array"):
                assert r[-1].encode() == doc.raw(p), p


@pytest.mark.parametrize("path", FILES)
def test_every_value_through_proxies(lua, path: Path) -> None:
    data, expected = load(path)
    got = uncanon_numbers(json.loads(lua.eval(CANON)(data)))
    assert got == canon(expected)
