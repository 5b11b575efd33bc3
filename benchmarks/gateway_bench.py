"""End-to-end load test of the LLM-gateway example (examples/gateway/): qjson vs orjson vs json.

    python benchmarks/gateway_bench.py [--quick] [--out benchmarks/results/gateway.json]
                                       [--malloc default|keep|both] [--profile DIR]

Starts the upstream stub (no hashing, so it costs little) and one gateway per
JSON library on 127.0.0.1 free ports, then drives them from a separate client
process (aiohttp). For each body size (2 KB dense request, 100 KB, 1 MB, 10 MB
chat requests) and concurrency level, each round sends a bounded number of
requests to each gateway in turn (the order rotates per round), after a
warm-up. Per cell:

- requests/s (median over rounds) and p50 / p99 latency (all rounds pooled);
- json_ms: CPU time in JSON work per request (parse, reads, edits, dumps), from
  the gateway's ``Server-Timing`` header; cpu_ms: the gateway process's CPU time
  per request (/proc/PID/stat), so json_ms / cpu_ms is the JSON share of the
  gateway's work and 1000 / cpu_ms the rate one free core would sustain (on a
  busy machine a steadier comparison than the measured requests/s);
- peak RSS of the gateway during the cell (VmHWM after a clear_refs reset).

With glibc's default malloc, a server that frees a request's large buffers may
hand the top of its heap back to the kernel and fault it in again on the next
request. Which variant that hits depends on glibc's dynamic thresholds, not on
the JSON work: freeing an mmapped block raises ``mmap_threshold`` to its size
and ``trim_threshold`` to twice that. The heap growth per request is the HTTP
stack's copies of the body (uvicorn's 256 KiB bytearray concatenations, the
app's ``b"".join`` of the chunks, aiohttp's head+body join before writing);
orjson.loads frees a 12.6 MB mmapped parse buffer on its first large call, so
the orjson server runs at 16.6 MB / 33 MB (mmap / trim) thresholds after one
request and keeps those copies, while the qjson server stays at 1 MiB / 2 MiB
and trims ~2 MiB per 1 MB request. Measured faults per request (c=1, glibc
defaults), qjson vs orjson: 100 KB 68 vs 0, 1 MB 488 vs 0, 10 MB ~5,510 vs
~10,850. A library must not call mallopt, so the default-malloc rows measure
glibc's threshold state as much as JSON work. The full run is done twice: with
glibc's defaults (gateway.json) and with the same fixed thresholds for every
server (``--malloc keep``: MALLOC_KEEP below, gateway-malloc-keep.json).

Results go to benchmarks/results/gateway.json; benchmarks/report.py turns them
into a section of docs/benchmarks.md. ``--profile DIR`` afterwards runs the qjson
gateway under cProfile (CPU-time clock) at 2 KB and 10 MB and writes the text
profiles there. Every server is stopped at the end, also on failure.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "examples" / "gateway"))

LIBRARIES = ["qjson", "orjson", "json"]
SIZES = ["2k", "100k", "1m", "10m"]
MAX_BODY = 16 << 20
# Requests per round for each size, and the concurrency levels (full run, --quick).
# A full-run round of 2 KB to 1 MB lasts ~0.2-0.5 s per library: with 400 / 200 / 64
# requests and 3 rounds (0.1-0.25 s each) single rounds of one cell spread by 15-30%
# on this 2-core machine (client, stub and three servers share it), more than the
# JSON work moves the rate (6-12% of a gateway's CPU at 2 KB and 100 KB).
REQUESTS = {"2k": (1200, 100), "100k": (600, 50), "1m": (128, 16), "10m": (16, 8)}
CONCURRENCY = ([1, 8, 32], [1, 16])
ROUNDS = (6, 1)  # a multiple of the 3 libraries: each starts a round as often
CLIENT_TIMEOUT = 3600  # seconds: the client is killed after this (bounded run)
# --malloc keep: glibc keeps freed memory instead of trimming the heap top after each
# large request and faulting it in again on the next (same setting for every server).
# Without it, the qjson server trims ~2 MiB per 1 MB request (488 faults/request) while
# orjson's runs at the 16.6 MB / 33 MB thresholds its first loads() left (0 faults):
# glibc's dynamic thresholds, not JSON work (see the module docstring).
MALLOC_KEEP = {"MALLOC_MMAP_THRESHOLD_": str(64 << 20), "MALLOC_TRIM_THRESHOLD_": str(256 << 20)}


def body_for(size: str) -> bytes:
    import payloads

    if size == "2k":
        return payloads.small_request()  # the dense ~2 KB request (tools, metadata, user)
    return payloads.chat_request(payloads.LADDER[size])


# --------------------------------------------------------------------------- client process


def _proc_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _proc_minflt(pid: int) -> int:
    """Minor page faults of the process so far (a fresh page touched: on the gateway,
    mostly buffers the allocator handed back to the kernel and gets again)."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[7])


