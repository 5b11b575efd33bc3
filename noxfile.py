"""Project tasks. `nox -s tests` (CI), `nox -s bench` (the main job), `nox -s lint`,
`nox -s wheel` (the shipped wheel, into dist/).

Every session installs what it needs into its own virtualenv; the compiled
extension is built once per session with `maturin develop --release`, and
cargo's incremental cache under target/ is reused between runs. `bench` and
`wheel` build as shipped: LTO and profile-guided (PGO, see `_pgo_build`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
import zipfile
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


# ------------------------------------------------------------------ PGO
#
# The shipped build (`nox -s wheel`) and the benchmarked one (`nox -s bench`)
# are profile-guided: each library is built once instrumented
# (-Cprofile-generate), scripts/pgo_train.py runs a user's mix of calls on it,
# llvm-profdata merges the counts, and the final LTO build is optimised with
# them (-Cprofile-use: block layout, hot/cold splitting, inlining by profile).
# Every build trains afresh (a profile of other sources would not match), into
# target/pgo/ (never checked in). QJSON_PGO=0 or `--no-pgo` builds without it.

PGO_DIR = ROOT / "target" / "pgo"


def _pgo_wanted(session: nox.Session, required: bool = False) -> bool:
    """PGO unless QJSON_PGO=0 or `--no-pgo` (removed from posargs), checked
    before any build: llvm-profdata is looked up (and added) first. When it
    cannot be had, a `required` session (`wheel`) stops with the reason; the
    others (`bench`) say so loudly and build without PGO."""
    off = "--no-pgo" in session.posargs
    session.posargs[:] = [a for a in session.posargs if a != "--no-pgo"]
    if off or os.environ.get("QJSON_PGO", "1").lower() in ("0", "off", "no", "false"):
        session.log("PGO: off (QJSON_PGO=0 or --no-pgo): a plain LTO release build")
        return False
    if _find_llvm_profdata(session) is None:
        if required:
            _llvm_profdata(session)  # stops the session with the reason
        session.warn(
            "PGO: UNAVAILABLE (no llvm-profdata for rustc's LLVM, and "
            "`rustup component add llvm-tools` failed): a plain LTO build instead"
        )
        return False
    return True


def _rustflags(*flags: str) -> str:
    return " ".join([os.environ.get("RUSTFLAGS", ""), *flags]).strip()


def _find_llvm_profdata(session: nox.Session) -> str | None:
    """The llvm-profdata of the active Rust toolchain (its LLVM reads the
    profile: another LLVM's tool writes a format rustc may reject), or None.
    rustup's llvm-tools component has it; it is added when missing."""
    sysroot = subprocess.run(
        ["rustc", "--print", "sysroot"], capture_output=True, text=True, check=True
    ).stdout.strip()
    host = next(
        line.split(":", 1)[1].strip()
        for line in subprocess.run(
            ["rustc", "-vV"], capture_output=True, text=True, check=True
        ).stdout.splitlines()
        if line.startswith("host:")
    )
    tool = Path(sysroot) / "lib" / "rustlib" / host / "bin" / "llvm-profdata"
    if not tool.is_file():
        session.log("PGO: adding rustup's llvm-tools component (llvm-profdata)")
        try:
            subprocess.run(["rustup", "component", "add", "llvm-tools"], check=False)
        except FileNotFoundError:
            session.log("PGO: rustup is not on PATH")
    return str(tool) if tool.is_file() else None


def _llvm_profdata(session: nox.Session) -> str:
    """`_find_llvm_profdata`, or the session stops with the reason."""
    tool = _find_llvm_profdata(session)
    if tool is None:
        session.error(
            "PGO needs the llvm-profdata of rustc's own LLVM (rustup's llvm-tools "
            "component), and `rustup component add llvm-tools` could not install it. "
            "Install it by hand, or build without PGO: QJSON_PGO=0 nox -s ... (or `-- --no-pgo`)."
        )
    return tool


def _pgo_train(session: nox.Session, raw: Path, *args: str, env: dict[str, str]) -> None:
    """Run scripts/pgo_train.py on an instrumented build, its counts into `raw`.
    `raw` is emptied first: the instrumented build's own build scripts and proc
    macros (host code, built with the same RUSTFLAGS) write counts there too."""
    shutil.rmtree(raw, ignore_errors=True)
    session.run("python", "scripts/pgo_train.py", *args, env={"PYTHONHASHSEED": "0", **env})


def _pgo_merge(session: nox.Session, raw: Path, name: str) -> Path:
    """Merge the counts in `raw` into target/pgo/NAME-HASH.profdata and return it.
    The content hash in the name puts the profile into RUSTFLAGS: cargo does not
    look at the file, and a new profile must rebuild what was built with the old."""
    if not any(raw.glob("*.profraw")):
        session.error(f"PGO: the training run left no counts in {raw}")
    merged = PGO_DIR / f"{name}.profdata"
    PGO_DIR.mkdir(parents=True, exist_ok=True)
    session.run(_llvm_profdata(session), "merge", "-o", str(merged), str(raw), external=True)
    digest = hashlib.sha256(merged.read_bytes()).hexdigest()[:12]
    for old in PGO_DIR.glob(f"{name}-*.profdata"):
        old.unlink()
    return Path(shutil.copyfile(merged, PGO_DIR / f"{name}-{digest}.profdata"))


def _pgo_python_profile(session: nox.Session, *maturin_args: str) -> Path:
    """Instrumented wheel -> training run (Python and Lua edges) -> merged profile.
    `maturin_args` (features) must be those of the final build."""
    session.install("maturin>=1.9.4,<2")
    raw, wheels, site = PGO_DIR / "raw-py", PGO_DIR / "gen-wheel", PGO_DIR / "gen-site"
    for d in (wheels, site):
        shutil.rmtree(d, ignore_errors=True)
    session.run(
        "maturin",
        "build",
        "--release",
        "--quiet",
        "--interpreter",
        "python",
        "--out",
        str(wheels),
        *maturin_args,
        env={
            "RUSTFLAGS": _rustflags(f"-Cprofile-generate={raw}"),
            "CARGO_TARGET_DIR": str(ROOT / "target" / "pgo-gen"),
        },
    )
    # Imported from a directory of its own (ahead of the editable install).
    for wheel in wheels.glob("*.whl"):
        with zipfile.ZipFile(wheel) as z:
            z.extractall(site)
    _pgo_train(session, raw, env={"PYTHONPATH": str(site)})
    return _pgo_merge(session, raw, "python")


def _pgo_build(session: nox.Session) -> None:
    """The extension, profile-guided (see above), into the session's virtualenv."""
    t0 = time.monotonic()
    profile = _pgo_python_profile(session)
    session.run(
        "maturin",
        "develop",
        "--release",
        "--quiet",
        env={
            "RUSTFLAGS": _rustflags(f"-Cprofile-use={profile}"),
            "CARGO_TARGET_DIR": str(ROOT / "target" / "pgo-use"),
        },
    )
    session.log(f"PGO: extension built in {time.monotonic() - t0:.0f} s (instrument, train, build)")


def _capi_build(session: nox.Session, pgo: bool) -> Path:
    """The PyO3-free C-ABI library, with its own profile (a Lua training run)
    when `pgo`; returns its path."""
    capi = ROOT / "target" / "capi"
    flags = os.environ.get("RUSTFLAGS", "")
    if pgo:
        gen, raw = ROOT / "target" / "pgo-gen-capi", PGO_DIR / "raw-lua"
        cargo = ["cargo", "build", "--release", "--quiet", "--no-default-features"]
        env = {"RUSTFLAGS": _rustflags(f"-Cprofile-generate={raw}"), "CARGO_TARGET_DIR": str(gen)}
        session.run(*cargo, external=True, env=env)
        _pgo_train(session, raw, "--lua", str(gen / "release" / "libqjson.so"), env={})
        profile = _pgo_merge(session, raw, "capi")
        flags = _rustflags(f"-Cprofile-use={profile}")
        capi = ROOT / "target" / "capi-pgo"  # its own cache: the flags differ
    session.run(
        "cargo",
        "build",
        "--release",
        "--quiet",
        "--no-default-features",
        external=True,
        env={"CARGO_TARGET_DIR": str(capi), "RUSTFLAGS": flags},
    )
    return capi / "release" / "libqjson.so"


def _lua_setup(session: nox.Session, pgo: bool = False) -> None:
    """lupa (pip), luajit and lua-cjson (Debian, when root with apt), and the
    PyO3-free C-ABI library the standalone LuaJIT test loads (profile-guided
    when `pgo`, trained by a Lua run on lupa)."""
    session.install(*_extra("lua"))
    session.run("sh", "scripts/install-lua-deps.sh", external=True)
    # A target dir of its own: maturin's build writes target/release/libqjson.so
    # with the Python feature on, and this one must have no Python symbols.
    session.env["QJSON_CAPI_LIB"] = str(_capi_build(session, pgo))


def _pytest(session: nox.Session, *args: str, env: dict[str, str] | None = None) -> None:
    """Run pytest; "no tests collected" (exit code 5) is an explicit failure."""
    code = session.run("pytest", *args, success_codes=[0, 5], env=env)
    if code == 5:
        session.error("pytest collected no tests: the test suite is missing or misconfigured")


# The suites rerun at every vector level below the CPU's best one (the Lua
# suite drives the C-ABI library, which picks its level the same way).
LEVEL_SUITES = ("tests/read", "tests/edit", "tests/many", "tests/eager", "tests/lua")


def _lower_levels(session: nox.Session) -> None:
    """Rerun the read, edit, NDJSON, eager and Lua suites with `QJSON_BACKEND`
    forcing each vector level below the one the CPU runs (on AVX-512:
    avx2, then scalar), after the Rust unit and property tests at that level.
    The main run reaches only the best level's kernels; the lower ones (the
    AVX2 stage-2 walks, the scalar scan, the exact index path `loads` takes
    when the token scan is absent) are what other machines run.
    tests/robustness/test_backend.py compares the levels on a short script;
    these runs cover the suites."""
    env = {"QJSON_BACKEND": ""}  # the CPU's own level, whatever the caller set
    out = session.run("python", "-c", "import qjson; print(qjson.backend())", silent=True, env=env)
    if out is None:  # nox --install-only: nothing ran
        return
    lines = out.strip().splitlines()  # (stderr comes in this output too: the last line)
    best = lines[-1].strip() if lines else ""
    order = {"avx512": ["avx2", "scalar"], "avx2": ["scalar"], "neon": ["scalar"]}
    if not order.get(best):
        session.log(f"no vector level below {best!r}: the suites ran once")
    for level in order.get(best, []):
        env = {"QJSON_BACKEND": level}
        session.log(f"QJSON_BACKEND={level}: the Rust tests, then {' '.join(LEVEL_SUITES)}")
        # (The same test binaries as the main run: nothing is rebuilt.)
        session.run("cargo", "test", "--no-default-features", "-q", external=True, env=env)
        session.run("cargo", "test", "--lib", "-q", external=True, env=env)
        _pytest(session, *LEVEL_SUITES, "-q", env=env)


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Rust unit and property tests, then the Python test suite."""
    if not DATA.is_dir():
        session.log(f"note: {DATA} is absent; data-driven tests will be skipped")
    session.run("cargo", "test", "--no-default-features", external=True)
    # The unit tests of the PyO3 glue (src/python/: e.g. the NDJSON line index,
    # the key cache, error mapping) need the python feature; they link libpython.
    session.run("cargo", "test", "--lib", external=True)
    session.install(*_extra("test"))
    session.install(*_extra("gateway"))
    _lua_setup(session)
    _build(session)
    _pytest(session, "tests", *session.posargs)
    if not session.posargs:
        _lower_levels(session)
    if os.environ.get("CI"):
        # CI also gives every fuzz target a short run (about a minute).
        _fuzz_smoke(session)


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """The main job: pytest-benchmark suites, the interleaved DESIGN.md comparisons,
    memory, the Lua run, the corpus table, the ladder notebook and docs/benchmarks.md.

    `nox -s bench -- --quick` for a short smoke run (< 3 minutes after the build);
    other arguments go to benchmarks/run.py (`--only lua,report`, `--skip corpus`).
    The extension and the C-ABI library are built as shipped, with PGO (see
    `_pgo_build`; `-- --no-pgo` or QJSON_PGO=0 for a plain LTO build).
    """
    pgo = _pgo_wanted(session)
    t0 = time.monotonic()
    session.install(*_extra("bench"))
    session.install(*_extra("gateway"))
    _lua_setup(session, pgo)
    if pgo:
        _pgo_build(session)
    else:
        _build(session)
    session.log(f"build phase: {time.monotonic() - t0:.0f} s (PGO {'on' if pgo else 'off'})")
    # benchmarks/machine.py records it in the report's header.
    session.env["QJSON_BUILD_PGO"] = "on" if pgo else "off"
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


@nox.session(python=PYTHON)
def wheel(session: nox.Session) -> None:
    """The shipped wheel, into dist/: LTO + PGO (trained by scripts/pgo_train.py on
    an instrumented build of the same sources), for this interpreter.

    `nox -s wheel -- --no-pgo` (or QJSON_PGO=0) for a plain LTO wheel; other
    arguments go to `maturin build` (e.g. `--features abi3`: the profile is then
    trained on the abi3 build too).
    """
    pgo = _pgo_wanted(session, required=True)
    session.install("maturin>=1.9.4,<2")
    flags = os.environ.get("RUSTFLAGS", "")
    target = ROOT / "target" / "release-wheel"
    if pgo:
        session.install(*_extra("lua"))  # trains the Lua edge too; skipped without lupa
        profile = _pgo_python_profile(session, *session.posargs)
        flags = _rustflags(f"-Cprofile-use={profile}")
        target = ROOT / "target" / "pgo-use"
    session.run(
        "maturin",
        "build",
        "--release",
        "--interpreter",
        "python",
        "--out",
        str(ROOT / "dist"),
        *session.posargs,
        env={"RUSTFLAGS": flags, "CARGO_TARGET_DIR": str(target)},
    )
    session.log(f"PGO: {'on' if pgo else 'off'}; the wheel is in dist/")


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
    """cargo-fuzz smoke run: each target ~12 s (FUZZ_SECONDS=600 for a long run)."""
    _fuzz_smoke(session)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """rustfmt, clippy, rustdoc without warnings, ruff, and the type stubs (mypy stubtest)."""
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
    # The fuzz crate (its own workspace, so not covered by the runs above).
    session.run(
        "cargo",
        "clippy",
        "--manifest-path",
        "fuzz/Cargo.toml",
        "--all-targets",
        "--",
        "-D",
        "warnings",
        external=True,
        env={"CARGO_TARGET_DIR": str(ROOT / "target" / "fuzz")},
    )
    session.run("cargo", "fmt", "--check", "--manifest-path", "fuzz/Cargo.toml", external=True)
    # The docs, private items included (the module docs explain the
    # algorithms, so their links must resolve).
    session.run(
        "cargo",
        "doc",
        "--no-deps",
        "--document-private-items",
        "--quiet",
        external=True,
        env={"RUSTDOCFLAGS": "-D warnings"},
    )
    session.install(*_extra("test"))
    # The checkers at the versions last run clean: a new release's rules or
    # formatting must not fail a commit that passed (bump them on purpose).
    session.install("ruff==0.17.6", "mypy==2.4.1")
    session.run("ruff", "check", "python", "tests", "benchmarks", "scripts", "noxfile.py")
    formatted = ("python", "tests", "benchmarks", "scripts", "noxfile.py", "README.md", "docs")
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
