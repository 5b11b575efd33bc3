"""qjson: parse a big JSON body, read a few fields, pass the rest on.

``qjson.parse`` builds a SIMD structural index over the input (no copy of
it) and answers path reads from that index; containers come back as lazy
views. ``qjson.decode`` gives the root view directly: an ``Object``
(``MutableMapping``) or ``Array`` (``MutableSequence``) whose edits are kept
as an overlay, and ``qjson.dumps`` writes its untouched parts as the
original bytes. See the README for the path syntax and the error types.
"""

from __future__ import annotations

import collections.abc as _abc

from qjson._errors import JSONDecodeError, JSONEncodeError, PatchError, PathError
from qjson._qjson import (
    Array,
    Cursor,
    Doc,
    Object,
    Path,
    __version__,
    backend,
    decode,
    dumps,
    incr,
    loads,
    materialize,
    merge_patch,
    mul,
    parse,
    patch,
    validate,
)

_abc.MutableMapping.register(Object)
_abc.MutableSequence.register(Array)

__all__ = [
    "Array",
    "Cursor",
    "Doc",
    "JSONDecodeError",
    "JSONEncodeError",
    "Object",
    "Path",
    "PatchError",
    "PathError",
    "__version__",
    "backend",
    "decode",
    "dumps",
    "incr",
    "loads",
    "materialize",
    "merge_patch",
    "mul",
    "parse",
    "patch",
    "validate",
]
