"""docs/benchmarks.md from benchmarks/results/*.json (never runs a benchmark).

    python benchmarks/report.py [--out docs/benchmarks.md]

Every number comes from a results file of a real run; a section whose file
is missing says so. Each DESIGN.md performance target is listed with the
measured ratio and PASS / FAIL, or "not measured" with the reason.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
OUT = ROOT / "docs" / "benchmarks.md"
IMG = ROOT / "docs" / "img"

LADDER = ["2k", "60k", "100k", "200k", "500k", "1m", "2m", "5m", "10m"]
BIG = ["100k", "200k", "500k", "1m", "2m", "5m", "10m", "interleaved"]
SMALL = ["2k", "small_request"]
PY_LIBS = ["qjson", "orjson", "pysimdjson", "msgspec", "json", "copy"]
OPS = [
    "parse_get",
    "decode_access",
    "decode_dumps",
    "edit_top",
    "edit_add",
    "edit_nested",
    "loads",
    "dumps",
    "validate",
]


def load(name: str) -> Any:
    p = RESULTS / name
    return json.loads(p.read_text()) if p.is_file() else None


def size(n: int) -> str:
    if n >= 1 << 20:
        return f"{n / (1 << 20):.1f} MiB"
    if n >= 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n} B"


def num(x: float) -> str:
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


class Targets:
    """Collects target rows: (work, target, measured, verdict)."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, str]] = []

    def check(self, work: str, target: str, cases: list[tuple[str, float]], ok, fmt="{:.2f}x"):
        """cases: (label, value); ok(value) -> bool. Lists the failing cases, else all."""
        if not cases:
            self.rows.append((work, target, "", "not measured"))
            return
        bad = [(lab, v) for lab, v in cases if not ok(v)]
        detail = ", ".join(f"{lab} {fmt.format(v)}" for lab, v in (bad or cases))
        if bad and len(bad) < len(cases):
            detail = f"fails: {detail}; {len(cases) - len(bad)} of {len(cases)} cases pass"
        self.rows.append((work, target, detail, "FAIL" if bad else "PASS"))

    def missing(self, work: str, target: str, why: str) -> None:
        self.rows.append((work, target, f"not measured: {why}", "n/a"))


def _t(rows: list[dict], key: tuple[str, str, str]) -> float | None:
    for r in rows:
        if (r["scenario"], r["op"], r["library"]) == key:
            return r["median_s"]
    return None


def python_targets(tg: Targets, res: dict | None) -> None:
    if res is None:
        for w in ("parse + read, chat >= 100 KB", "same at 2 KB", "passthrough", "edits"):
            tg.missing(w, "", "benchmarks/results/targets.json is missing")
        return
    rows = res["rows"]
    skip = {(s["scenario"], s["op"], s["library"]): s["reason"] for s in res["skipped"]}
    scen = [s for s in BIG if _t(rows, (s, "parse_get", "qjson"))]

    def ratios(op: str, peer: str, names: list[str], inverse: bool = False):
        out = []
        for s in names:
            q, p = _t(rows, (s, op, "qjson")), _t(rows, (s, op, peer))
            if q and p:
                out.append((s, q / p if inverse else p / q))
        return out

    work = "parse + read model, temperature, every messages[i].content, chat >= 100 KB"
    tg.check(work, ">= 5x orjson", ratios("parse_get", "orjson", scen), lambda v: v >= 5)
    tg.check(work, ">= 2x pysimdjson", ratios("parse_get", "pysimdjson", scen), lambda v: v >= 2)
    tg.check(
        work,
        "within 2x of a memcpy (qjson time / copy time <= 2)",
        ratios("parse_get", "copy", scen, inverse=True),
        lambda v: v <= 2,
    )
    tg.check(
        "same at 2 KB (2k rung, small_request)",
        ">= 1.5x orjson",
        ratios("parse_get", "orjson", SMALL),
        lambda v: v >= 1.5,
    )
    work = "decode + dumps unmodified (passthrough), chat >= 100 KB and github-100k"
    pt = ratios("decode_dumps", "orjson", [*BIG, "github_issues"])
    if not pt:
        why = next(
            (r for (s, op, lib), r in skip.items() if op == "decode_dumps" and lib == "qjson"),
            "no qjson decode_dumps rows",
        )
        tg.missing(work, ">= 5x orjson loads+dumps, <= 3x memcpy time", why)
    else:
        tg.check(work, ">= 5x orjson loads+dumps", pt, lambda v: v >= 5)
        tg.check(
            work,
            "<= 3x memcpy time",
            ratios("decode_dumps", "copy", [*BIG, "github_issues"], inverse=True),
            lambda v: v <= 3,
        )
    work = "decode + access through views (read-only), every size"
    acc = []
    for s in sorted({r["scenario"] for r in rows}, key=_order):
        a, g = _t(rows, (s, "decode_access", "qjson")), _t(rows, (s, "parse_get", "qjson"))
        if a and g:
            acc.append((s, a / g))
    if acc:
        tg.check(work, "within 1.5x of the Doc path-getter time", acc, lambda v: v <= 1.5)
    else:
        tg.missing(work, "within 1.5x of the Doc path-getter time", "no decode_access rows")
    work = "decode + modify a field + dumps, every size"
    cases = []
    for s in sorted({r["scenario"] for r in rows}, key=_order):
        base = _t(rows, (s, "decode_dumps", "qjson"))
        for e in ("edit_top", "edit_add", "edit_nested"):
            t = _t(rows, (s, e, "qjson"))
            if base and t:
                cases.append((f"{s} {e}", base / t))
    if not cases:
        why = next(
            (r for (s, op, lib), r in skip.items() if op.startswith("edit") and lib == "qjson"),
            "no qjson edit rows",
        )
        tg.missing(work, ">= 70% of the passthrough rate", why)
    else:
        tg.check(work, ">= 70% of the passthrough rate", cases, lambda v: v >= 0.7, "{:.0%}")


