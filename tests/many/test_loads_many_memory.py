"""loads_many keeps nothing per call: what tracemalloc sees grow over
repeated calls is the key cache (src/python/loads/key_cache.rs: at most
2048 key and 1024 short value strings, replaced as the lines' strings
change), which stops growing once it is full."""

from __future__ import annotations

import gc
import json
import random
import tracemalloc

import qjson


def test_repeated_loads_many_does_not_grow():
    rng = random.Random(5)
    lines = [
        json.dumps(
            {
                "id": i,
                "kind": rng.choice(["a", "b", "c", "user", "assistant"]),
                "tag": f"t{rng.randrange(5000)}",
                f"key{rng.randrange(3000)}": [rng.random(), None, True],
                "text": "caf\u00e9 " * rng.randrange(5),
            }
        ).encode()
        for i in range(400)
    ]
    data = b"\n".join(lines)
    want = [json.loads(x) for x in lines]
    tracemalloc.start()
    try:
        # Fill the cache (traced from the start), then measure.
        for _ in range(30):
            assert qjson.loads_many(data) == want
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(300):
            qjson.loads_many(data)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # One object kept per call would be over 9 KB here.
    assert grown < 3000, grown
