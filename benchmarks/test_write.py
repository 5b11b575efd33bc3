"""Writes: decode + dumps unmodified (qjson: view passthrough) and the three
edits (set model and temperature / add a top-level field / replace
messages[0].content) followed by dumps. See workloads.py."""

BENCH_OPS = ["decode_dumps", "edit_top", "edit_add", "edit_nested"]


def test_write(benchmark, case):
    benchmark(case)
