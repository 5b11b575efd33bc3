"""Wildcard paths, get_all / get_many and compiled paths (qjson.path) through
the Lua API inside lupa's LuaJIT: the same table of cases and the same
generated paths as tests/read/test_wildcards.py, against the same reference.

Lua answers with one JSON text per call (built with qjson.encode): each
value tagged with its kind, numbers as %.17g strings, containers as their
raw text, so nothing is lost on the way."""

from __future__ import annotations

import json
import math
import zlib
from typing import Any

import pytest
from conftest import data_files, reference_loads, same
from wildcard_paths import CASES, DOC, generate, path_text, reference_all

pytest.importorskip("lupa", reason="lupa is not installed (pip install 'qjson[lua]')")

import qjson  # noqa: E402
import qjson.luajit  # noqa: E402

# get_all of every path, by text and by qjson.path, canonical (see above).
GET_ALL = """
function(s, paths_json)
    local qjson = require("qjson")
    local d = qjson.parse(s)
    local paths = qjson.materialize(qjson.decode(paths_json))
    local function canon(v)
        if v == qjson.null then return {"null"} end
        local t = type(v)
        if t == "number" then return {"n", string.format("%.17g", v)} end
        if t == "string" then return {"s", v} end
        if t == "boolean" then return {"b", v} end
        return {"raw", v:raw()}
    end
    local out = {}
    for i = 1, #paths do
        local by_text, by_path = {}, {}
        for j, v in ipairs(d:get_all(paths[i])) do by_text[j] = canon(v) end
        for j, v in ipairs(d:get_all(qjson.path(paths[i]))) do by_path[j] = canon(v) end
        out[i] = {by_text, by_path}
    end
    return qjson.encode(out)
end
"""


@pytest.fixture(scope="module")
def lua() -> Any:
    return qjson.luajit.runtime()


@pytest.fixture(scope="module")
def get_all(lua: Any) -> Any:
    f = lua.eval(GET_ALL)

    def run(data: bytes, paths: list[str]) -> list[tuple[list[Any], list[Any]]]:
        out = f(data, json.dumps(paths))
        return json.loads(out)

    return run


def matches(got: list[Any], want: list[Any]) -> bool:
    """Whether Lua's canonical values equal the reference values."""
    if len(got) != len(want):
        return False
    for (kind, *v), w in zip(got, want):
        if kind == "raw":
            if not isinstance(w, (dict, list)) or not same(reference_loads(v[0].encode()), w):
                return False
        elif kind == "null":
            if w is not None:
                return False
        elif kind == "b":
            if w is not v[0]:
                return False
        elif kind == "s":
            if w != v[0]:
                return False
        elif isinstance(w, bool) or not isinstance(w, (int, float)):
            return False
        else:
            f = float(v[0])
            try:
                ref = float(w)
            except OverflowError:
                ref = math.copysign(math.inf, w)
            if not (f == ref or (math.isnan(f) and math.isnan(ref))):
                return False
    return True


def test_cases(get_all: Any) -> None:
    paths = [p for p, _ in CASES]
    results = get_all(DOC, paths)
    for (path, want), (by_text, by_path) in zip(CASES, results):
        assert matches(by_text, want), (path, by_text, want)
        assert by_path == by_text, path


FILES = (
    data_files("JSONTestSuite/test_parsing", "y_*.json", id_prefix="y/")
    + data_files("jsonexamples", "*.json", id_prefix="ex/")
    + data_files("jsonexamples/small", "*.json", id_prefix="ex/small/")
)


@pytest.mark.parametrize("file", FILES)
def test_generated_paths_agree_with_a_reference_walker(get_all: Any, file: Any) -> None:
    data = file.read_bytes()
    expected = reference_loads(data)
    all_segs = generate(expected, seed=zlib.crc32(file.name.encode()))
    texts = [path_text(segs) for segs in all_segs]
    for segs, text, (by_text, by_path) in zip(all_segs, texts, get_all(data, texts)):
        assert matches(by_text, reference_all(expected, segs)), text
        assert by_path == by_text, text


