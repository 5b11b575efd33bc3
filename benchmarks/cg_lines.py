"""Code footprint per operation: the 64-byte code lines an operation runs
through every time, by object file and function, under callgrind.

    python benchmarks/cg_lines.py run edit_nested 2k [--out DIR] [--top 30]
    python benchmarks/cg_lines.py diff DIR_A DIR_B [--top 30]

Why: when the code one operation runs through outgrows the 32 KB L1
instruction cache, every op misses on its own code and evicts the rest
(the parse, the interpreter), and wall time follows the footprint more
than the instruction count. Measured on the shipped LTO + PGO build of
session 20 (callgrind runs the AVX2 kernels): decode + dumps 385 lines
(24.1 KB), edit_top 498 (31.1 KB); edit_nested ~641, merge ~696, patch
~799 (taken before a parsing fix of relative positions that lowered the
first two by ~2%, not redone): the order of the bench's edit ratios.

How: `run` runs the workload (any op of `callgrind.py`) N1 = 100 and
N2 = 200 times, each in its own callgrind process with `--dump-instr=yes`
(per-instruction counts; addresses are relative to their object file, so
two runs of the same build match), and counts the lines holding an
instruction run at least 0.9 x (N2 - N1) more times in the second run:
code run on every op, not the start-up or code run now and then (the
collector). `diff` compares the lines per function of two such
directories (two workloads of one build: what one costs beyond the other;
or one workload of two builds).
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
N1, N2 = 100, 200

Key = tuple[str, int]  # (object file, address)


def parse(path: Path) -> tuple[dict[Key, int], dict[Key, str]]:
    """Per instruction (object, address): its count and its function."""
    counts: dict[Key, int] = collections.Counter()
    owner: dict[Key, str] = {}
    names: dict[str, dict[str, str]] = {"ob": {}, "fn": {}}
    ob = fn = "?"
    last = 0
    after_calls = False

    def rel(tok: str, prev: int) -> int:
        if tok == "*":
            return prev
        # callgrind's compressed positions: a gap under 100 either way is
        # written relative and in decimal ("+12", "-3"), anything else as an
        # absolute hexadecimal address ("0x4a5f20").
        if tok[0] in "+-":
            return prev + int(tok, 10)
        return int(tok, 0)

    with open(path, errors="replace") as f:
        for line in f:
            head = line.split("=", 1)[0]
            if head in ("ob", "cob", "fn", "cfn"):
                m = re.match(r"\((\d+)\)(?: (.*))?", line.rstrip("\n").split("=", 1)[1])
                table = names[head.lstrip("c")]
                name = line.rstrip("\n").split("=", 1)[1]
                if m:
                    if m.group(2):
                        table[m.group(1)] = m.group(2)
                    name = table.get(m.group(1), name)
                if head == "ob":
                    ob = name
                elif head == "fn":
                    fn = name
                continue
            if line.startswith("calls="):
                after_calls = True
                continue
            if not line or line[0] not in "0123456789+-*":
                continue
            parts = line.split()
            last = rel(parts[0], last)
            if after_calls:  # the call's inclusive cost, not the caller's own
                after_calls = False
                continue
            # `positions: instr line`: address, line, then the count.
            key = (ob, last)
            counts[key] += int(parts[2]) if len(parts) > 2 else 0
            owner[key] = fn
    return counts, owner


def lines(directory: Path) -> dict[tuple[str, int], str]:
    """The code lines run on every op: (object, line) -> a function in it."""
    a, _ = parse(directory / f"cg.{N1}")
    b, owner = parse(directory / f"cg.{N2}")
    out: dict[tuple[str, int], str] = {}
    for key, c in b.items():
        if c - a.get(key, 0) >= 0.9 * (N2 - N1):
            out.setdefault((key[0], key[1] >> 6), owner[key])
    return out


def by_function(ls: dict[tuple[str, int], str]) -> collections.Counter[tuple[str, str]]:
    c: collections.Counter[tuple[str, str]] = collections.Counter()
    for (ob, _), fn in ls.items():
        c[(Path(ob).name[:24], re.sub(r"'\d+$", "", fn)[:90])] += 1
    return c


def summary(ls: dict[tuple[str, int], str]) -> str:
    objs = collections.Counter(Path(ob).name[:24] for ob, _ in ls)
    top = ", ".join(f"{o} {n}" for o, n in objs.most_common(4))
    return f"{len(ls)} lines ({len(ls) * 64 / 1024:.1f} KB) per op: {top}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("op")
    r.add_argument("scenario")
    r.add_argument("lib", nargs="?", default="qjson")
    r.add_argument("--out", type=Path, default=None)
    r.add_argument("--top", type=int, default=30)
    d = sub.add_parser("diff")
    d.add_argument("a", type=Path)
    d.add_argument("b", type=Path)
    d.add_argument("--top", type=int, default=30)
    args = ap.parse_args()
    if args.cmd == "run":
        out = args.out or Path(f"/tmp/cg-lines-{args.op}-{args.scenario}")
        out.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, PYTHONHASHSEED="0")
        for n in (N1, N2):
            cmd = ["valgrind", "--tool=callgrind", "--dump-instr=yes"]
            cmd += [f"--callgrind-out-file={out / f'cg.{n}'}", sys.executable]
            cmd += [str(HERE / "callgrind.py"), "_loop", args.op, args.scenario, args.lib, str(n)]
            cmd += ["--stmt", "", "--setup", ""]
            quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
            subprocess.run(cmd, check=True, env=env, **quiet)
        ls = lines(out)
        print(f"{args.op} {args.scenario} {args.lib}: {summary(ls)}  (files in {out})")
        for (ob, fn), n in by_function(ls).most_common(args.top):
            print(f"  {n:5d}  {ob:24} {fn}")
        return
    la, lb = lines(args.a), lines(args.b)
    print(f"A: {summary(la)}\nB: {summary(lb)}")
    fa, fb = by_function(la), by_function(lb)
    rows = sorted(((fb[k] - fa[k], k) for k in set(fa) | set(fb)), key=lambda t: -abs(t[0]))
    for delta, (ob, fn) in rows[: args.top]:
        print(f"  {delta:+5d} {fa[(ob, fn)]:5d} {fb[(ob, fn)]:5d}  {ob:24} {fn}")


if __name__ == "__main__":
    main()
