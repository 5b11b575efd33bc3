"""The Lua API of qjson.lua inside lupa's LuaJIT: every Doc / cursor method,
errors, lifetimes, and the Python glue (qjson.luajit)."""

from __future__ import annotations

import pytest

pytest.importorskip("lupa", reason="lupa is not installed (pip install 'qjson[lua]')")

import qjson  # noqa: E402
import qjson.luajit  # noqa: E402

BODY = (
    b'{"model": "gpt-4o", "temperature": 0.7, "n": 9007199254740993, "stream": false,'
    b' "none": null, "big": 123456789012345678901234, "neg": -5, "exp": 1e2,'
    b' "esc": "a\\n\\u00e9\\ud83d\\ude00", "a.b": {"c[d]": [10, 20, 30]},'
    b' "messages": [{"role": "system", "content": "Be brief."},'
    b' {"role": "user", "content": [{"type": "text", "text": "hi"}]}]}'
)


@pytest.fixture(scope="module")
def lua():
    return qjson.luajit.runtime(lua_modules=True)


@pytest.fixture(scope="module")
def call(lua):
    """call(body, lua_expr_using_d_and_qjson) -> results of the expression."""
    runner = lua.eval(
        """function(s, code)
            local qjson = require("qjson")
            local d = qjson.parse(s)
            local f = assert(loadstring("local qjson, d = ...; return " .. code))
            return f(qjson, d)
        end"""
    )

    def run(body: bytes, code: str):
        return runner(body, code)

    return run


@pytest.fixture(scope="module")
def run(lua):
    """run(body, code) -> results of the expression, with `s` the body."""
    return lua.eval(
        """function(s, code)
            local f = assert(loadstring("local qjson, s = ...; return " .. code))
            return f(require("qjson"), s)
        end"""
    )


@pytest.fixture(scope="module")
def err(lua):
    """err(body, code) -> the error message the code raises (or fails)."""
    runner = lua.eval(
        """function(s, code)
            local qjson = require("qjson")
            local f = assert(loadstring("local qjson, s = ...; return " .. code))
            local ok, e = pcall(f, qjson, s)
            assert(not ok, "no error raised")
            return tostring(e)
        end"""
    )
    return runner


def test_runtime_and_install(lua):
    assert lua.eval('require("qjson")._VERSION') == qjson.__version__
    assert lua.eval('require("qjson")._BACKEND') == qjson.backend()
    # install() on a runtime the user already has, twice: both work.
    import lupa.luajit21

    rt = lupa.luajit21.LuaRuntime()
    mod = qjson.luajit.install(rt)
    assert mod["_VERSION"] == qjson.__version__
    qjson.luajit.install(rt)
    assert rt.eval('require("qjson").parse("[1,2]"):len()') == 2
    get_model = rt.eval('function(s) return require("qjson").parse(s):get_str("model") end')
    assert get_model(BODY) == "gpt-4o"


def test_install_rejects_other_objects():
    with pytest.raises(TypeError):
        qjson.luajit.install(object())


def test_library_path_is_the_extension():
    assert qjson.luajit.library_path() == qjson._qjson.__file__
    assert b"qjson.parse" in qjson.luajit.lua_source()


def test_typed_getters(call):
    assert call(BODY, 'd:get_str("model")') == "gpt-4o"
    assert call(BODY, 'd:get_f64("temperature")') == 0.7
    assert call(BODY, 'd:get_f64("n")') == 9007199254740992.0
    assert call(BODY, 'd:get_bool("stream")') is False
    assert call(BODY, 'd:get_str("esc")') == "a\n\u00e9\U0001f600"
    assert call(BODY, 'd:get_str("messages[1].content[0].text")') == "hi"
    assert call(BODY, 'd:get_f64("exp")') == 100.0
    assert call(BODY, 'd:get_f64("big")') == 1.2345678901234568e23


def test_get_i64_is_lossless_int64_cdata(call):
    assert call(BODY, 'tostring(d:get_i64("n"))') == "9007199254740993LL"
    assert call(BODY, 'require("ffi").istype("int64_t", d:get_i64("neg"))') is True
    assert call(BODY, 'tostring(d:get_i64("neg"))') == "-5LL"
    assert call(BODY, 'd:get_i64("neg") == -5') is True


