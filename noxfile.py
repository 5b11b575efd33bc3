"""Project tasks. `nox -s tests` (CI), `nox -s bench` (the main job), `nox -s lint`.

Every session installs what it needs into its own virtualenv; the compiled
extension is built once per session with `maturin develop --release`, and
cargo's incremental cache under target/ is reused between runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nox

nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = False

ROOT = Path(__file__).resolve().parent
DATA = ROOT.parent / "shared" / "data"
PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"


def _extra(name: str) -> list[str]:
    """The requirements of one optional-dependency group in pyproject.toml."""
    return nox.project.load_toml(ROOT / "pyproject.toml")["project"]["optional-dependencies"][name]


def _build(session: nox.Session) -> None:
    """Build the extension in release mode into the session's virtualenv."""
    session.install("maturin>=1.9.4,<2")
    session.run("maturin", "develop", "--release", "--quiet", external=False)


def _lua_setup(session: nox.Session) -> None:
    """lupa (pip), luajit and lua-cjson (Debian, when root with apt), and the
    PyO3-free C-ABI library the standalone LuaJIT test loads."""
    session.install(*_extra("lua"))
    session.run("sh", "scripts/install-lua-deps.sh", external=True)
    # A target dir of its own: maturin's build writes target/release/libqjson.so
    # with the Python feature on, and this one must have no Python symbols.
    capi = ROOT / "target" / "capi"
    session.run(
        "cargo",
        "build",
        "--release",
        "--quiet",
        "--no-default-features",
        external=True,
        env={"CARGO_TARGET_DIR": str(capi)},
    )
    session.env["QJSON_CAPI_LIB"] = str(capi / "release" / "libqjson.so")


def _pytest(session: nox.Session, *args: str) -> None:
    """Run pytest; "no tests collected" (exit code 5) is an explicit failure."""
    code = session.run("pytest", *args, success_codes=[0, 5])
    if code == 5:
        session.error("pytest collected no tests: the test suite is missing or misconfigured")


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Rust unit and property tests, then the Python test suite."""
    if not DATA.is_dir():
        session.log(f"note: {DATA} is absent; data-driven tests will be skipped")
    session.run("cargo", "test", "--no-default-features", external=True)
    session.install(*_extra("test"))
    session.install(*_extra("gateway"))
    _lua_setup(session)
    _build(session)
    _pytest(session, "tests", *session.posargs)
    if os.environ.get("CI"):
        # CI also gives every fuzz target a short run (about a minute).
        _fuzz_smoke(session)


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """The main job: pytest-benchmark suites, the interleaved DESIGN.md comparisons,
    memory, the Lua run, the corpus table, the ladder notebook and docs/benchmarks.md.

    `nox -s bench -- --quick` for a short smoke run (< 3 minutes after the build);
    other arguments go to benchmarks/run.py (`--only lua,report`, `--skip corpus`).
    """
    session.install(*_extra("bench"))
    session.install(*_extra("gateway"))
    _lua_setup(session)
    _build(session)
    if "--quick" not in session.posargs:
        session.run(
            "cargo",
            "run",
            "--release",
            "--quiet",
            "--no-default-features",
            "--example",
            "scan_bench",
            external=True,
        )
    else:
        session.log("--quick: the stage-1 scan_bench example is left out")
    session.run("python", "benchmarks/run.py", *session.posargs)


def _fuzz_smoke(session: nox.Session) -> None:
    """Install cargo-fuzz if needed, then run every fuzz target briefly."""
    have = subprocess.run(["cargo", "fuzz", "--version"], capture_output=True).returncode == 0
    if not have:
        session.run("cargo", "install", "--locked", "--quiet", "cargo-fuzz", external=True)
    session.run(
        "sh",
        "scripts/fuzz-smoke.sh",
        external=True,
        env={"CARGO_TARGET_DIR": str(ROOT / "target" / "fuzz"), "FUZZ_REQUIRED": "1"},
    )


@nox.session(python=PYTHON)
def fuzz(session: nox.Session) -> None:
    """cargo-fuzz smoke run: each target ~15 s (FUZZ_SECONDS=600 for a long run)."""
    _fuzz_smoke(session)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """rustfmt, clippy, ruff, and the type stubs checked by mypy's stubtest."""
    session.run("cargo", "fmt", "--check", external=True)
    session.run("cargo", "clippy", "--all-targets", "--", "-D", "warnings", external=True)
    # The stable-ABI build (the one-wheel-for-all option) must stay clean too.
    session.run(
        "cargo",
        "clippy",
        "--all-targets",
        "--features",
        "abi3",
        "--",
        "-D",
        "warnings",
        external=True,
    )
    session.run(
        "cargo",
        "clippy",
        "--all-targets",
        "--no-default-features",
        "--",
        "-D",
        "warnings",
        external=True,
    )
    session.install(*_extra("test"))
    # The checkers at the versions last run clean: a new release's rules or
    # formatting must not fail a commit that passed (bump them on purpose).
    session.install("ruff==0.17.6", "mypy==2.4.1")
    session.run("ruff", "check", "python", "tests", "benchmarks", "noxfile.py")
    formatted = ("python", "tests", "benchmarks", "noxfile.py", "README.md", "docs")
    session.run("ruff", "format", "--check", *formatted)
    _build(session)
    session.run(
        "python",
        "-m",
        "mypy.stubtest",
        "qjson",
        "--allowlist",
        "python/qjson/stubtest-allowlist.txt",
    )


@nox.session(python=PYTHON)
def gateway(session: nox.Session) -> None:
    """The LLM-gateway example under load (also a stage of `nox -s bench`): the upstream
    stub and a qjson, an orjson and a json gateway on 127.0.0.1, driven by a separate
    client process; benchmarks/results/gateway.json and its section of docs/benchmarks.md.

    `nox -s gateway -- --quick` for a short run.
    """
    session.install(*_extra("gateway"))  # report.py needs only the stdlib
    _build(session)
    session.run("python", "benchmarks/run.py", "--only", "gateway,report", *session.posargs)
