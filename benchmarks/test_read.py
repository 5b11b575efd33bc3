"""Reads: parse + get (qjson's Doc) and decode + access (qjson's lazy views),
against loads + dict access (orjson, msgspec, json), pysimdjson's proxies and
a bytearray copy (the floor). See workloads.py for the exact code per row."""

BENCH_OPS = ["parse_get", "decode_access"]


def test_read(benchmark, case):
    benchmark(case)