def _order(s: str) -> int:
    order = [*LADDER, "small_request", "github_issues", "interleaved"]
    return order.index(s) if s in order else len(order)


def lua_targets(tg: Targets, res: dict | None) -> None:
    work = "Lua (lupa LuaJIT) parse + access vs lua-cjson decode + access"
    if res is None:
        tg.missing(work, "", "benchmarks/results/lua.json is missing")
        return
    if not res.get("cjson"):
        tg.missing(work, "", "lua-cjson was not installed for the run")
        return
    ops = {(r["scenario"], r["workload"], r["library"]): r["ops_per_s"] for r in res["rows"]}

    def cases(names):
        return [
            (s, ops[s, "access", "qjson"] / ops[s, "access", "cjson"])
            for s in names
            if (s, "access", "cjson") in ops and (s, "access", "qjson") in ops
        ]

    tg.check(
        work, ">= 40x at 100 KB - 1 MB", cases(["100k", "200k", "500k", "1m"]), lambda v: v >= 40
    )
    tg.check(work, ">= 2x at 2 KB (2k rung, small_request)", cases(SMALL), lambda v: v >= 2)
    tg.check(work, ">= 4x on github-100k", cases(["github_issues"]), lambda v: v >= 4)
    long_lived_target(tg, res)


def long_lived_target(tg: Targets, res: dict) -> None:
    """One long-lived LuaJIT state cycling every payload: >= 90% of a fresh
    state's rate per payload (rows `long_lived`; lua_bench.py)."""
    work = "one long-lived LuaJIT state cycling every rung (parse + access)"
    ops = {
        (r["scenario"], r["library"]): r["ops_per_s"]
        for r in res["rows"]
        if r["workload"] == "long_lived"
    }
    cases = [
        (s, ops[s, "qjson long-lived state"] / ops[s, "qjson fresh state"])
        for s in sorted({s for s, _ in ops}, key=_order)
        if (s, "qjson fresh state") in ops and (s, "qjson long-lived state") in ops
    ]
    if not cases:
        tg.missing(work, ">= 90% of the fresh-state rate", "no long-lived rows in lua.json")
        return
    tg.check(work, ">= 90% of the fresh-state rate", cases, lambda v: v >= 0.9, "{:.0%}")


def corpus_targets(tg: Targets, res: dict | None) -> None:
    items = [
        ("eager loads, jsonexamples aggregate", "decode", "orjson", 1.0),
        ("dumps of plain objects, jsonexamples aggregate", "encode", "orjson", 1.0),
        ("validate, jsonexamples aggregate", "validate", "pysimdjson", 1.5),
    ]
    for work, op, peer, goal in items:
        tgt = f">= {goal:g}x {peer}" + (" parse" if op == "validate" else "")
        if res is None:
            tg.missing(work, tgt, "benchmarks/results/corpus.json is missing (no corpus data?)")
            continue
        cases = []
        for group in ("large", "small"):
            a = res["aggregate_mb_s"].get(group, {})
            q, p = a.get(f"{op}/qjson"), a.get(f"{op}/{peer}")
            if q and p:
                cases.append((f"{group} files", q / p))
        tg.check(work, tgt, cases, lambda v, g=goal: v >= g)


