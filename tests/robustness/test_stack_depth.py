"""Deep nesting on threads with small stacks: the right answer or a clean
exception, never a crash.

`dumps` (of plain values and of views), `materialize` and dropping a chain
of views recurse once per container level. On a thread with a small stack
(musl's default is 128 KiB, macOS's 512 KiB, `threading.stack_size` can ask
for less) 1,023 levels used to overflow it and kill the process. Now the
writers refuse to go deeper when the stack runs low (JSONEncodeError from
dumps, ValueError from materialize, as for their depth limits), and a
dropped view releases its descendants without recursing.

Each case runs in a subprocess, so a crash fails the test rather than the
run. The expected output is computed first on the main thread, whose stack
is large; the small-stack thread must give the same bytes or raise.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PRELUDE = """
import json, sys, threading
import qjson
D = {depth}
lists = b"[" * D + b"]" * D
dicts = b'{{"k":' * (D - 1) + b'{{"a":1}}' + b"}}" * (D - 1)
edited = dicts.replace(b'{{"a":1}}', b'{{"a":2}}')

# With whitespace around the document and inside it, and each object's key
# repeated (the first value is the one read).
spaced = (
    b" \\n" + b'{{ "k" : ' * (D - 1) + b'{{"a":1}}' + b' , "k" : 0 }}' * (D - 1) + b" \\n"
)


def chain(edit=True):
    # A view per level, each cached by its parent, the innermost edited.
    v = qjson.decode(dicts, max_depth=D + 1)
    x = v
    for _ in range(D - 1):
        x = x["k"]
    if edit:
        x["a"] = 2
    return v


def cached(root, step):
    # Views cached all the way down, nothing edited.
    x = root
    for _ in range(D - 1):
        x = x[step]
    return root


def array_chain():
    # Arrays, the innermost one unfolded by an append (Edited, not Lazy).
    v = qjson.decode(lists, max_depth=D + 1)
    x = v
    for _ in range(D - 1):
        x = x[0]
    x.append(1)
    return v
"""

# name -> (setup run on the main thread, expression run on the small thread,
#          expected bytes of the result (an expression), exception type name)
CASES = {
    "dumps plain lists": ("o = qjson.loads(lists)", "qjson.dumps(o)", "lists", "JSONEncodeError"),
    "dumps plain dicts": ("o = qjson.loads(dicts)", "qjson.dumps(o)", "dicts", "JSONEncodeError"),
    "dumps indented": (
        "o = qjson.loads(dicts)",
        "qjson.dumps(o, indent=1)",
        "qjson.dumps(o, indent=1)",
        "JSONEncodeError",
    ),
    "dumps edited views": ("v = chain()", "qjson.dumps(v)", "edited", "JSONEncodeError"),
    "dumps dicts holding a view": (
        "o = qjson.decode(b'{\"a\":2}')\nfor _ in range(D - 1):\n    o = {'k': o}",
        "qjson.dumps(o)",
        "edited",
        "JSONEncodeError",
    ),
    "materialize edited views": (
        "v = chain()",
        "qjson.dumps(qjson.materialize(v))",
        "edited",
        "ValueError",
    ),
    "dumps edited arrays": (
        "v = array_chain()",
        "qjson.dumps(v)",
        "lists[: D - 1] + b'[1]' + lists[D + 1 :]",
        "JSONEncodeError",
    ),
    # The chain is built and dropped on the small thread; None: nothing to
    # compare, only that the process lives.
    "drop a chain of views": ("", "(chain(), None)[1]", "None", "-"),
    "drop a chain of edited arrays": ("", "(array_chain(), None)[1]", "None", "-"),
}

# Clean chains: views cached all the way down, nothing edited. Each is one
# copy of its bytes, at any depth and on any stack.
CLEAN = {
    "clean chain": ("v = cached(qjson.decode(dicts, max_depth=D + 1), 'k')", "dicts"),
    "clean chain, whitespace and repeated keys": (
        "v = cached(qjson.decode(spaced, max_depth=D + 1), 'k')",
        "spaced",
    ),
    "clean chain of a lazy document": (
        "v = cached(qjson.parse(spaced, lazy=True, max_depth=D + 1).root, 'k')",
        "spaced",
    ),
    "clean chain of arrays": ("v = cached(qjson.decode(lists, max_depth=D + 1), 0)", "lists"),
}

RUN = """
{setup}
expected = {expected}
out = []

def work():
    try:
        out.append(("ok", {expr}))
    except Exception as e:
        out.append(("raised", type(e).__name__, str(e)))

threading.stack_size({stack_kb} * 1024)
t = threading.Thread(target=work)
t.start()
t.join()
r = out[0]
print(json.dumps([r[0]] + ([r[1] == expected] if r[0] == "ok" else list(r[1:]))))
"""


def run_case(case: str, depth: int, stack_kb: int) -> list:
    if case in CLEAN:
        setup, expected = CLEAN[case]
        expr = "qjson.dumps(v)"
    else:
        setup, expr, expected, _ = CASES[case]
    code = PRELUDE.format(depth=depth) + RUN.format(
        setup=setup, expr=expr, expected=expected, stack_kb=stack_kb
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"exit {r.returncode} (negative: a signal)\n{r.stderr[-2000:]}"
    return json.loads(r.stdout.splitlines()[-1])


@pytest.mark.parametrize("stack_kb", [128, 256, 512])
@pytest.mark.parametrize("case", list(CASES))
def test_default_depth_on_a_small_stack_answers_or_raises(case: str, stack_kb: int) -> None:
    got = run_case(case, 1023, stack_kb)
    if got[0] == "ok":
        assert got[1] is True, f"{case}: wrong output on a {stack_kb} KiB stack"
    else:
        assert got[1] == CASES[case][3], got
        assert "stack is too small" in got[2], got


@pytest.mark.parametrize("case", list(CASES))
def test_moderate_depth_on_a_small_stack_is_not_refused(case: str) -> None:
    """The guard keeps a reserve, not most of the stack: 64 levels of the
    deepest-framed case (an edited chain of views, ~1.3 KB of stack a level)
    fit in a 256 KiB thread."""
    assert run_case(case, 64, 256) == ["ok", True]


@pytest.mark.parametrize("case", list(CASES))
def test_default_depth_on_a_large_stack_is_written(case: str) -> None:
    """8 MiB (glibc's default for threads): every case goes through."""
    assert run_case(case, 1023, 8192) == ["ok", True]


@pytest.mark.parametrize("stack_kb", [128, 8192])
@pytest.mark.parametrize("depth", [300, 1023])
@pytest.mark.parametrize("case", list(CLEAN))
def test_clean_chain_of_views_is_copied_as_written(case: str, depth: int, stack_kb: int) -> None:
    """Deeper than any bound on the dirty check, and on a small stack: an
    untouched view is its bytes as written (whitespace, repeated keys), not
    rewritten member by member."""
    assert run_case(case, depth, stack_kb) == ["ok", True]


@pytest.mark.parametrize("case", ["dumps plain lists", "dumps plain dicts", "dumps indented"])
def test_plain_values_reach_the_default_depth_on_a_512k_stack(case: str) -> None:
    """The README's figure: 512 KiB (macOS's default for threads) holds the
    full depth of plain values, reserve included."""
    assert run_case(case, 1023, 512) == ["ok", True]
