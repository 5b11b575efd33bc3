"""Batch reads (get_all / get_many) against plain loops, qjson's own and the
peers': the dense rows of DESIGN.md's targets.

    python benchmarks/batch_bench.py [--rounds 40]

Work per row: parse the document, then read
- github-100k (benchmarks/payloads.github_issues): id, title and user.login
  of every issue;
- twitter.json (../shared/data/jsonexamples): id and user.screen_name of
  every status.

qjson runs it four ways: cursor getters in a loop, view subscripts in a loop,
one get_all per field with str paths, and the same with compiled Path objects
made once outside the timed work. Peers run their natural loop: fastsimdjson
(lazy views), orjson (eager dicts); pysimdjson and cysimdjson when installed.
Libraries are interleaved in every round (shuffled), each sample is the mean
of a batch of repetitions, and the table shows the median over rounds (and
the minimum); the collector stays on. "reads only" rows time the reads on a
document parsed outside the timed work.
"""

from __future__ import annotations

import argparse
import gc
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import qjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
import payloads  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "jsonexamples"


def subscriber(fields: list[tuple[str, str]]) -> Callable[[Any], tuple[Any, ...]]:
    """A function reading ``fields`` of one element by subscripts."""
    keys = [f.split(".") for f, _ in fields]

    def subscripts(it: Any) -> tuple[Any, ...]:
        out = []
        for ks in keys:
            v = it
            for k in ks:
                v = v[k]
            out.append(v)
        return tuple(out)

    return subscripts


def work_for(body: bytes, top: str, fields: list[tuple[str, str]]) -> dict[str, Callable[[], Any]]:
    """The four qjson forms and the peers' loops for reading ``fields``
    ((path, typed getter name)) of every element of the array at ``top``."""
    prefix = f"{top}[*]." if top else "[*]."
    texts = [prefix + f for f, _ in fields]
    compiled = [qjson.Path(t) for t in texts]
    subscripts = subscriber(fields)

    def q_getters() -> Any:
        d = qjson.parse(body)
        out = []
        for i in range(d.len(top)):
            c = d.open(f"{top}[{i}]")
            out.append(tuple(getattr(c, g)(f) for f, g in fields))
        return out

    def q_views() -> Any:
        root = qjson.parse(body).root
        return [subscripts(it) for it in (root[top] if top else root)]

    def q_get_all() -> Any:
        d = qjson.parse(body)
        return [d.get_all(t) for t in texts]

    def q_get_all_path() -> Any:
        d = qjson.parse(body)
        return [d.get_all(p) for p in compiled]

    work: dict[str, Callable[[], Any]] = {
        "qjson getters": q_getters,
        "qjson views": q_views,
        "qjson get_all": q_get_all,
        "qjson get_all(Path)": q_get_all_path,
    }
    work.update(peers(body, subscripts, top or None))
    return work


GITHUB_FIELDS = [("id", "get_int"), ("title", "get_str"), ("user.login", "get_str")]
TWITTER_FIELDS = [("id", "get_int"), ("user.screen_name", "get_str")]


def peers(body: bytes, read: Callable[[Any], Any], field: str | None) -> dict[str, Any]:
    """The peers' parse + loop, for those installed."""
    out: dict[str, Callable[[], Any]] = {}

    def top(v: Any) -> Any:
        return v[field] if field else v

    try:
        import fastsimdjson

        out["fastsimdjson"] = lambda: [read(it) for it in top(fastsimdjson.parse(body))]
    except ImportError:
        pass
    try:
        import orjson

        out["orjson"] = lambda: [read(it) for it in top(orjson.loads(body))]
    except ImportError:
        pass
    try:
        import simdjson

        parser = simdjson.Parser()
        out["pysimdjson"] = lambda: [read(it) for it in top(parser.parse(body))]
    except ImportError:
        pass
    return out


def reads_only(body: bytes, top: str, fields: list[tuple[str, str]]) -> dict[str, Any]:
    """The reads alone, on documents parsed outside the timed work (and each
    library's parse alone). fastsimdjson's views may cache what they read."""
    prefix = f"{top}[*]." if top else "[*]."
    texts = [prefix + f for f, _ in fields]
    compiled = [qjson.Path(t) for t in texts]
    subscripts = subscriber(fields)
    d = qjson.parse(body)
    items = d.root[top] if top else d.root
    out: dict[str, Callable[[], Any]] = {
        "parse only: qjson": lambda: qjson.parse(body),
        "reads: qjson views": lambda: [subscripts(it) for it in items],
        "reads: qjson get_all": lambda: [d.get_all(t) for t in texts],
        "reads: qjson get_all(Path)": lambda: [d.get_all(p) for p in compiled],
    }
    try:
        import fastsimdjson

        f_root = fastsimdjson.parse(body)
        f_items = f_root[top] if top else f_root
        out["reads: fastsimdjson"] = lambda: [subscripts(it) for it in f_items]
        out["parse only: fastsimdjson"] = lambda: fastsimdjson.parse(body)
    except ImportError:
        pass
    return out


def measure(work: dict[str, Callable[[], Any]], rounds: int) -> dict[str, list[float]]:
    # Batch size: about 2 ms of work per sample.
    batch = {}
    for name, fn in work.items():
        fn()
        t0 = time.perf_counter()
        fn()
        batch[name] = max(1, int(2e-3 / max(time.perf_counter() - t0, 1e-7)))
    samples: dict[str, list[float]] = {name: [] for name in work}
    names = list(work)
    rng = random.Random(1)
    for _ in range(rounds):
        rng.shuffle(names)
        for name in names:
            fn, k = work[name], batch[name]
            t0 = time.perf_counter()
            for _ in range(k):
                fn()
            samples[name].append((time.perf_counter() - t0) / k)
    return samples


def report(title: str, samples: dict[str, list[float]]) -> None:
    """Median and minimum per row, and the best peer's time over the row's
    (by medians, and by minimums: on a busy machine the minimum is the
    steadier of the two)."""
    print(f"\n{title}")
    peers = [n for n in samples if "qjson" not in n and not n.startswith("parse")]
    peers = peers or list(samples)
    med_peer = min(statistics.median(samples[n]) for n in peers)
    min_peer = min(min(samples[n]) for n in peers)
    print(f"  {'work':28} {'median µs':>10} {'min µs':>9}  x best peer (median, min)")
    for name, ts in samples.items():
        med = statistics.median(ts)
        print(
            f"  {name:28} {med * 1e6:10.1f} {min(ts) * 1e6:9.1f}"
            f"  {med_peer / med:5.2f}x {min_peer / min(ts):5.2f}x"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=40)
    args = ap.parse_args()
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    print(
        f"CPU {cpu}; qjson backend {qjson.backend()}; collector {'on' if gc.isenabled() else 'off'}"
    )
    rows = [("github-100k", payloads.github_issues(), "", GITHUB_FIELDS)]
    tw_file = DATA / "twitter.json"
    if tw_file.exists():
        rows.append(("twitter.json", tw_file.read_bytes(), "statuses", TWITTER_FIELDS))
    else:
        print(f"{tw_file} not found: twitter rows skipped")
    for name, body, top, fields in rows:
        what = ", ".join(f for f, _ in fields)
        title = f"{name} ({len(body)} bytes): parse + {what} of every {top or 'item'} element"
        report(title, measure(work_for(body, top, fields), args.rounds))
        report(f"{name}: reads only", measure(reads_only(body, top, fields), args.rounds))


if __name__ == "__main__":
    main()