def test_typeof_len_raw(call):
    names = {
        "": "object",
        "messages": "array",
        "model": "string",
        "n": "number",
        "stream": "bool",
        "none": "null",
    }
    for path, name in names.items():
        assert call(BODY, f"d:typeof({path!r})") == name
    assert call(BODY, "d:typeof()") == "object"
    assert call(BODY, 'd:len("messages")') == 2
    assert call(BODY, "d:len()") == 11
    assert call(BODY, 'd:len(\'["a.b"]["c[d]"]\')') == 3
    assert call(BODY, 'd:raw("messages[0]")') == '{"role": "system", "content": "Be brief."}'
    assert call(BODY, 'd:raw("temperature")') == "0.7"
    assert call(BODY, 'd:raw("esc")') == '"a\\n\\u00e9\\ud83d\\ude00"'
    assert call(b"  [1, 2]  ", "d:raw()") == "[1, 2]"


def test_every_path_form(call):
    assert call(BODY, 'd:get_f64(\'["a.b"]["c[d]"][-1]\')') == 30
    assert call(BODY, 'd:get_str("/messages/1/role")') == "user"
    assert call(BODY, 'd:get_f64("/a.b/c[d]/0")') == 10
    assert call(BODY, 'd:get_str("messages[-1].content[0].type")') == "text"


def test_get(call):
    assert call(BODY, 'd:get("model")') == "gpt-4o"
    assert call(BODY, 'd:get("temperature")') == 0.7
    assert call(BODY, 'd:get("stream")') is False
    assert call(BODY, 'd:get("none") == qjson.null') is True
    assert call(BODY, 'tostring(d:get("messages"))') == "qjson.Cursor"
    assert call(BODY, 'd:get("messages"):len()') == 2
    assert call(BODY, 'd:get("messages[1]"):get_str("role")') == "user"
    assert call(BODY, 'd:get("nope")') is None
    assert call(BODY, "tostring(d)") == "qjson.Doc"


def test_cursor_has_the_same_methods(call):
    code = """(function()
        local c = d:open("messages[1]")
        local t = c:open("content[0]")
        return c:get_str("role"), c:len("content"), c:typeof("content"), c:raw("role"),
               t:get_str("text"), t:typeof(), c:get_str("nope"), c:len(), c:open("nope")
    end)()"""
    assert call(BODY, code) == ("user", 1, "array", '"user"', "hi", "object", None, 2, None)
    assert call(BODY, 'd:open("model"):get_str()') == "gpt-4o"
    assert call(BODY, 'd:open("n"):get_i64() == 9007199254740993LL') is True
    assert call(BODY, 'd:open("temperature"):get_f64("")') == 0.7
    assert call(BODY, 'd:open("stream"):get_bool()') is False


def test_missing_path_gives_nil(call):
    for method in ("get_str", "get_i64", "get_f64", "get_bool", "typeof", "len", "raw", "open"):
        assert call(BODY, f'd:{method}("nope.x")') is None, method
        assert call(BODY, f'd:{method}("messages[7]")') is None, method
        # A path through a scalar names nothing, too.
        assert call(BODY, f'd:{method}("model.x")') is None, method


def test_errors_raise_with_the_message(err):
    s = "qjson.parse(s)"
    assert err(b"[1, 2", s) == "qjson: Unexpected end of input at byte 5"
    assert err(b'{"a" 1}', s) == "qjson: Expecting ':' delimiter at byte 5"
    assert err(b"", s).startswith("qjson: Expecting value")
    assert err(b"[1] x", s).startswith("qjson: Extra data")
    body = b'{"a": 1, "s": "x", "l": [1]}'
    assert err(body, 'qjson.parse(s):get_str("a")').endswith(
        'qjson: expected string, found number (path "a")'
    )
    assert "expected bool" in err(body, 'qjson.parse(s):get_bool("s")')
    assert "expected number" in err(body, 'qjson.parse(s):get_f64("s")')
    assert "integer in the i64 range" in err(b"[1.5]", 'qjson.parse(s):get_i64("[0]")')
    assert "object or array" in err(body, 'qjson.parse(s):len("a")')
    assert "invalid path" in err(body, 'qjson.parse(s):get_str("a..b")')
    assert "invalid path" in err(body, 'qjson.parse(s):typeof("[x]")')
    assert "expected a string" in err(body, "qjson.parse(42)")
    assert "max_depth" in err(body, "qjson.parse(s, {max_depth = -1})")


def test_options_lazy_and_max_depth(run, err):
    bad = b'{"ok": 1, "bad": "\\x"}'
    assert err(bad, "qjson.parse(s)").startswith("qjson: Invalid \\escape")
    assert run(bad, 'qjson.parse(s, {lazy = true}):get_f64("ok")') == 1
    assert "Invalid \\escape" in err(bad, 'qjson.parse(s, {lazy = true}):get_str("bad")')
    deep = b"[" * 10 + b"]" * 10
    assert run(deep, "qjson.parse(s, {max_depth = 10}):len()") == 1
    assert "Maximum nesting depth" in err(deep, "qjson.parse(s, {max_depth = 9})")


