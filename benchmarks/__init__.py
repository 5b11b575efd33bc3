"""qjson benchmarks: payload generators (payloads.py) and the ladder demo (ladder_demo.py)."""
