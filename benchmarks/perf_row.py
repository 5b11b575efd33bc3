"""Native profile of one workload under `perf record`: what callgrind cannot see.

    python benchmarks/perf_row.py decode_access github_issues
    python benchmarks/perf_row.py parse_get github_issues --hot qjson::python::doc::entry::open

Callgrind counts instructions and simulates caches, so an instruction that
is one count but many cycles is invisible to it: a `lock`-prefixed atomic
(an `Arc` clone or drop, ~20 cycles on Zen 4 while the store buffer drains),
a load that needs bytes from two earlier stores (store-to-load forwarding
fails; the load waits for both to commit), a load that misses. This tool
runs the same workload as `callgrind.py run` (its `_loop` child, same OPs and
scenarios, many runs so that start-up and import fade) natively under
`perf record -F 9999` (cpu-clock: the machine's VM exposes no hardware
counters), then prints the functions' shares of samples (self time).

`--hot SYMBOL` prints SYMBOL's hottest instructions, each with the few
instructions before it: a sample lands on the instruction after the one
that stalled (skid), so the culprit is usually just above the hot line (a
`lock incq` above a hot `jle`, a load from the stack above a hot `movzbl`).
A generic function's copies share one name: each copy's listing has its own
shares (of that copy's samples), so their hot lines are printed together.

Profile an LTO build (`PYTHONPATH=/tmp/NAME_pkg_TAG`, or the base package):
a fast build's layout and inlining differ. Shares from different runs move
by a few tenths of a percent; compare builds with read_ab.py, not with this.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
# A line of `perf annotate --stdio`: "  12.26 :   cbc08:  jmp ..." (a share,
# the address, the instruction) or a source line (no share).
ASM = re.compile(r"^\s*(\d+\.\d+)\s*:\s+([0-9a-f]+):\s+(.*)$")


def record(op: str, scenario: str, lib: str, n: int, out: Path) -> None:
    """Run `n` operations of the workload under perf record into `out`."""
    child = [sys.executable, str(HERE / "callgrind.py"), "_loop", op, scenario, lib, str(n)]
    cmd = ["perf", "record", "-q", "-F", "9999", "-o", str(out), "--", *child]
    subprocess.run(cmd, check=True)


def report(data: Path, top: int) -> None:
    """The `top` functions by share of samples (self time)."""
    cmd = ["perf", "report", "-i", str(data), "--no-children", "--sort", "sym", "-q"]
    text = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows = [line for line in text.splitlines() if re.match(r"^\s+\d+\.\d+%", line)]
    print("\n".join(rows[:top]))


def hot(data: Path, symbol: str, top: int, before: int) -> None:
    """`symbol`'s `top` hottest instructions, each after the `before` ones
    that precede it in the listing."""
    cmd = ["perf", "annotate", "-i", str(data), "--stdio", "-s", symbol]
    text = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    asm = [m.groups() for m in map(ASM.match, text.splitlines()) if m]
    if not asm:
        raise SystemExit(f"no samples in {symbol!r} (perf report lists the names)")
    order = sorted(range(len(asm)), key=lambda i: -float(asm[i][0]))[:top]
    for i in order:
        print(f"-- {asm[i][0]}% at {asm[i][1]}")
        for share, addr, ins in asm[max(0, i - before) : i + 1]:
            print(f"  {share:>6} {addr}: {ins}")


def main() -> None:
    fmt = argparse.RawDescriptionHelpFormatter
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=fmt)
    ap.add_argument("op", help="an OP of callgrind.py run (decode_access, parse_get, parse, ...)")
    ap.add_argument("scenario", help="a workloads.py scenario (github_issues, twitter, 2k, ...)")
    ap.add_argument("lib", nargs="?", default="qjson")
    ap.add_argument("-n", type=int, default=20000, help="operations run (default 20000)")
    ap.add_argument("--data", type=Path, default=None, help="keep perf.data here")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--hot", action="append", default=[], help="a symbol to annotate")
    ap.add_argument("--before", type=int, default=4, help="instructions shown above a hot one")
    args = ap.parse_args()
    if shutil.which("perf") is None:
        raise SystemExit("perf is not installed")
    with tempfile.TemporaryDirectory() as tmp:
        data = args.data or Path(tmp) / "perf.data"
        record(args.op, args.scenario, args.lib, args.n, data)
        report(data, args.top)
        for symbol in args.hot:
            print(f"\n== {symbol}")
            hot(data, symbol, 8, args.before)


if __name__ == "__main__":
    main()
