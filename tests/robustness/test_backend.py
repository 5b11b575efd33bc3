"""`QJSON_BACKEND` forces one level of vector instructions for every kernel
(scan, stage-2 walks, string escaping), and no level changes an answer.

The level is chosen once per process, so each one runs in a subprocess; the
same script (parse, reads, validation errors, loads, dumps of strings long
enough for the wide escaping path) must print the same lines under every
level, and `qjson.backend()` must name the forced level when the CPU runs it.
"""

from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = r"""
import json, qjson
print(qjson.backend())
long = "x" * 100 + "\"\\\n\x01é/" + "y" * 200
docs = [
    json.dumps({"a": [1, 2.5, -3e4, True, None], "s": long, "o": {"k": "v"}}, indent=2),
    '[' + ','.join(str(i) for i in range(500)) + ']',
    '{"a": [1, 2,]}',
    '{"a" 1}',
    '"' + long.replace('"', '') + '\x05"',
    '[1.5e3, tru]',
    # Control bytes: inside strings around a 64-byte block border (the
    # token scan finds the first one in a second pass), and the two that
    # look like structurals to a folding classifier (0x0C, 0x1A) outside.
    '{"k": "' + "a" * 55 + '\x1f", "t": "\t"}',
    '[' + '"ab", ' * 20 + '"c\x01"]',
    '[1,\x0c2]',
    '{"a"\x1a: 1}',
    '[1\x1a]',
]
for d in docs:
    for step in (qjson.validate, qjson.parse, qjson.loads):
        try:
            r = step(d)
            print("ok", r.type() if isinstance(r, qjson.Doc) else repr(r))
        except ValueError as e:
            print("error", type(e).__name__, e)
print(qjson.dumps({"s": long, "list": [long] * 3}))
print(qjson.dumps(qjson.parse(docs[0]).root))
"""


def run(level: str | None) -> list[str]:
    env = dict(os.environ)
    env.pop("QJSON_BACKEND", None)
    if level is not None:
        env["QJSON_BACKEND"] = level
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True
    )
    return out.stdout.splitlines()


def test_every_level_gives_the_same_answers():
    best = run(None)
    # (The best level first; every level below it runs on this CPU.)
    order = ["avx512", "avx2", "scalar"] if best[0] in ("avx512", "avx2", "scalar") else []
    for level in order[order.index(best[0]) :] if order else ["scalar"]:
        got = run(level)
        assert got[0] == level
        assert got[1:] == best[1:], level


def test_an_unknown_level_falls_back_to_detection():
    best = run(None)
    assert run("no-such-level") == best
