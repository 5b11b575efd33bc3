"""The whole benchmark job, stage by stage (what `nox -s bench` runs).

    python benchmarks/run.py [--quick] [--only lua,report] [--skip corpus]

Stages, each in its own process except the last two, results in
benchmarks/results/:

    machine   machine.json: CPU, ISA flags, qjson backend, Python / LuaJIT / peer versions
    pytest    pytest.json (pytest-benchmark --benchmark-json) + pytest-skipped.json
    targets   targets.json: the DESIGN.md comparisons (every peer, best peer per row),
              libraries interleaved per round, then the per-access cost (access.py)
    memory    memory.json: tracemalloc + RSS per operation, qjson index sizes
    lua       lua.json: qjson vs lua-cjson inside lupa's LuaJIT
    corpus    corpus.json + docs/corpus.md (needs ../shared/data/jsonexamples)
    notebook  executes benchmarks/ladder.ipynb headless (nbclient); PNGs in docs/img/
    many      many.json: NDJSON reads, loads_many, dumps_many, open_many (benchmarks/many_bench.py)
    patch     patch.json: JSON Patch / merge patch vs passthrough and jsonpatch (patch_bench.py)
    gateway   gateway.json (+ gateway-malloc-keep.json): examples/gateway end to end on
              uvicorn, qjson vs orjson vs json
    report    docs/benchmarks.md from the results

A progress line on stderr names the stage running, the stages left and an
estimate of the time left. A failed stage does not stop the others; the exit
status is 1 if any failed. `--quick` targets < 3 minutes in all.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
CORPUS = ROOT.parent / "shared" / "data" / "jsonexamples"

sys.path.insert(0, str(HERE))
from progress import fmt_duration  # noqa: E402

STAGES = ["machine", "pytest", "targets", "memory", "lua", "corpus", "notebook", "report"]
STAGES.insert(STAGES.index("report"), "gateway")
STAGES[STAGES.index("gateway") : STAGES.index("gateway")] = ["many", "patch"]
# Rough durations on a 2-core machine, seconds (quick, full): only for the "left" estimate.
EXPECTED = {
    "machine": (2, 2),
    "pytest": (25, 330),
    "targets": (40, 600),
    "memory": (4, 20),
    "lua": (12, 40),
    "corpus": (65, 420),
    "notebook": (15, 15),
    "gateway": (120, 1500),
    "many": (30, 300),
    "patch": (20, 120),
    "report": (1, 1),
}


def _py(*args: str) -> list[str]:
    return [sys.executable, *args]


def commands(quick: bool) -> dict[str, list[str] | None]:
    q = ["--quick"] if quick else []
    pytest_args = [
        "-m",
        "pytest",
        "benchmarks",
        "-q",
        "-rs",
        "-p",
        "no:cacheprovider",
        "-W",
        "ignore::pytest_benchmark.logger.PytestBenchmarkWarning",
        "--benchmark-only",
        f"--benchmark-json={RESULTS / 'pytest.json'}",
        f"--skipped-json={RESULTS / 'pytest-skipped.json'}",
        "--benchmark-columns=median,iqr,ops,rounds",
        "--benchmark-sort=name",
        "--benchmark-warmup=on",
        "--benchmark-warmup-iterations=50" if quick else "--benchmark-warmup-iterations=1000",
        "--benchmark-disable-gc",
        "--benchmark-timer=time.thread_time",  # CPU time, as clock.py explains
        "--benchmark-min-time=0.0002" if quick else "--benchmark-min-time=0.001",
        "--benchmark-max-time=0.05" if quick else "--benchmark-max-time=0.5",
        "--benchmark-min-rounds=5",
        *q,
    ]
    return {
        "machine": _py(str(HERE / "machine.py"), "--json", str(RESULTS / "machine.json")),
        "pytest": _py(*pytest_args),
        "targets": _py(str(HERE / "targets.py"), *q),
        "memory": _py(str(HERE / "memory.py"), *q),
        "lua": _py(str(HERE / "lua_bench.py"), *q),
        "corpus": _py(str(HERE / "corpus.py"), *q) if CORPUS.is_dir() else None,
        "gateway": _py(str(HERE / "gateway_bench.py"), *q),
        "many": _py(str(HERE / "many_bench.py"), *q),
        "patch": _py(str(HERE / "patch_bench.py"), *q),
        "notebook": None,  # in-process
        "report": None,  # in-process
    }


def _strip_raw_timings(path: Path) -> None:
    """Drop the per-round timings pytest-benchmark writes (megabytes); keep the stats."""
    if not path.is_file():
        return
    data = json.loads(path.read_text())
    for b in data.get("benchmarks", []):
        b.get("stats", {}).pop("data", None)
    path.write_text(json.dumps(data, indent=1) + "\n")


def run_notebook() -> None:
    import nbformat
    from nbclient import NotebookClient

    path = HERE / "ladder.ipynb"
    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}
    ).execute()
    nbformat.write(nb, path)
    print(f"executed {path.relative_to(ROOT)}")


def run_report() -> None:
    import report

    report.main([])  # the mode comes from the results (targets.json)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.splitlines()[1:]),
    )
    ap.add_argument("--quick", action="store_true", help="the < 3 minute smoke run")
    ap.add_argument("--only", default="", help="comma list of stages to run")
    ap.add_argument("--skip", default="", help="comma list of stages to leave out")
    args = ap.parse_args(argv)
    only = [s for s in args.only.split(",") if s]
    skip = [s for s in args.skip.split(",") if s]
    for s in only + skip:
        if s not in STAGES:
            ap.error(f"unknown stage {s!r}; stages: {', '.join(STAGES)}")
    stages = [s for s in STAGES if (not only or s in only) and s not in skip]
    cmds = commands(args.quick)
    RESULTS.mkdir(parents=True, exist_ok=True)
    k = 0 if args.quick else 1
    t0 = time.perf_counter()
    status: dict[str, str] = {}
    for i, stage in enumerate(stages):
        left = fmt_duration(sum(EXPECTED[s][k] for s in stages[i:]))
        elapsed = fmt_duration(time.perf_counter() - t0)
        following = ", ".join(stages[i + 1 :]) or "-"
        print(
            f"\n[bench stage {i + 1}/{len(stages)}: {stage}; {elapsed} elapsed, "
            f"~{left} left; next: {following}]",
            file=sys.stderr,
            flush=True,
        )
        ts = time.perf_counter()
        try:
            if stage == "notebook":
                run_notebook()
                code = 0
            elif stage == "report":
                run_report()
                code = 0
            elif cmds[stage] is None:
                print(f"skipped: corpus stage: {CORPUS} is absent", file=sys.stderr)
                status[stage] = "skipped (no corpus data)"
                continue
            else:
                code = subprocess.run(cmds[stage], cwd=ROOT).returncode
                if stage == "pytest":
                    _strip_raw_timings(RESULTS / "pytest.json")
        except Exception as e:  # the notebook / report stages
            print(f"{stage} failed: {type(e).__name__}: {e}", file=sys.stderr)
            code = 1
        dt = time.perf_counter() - ts
        status[stage] = f"ok in {fmt_duration(dt)}" if code == 0 else f"FAILED ({code})"
    total = time.perf_counter() - t0
    print(f"\n[bench done in {fmt_duration(total)}]", file=sys.stderr)
    for stage, st in status.items():
        print(f"  {stage:<9} {st}", file=sys.stderr)
    (RESULTS / "run.json").write_text(
        json.dumps(
            {"mode": "quick" if args.quick else "full", "seconds": round(total, 1), **status},
            indent=1,
        )
        + "\n"
    )
    return 1 if any(st.startswith("FAILED") for st in status.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
