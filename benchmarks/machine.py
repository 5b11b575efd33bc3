"""The machine a benchmark run happened on: CPU, ISA flags, qjson's backend, versions.

python benchmarks/machine.py [--json PATH]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FLAGS = ["sse4_2", "pclmulqdq", "avx2", "bmi2", "avx512f", "avx512bw", "avx512vbmi2", "vpclmulqdq"]
PEERS = {
    "qjson": "qjson",
    "orjson": "orjson",
    "pysimdjson": "simdjson",
    "msgspec": "msgspec",
    "fastsimdjson": "fastsimdjson",
    "cysimdjson": "cysimdjson",
    "ssrjson": "ssrjson",
    "lupa": "lupa",
    "pytest-benchmark": "pytest_benchmark",
}


def _cpuinfo(key: str) -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith(key):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


def _luajit() -> str:
    try:
        import lupa.luajit21 as luajit21

        return str(luajit21.LuaRuntime().eval("jit.version"))
    except Exception as e:
        return f"unavailable ({type(e).__name__})"


def _git() -> str:
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=10,
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def describe() -> dict[str, Any]:
    flags = set((_cpuinfo("flags") or "").split())
    try:
        import qjson

        backend = qjson.backend()
    except Exception as e:
        backend = f"unavailable ({type(e).__name__}: {e})"
    return {
        "cpu": _cpuinfo("model name") or platform.processor() or "unknown",
        "cpus": os.cpu_count() or 0,
        "isa_flags": [f for f in FLAGS if f in flags],
        "machine": platform.machine(),
        "os": platform.platform(),
        "qjson_backend": backend,
        "qjson_backend_forced": os.environ.get("QJSON_BACKEND"),
        # Set by noxfile.py's bench session, which built the extension ("on": LTO +
        # profile-guided, "off": LTO only); a run outside nox cannot tell.
        "qjson_pgo": os.environ.get("QJSON_BUILD_PGO", "unknown (not built by nox -s bench)"),
        "python": f"{platform.python_implementation()} {sys.version.split()[0]}",
        "luajit": _luajit(),
        "versions": {name: _version(name) for name in PEERS},
        "git": _git(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    info = describe()
    text = json.dumps(info, indent=1)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