# The root's length, after a Doc (parse) or a proxy (decode).
LEN = {"parse": ":len()", "decode": "[1] and 1"}


@pytest.mark.parametrize("fn", ["parse", "decode"])
def test_max_depth_side_by_side_with_python(run, err, fn):
    # decode takes max_depth as parse does, in both languages.
    deep = b"[" * 10 + b"]" * 10
    py = getattr(qjson, fn)
    assert len(py(deep, max_depth=10) if fn == "decode" else py(deep, max_depth=10).root) == 1
    with pytest.raises(qjson.JSONDecodeError, match="Maximum nesting depth"):
        py(deep, max_depth=9)
    assert run(deep, f"qjson.{fn}(s, {{max_depth = 10}})" + LEN[fn]) == 1
    assert "Maximum nesting depth" in err(deep, f"qjson.{fn}(s, {{max_depth = 9}})")
    # The default is 1024 in both.
    deeper = b"[" * 1025 + b"]" * 1025
    with pytest.raises(qjson.JSONDecodeError, match="Maximum nesting depth"):
        py(deeper)
    assert "Maximum nesting depth" in err(deeper, f"qjson.{fn}(s)")
    assert "Maximum nesting depth" in err(deeper, f"qjson.{fn}(s, {{}})")
    assert run(deeper, f"qjson.{fn}(s, {{max_depth = 1025}})" + LEN[fn]) == 1


@pytest.mark.parametrize("fn", ["parse", "decode"])
@pytest.mark.parametrize(
    ("lua_opts", "py_opts", "message"),
    [
        ("{max_depth = 1.5}", {"max_depth": 1.5}, "max_depth must be a positive integer"),
        ('{max_depth = "3"}', {"max_depth": "3"}, "max_depth must be a positive integer"),
        ("{max_depth = true}", None, "max_depth must be a positive integer"),
        ("{max_depth = -1}", {"max_depth": -1}, "max_depth must be a positive integer"),
        # 0 is the C ABI's "default": Lua refuses it rather than read it as 1024.
        ("{max_depth = 0}", None, "max_depth must be a positive integer"),
        ("{max_deph = 3}", {"max_deph": 3}, 'unknown option "max_deph"'),
        ("{[1] = true}", None, "unknown option 1"),
        ('"lazy"', None, "options must be a table, got string"),
    ],
)
def test_bad_options_raise_never_ignored(err, fn, lua_opts, py_opts, message):
    if py_opts is not None:
        with pytest.raises((TypeError, OverflowError)):
            getattr(qjson, fn)(b"[1]", **py_opts)
    assert err(b"[1]", f"qjson.{fn}(s, {lua_opts})").endswith(f"qjson.{fn}: {message}")


def test_lazy_is_an_option_of_parse_not_decode(run, err):
    # Python's decode has no lazy keyword (it validates the whole input, as
    # cjson.decode does); Lua's decode says so instead of ignoring it.
    bad = b'{"ok": 1, "bad": "\\x"}'
    with pytest.raises(TypeError, match="lazy"):
        qjson.decode(bad, lazy=True)  # type: ignore[call-arg]
    msg = err(bad, "qjson.decode(s, {lazy = true})")
    assert 'qjson.decode: unknown option "lazy"' in msg
    assert "qjson.parse(s, {lazy = true})" in msg
    # parse's lazy is a boolean in both.
    with pytest.raises(TypeError):
        qjson.parse(bad, lazy=1)  # type: ignore[arg-type]
    assert err(bad, "qjson.parse(s, {lazy = 1})").endswith(
        "qjson.parse: lazy must be a boolean, got number"
    )
    assert run(b"[1]", "qjson.parse(s, {lazy = false, max_depth = 5}):len()") == 1
    assert "Invalid \\escape" in err(bad, "qjson.parse(s, {lazy = false})")
    assert run(bad, 'qjson.parse(s, {lazy = true}):get_f64("ok")') == 1


LAZY_SCALARS = [
    b'{"a": 01, "b": 1}',
    b'{"a": tru, "b": 1}',
    b'{"a": 1.e5}',
    b'{"a": "x\\q"}',
    b'{"a": -}',
    b'{"a": nulll}',
    b'{"a": nul}',
    b'{"a": truex, "b": 1}',
    b'{"a": falsey}',
    b'{"a": [1 2]}',
    b'{"a": [null 2]}',
    b'{"a": {"b": nullx}}',
]


