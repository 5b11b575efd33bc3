"""Exception types raised by qjson.

They are defined in Python so that ``JSONDecodeError`` can subclass
``json.JSONDecodeError``; the compiled module imports this file the first
time it raises one of them.
"""

from __future__ import annotations

import json
from typing import Union

__all__ = ["JSONDecodeError", "JSONEncodeError", "PatchError", "PathError"]

_Doc = Union[bytes, bytearray, memoryview, str]


class JSONDecodeError(json.JSONDecodeError):
    """Invalid JSON. A subclass of :class:`json.JSONDecodeError` (so a ValueError).

    ``pos`` is a byte offset into the UTF-8 input (for a ``str`` input: into
    its UTF-8 encoding); ``lineno`` and ``colno`` are 1-based and counted in
    bytes. ``doc`` is the input object itself (not a copy).

    From ``parse_many`` / ``open_many`` / ``loads_many``: ``doc_index`` is
    the 0-based ordinal of the failed document, and ``pos`` / ``lineno`` /
    ``colno`` count in the whole stream (``doc`` is the input, or the file
    or path given to ``open_many``). Elsewhere ``doc_index`` is None.
    """

    doc_index: int | None = None

    def __init__(self, msg: str, doc: _Doc, pos: int, lineno: int, colno: int) -> None:
        errmsg = f"{msg}: line {lineno} column {colno} (char {pos})"
        ValueError.__init__(self, errmsg)
        self.msg = msg
        self.doc = doc  # type: ignore[assignment]
        self.pos = pos
        self.lineno = lineno
        self.colno = colno

    def __reduce__(self):  # type: ignore[override]
        return (type(self), (self.msg, self.doc, self.pos, self.lineno, self.colno))


class PathError(KeyError):
    """No value at this path. A subclass of :class:`KeyError`.

    ``path`` is the path that was looked up and ``offset`` the byte offset in
    it of the segment that was not found.
    """

    def __init__(self, message: str, path: str = "", offset: int = 0) -> None:
        super().__init__(message)
        self.path = path
        self.offset = offset

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class JSONEncodeError(TypeError):
    """A value that qjson cannot serialize. A subclass of :class:`TypeError`."""


class PatchError(ValueError):
    """A JSON Patch that cannot be applied. A subclass of :class:`ValueError`.

    ``op_index`` is the 0-based position of the failing op in the patch
    (``None`` when the patch as a whole is malformed). The target is left
    exactly as it was.
    """

    def __init__(self, message: str, op_index: int | None = None) -> None:
        super().__init__(message)
        self.op_index = op_index

    def __reduce__(self):  # type: ignore[override]
        return (type(self), (str(self), self.op_index))
