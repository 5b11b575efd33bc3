"""dumps under memory and stack pressure, and with hostile subclasses.

- the size guess taken from a large earlier result must not make later,
  small calls fail when that much memory cannot be had;
- subclasses of dict / list / tuple / str / int / float nested to the
  default depth fit in a 512 KiB thread stack (macOS's default for
  threads) like the exact types do;
- plain containers nested to the default depth on smaller thread stacks:
  see test_stack_depth.py (a clean error when the stack runs low).

Crashes run in a subprocess so that they fail the test, not the run.
"""

from __future__ import annotations

import collections
import enum
import json
import os
import subprocess
import sys

import pytest
import qjson

heavy = pytest.mark.skipif(os.environ.get("QJSON_SKIP_HEAVY") == "1", reason="QJSON_SKIP_HEAVY=1")


def run_isolated(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "import qjson, threading, json\n" + code],
        capture_output=True,
        text=True,
        timeout=300,
    )


def assert_ok(r: subprocess.CompletedProcess) -> None:
    assert r.returncode == 0, f"exit {r.returncode} (negative: a signal)\n{r.stderr[-2000:]}"


@heavy
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc")
def test_small_dumps_after_a_large_one_when_memory_is_short() -> None:
    """A 256 MB result sets the size guess of the next call to ~288 MB;
    with less address space than that left, a 7-byte result must still
    be written (it raised MemoryError, on every later call too)."""
    r = run_isolated(
        "import re, resource\n"
        "big = 'x' * (256 << 20)\n"
        "assert len(qjson.dumps([big])) == (256 << 20) + 4\n"
        "del big\n"
        "vm = int(re.search(r'VmSize:\\s+(\\d+)', open('/proc/self/status').read())[1]) * 1024\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_AS)\n"
        "resource.setrlimit(resource.RLIMIT_AS, (vm + (128 << 20), hard))\n"
        "for _ in range(3):\n"
        "    assert qjson.dumps([1, 2, 3]) == b'[1,2,3]'\n"
        "    big = {'a': 'b' * 1000}\n"
        "    assert qjson.dumps(big) == json.dumps(big).encode().replace(b' ', b'')\n"
    )
    assert_ok(r)


class D(dict):
    pass


class L(list):
    pass


class T(tuple):
    pass


class S(str):
    pass


class I(int):  # noqa: E742
    pass


class F(float):
    pass


class Color(enum.IntEnum):
    RED = 1


def nest_subclasses(depth: int) -> object:
    o: object = [S("s"), I(7), F(1.5), Color.RED]
    for i in range(depth):
        k = i % 4
        if k == 0:
            o = D(k=o)
        elif k == 1:
            o = L([o])
        elif k == 2:
            o = T((o,))
        else:
            o = collections.OrderedDict([(S("k"), o)])
    return o


def plain(o: object) -> object:
    return json.loads(json.dumps(o))


@pytest.mark.parametrize("depth", [0, 1, 5, 31, 32, 33, 100])
@pytest.mark.parametrize("kw", [{}, {"indent": 2}, {"sort_keys": True}])
def test_nested_subclasses_write_as_their_base_types(depth: int, kw: dict) -> None:
    o = nest_subclasses(depth)
    assert qjson.dumps(o, **kw) == qjson.dumps(plain(o), **kw)
    assert json.loads(qjson.dumps(o, **kw)) == plain(o)


def test_subclass_cycle_is_detected() -> None:
    d = D()
    d["self"] = L([d])
    with pytest.raises(qjson.JSONEncodeError, match="Circular"):
        qjson.dumps(d)


def test_subclasses_nested_to_the_default_depth_in_a_512k_thread() -> None:
    r = run_isolated(
        "class D(dict): pass\n"
        "class L(list): pass\n"
        "class T(tuple): pass\n"
        "outs, plains = [], []\n"
        "for k in range(3):\n"
        "    o, p = [], []\n"
        "    for i in range(1023):\n"
        "        o = (D(k=o), L([o]), T((o,)))[(i + k) % 3]\n"
        "        p = ({'k': p}, [p], [p])[(i + k) % 3]\n"
        "    outs.append(o)\n"
        "    plains.append(p)\n"
        "res = []\n"
        "def f():\n"
        "    for o in outs:\n"
        "        res.append(qjson.dumps(o))\n"
        "        res.append(qjson.dumps(o, indent=1))\n"
        "threading.stack_size(512 * 1024)\n"
        "t = threading.Thread(target=f)\nt.start()\nt.join()\n"
        "assert len(res) == 6, res\n"
        "for p, r, ri in zip(plains, res[::2], res[1::2]):\n"
        "    assert r == qjson.dumps(p)\n"
        "    assert ri == qjson.dumps(p, indent=1)\n"
    )
    assert_ok(r)
