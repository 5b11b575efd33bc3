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
    DocIterator,
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
    open_many,
    parse,
    parse_many,
    patch,
    validate,
)
from qjson._qjson import dumps_many as _dumps_many
from qjson._qjson import loads_many as _loads_many

_abc.MutableMapping.register(Object)
_abc.MutableSequence.register(Array)

__all__ = [
    "Array",
    "Cursor",
    "Doc",
    "DocIterator",
    "DocList",
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
    "dumps_many",
    "loads_many",
    "open_many",
    "parse_many",
]


class DocList(list):  # type: ignore[type-arg]
    """The list ``loads_many(..., errors="skip")`` returns: ``errors`` holds
    the :class:`JSONDecodeError` of every document left out."""

    errors: list[JSONDecodeError]


def loads_many(data, *, max_depth=1024, errors="raise"):  # type: ignore[no-untyped-def]
    """The Python objects of every document of ``data`` (NDJSON / JSON Lines,
    or JSON texts separated by whitespace), as a list. With ``errors="skip"``
    invalid documents are left out and the result is a :class:`DocList`
    whose ``errors`` lists them."""
    # Indexed, not unpacked: unpacking allocates an iterator, which would
    # run here the young collection that everything built has made due
    # (see src/python/many.rs: it is left to the caller's next allocation).
    got = _loads_many(data, max_depth=max_depth, errors=errors)
    if errors != "skip":
        return got[0]
    out = DocList(got[0])
    out.errors = got[1]
    return out


def dumps_many(iterable, **options):  # type: ignore[no-untyped-def]
    """JSON Lines: ``dumps(obj, **options)`` of every object, each followed
    by a newline. Views pass through as in ``dumps`` (untouched parts are
    their original bytes)."""
    return _dumps_many(iterable, **options)
