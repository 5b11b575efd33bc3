"""Eager operations: loads (bytes -> dict/list), dumps (plain objects ->
JSON) and validate (qjson.validate vs pysimdjson's tape-only parse)."""

BENCH_OPS = ["loads", "dumps", "validate"]


def test_eager(benchmark, case):
    benchmark(case)
