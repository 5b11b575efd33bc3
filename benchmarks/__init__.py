"""qjson benchmarks: payloads, workloads, pytest-benchmark suites, Lua, corpus, memory, report."""
