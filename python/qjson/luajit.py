"""qjson inside LuaJIT, through lupa.

``install(runtime)`` makes ``require("qjson")`` work inside a
``lupa.luajit21.LuaRuntime`` (or ``lupa.luajit20``): the Lua module
``qjson.lua`` shipped in this package binds, through LuaJIT's FFI, to this
same compiled extension (``qjson._qjson``), so Python and Lua share one
loaded library. ``runtime()`` creates such a runtime.

    import qjson.luajit
    lua = qjson.luajit.runtime()
    get_model = lua.eval('function(s) return require("qjson").parse(s):get_str("model") end')

lupa is an optional dependency (``pip install qjson[lua]``).
"""

from __future__ import annotations

import os
import sys
from importlib import resources
from typing import Any

from qjson import _qjson  # type: ignore[attr-defined]  # the compiled module has no stub

__all__ = ["install", "library_path", "lua_source", "runtime"]

_SETUP = """
function(src, lib)
    local chunk = assert(loadstring(src, "@qjson.lua"))
    package.loaded["qjson"] = nil
    package.preload["qjson"] = function(name) return chunk(name, lib) end
    return require("qjson")
end
"""


def library_path() -> str:
    """The path of the compiled extension module that exports the C ABI."""
    path = _qjson.__file__
    if path is None:  # pragma: no cover - a namespace or frozen module
        raise RuntimeError("qjson._qjson has no file path; cannot load it through LuaJIT's FFI")
    return os.fspath(path)


def lua_source() -> bytes:
    """The text of ``qjson.lua``."""
    return resources.files("qjson").joinpath("qjson.lua").read_bytes()


def install(runtime: Any) -> Any:
    """Make ``require("qjson")`` work in ``runtime`` (a lupa LuaJIT runtime).

    Loads the module at once (so a problem shows here, not at the first
    ``require``) and returns it, the Lua table. Calling it again on the same
    runtime reloads the module.
    """
    try:
        is_luajit = runtime.eval("type(jit) == 'table' and pcall(require, 'ffi')")
    except Exception as e:  # not a LuaRuntime at all
        raise TypeError(f"expected a lupa LuaRuntime, got {type(runtime).__name__}") from e
    if not is_luajit:
        raise TypeError(
            "qjson.luajit needs a LuaJIT runtime with the FFI (lupa.luajit21.LuaRuntime), "
            "not plain Lua"
        )
    setup = runtime.eval(_SETUP)
    return setup(lua_source(), os.fsencode(library_path()))


def runtime(*, lua_modules: bool = False, **kwargs: Any) -> Any:
    """A new ``lupa.luajit21.LuaRuntime(**kwargs)`` with ``require("qjson")``
    ready.

    ``lua_modules=True`` imports ``lupa.luajit21`` (when this process has not
    imported it yet) inside ``lupa.allow_lua_module_loading()``, so that the
    runtime can ``require`` binary Lua modules such as lua-cjson. That makes
    LuaJIT's symbols global to the process: do not combine it with another
    lupa Lua version in the same process.
    """
    try:
        import lupa  # type: ignore[import-untyped]
    except ImportError as e:
        raise ImportError(
            "qjson.luajit.runtime() needs lupa with LuaJIT 2.1: pip install 'qjson[lua]'"
        ) from e
    if lua_modules and "lupa.luajit21" not in sys.modules:
        with lupa.allow_lua_module_loading():
            import lupa.luajit21  # type: ignore[import-untyped]
    import lupa.luajit21 as luajit21  # type: ignore[import-untyped]

    rt = luajit21.LuaRuntime(**kwargs)
    install(rt)
    return rt
