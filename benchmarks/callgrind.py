"""Instruction counts per operation under callgrind, and per-function diffs.

Wall time on a shared machine moves by 30% between runs; instruction counts
do not. This is the tool the closing notes' "callgrind" figures come from.

    python benchmarks/callgrind.py run decode_access 2k qjson
    python benchmarks/callgrind.py run patch 2k qjson --events
    python benchmarks/callgrind.py diff A.out B.out --per 1000 [--event Bcm]

`run` runs one workload of `workloads.py` (or `parse`, the parse alone
of a scenario's payload or of each line of scenario `amazon`, lib qjson,
fastsimdjson or fastsimdjson_only (its private parse without views: see
`_parse`); or `patch`, the 3-op JSON Patch of
`patch_bench.py`: CHAT_OPS, or GITHUB_OPS on github_issues; or `merge`,
`patch_bench.py`'s merge_patch of MERGE on a chat payload; or `loads_many` of
scenario `amazon` (amazon_cellphones.ndjson)
or `batch` (a 1 MB generated batch-API file), lib qjson, fastsimdjson or
msgspec, as in `many_bench.py`; or `access`, one read of access.py per
op (scenario `cursor`, `view`, `get`, `get3`, `dict` or `empty`, the loop
alone: see `_access`); or `read_many`, many_bench.py's read row:
`parse_many` and the reads of `custom_id` and `body.model` of every line of
scenario `batch` (the 1 MB file), `batch4` (4 MB: from two windows on,
qjson splits on a second thread, which callgrind counts too: the figure is
the process's CPU) or `batch16` (16 MB: mostly windows split while the
caller reads), lib qjson or fastsimdjson; or `stmt`, any statement
`--stmt` (after `--setup`, run once) in a loop, with `b` the scenario's
first part and `qjson`, `fastsimdjson` imported: a read on a fresh
document against the same read on a kept one, say) N1 and N2 times, each in its
own `valgrind --tool=callgrind` process with PYTHONHASHSEED=0, and prints the
difference divided by N2 - N1: the cost of one operation without start-up and
import, in total and per
function (exclusive). `--events` adds the cache and branch simulators (I1
misses, mispredicted branches), which makes the run about 3x slower.
The output files stay in `--out` for `diff`, which compares two builds: run
the same workload with each build's Python, then `diff` their N2 files.

Profile an LTO build (`maturin develop --release`, as shipped); a fast
non-LTO build inlines differently and its counts are not comparable.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _loop(op: str, scen_name: str, lib: str, n: int, stmt: str = "", setup: str = "") -> None:
    """The child process: build the workload once, run it n times."""
    sys.path.insert(0, str(HERE))
    import workloads

    if op == "stmt":
        _stmt(workloads.scenario(scen_name).parts[0], stmt, setup)(n)
        return
    if op == "access":
        run, obj = _access(scen_name, lib)
        run(n, obj)
        return
    if op == "parse":
        fn = _parse(scen_name, lib)
    elif op == "loads_many":
        fn = _loads_many(scen_name, lib)
    elif op == "read_many":
        fn = _read_many(scen_name, lib)
    elif op == "merge":
        import qjson
        from patch_bench import MERGE

        scen = workloads.scenario(scen_name)
        if len(scen.parts) != 1 or scen.kind != "chat":
            raise SystemExit("merge runs on one chat payload")
        body = scen.parts[0]

        def fn() -> bytes:
            return qjson.dumps(qjson.merge_patch(qjson.decode(body), MERGE))

    elif op == "patch":
        import qjson
        from patch_bench import CHAT_OPS, GITHUB_OPS

        scen = workloads.scenario(scen_name)
        if len(scen.parts) != 1 or scen.kind not in ("chat", "github"):
            raise SystemExit("patch runs on one chat or github_issues payload")
        body = scen.parts[0]
        ops = GITHUB_OPS if scen.kind == "github" else CHAT_OPS

        def fn() -> bytes:
            v = qjson.decode(body)
            qjson.patch(v, ops)
            return qjson.dumps(v)

    else:
        fn = workloads.make(op, lib, workloads.scenario(scen_name))
    for _ in range(n):
        fn()


def _access(scen_name: str, lib: str) -> tuple[Callable[[int, object], None], object]:
    """access.py's reads, one per loop iteration: `for _ in range(n): <read>`.

    Scenarios: `cursor` (`cur.get_int("id")`), `view` (`v["id"]`), `get`
    (`doc.get("id")`), `get3` (`doc.get("a.b.c")`) for qjson; `view` for
    fastsimdjson (its subscript); `dict` (a dict's subscript) and `empty`
    (the loop alone: subtract it for the read's own count) for any lib.
    """
    sys.path.insert(0, str(HERE))
    import access

    if scen_name == "empty":
        stmt, obj = "pass", None
    elif scen_name == "dict":
        import json

        stmt, obj = "o['id']", json.loads(access.FLAT)
    elif lib == "fastsimdjson" and scen_name == "view":
        import fastsimdjson

        stmt, obj = "o['id']", fastsimdjson.parse(access.FLAT)
    elif lib == "qjson":
        import qjson

        flat = access.FLAT
        if scen_name == "cursor":
            stmt, obj = "o.get_int('id')", qjson.parse(b'{"o":' + flat + b"}").open("o")
        elif scen_name == "view":
            stmt, obj = "o['id']", qjson.decode(flat)
        elif scen_name == "get":
            stmt, obj = "o.get('id')", qjson.parse(flat)
        elif scen_name == "get3":
            stmt, obj = "o.get('a.b.c')", qjson.parse(access.NESTED)
        else:
            raise SystemExit(f"access: no scenario {scen_name!r}")
    else:
        raise SystemExit(f"access {scen_name}: no lib {lib!r}")
    src = f"def run(n, o):\n    for _ in range(n):\n        {stmt}\n"
    ns: dict[str, Any] = {}
    exec(compile(src, f"<access: {stmt}>", "exec"), ns)
    return ns["run"], obj


def _parse(scen_name: str, lib: str) -> Callable[[], object]:
    """The parse alone, no read: `qjson.parse(b)` (a strict Doc: stage 1,
    validation, the index), `fastsimdjson.parse(b)` (its lazy view) or
    fastsimdjson's private `_parse_only` (lib `fastsimdjson_only`: it
    validates and builds nothing), of a workloads.py scenario's payload(s),
    or (scenario `amazon`) of every line of amazon_cellphones.ndjson in
    turn, one document per line."""
    sys.path.insert(0, str(HERE))
    import workloads

    if scen_name == "amazon":
        path = HERE.parent.parent / "shared" / "data" / "jsonexamples" / "amazon_cellphones.ndjson"
        parts = tuple(line for line in path.read_bytes().split(b"\n") if line.strip())
    else:
        parts = workloads.scenario(scen_name).parts
    if lib == "qjson":
        import qjson

        parse = qjson.parse
    elif lib == "fastsimdjson":
        import fastsimdjson

        parse = fastsimdjson.parse
    elif lib == "fastsimdjson_only":
        import fastsimdjson

        parse = fastsimdjson._parse_only
    else:
        raise SystemExit(f"parse: no lib {lib!r}")
    if len(parts) == 1:
        b = parts[0]
        return lambda: parse(b)

    def run_all() -> object:
        for b in parts:
            parse(b)
        return None

    return run_all


def _stmt(body: bytes, stmt: str, setup: str) -> Callable[[int], None]:
    """`for _ in range(n): <stmt>` after `<setup>`, with `b` = `body`."""
    import fastsimdjson
    import qjson

    if not stmt:
        raise SystemExit("stmt: give --stmt")
    # (Each may hold several lines: indented as a block, not only its first line.)
    head = textwrap.indent(textwrap.dedent(setup) or "pass", "    ")
    loop = textwrap.indent(textwrap.dedent(stmt), "        ")
    src = f"def run(n):\n{head}\n    for _ in range(n):\n{loop}\n"
    ns: dict[str, Any] = {"b": body, "qjson": qjson, "fastsimdjson": fastsimdjson}
    exec(compile(src, f"<stmt: {stmt}>", "exec"), ns)
    return ns["run"]


def _loads_many(scen_name: str, lib: str) -> Callable[[], object]:
    """`loads_many` of a JSON Lines scenario (`amazon` or `batch`) by `lib`."""
    if scen_name == "amazon":
        path = HERE.parent.parent / "shared" / "data" / "jsonexamples" / "amazon_cellphones.ndjson"
        data = path.read_bytes()
    elif scen_name == "batch":
        import payloads

        data = payloads.batch_file(1 << 20)
    else:
        raise SystemExit("loads_many runs on amazon or batch")
    if lib == "qjson":
        import qjson

        return lambda: qjson.loads_many(data)
    if lib == "fastsimdjson":
        import fastsimdjson

        return lambda: list(fastsimdjson.loads_many(data))
    if lib == "msgspec":
        import msgspec

        dec = msgspec.json.Decoder()
        return lambda: dec.decode_lines(data)
    raise SystemExit(f"loads_many: no lib {lib!r}")


def _read_many(scen_name: str, lib: str) -> Callable[[], object]:
    """many_bench.py's read row: `parse_many` of a generated batch-API file
    (`batch`: 1 MB, `batch4`: 4 MB, `batch16`: 16 MB, where the windows
    after the first few are most of it) and `custom_id`, `body.model` of
    every line, by `lib`."""
    import payloads

    sizes = {"batch": 1 << 20, "batch4": 4 << 20, "batch16": 16 << 20}
    if scen_name not in sizes:
        raise SystemExit("read_many runs on batch, batch4 or batch16")
    data = payloads.batch_file(sizes[scen_name])
    if lib == "qjson":
        import qjson

        def q() -> int:
            n = 0
            for d in qjson.parse_many(data):
                n += len(d.get_str("custom_id")) + len(d.get_str("body.model"))
            return n

        return q
    if lib == "fastsimdjson":
        import fastsimdjson

        def fs() -> int:
            n = 0
            for d in fastsimdjson.parse_many(data):
                n += len(d["custom_id"]) + len(d["body"]["model"])
            return n

        return fs
    raise SystemExit(f"read_many: no lib {lib!r}")


def _profile(args: argparse.Namespace, n: int, out: Path) -> None:
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
    if args.events:
        cmd += ["--cache-sim=yes", "--branch-sim=yes"]
    cmd += [sys.executable, __file__, "_loop", args.op, args.scenario, args.lib, str(n)]
    cmd += ["--stmt", args.stmt, "--setup", args.setup]
    env = dict(os.environ, PYTHONHASHSEED="0")
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def load(path: Path, event: str | None = None) -> dict[str, int]:
    """Exclusive counts per function of one callgrind file."""
    # One event column only: a file made with --events holds several, and
    # callgrind_annotate would print them all, the regex below taking the
    # first as the count and the others as part of the function's name.
    event = event or "Ir"
    cmd = ["callgrind_annotate", "--auto=no", "--threshold=100"]
    cmd += [f"--show={event}", f"--sort={event}"]
    text = subprocess.run([*cmd, str(path)], capture_output=True, text=True, check=True).stdout
    counts: dict[str, int] = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+(.*)", line)
        if m and "PROGRAM TOTALS" not in line:
            name = re.sub(r"^/tmp/python-build[^:]*/", "", m.group(2))
            # qjson's own files by their path in the repository, whichever
            # checkout (or worktree) built the library: two builds compare.
            name = re.sub(r"^/[^:]*?/(src/[^:]*\.rs:)", r"\1", name)
            name = re.sub(r" \[[^\]]*\]$", "", name)  # the object file
            counts[name] = counts.get(name, 0) + int(m.group(1).replace(",", ""))
    return counts


def resolve(path: Path) -> Path:
    """A callgrind file for `diff`: the file itself, or in a `run --out`
    directory holding one workload the N2 file (the largest run). Anything
    else is an error that says what it found."""
    if path.is_file():
        return path
    if not path.is_dir():
        raise SystemExit(f"callgrind.py diff: {path} does not exist")
    runs: dict[str, list[tuple[int, Path]]] = {}
    for f in path.iterdir():
        tag, _, n = f.name.rpartition(".")
        if f.is_file() and tag and n.isdigit():
            runs.setdefault(tag, []).append((int(n), f))
    if len(runs) != 1:
        found = ", ".join(sorted(runs)) or "no callgrind files of `run`"
        raise SystemExit(
            f"callgrind.py diff: {path} is a directory holding {found}; "
            "give the N2 file of one workload (TAG.N2) instead"
        )
    (files,) = runs.values()
    return max(files)[1]


def show_diff(a: dict[str, int], b: dict[str, int], per: float, top: int, label: str) -> None:
    rows = sorted(((b.get(k, 0) - a.get(k, 0)) / per, k) for k in set(a) | set(b))
    rows.reverse()
    print(f"{label}: {sum(r[0] for r in rows):,.0f} per op")
    # The largest rises, then the largest falls; a row is shown once.
    shown = [r for r in rows if r[0] >= 1][:top]
    shown += [r for r in rows[::-1] if r[0] <= -1][: max(0, top // 4)]
    for v, k in shown:
        print(f"{v:10.1f}  {k[:150]}")


def main() -> None:
    fmt = argparse.RawDescriptionHelpFormatter
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=fmt)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="instructions per operation of one workload")
    r.add_argument(
        "op",
        help="a workloads.py op (decode_access, parse_get, ...), parse, patch, merge, "
        "loads_many, read_many, access or stmt",
    )
    r.add_argument("scenario", help="a workloads.py scenario (2k, small_request, ...)")
    r.add_argument("lib", nargs="?", default="qjson")
    r.add_argument("--n1", type=int, default=100)
    r.add_argument("--n2", type=int, default=1100)
    r.add_argument("--events", action="store_true", help="also simulate caches and branches")
    r.add_argument("--out", type=Path, default=None, help="directory for the callgrind files")
    r.add_argument("--top", type=int, default=30)
    r.add_argument("--stmt", default="", help="op stmt: the statement timed")
    r.add_argument("--setup", default="", help="op stmt: run once before the loop")
    d = sub.add_parser("diff", help="per-function difference B - A of two callgrind files")
    d.add_argument("a", type=Path, help="a callgrind file, or a run --out directory")
    d.add_argument("b", type=Path, help="the same for the other build")
    d.add_argument("--per", type=float, default=1.0, help="divide by this (operations run)")
    d.add_argument("--event", default=None, help="Ir (default), I1mr, Bcm, Bim, D1mr, ...")
    d.add_argument("--top", type=int, default=30)
    lp = sub.add_parser("_loop")  # internal: the profiled child
    lp.add_argument("op")
    lp.add_argument("scenario")
    lp.add_argument("lib")
    lp.add_argument("n", type=int)
    lp.add_argument("--stmt", default="")
    lp.add_argument("--setup", default="")
    args = ap.parse_args()

    if args.cmd == "_loop":
        _loop(args.op, args.scenario, args.lib, args.n, args.stmt, args.setup)
        return
    if args.cmd == "diff":
        # `diff ... | head`: end quietly when the reader goes.
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        ev = args.event
        a, b = resolve(args.a), resolve(args.b)
        show_diff(load(a, ev), load(b, ev), args.per, args.top, ev or "Ir")
        return
    if args.n2 <= args.n1:
        ap.error("--n2 must be larger than --n1")
    out = args.out or Path(tempfile.mkdtemp(prefix="qjson-cg-"))
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for n in (args.n1, args.n2):
        tag = f"{args.op}.{args.scenario}.{args.lib}"
        if args.op == "stmt":
            tag += "." + re.sub(r"[^A-Za-z0-9]+", "_", args.stmt)[:40]
        f = out / f"{tag}.{n}"
        _profile(args, n, f)
        files.append(f)
    per = args.n2 - args.n1
    print(f"{args.op} {args.scenario} {args.lib}: files in {out}")
    for event in ["Ir", *(["I1mr", "Bcm", "Bim"] if args.events else [])]:
        top = args.top if event == "Ir" else 10
        show_diff(load(files[0], event), load(files[1], event), per, top, event)


if __name__ == "__main__":
    main()