def memory_targets(tg: Targets, res: dict | None) -> None:
    work = "memory retained by a Doc (index only)"
    if res is None:
        tg.missing(work, "", "benchmarks/results/memory.json is missing")
        return
    ix = res["qjson_index"]
    dense = [(s, v["after_reads"] / v["bytes"]) for s, v in ix.items() if s == "github_issues"]
    dense += [(f, v["after_parse"] / v["bytes"]) for f, v in res.get("corpus_index", {}).items()]
    tg.check(
        work,
        "<= 1x input on dense JSON (github_issues, jsonexamples)",
        dense,
        lambda v: v <= 1.0,
        "{:.2f}x",
    )
    ladder = [(s, v["after_reads"] / v["bytes"]) for s, v in ix.items() if s in LADDER]
    tg.check(work, "<= 5% of input on the chat ladder", ladder, lambda v: v <= 0.05, "{:.1%}")


# --------------------------------------------------------------------------- sections


def machine_section(m: dict | None, mode: str) -> list[str]:
    if m is None:
        return ["Machine description missing (benchmarks/results/machine.json)."]
    v = m["versions"]
    return [
        "| | |",
        "|---|---|",
        f"| CPU | {m['cpu']} ({m['cpus']} logical CPUs, {m['machine']}) |",
        f"| ISA flags | {' '.join(m['isa_flags']) or '-'} |",
        f"| qjson scan backend | `{m['qjson_backend']}`"
        + (
            f" (forced by QJSON_BACKEND={m['qjson_backend_forced']})"
            if m.get("qjson_backend_forced")
            else ""
        )
        + " |",
        f"| Python | {m['python']} |",
        f"| LuaJIT (lupa) | {m['luajit']} |",
        "| versions | " + ", ".join(f"{k} {v[k]}" for k in v) + " |",
        f"| OS | {m['os']} |",
        f"| run | {m['date']}, git {m['git']}, mode `{mode}` |",
    ]


def pytest_section(res: dict | None, skipped: list | None) -> list[str]:
    if res is None:
        return ["No pytest-benchmark results (benchmarks/results/pytest.json)."]
    cells: dict[tuple[str, str, str], dict] = {}
    sizes: dict[str, int] = {}
    for b in res["benchmarks"]:
        e = b["extra_info"]
        cells[e["scenario"], e["op"], e["library"]] = b["stats"]
        sizes[e["scenario"]] = e["bytes"]
    scen = sorted(sizes, key=_order)
    out = [
        "Median time per operation in µs, from `pytest benchmarks` (pytest-benchmark: "
        "rows of one scenario run back to back, warm-up on, GC off during timing). "
        "In brackets: orjson's time / this library's time. Throughput MB/s = payload "
        "bytes / median time. `-` = no such operation for that library.",
        "",
    ]
    for op in OPS:
        libs = [lib for lib in PY_LIBS if any((s, op, lib) in cells for s in scen)]
        if not libs:
            continue
        out += [f"### {op}", "", "| scenario | bytes | " + " | ".join(libs) + " | qjson MB/s |"]
        out.append("|---|---:|" + "---:|" * (len(libs) + 1))
        for s in scen:
            if not any((s, op, lib) in cells for lib in PY_LIBS):
                continue
            ref = cells.get((s, op, "orjson"))
            row = []
            for lib in libs:
                st = cells.get((s, op, lib))
                if st is None:
                    row.append("-")
                    continue
                rel = f" ({ref['median'] / st['median']:.2f}x)" if ref and lib != "orjson" else ""
                row.append(f"{num(st['median'] * 1e6)}{rel}")
            q = cells.get((s, op, "qjson"))
            mbs = f"{sizes[s] / q['median'] / 1e6:,.0f}" if q else "-"
            out.append(f"| {s} | {sizes[s]:,} | " + " | ".join(row) + f" | {mbs} |")
        out.append("")
    if skipped:
        reasons: dict[str, list[str]] = {}
        for s in skipped:
            reasons.setdefault(s["reason"], []).append(s["row"])
        out += ["Skipped rows:", ""]
        for r, rows in reasons.items():
            ex = ", ".join(rows[:4]) + (f", ... ({len(rows)} rows)" if len(rows) > 4 else "")
            out.append(f"- {r}: {ex}")
        out.append("")
    return out


