"""Reads: parse + get (qjson's Doc), decode + access (qjson's lazy views) and
get_all / get_many (qjson's batch reads), against loads + dict access
(orjson, ssrjson, msgspec, json), the lazy proxies of pysimdjson,
fastsimdjson and cysimdjson, and a bytearray copy (the floor). See
workloads.py for the exact code per row."""

BENCH_OPS = ["parse_get", "decode_access", "get_all"]


def test_read(benchmark, case):
    benchmark(case)
