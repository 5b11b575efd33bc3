"""pytest-benchmark configuration for the suites in benchmarks/test_*.py.

These files are never part of the normal test run (pyproject's testpaths is
``tests``; ``nox -s tests`` runs ``pytest tests``). Run them with::

    pytest benchmarks --benchmark-only [--quick] [--scenarios 2k,100k]
        [--benchmark-json benchmarks/results/pytest.json]

Each test module lists the operations it covers (``BENCH_OPS``); this file
parametrizes it over scenario x operation x library, gives every row an id
``<scenario>-<op>-<library>`` and the pytest-benchmark group of its scenario,
and orders the rows scenario by scenario, so the libraries compared on one
operation run back to back (their first row rotates between scenarios).
Rows that cannot run (a missing peer, a qjson feature not built yet) are
skipped with the reason (``-rs`` prints them).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

try:
    import workloads  # type: ignore[import-not-found]
    from progress import Progress  # type: ignore[import-not-found]
except ImportError:
    from benchmarks import workloads  # type: ignore[no-redef]
    from benchmarks.progress import Progress  # type: ignore[no-redef]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("qjson benchmarks")
    group.addoption(
        "--quick",
        action="store_true",
        help="the quick scenario set: " + ",".join(workloads.QUICK_SCENARIOS),
    )
    group.addoption(
        "--scenarios", default=None, help="comma list of scenarios (default: all, or --quick's)"
    )
    group.addoption(
        "--skipped-json", default=None, help="write the skipped rows and their reasons here"
    )


def _scenarios(config: pytest.Config) -> list[str]:
    if config.getoption("--scenarios"):
        return [s.strip() for s in config.getoption("--scenarios").split(",") if s.strip()]
    return workloads.QUICK_SCENARIOS if config.getoption("--quick") else workloads.SCENARIOS


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "case" not in metafunc.fixturenames:
        return
    ops = metafunc.module.BENCH_OPS
    params = []
    for si, name in enumerate(_scenarios(metafunc.config)):
        for op in ops:
            if name in ("github_issues", "twitter") and op in workloads.EDITS:
                continue  # edits are defined for chat requests
            libs = workloads.libs_for(op)
            k = si % len(libs)
            for lib in libs[k:] + libs[:k]:
                params.append(pytest.param((name, op, lib), id=f"{name}-{op}-{lib}"))
    metafunc.parametrize("case", params, indirect=True)


def _sort_key(item: pytest.Item) -> tuple:
    callspec = getattr(item, "callspec", None)
    if callspec is None or "case" not in callspec.params:
        return (len(workloads.SCENARIOS), 0, 0)
    name, op, _lib = callspec.params["case"]
    order = workloads.SCENARIOS
    return (order.index(name) if name in order else len(order), workloads.OPS.index(op), 0)


_progress: Progress | None = None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    global _progress
    items.sort(key=_sort_key)  # stable: the library rotation above is kept
    _progress = Progress(len(items), "pytest-benchmark", every=3.0)


def pytest_runtest_logstart(nodeid: str, location: tuple) -> None:
    if _progress is not None:
        _progress.step(nodeid.rsplit("::", 1)[-1])


@pytest.fixture
def case(request: pytest.FixtureRequest, benchmark) -> object:
    """The checked callable for this row; the benchmark grouped by scenario."""
    name, op, lib = request.param
    try:
        scen = workloads.scenario(name)
    except workloads.Skip as e:  # its data file is absent
        pytest.skip(str(e))
    benchmark.group = f"{name} ({scen.size:,} B)"
    benchmark.extra_info.update(
        {"scenario": name, "op": op, "library": lib, "bytes": scen.size, "kind": scen.kind}
    )
    try:
        return workloads.make(op, lib, scen)
    except workloads.Skip as e:
        pytest.skip(str(e))


_skipped: list[dict[str, str]] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and report.when in ("setup", "call"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        row = report.nodeid.rsplit("[", 1)[-1].rstrip("]")
        _skipped.append({"row": row, "reason": reason.removeprefix("Skipped: ")})


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = session.config.getoption("--skipped-json")
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(_skipped, indent=1) + "\n")