@pytest.fixture(scope="module")
def run(lua: Any) -> Any:
    """run(code) -> the results of `code` (a chunk body), with `qjson` and
    `d` (the parsed DOC) in scope."""
    f = lua.eval(
        """function(s, code)
            local qjson = require("qjson")
            local chunk = assert(loadstring("local qjson, d = ...; " .. code))
            return chunk(qjson, qjson.parse(s))
        end"""
    )
    return lambda code: f(DOC, code)


def test_get_many_holes_and_paths(run: Any) -> None:
    got = run(
        """local r = d:get_many({"messages[0].role", qjson.path("dup.k"), "missing",
                                "tools[9]", "dup"})
        return #r, r[1], r[2], r[3] == qjson.null, r[4] == qjson.null, r[5]:get("j")"""
    )
    assert got == (5, "system", 1, True, True, 2)
    err = run(
        """local ok, e = pcall(d.get_many, d, "dup.k")
        local ok2, e2 = pcall(d.get_many, d, {"messages[*]"})
        return ok, e, ok2, e2"""
    )
    assert err[0] is False and "get_many" in str(err[1])
    assert err[2] is False and "get_all" in str(err[3])


def test_every_getter_takes_a_compiled_path(run: Any) -> None:
    got = run(
        """local same = true
        for _, r in ipairs({d, d:open("")}) do
            for _, case in ipairs({{"get_str", "messages[0].role"}, {"get_i64", "dup.k"},
                    {"get_f64", "dup.j"}, {"get_bool", "tools[1].function.x[1]"},
                    {"typeof", "tools"}, {"len", "messages"}, {"raw", "messages[1]"},
                    {"get", "esc.a"}, {"get", "missing"}, {"len", "nested[9]"}}) do
                local name, p = case[1], case[2]
                local a, b = r[name](r, p), r[name](r, qjson.path(p))
                same = same and a == b
            end
            local c = r:open(qjson.path("messages[4]"))
            same = same and c:get_all("tags[*]")[3] == "z" and c:get(qjson.path("tags[0]")) == "x"
            same = same and r:get(qjson.path("messages[1]")):len() == 2
        end
        local ok, e = pcall(d.get_str, d, qjson.path("dup.k"))
        return same, ok, e"""
    )
    assert got[0] is True
    assert got[1] is False and "expected string" in str(got[2]) and "dup.k" in str(got[2])


@pytest.mark.parametrize("path", ["a[*", "[**]", "a.*b", "**"])
def test_malformed_wildcards_raise(run: Any, path: str) -> None:
    got = run(
        f"""local ok1, e1 = pcall(d.get_all, d, {json.dumps(path)})
        local ok2, e2 = pcall(qjson.path, {json.dumps(path)})
        return ok1, e1, ok2, e2"""
    )
    assert got[0] is False and "invalid path" in str(got[1])
    assert got[2] is False and "invalid path" in str(got[3])


@pytest.mark.parametrize("path", ["messages[*]", "*", "missing.*"])
def test_single_value_reads_reject_wildcards(run: Any, path: str) -> None:
    got = run(
        f"""local n = 0
        for _, name in ipairs({{"get", "get_str", "typeof", "len", "raw", "open"}}) do
            if not pcall(d[name], d, {json.dumps(path)}) then n = n + 1 end
            if not pcall(d[name], d, qjson.path({json.dumps(path)})) then n = n + 1 end
        end
        return n"""
    )
    assert got == 12


def test_paths_reused_across_documents(lua: Any) -> None:
    f = lua.eval(
        """function(n)
            local qjson = require("qjson")
            local ids, login = qjson.path("[*].id"), qjson.path("[-1].user.login")
            for k = 1, n do
                local items = {}
                for i = 1, k do
                    items[i] = string.format('{"id": %d, "user": {"login": "u%d"}}', i, i)
                end
                local d = qjson.parse("[" .. table.concat(items, ",") .. "]")
                local got = d:get_all(ids)
                if #got ~= k or got[k] ~= k or d:get(login) ~= "u" .. k then return k end
            end
            return 0
        end"""
    )
    assert f(60) == 0