@pytest.mark.parametrize("body", LAZY_SCALARS)
def test_lazy_scalar_errors_match_python(run, err, body):
    """A malformed scalar of a lazy document, read from Lua (get, get_all,
    get_many, a cursor), gives the error Python's Doc gives: the strict
    parser's message at the same byte (Doc::scalar_error). `nulll` used to
    read as null in Lua: a null has no value to fetch, so qjson.lua took
    the type code's word for it until qjson_get_null checked it."""
    first = b"a.b" if b'"b": null' in body else (b"a[0]" if b"[" in body else b"a")
    path = first.decode()
    with pytest.raises(qjson.JSONDecodeError) as e:
        qjson.parse(body, lazy=True).get(path)
    expected = f"qjson: {e.value.msg} at byte {e.value.pos}"
    wild = path.replace("[0]", "[*]").replace(".b", ".*")
    for code in (
        f'qjson.parse(s, {{lazy = true}}):get("{path}")',
        f'qjson.parse(s, {{lazy = true}}):get_all("{wild}")',
        f'qjson.parse(s, {{lazy = true}}):get_many({{"{path}"}})',
        f'qjson.parse(s, {{lazy = true}}):open(""):get("{path}")',
    ):
        assert err(body, code).endswith(expected), code
    assert err(body, "qjson.decode(s)").endswith(_strict_error(body))


def _strict_error(body: bytes) -> str:
    with pytest.raises(qjson.JSONDecodeError) as e:
        qjson.loads(body)
    return f"qjson: {e.value.msg} at byte {e.value.pos}"


def test_get_null_is_checked(run, err):
    assert run(b'{"a": null}', 'qjson.parse(s, {lazy = true}):get("a") == qjson.null')
    assert run(b"[null]", "qjson.parse(s):get_all('[*]')[1] == qjson.null")
    assert run(b"null", "qjson.decode(s) == qjson.null")


def test_input_is_pinned_and_docs_are_collected(lua):
    # Cursors keep the document (and its string) alive; thousands of docs
    # are freed by ffi.gc without trouble.
    f = lua.eval(
        """function()
            local qjson = require("qjson")
            local cursors = {}
            for i = 1, 2000 do
                local s = '{"k": [' .. i .. ', "v' .. i .. '"]}'
                cursors[#cursors + 1] = qjson.parse(s):open("k")
            end
            collectgarbage(); collectgarbage()
            local sum = 0
            for i, c in ipairs(cursors) do
                assert(c:get_str("[1]") == "v" .. i)
                sum = sum + c:get_f64("[0]")
            end
            cursors = nil
            collectgarbage(); collectgarbage()
            return sum
        end"""
    )
    assert f() == sum(range(1, 2001))


def test_strings_with_escapes_are_copied_out(call):
    # The decoded form of an escaped string lives in a per-thread buffer
    # until the next call: reading two in a row keeps both right.
    body = b'["a\\"b", "c\\\\d", "plain"]'
    assert call(body, 'd:get_str("[0]"), d:get_str("[1]"), d:get_str("[2]")') == (
        'a"b',
        "c\\d",
        "plain",
    )


def test_lua_api_matches_python_doc(call):
    doc = qjson.parse(BODY)
    for path in ("model", "temperature", "messages[1].role", "esc", "a\\.b"):
        if doc.get(path, None) is None:
            continue
        t = doc.type(path)
        assert call(BODY, f"d:typeof({path!r})") == t
        assert call(BODY, f"d:raw({path!r})") == doc.raw(path).decode()


def test_getters_are_functions_of_their_own(lua):
    """Each getter that takes a compiled path is its own Lua function: a
    wrapper shared by all of them got a function trace specialised to one
    getter, left by side exits into the callers' loops (a 60 KB parse +
    getters loop in the interpreter at 7x the instructions)."""
    defined = lua.eval(
        """function()
            local qjson = require("qjson")
            local funcinfo = require("jit.util").funcinfo
            local Doc = getmetatable(qjson.parse("{}"))
            local out = {}
            for _, name in ipairs({"get_str", "get_i64", "get_f64", "get_bool",
                                   "typeof", "len", "raw", "open", "get"}) do
                out[name] = funcinfo(Doc[name]).linedefined
            end
            return out
        end"""
    )()
    lines = dict(defined.items())
    assert len(lines) == 9
    assert len(set(lines.values())) == 9, lines


@pytest.mark.parametrize(
    "method, path, expected",
    [
        ("get_str", "model", "gpt-4o"),
        ("get_f64", "temperature", 0.7),
        ("len", "messages", 2),
        ("typeof", "messages[1]", "object"),
        ("get", "messages[0].content", "Be brief."),
        ("raw", "messages[0]", '{"role": "system", "content": "Be brief."}'),
    ],
)
def test_getters_by_text_and_compiled_path(call, method, path, expected):
    by_text, by_path = call(BODY, f'd:{method}("{path}"), d:{method}(qjson.path("{path}"))')
    assert by_text == expected
    assert by_path == expected