def _reset_peak_rss(pid: int) -> None:
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        pass  # then VmHWM is the peak since the start


def _peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return -1


async def _drive(url: str, body: bytes, n: int, concurrency: int) -> dict[str, Any]:
    """n requests, `concurrency` at a time, over kept-alive connections."""
    import aiohttp

    lat: list[float] = []
    json_ms: list[float] = []
    errors: list[str] = []
    left = [n]

    async def worker(session: aiohttp.ClientSession) -> None:
        while left[0] > 0:
            left[0] -= 1
            t0 = time.perf_counter()
            async with session.post(url + "/v1/chat/completions", data=body) as r:
                payload = await r.read()
                timing = r.headers.get("server-timing", "")
            lat.append(time.perf_counter() - t0)
            if r.status != 200 or b'"received"' not in payload:
                errors.append(f"{r.status}: {payload[:200]!r}")
            elif timing.startswith("json;dur="):
                json_ms.append(float(timing[9:]))

    conn = aiohttp.TCPConnector(limit=concurrency, force_close=False)
    async with aiohttp.ClientSession(connector=conn) as session:
        left[0] = concurrency  # warm-up: open the connections, untimed
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
        lat.clear()
        json_ms.clear()
        left[0] = n
        t0 = time.perf_counter()
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
        wall = time.perf_counter() - t0
    return {"wall": wall, "lat": lat, "json_ms": json_ms, "errors": errors}