def targets_section(res: dict | None) -> list[str]:
    if res is None:
        return ["No interleaved results (benchmarks/results/targets.json)."]
    out = [
        f"`python benchmarks/targets.py`: every cell of a scenario calibrated to "
        f"~{res['round_s'] * 1000:.0f} ms per round, {res['rounds']} rounds, cells "
        "interleaved with a rotating start; median µs per operation. Ratio = orjson's "
        "time / qjson's time for the same operation (copy: qjson's time / copy's).",
        "",
        "| scenario | bytes | op | qjson | orjson | pysimdjson | copy | x orjson | qjson / copy |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    rows = res["rows"]
    keys = sorted(
        {(r["scenario"], r["bytes"], r["op"]) for r in rows},
        key=lambda k: (_order(k[0]), OPS.index(k[2])),
    )
    for s, nbytes, op in keys:
        t = {lib: _t(rows, (s, op, lib)) for lib in ("qjson", "orjson", "pysimdjson", "copy")}
        cells = [num(t[lib] * 1e6) if t[lib] else "-" for lib in t]
        xo = f"{t['orjson'] / t['qjson']:.2f}x" if t["qjson"] and t["orjson"] else "-"
        xc = f"{t['qjson'] / t['copy']:.2f}" if t["qjson"] and t["copy"] else "-"
        out.append(f"| {s} | {nbytes:,} | {op} | " + " | ".join(cells) + f" | {xo} | {xc} |")
    if res["skipped"]:
        reasons: dict[str, list[str]] = {}
        for s in res["skipped"]:
            reasons.setdefault(s["reason"], []).append(f"{s['scenario']} {s['op']} {s['library']}")
        out += ["", "Skipped cells:", ""]
        for r, cs in reasons.items():
            out.append(
                f"- {r}: {', '.join(cs[:4])}" + (f", ... ({len(cs)})" if len(cs) > 4 else "")
            )
    return out


def lua_section(res: dict | None) -> list[str]:
    if res is None:
        return ["No Lua results (benchmarks/results/lua.json)."]
    ops = {(r["scenario"], r["workload"], r["library"]): r for r in res["rows"]}
    scen = sorted(
        {r["scenario"] for r in res["rows"] if r["bytes"] > 0 and r["scenario"] != "fleece"},
        key=_order,
    )
    out = [
        f"`python benchmarks/lua_bench.py` inside lupa's {res['luajit']}: median ops/s of "
        f"{res['rounds']} rounds after warm-up, qjson and cjson alternating. KiB columns: "
        '`collectgarbage("count")` growth during one call with the collector stopped '
        "(alloc) and what its result holds after a full collection (held); qjson's index "
        "is Rust memory and not in them.",
        "",
    ]
    if not res.get("cjson"):
        out += ["**lua-cjson was not installed: every cjson row is skipped.**", ""]
    for wl, title in (
        ("access", "parse + access (qjson Doc getters / cjson.decode + table reads)"),
        ("proxy_access", "qjson.decode proxy + table reads"),
        ("passthrough", "decode + encode unmodified"),
        ("edit_top", "decode, set model + temperature, encode"),
        ("edit_add", "decode, add a top-level field, encode"),
        ("edit_nested", "decode, replace messages[1].content, encode"),
    ):
        rows = [s for s in scen if (s, wl, "qjson") in ops]
        if not rows:
            continue
        out += [
            f"### {title}",
            "",
            "| scenario | bytes | qjson ops/s | cjson ops/s | ratio "
            "| qjson alloc / held KiB | cjson alloc / held KiB |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for s in rows:
            q, c = ops.get((s, wl, "qjson")), ops.get((s, wl, "cjson"))
            r = f"{q['ops_per_s'] / c['ops_per_s']:.1f}x" if q and c else "-"
            qm = f"{q['alloc_kib']:.0f} / {q['retained_kib']:.0f}"
            cm = f"{c['alloc_kib']:.0f} / {c['retained_kib']:.0f}" if c else "skipped"
            cops = num(c["ops_per_s"]) if c else "skipped"
            out.append(
                f"| {s} | {q['bytes']:,} | {num(q['ops_per_s'])} | {cops} | {r} | {qm} | {cm} |"
            )
        out.append("")
    out += long_lived_section(res)
    other = [
        r
        for r in res["rows"]
        if r["scenario"] in ("small-object", "fleece") and r["library"] == "qjson"
    ]
    if other:
        out += [
            "### encode / decode of small Lua tables",
            "",
            "| case | qjson ops/s | cjson ops/s | ratio |",
            "|---|---:|---:|---:|",
        ]
        for q in other:
            c = ops.get((q["scenario"], q["workload"], "cjson"))
            r = f"{q['ops_per_s'] / c['ops_per_s']:.2f}x" if c else "-"
            out.append(
                f"| {q['scenario']} {q['workload']} | {num(q['ops_per_s'])} "
                f"| {num(c['ops_per_s']) if c else 'skipped'} | {r} |"
            )
        out.append("")
    return out


def long_lived_section(res: dict) -> list[str]:
    """Tables of the long-lived-state rows (lua_bench.py's last section)."""
    out: list[str] = []
    ops = {
        (r["workload"], r["scenario"], r["library"]): r
        for r in res["rows"]
        if r["workload"].startswith("long_lived")
    }
    for wl in sorted({w for w, _, _ in ops}):
        live = next(r["live_tables"] for (w, _, _), r in ops.items() if w == wl)
        held = f", the long-lived state holding {live:,} live tables" if live else ""
        out += [
            f"### one long-lived state cycling every payload vs a fresh state per payload{held}",
            "",
            "| scenario | bytes | fresh ops/s | long-lived ops/s | long-lived / fresh |",
            "|---|---:|---:|---:|---:|",
        ]
        for s in sorted({s for w, s, _ in ops if w == wl}, key=_order):
            f = ops.get((wl, s, "qjson fresh state"))
            lg = ops.get((wl, s, "qjson long-lived state"))
            if f and lg:
                out.append(
                    f"| {s} | {f['bytes']:,} | {num(f['ops_per_s'])} | {num(lg['ops_per_s'])} "
                    f"| {lg['ops_per_s'] / f['ops_per_s']:.0%} |"
                )
        out.append("")
    return out


def memory_section(res: dict | None) -> list[str]:
    if res is None:
        return ["No memory results (benchmarks/results/memory.json)."]
    out = [
        "`python benchmarks/memory.py`: one call per row after a warm-up. tracemalloc "
        "(Python allocations) peak during the call and retained while its result is held; "
        "RSS peak growth (`/proc/self/clear_refs`, after `malloc_trim`), a lower bound. "
        "qjson's index is Rust memory: it shows in the index columns and in RSS, not in "
        "tracemalloc. KiB.",
        "",
        "### qjson index size",
        "",
        "| scenario | bytes | index after parse | after the reads | % of input |",
        "|---|---:|---:|---:|---:|",
    ]
    for s, v in sorted(res["qjson_index"].items(), key=lambda kv: _order(kv[0])):
        out.append(
            f"| {s} | {v['bytes']:,} | {v['after_parse']:,} | {v['after_reads']:,} | "
            f"{v['after_reads'] / v['bytes']:.1%} |"
        )
    for f, v in res.get("corpus_index", {}).items():
        out.append(
            f"| jsonexamples/{f} | {v['bytes']:,} | {v['after_parse']:,} | "
            f"| {v['after_parse'] / v['bytes']:.1%} |"
        )
    rows = res["rows"]
    out += ["", "### per operation: tracemalloc peak / retained, RSS peak (KiB)", ""]
    for op in ["parse", *OPS]:
        rs = [r for r in rows if r["op"] == op]
        if not rs:
            continue
        libs = [lib for lib in PY_LIBS if any(r["library"] == lib for r in rs)]
        out += [
            f"**{op}**",
            "",
            "| scenario | bytes | " + " | ".join(libs) + " |",
            "|---|---:|" + "---:|" * len(libs),
        ]
        for s in sorted({r["scenario"] for r in rs}, key=_order):
            by = {r["library"]: r for r in rs if r["scenario"] == s}
            cells = []
            for lib in libs:
                r = by.get(lib)
                if r is None:
                    cells.append("-")
                    continue
                rss = "?" if r["rss_peak"] is None else f"{r['rss_peak'] / 1024:,.0f}"
                cells.append(
                    f"{r['traced_peak'] / 1024:,.0f} / {r['traced_retained'] / 1024:,.0f} / {rss}"
                )
            nbytes = next(iter(by.values()))["bytes"]
            out.append(f"| {s} | {nbytes:,} | " + " | ".join(cells) + " |")
        out.append("")
    return out


def corpus_section(res: dict | None) -> list[str]:
    if res is None:
        return [
            "No corpus results (benchmarks/results/corpus.json; needs ../shared/data/jsonexamples)."
        ]
    libs = ["json", "orjson", "pysimdjson", "msgspec", "qjson"]
    out = [
        f"Aggregates of `python benchmarks/corpus.py` (median of {res['rounds']} interleaved "
        "rounds; total bytes / total time per group). Per-file tables and peak memory: "
        "[corpus.md](corpus.md).",
        "",
        "| group | op | " + " | ".join(libs) + " | qjson vs orjson | qjson vs pysimdjson |",
        "|---|---|" + "---:|" * (len(libs) + 2),
    ]
    for group in ("large", "small"):
        a = res["aggregate_mb_s"].get(group, {})
        for op in ("decode", "encode", "validate"):
            cells = [f"{a[f'{op}/{lib}']:,.0f}" if f"{op}/{lib}" in a else "" for lib in libs]
            q, o, s = a.get(f"{op}/qjson"), a.get(f"{op}/orjson"), a.get(f"{op}/pysimdjson")
            out.append(
                f"| {group} | {op} | "
                + " | ".join(cells)
                + f" | {f'{q / o:.2f}x' if q and o else ''}"
                + f" | {f'{q / s:.2f}x' if q and s else ''} |"
            )
    return out


def build(mode: str) -> str:
    machine = load("machine.json")
    tg = Targets()
    python_targets(tg, load("targets.json"))
    lua = load("lua.json")
    lua_targets(tg, lua)
    corpus = load("corpus.json")
    corpus_targets(tg, corpus)
    mem = load("memory.json")
    memory_targets(tg, mem)
    npass = sum(1 for r in tg.rows if r[3] == "PASS")
    nfail = sum(1 for r in tg.rows if r[3] == "FAIL")
    nna = len(tg.rows) - npass - nfail
    out = [
        "# Benchmarks",
        "",
        "<!-- Generated by benchmarks/report.py from benchmarks/results/*.json; do not edit. -->",
        "",
        "Generated by `nox -s bench` (`python benchmarks/run.py`) from the result files in "
        "`benchmarks/results/`. Every number below comes from that run on this machine; rows "
        "that could not run are listed as skipped with the reason. The machine is shared and "
        "noisy: compare ratios within this run, not absolute times across runs.",
        "",
        "## Machine",
        "",
        *machine_section(machine, mode),
        "",
        "## DESIGN.md targets",
        "",
        f"{npass} PASS, {nfail} FAIL, {nna} not measured. The worst case decides; failing "
        "cases are listed.",
        "",
        "| work | target | measured | verdict |",
        "|---|---|---|---|",
        *[f"| {w} | {t} | {m} | **{v}** |" for w, t, m, v in tg.rows],
        "",
        "## Side by side (interleaved): the runs the targets are judged on",
        "",
        *targets_section(load("targets.json")),
        "",
        "## Python suites (pytest-benchmark)",
        "",
        *pytest_section(load("pytest.json"), load("pytest-skipped.json")),
        "## Lua (lupa LuaJIT): qjson vs lua-cjson",
        "",
        *lua_section(lua),
        "## Memory",
        "",
        *memory_section(mem),
        "## Corpus (jsonexamples)",
        "",
        *corpus_section(corpus),
        "",
    ]
    pngs = sorted(IMG.glob("*.png")) if IMG.is_dir() else []
    if pngs:
        out += ["## Plots (benchmarks/ladder.ipynb)", ""]
        out += [f"![{p.stem}](img/{p.name})" for p in pngs]
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--mode", default=None, help="quick or full (default: from the results)")
    args = ap.parse_args(argv)
    mode = args.mode or (load("targets.json") or {}).get("mode", "unknown")
    text = build(mode)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(f"wrote {args.out}")
    summary = text.split("## DESIGN.md targets", 1)[1].split("## Side by side", 1)[0]
    print("DESIGN.md targets" + summary)


if __name__ == "__main__":
    main()
