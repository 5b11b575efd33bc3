"""Wildcard paths for differential tests: a seeded generator that derives
paths from a document's shape, and a small reference walker over json.loads
values (first duplicate key wins, as in qjson reads).

A path is a list of segments: ``("key", k)``, ``("index", i)``,
``("elements",)`` for ``[*]`` and ``("members",)`` for ``.*``."""

from __future__ import annotations

import json
import random
from typing import Any

from conftest import key_needs_quote

Segment = tuple[Any, ...]


def path_text(segs: list[Segment]) -> str:
    out = ""
    for seg in segs:
        kind = seg[0]
        if kind == "key":
            k = seg[1]
            if key_needs_quote(k):
                out += f"[{json.dumps(k)}]"
            else:
                out += f".{k}" if out else k
        elif kind == "index":
            out += f"[{seg[1]}]"
        elif kind == "elements":
            out += "[*]"
        else:
            out += ".*" if out else "*"
    return out


def reference_all(value: Any, segs: list[Segment]) -> list[Any]:
    """Every value ``segs`` matches in ``value``, in document order."""
    out: list[Any] = []
    # (value, index of its next segment); a stack of pending branches,
    # pushed in reverse so that they pop in order.
    stack = [(value, 0)]
    while stack:
        v, i = stack.pop()
        if i == len(segs):
            out.append(v)
            continue
        kind = segs[i][0]
        if kind == "key":
            if isinstance(v, dict) and segs[i][1] in v:
                stack.append((v[segs[i][1]], i + 1))
        elif kind == "index":
            n = segs[i][1]
            if isinstance(v, list) and -len(v) <= n < len(v):
                stack.append((v[n], i + 1))
        elif kind == "elements":
            if isinstance(v, list):
                stack.extend((c, i + 1) for c in reversed(v))
        elif isinstance(v, dict):
            stack.extend((c, i + 1) for c in reversed(list(v.values())))
    return out


def _usable_key(k: str) -> bool:
    # A quoted key in a path is a JSON string: no lone surrogates.
    try:
        k.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# Segments that match nothing on a scalar or an empty container.
_NOTHING: list[Segment] = [("elements",), ("members",), ("key", "x"), ("index", 0)]


def _pick(rng: random.Random, choices: Any, container: Any) -> Any:
    """A key or index of ``container``, a container child when there is one
    (most of the time), so that paths go deep."""
    choices = list(choices)
    deep = [c for c in choices if isinstance(container[c], (dict, list)) and container[c]]
    return rng.choice(deep if deep and rng.random() < 0.8 else choices)


def generate(value: Any, seed: int, count: int = 24, max_len: int = 6) -> list[list[Segment]]:
    """``count`` paths derived from ``value``'s shape: mostly segments that
    exist (keys, indices from both ends, wildcards), following one sample
    child past a wildcard; sometimes a missing key, an index out of range, or
    a segment of the wrong kind, so that skipped branches are exercised."""
    rng = random.Random(seed)
    paths: list[list[Segment]] = []
    for _ in range(count):
        segs: list[Segment] = []
        v = value
        for _ in range(rng.randint(1, max_len)):
            r = rng.random()
            if isinstance(v, dict) and v:
                keys = [k for k in v if _usable_key(k)]
                if r < 0.45 or not keys:
                    segs.append(("members",))
                    v = v[_pick(rng, list(v), v)]
                elif r < 0.9:
                    k = _pick(rng, keys, v)
                    segs.append(("key", k))
                    v = v[k]
                elif r < 0.95:
                    segs.append(("key", "no such key"))
                else:
                    segs.append(("elements",))
            elif isinstance(v, list) and v:
                if r < 0.5:
                    segs.append(("elements",))
                    v = v[_pick(rng, range(len(v)), v)]
                elif r < 0.85:
                    i = rng.randrange(len(v))
                    segs.append(("index", i if rng.random() < 0.5 else i - len(v)))
                    v = v[i]
                elif r < 0.93:
                    segs.append(("index", len(v) + rng.randrange(3)))
                else:
                    segs.append(("members",))
            else:
                # A scalar or an empty container: stop, or now and then a
                # wildcard or lookup that matches nothing.
                if r < 0.2:
                    segs.append(
                        rng.choice([("elements",), ("members",), ("key", "x"), ("index", 0)])
                    )
                break
        paths.append(segs)
    return paths


# A document and (path, the values get_all gives) for table-driven tests.
DOC = b"""{
  "messages": [{"role": "system", "content": "a"},
               {"role": "user", "content": [1, 2]},
               {"role": "user"},
               "scalar",
               {"content": null, "tags": ["x", "y", "z"]}],
  "tools": [{"function": {"name": "f", "parameters": {}}},
            {"function": {"name": "g", "x": [true, false]}},
            {"function": 3}],
  "dup": {"k": 1, "j": 2, "k": 3},
  "*": "star",
  "empty": {"a": [], "o": {}},
  "nested": [[1, 2], [], [3, [4]], {"0": 5}],
  "esc": {"\\u0061": 1, "a": 2, "b\\"": 3}
}"""

CASES: list[tuple[str, list[Any]]] = [
    # arrays
    ("messages[*].content", ["a", [1, 2], None]),
    ("messages[*].role", ["system", "user", "user"]),
    ("tools[*].function.name", ["f", "g"]),
    ("nested[*][*]", [1, 2, 3, [4]]),
    ("nested[*][*][*]", [4]),
    # objects
    ("tools[*].function.*", ["f", {}, "g", [True, False]]),
    ("empty.*", [[], {}]),
    ("*.k", [1]),
    ("*[3]", ["scalar", {"0": 5}]),
    # empty containers
    ("empty.a[*]", []),
    ("empty.o.*", []),
    ("empty.*[*]", []),
    ("empty.*.*", []),
    # missing branches skipped
    ("messages[*].missing", []),
    ("missing[*]", []),
    ("missing.*", []),
    ("messages[9].content", []),
    # wrong types skipped: [*] is for arrays, .* for objects
    ("messages[*].content.x", []),
    ("messages[*][0]", []),
    ("dup[*]", []),
    ("messages.*", []),
    ("nested[*].*", [5]),
    ("tools[*].function[*]", []),
    # duplicate keys: each key once, with its first value
    ("dup.*", [1, 2]),
    ("esc.*", [1, 3]),
    ("dup.k", [1]),
    # the literal key `*`
    ('["*"]', ["star"]),
    ("/*", ["star"]),
    # negative indices after a wildcard
    ("messages[*].content[-1]", [2]),
    ("messages[*].tags[-1]", ["z"]),
    ("messages[*].tags[-3]", ["x"]),
    ("messages[*].tags[-4]", []),
    ("nested[*][-1]", [2, [4]]),
    # no wildcard: [value] or []
    ("dup.j", [2]),
    ("/tools/1/function/x/0", [True]),
    ("missing", []),
]