def client_main(cfg_path: str, out_path: str) -> None:
    warnings.simplefilter("ignore", ResourceWarning)  # aiohttp: bytes bodies over 1 MiB
    cfg = json.loads(Path(cfg_path).read_text())
    gateways = cfg["gateways"]  # library -> {"url", "pid"}
    libs = list(gateways)
    cells = []
    for size in cfg["sizes"]:
        body = body_for(size)
        for conc in cfg["concurrency"]:
            n = max(cfg["requests"][size], conc)
            acc = {
                lib: {"rps": [], "lat": [], "json_ms": [], "cpu": 0.0, "flt": 0, "rss": 0}
                for lib in libs
            }
            for rnd in range(cfg["rounds"]):
                order = libs[rnd % len(libs) :] + libs[: rnd % len(libs)]
                for lib in order:
                    gw = gateways[lib]
                    _reset_peak_rss(gw["pid"])
                    cpu0, flt0 = _proc_cpu_s(gw["pid"]), _proc_minflt(gw["pid"])
                    r = asyncio.run(_drive(gw["url"], body, n, conc))
                    a = acc[lib]
                    a["cpu"] += _proc_cpu_s(gw["pid"]) - cpu0
                    a["flt"] += _proc_minflt(gw["pid"]) - flt0
                    a["rss"] = max(a["rss"], _peak_rss_kib(gw["pid"]))
                    if r["errors"]:
                        raise SystemExit(f"{lib} {size} c={conc}: {r['errors'][:3]}")
                    a["rps"].append(n / r["wall"])
                    a["lat"] += r["lat"]
                    a["json_ms"] += r["json_ms"]
                    print(
                        f"[gateway {size} c={conc} round {rnd + 1}/{cfg['rounds']}] "
                        f"{lib}: {n / r['wall']:,.0f} req/s",
                        file=sys.stderr,
                        flush=True,
                    )
            for lib, a in acc.items():
                lat = sorted(a["lat"])
                total = cfg["rounds"] * n
                cells.append(
                    {
                        "library": lib,
                        "size": size,
                        "bytes": len(body),
                        "concurrency": conc,
                        "requests": total,
                        "rps": statistics.median(a["rps"]),
                        "rps_rounds": [round(x, 1) for x in a["rps"]],
                        "p50_ms": 1000 * lat[len(lat) // 2],
                        "p99_ms": 1000 * lat[min(len(lat) - 1, int(len(lat) * 0.99))],
                        "json_ms": statistics.mean(a["json_ms"]) if a["json_ms"] else None,
                        "cpu_ms": 1000 * a["cpu"] / total,
                        "faults_per_req": a["flt"] / total,
                        "peak_rss_kib": a["rss"],
                    }
                )
    Path(out_path).write_text(json.dumps(cells))


# --------------------------------------------------------------------------- driver


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for dist in ("qjson", "orjson", "starlette", "uvicorn", "httptools", "uvloop", "aiohttp"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "not installed"
    return out


def _run_client(cfg: dict[str, Any]) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        cfg_path, out_path = Path(tmp) / "cfg.json", Path(tmp) / "out.json"
        cfg_path.write_text(json.dumps(cfg))
        cmd = [sys.executable, __file__, "client", str(cfg_path), str(out_path)]
        proc = subprocess.Popen(cmd)
        try:
            code = proc.wait(CLIENT_TIMEOUT)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if code != 0:
            raise RuntimeError(f"the load client failed (exit code {code})")
        return json.loads(out_path.read_text())


def profile(out_dir: Path, quick: bool) -> None:
    """Profile the qjson gateway under c=32 load at 2 KB and 10 MB (cProfile, CPU time)."""
    from launch import serve

    out_dir.mkdir(parents=True, exist_ok=True)
    with serve(["upstream_stub.py", "--hash", "none"]) as stub:
        for size, n in (("2k", 2000), ("10m", 64)):
            out = out_dir / f"gateway-qjson-{size}.txt"
            wrapper = (__file__, "cprofile", str(out))
            argv = ["app.py", "--upstream", stub.url, "--json", "qjson"]
            argv += ["--max-body", str(MAX_BODY)]
            with serve(argv, wrapper=wrapper, stop_signal=signal.SIGINT) as gw:
                cfg = {
                    "gateways": {"qjson": {"url": gw.url, "pid": gw.pid}},
                    "sizes": [size],
                    "concurrency": [32],
                    "requests": {size: n // (4 if quick else 1)},
                    "rounds": 1,
                }
                _run_client(cfg)
            print(f"wrote {out}", file=sys.stderr)


def cprofile_main(out: str, script: str, *args: str) -> None:
    """Run a server script under cProfile with a CPU-time clock until SIGINT, then write
    its busiest functions: wall-clock samplers charge the time a process waits for a
    core on a busy machine to whatever it was doing, a CPU clock does not."""
    import cProfile
    import io
    import pstats
    import runpy

    sys.argv = [script, *args]
    sys.path.insert(0, str(Path(script).parent))
    prof = cProfile.Profile(time.process_time)
    try:
        prof.runcall(runpy.run_path, script, run_name="__main__")
    except (KeyboardInterrupt, SystemExit):
        pass
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf)
    by_area: dict[str, float] = {}
    for (filename, _line, func), (_cc, _nc, tottime, _ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        area = _area(filename, func)
        by_area[area] = by_area.get(area, 0.0) + tottime
    total = sum(by_area.values())
    buf.write(f"CPU time by area (cProfile tottime, process_time clock), total {total:.3f} s\n")
    for area, t in sorted(by_area.items(), key=lambda kv: -kv[1]):
        buf.write(f"  {area:<34} {t:8.3f} s  {t / total:6.1%}\n")
    buf.write("\n")
    stats.sort_stats("tottime").print_stats(40)
    stats.sort_stats("cumulative").print_stats(60)
    Path(out).write_text(buf.getvalue())


AREAS = [
    ("qjson", ("qjson",)),
    ("orjson / json", ("orjson", "/json/")),
    ("uvicorn + httptools (server HTTP)", ("uvicorn", "httptools")),
    ("starlette (routing, request, response)", ("starlette",)),
    ("aiohttp (client to the upstream)", ("aiohttp", "multidict", "yarl", "aiohappyeyeballs")),
    ("asyncio + uvloop (event loop, sockets)", ("asyncio", "uvloop", "runners.py")),
    ("the example's own code", ("examples/gateway",)),
    ("start-up (imports, compile)", ("importlib", "marshal", "compile", "<frozen", "sre_", "/re/")),
]


def _area(filename: str, func: str) -> str:
    text = f"{filename} {func}"
    for name, keys in AREAS:
        if any(k in text for k in keys):
            return name
    return "other (builtins, stdlib)"


def run_once(sizes: list[str], quick: bool, malloc: str, out: Path) -> None:
    """One load test: stub + one gateway per library, the client, results to `out`."""
    from launch import serve

    k = 1 if quick else 0
    saved = dict(os.environ)
    if malloc == "keep":
        os.environ.update(MALLOC_KEEP)  # inherited by the servers (and the client)
    t0 = time.perf_counter()
    try:
        with serve(["upstream_stub.py", "--hash", "none"]) as stub:
            gateways = {}
            with contextlib.ExitStack() as stack:
                for lib in LIBRARIES:
                    argv_gw = ["app.py", "--upstream", stub.url, "--json", lib]
                    gw = stack.enter_context(serve(argv_gw + ["--max-body", str(MAX_BODY)]))
                    gateways[lib] = {"url": gw.url, "pid": gw.pid}
                cfg = {
                    "gateways": gateways,
                    "sizes": sizes,
                    "concurrency": CONCURRENCY[k],
                    "requests": {s: REQUESTS[s][k] for s in sizes},
                    "rounds": ROUNDS[k],
                }
                cells = _run_client(cfg)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    import qjson

    result = {
        "mode": "quick" if quick else "full",
        "malloc": MALLOC_KEEP if malloc == "keep" else "glibc defaults",
        "seconds": round(time.perf_counter() - t0, 1),
        "cpu": _cpu_name(),
        "cpus": os.cpu_count(),
        "backend": qjson.backend(),
        "python": sys.version.split()[0],
        "versions": _versions(),
        "rounds": cfg["rounds"],
        "cells": cells,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer requests, c = 1 and 16, 1 round")
    ap.add_argument("--out", type=Path, default=RESULTS / "gateway.json")
    ap.add_argument("--sizes", default=",".join(SIZES), help="comma list of " + ",".join(SIZES))
    ap.add_argument("--profile", type=Path, default=None, help="also write cProfile profiles")
    ap.add_argument(
        "--malloc",
        choices=["default", "keep", "both"],
        default=None,
        help="keep: the servers run with glibc's heap trimming off (MALLOC_*_THRESHOLD_); "
        "both (the default; --quick: default only): one run each, the keep run's results "
        "in <out>-malloc-keep.json",
    )
    args = ap.parse_args(argv)
    sizes = [s for s in args.sizes.split(",") if s]
    malloc = args.malloc or ("default" if args.quick else "both")
    if malloc in ("default", "both"):
        run_once(sizes, args.quick, "default", args.out)
    if malloc in ("keep", "both"):
        out = (
            args.out
            if malloc == "keep"
            else args.out.with_name(args.out.stem + "-malloc-keep.json")
        )
        run_once(sizes, args.quick, "keep", out)
    if args.profile:  # with the keep thresholds unless --malloc default
        saved = dict(os.environ)
        if malloc != "default":
            os.environ.update(MALLOC_KEEP)
        try:
            profile(args.profile, args.quick)
        finally:
            os.environ.clear()
            os.environ.update(saved)
    return 0


def _cpu_name() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.lower().startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "client":
        client_main(sys.argv[2], sys.argv[3])
        sys.exit(0)
    if len(sys.argv) >= 4 and sys.argv[1] == "cprofile":
        cprofile_main(*sys.argv[2:])
        sys.exit(0)
    sys.exit(main())
