"""The training workload of the profile-guided (PGO) build: a user's process, in short.

    python scripts/pgo_train.py                 # Python API + Lua (through qjson.luajit)
    python scripts/pgo_train.py --lua LIB       # Lua only, on the C-ABI library LIB

The shipped build is compiled twice (noxfile.py, `_pgo_build`): first
instrumented (``-Cprofile-generate``), then this script runs on that build and
the counts it leaves are merged (``llvm-profdata merge``) into the profile the
final build is optimised with (``-Cprofile-use``): which branches are taken,
which functions are hot (inlined, laid out together) and which are cold
(moved out of the hot code's way).

So this is what the profile knows about, and it should look like what users
do, in roughly the mix they do it, on every size: not the benchmark's timed
rows replayed (a build tuned to the rows would flatter them and nothing
else). It reads no benchmark result. Each round does, on every payload:

- lazy reads: ``parse`` + path getters, cursors, ``get_all`` / ``get_many``
  with string and compiled ``Path`` paths, ``raw`` / ``type`` / ``len``;
  ``decode`` + view indexing, iteration, ``materialize``;
- edits on views (set, add, delete, list edits), ``dumps`` of edited and
  untouched views, ``patch`` / ``merge_patch`` / ``incr``;
- eager ``loads`` / ``dumps`` (also ``indent`` / ``sort_keys``) and ``validate``,
  and, by volume, ``loads`` / ``dumps`` over every corpus document (dense
  REST-like, numeric, ...: as much weight as the ladder's long strings);
- NDJSON: ``parse_many`` / ``loads_many`` / ``dumps_many`` / ``open_many``;
- error paths: malformed JSON (every kind of syntax error), missing and
  mistyped paths (``PathError``), failing patches (``PatchError``);
- the same through LuaJIT: decode + reads, set, encode, patch, merge_patch,
  parse_many (the Python extension exports the C ABI that ``qjson.luajit``
  binds to, so its profile covers the Lua edge too; ``--lua LIB`` trains the
  PyO3-free C-ABI library alone, without importing the extension).

The payloads: the chat ladder of benchmarks/payloads.py (2 KB to 10 MB;
the large rungs are few and read lazily, as users do), a small dense
request, a GitHub-like issues array, and the documents of ../shared/data
(jsonexamples, the JSONTestSuite's files, NDJSON) when that directory is
present; generated stand-ins otherwise (dense REST-like and numeric
documents). Under a minute on one core of an instrumented build.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
sys.path.insert(0, str(ROOT / "benchmarks"))

import payloads  # type: ignore[import-not-found]  # noqa: E402

# ------------------------------------------------------------------ payloads


def _corpus() -> list[bytes]:
    """Real-world documents (../shared/data), or generated stand-ins."""
    docs: list[bytes] = []
    ex = DATA / "jsonexamples"
    if ex.is_dir():
        for p in sorted(ex.glob("*.json")):
            if p.stat().st_size <= 3 * payloads.MiB:
                docs.append(p.read_bytes())
        docs.extend(p.read_bytes() for p in sorted((ex / "small").glob("*.json")))
    rw = DATA / "realworld"
    if rw.is_dir():
        docs.extend(p.read_bytes() for p in sorted(rw.rglob("*.json"))[:40])
    if not docs:
        rng = random.Random(5)
        for n in (50, 500, 5000):
            rows = [
                {
                    "id": rng.getrandbits(40),
                    "name": "".join(rng.choice('abcdéfgh \\"\n') for _ in range(12)),
                    "score": rng.random() * 1e6,
                    "tags": [rng.choice(["a", "b", "c"]) for _ in range(rng.randrange(4))],
                    "ok": rng.random() < 0.5,
                    "none": None,
                    "nested": {"x": [1, 2.5, -3e-7, {"y": "z"}], "big": 2**70},
                }
                for _ in range(n)
            ]
            docs.append(json.dumps({"rows": rows, "count": n}).encode())
        docs.extend(_rest_like(rng, n) for n in (20, 200, 1000))
        docs.extend(_numeric(rng, n) for n in (100, 2000, 20000))
    return docs


def _rest_like(rng: random.Random, n: int) -> bytes:
    """A dense REST response (twitter.json's shape): many small objects, short
    keys and strings, some non-ASCII and escaped text, ids, nulls, booleans."""
    words = ["hello", "world", "café", "日本語", "ok\\n", "🙂", 'a"b', "data", "x/y"]

    def user(i: int) -> dict:
        return {
            "id": rng.getrandbits(32),
            "id_str": str(i),
            "name": " ".join(rng.choice(words) for _ in range(2)),
            "screen_name": f"user_{i}",
            "verified": rng.random() < 0.1,
            "followers_count": rng.randrange(10**6),
            "url": None,
            "profile": {"color": "C0DEED", "lang": rng.choice(["en", "ja", "fr"])},
        }

    statuses = [
        {
            "created_at": "Sun Aug 31 00:29:15 +0000 2014",
            "id": rng.getrandbits(60),
            "text": " ".join(rng.choice(words) for _ in range(rng.randrange(3, 20))),
            "truncated": False,
            "entities": {
                "hashtags": [],
                "urls": [],
                "user_mentions": [{"id": i, "indices": [3, 12]}],
            },
            "in_reply_to_status_id": None,
            "user": user(i),
            "retweet_count": rng.randrange(100),
            "favorited": False,
            "lang": "ja",
        }
        for i in range(n)
    ]
    return json.dumps({"statuses": statuses, "search_metadata": {"count": n}}).encode()


def _numeric(rng: random.Random, n: int) -> bytes:
    """Number-heavy documents (canada.json / mesh.json's shape): arrays of floats and ints."""
    coords = [
        [round(rng.uniform(-180, 180), 12), round(rng.uniform(-90, 90), 12)] for _ in range(n)
    ]
    mesh = {"vertices": [rng.random() * 100 for _ in range(n)], "indices": list(range(n))}
    return json.dumps(
        {
            "type": "FeatureCollection",
            "features": [{"geometry": {"coordinates": [coords]}}],
            "mesh": mesh,
        }
    ).encode()


def _bad_inputs() -> list[bytes]:
    """Malformed JSON: the JSONTestSuite's n_ files, or a hand-made set."""
    suite = DATA / "JSONTestSuite" / "test_parsing"
    if suite.is_dir():
        return [p.read_bytes() for p in sorted(suite.glob("n_*.json"))]
    return [
        b"",
        b"[1,",
        b'{"a" 1}',
        b'{"a":1,}',
        b"[1 2]",
        b'"abc',
        b'"\\x"',
        b'"\\ud800"',
        b"01",
        b"1.",
        b"-",
        b"tru",
        b"nul",
        b"[" * 2000,
        b'{"a":1}x',
        b"\xff",
        b'"\x01"',
        b"[1e]",
    ]


def _ndjson(n: int, seed: int) -> bytes:
    amazon = DATA / "jsonexamples" / "amazon_cellphones.ndjson"
    if amazon.is_file():
        return amazon.read_bytes()
    rng = random.Random(seed)
    lines = []
    for i in range(n):
        body = {
            "model": "gpt-4o-mini",
            "messages": [{"role": "user", "content": "x" * rng.randrange(200)}],
        }
        lines.append(json.dumps({"custom_id": f"req-{i}", "method": "POST", "body": body}))
    return ("\n".join(lines) + "\n").encode()


def _batch(n: int) -> bytes:
    """A batch-API file: one small chat request per line."""
    small = json.loads(payloads.small_request())
    lines = [
        json.dumps(
            {"custom_id": f"r{i}", "method": "POST", "url": "/v1/chat", "body": small},
            separators=(",", ":"),
        )
        for i in range(n)
    ]
    return ("\n".join(lines) + "\n").encode()


# ------------------------------------------------------------------ Python


def _train_chat(qjson, b: bytes, paths) -> None:
    """A chat request: the gateway's reads and edits."""
    doc = qjson.parse(b)
    doc.get_str("model")
    doc.get("temperature", None)
    n = doc.len("messages")
    for i in range(n):
        doc.get(f"messages[{i}].content")
        doc.type(f"messages[{i}].content")
    doc.get_many(paths["scalars"], None)
    doc.get_all(paths["contents"])
    doc.get_all("messages[*].role")
    doc.raw("messages")
    c = doc.open("messages[0]")
    c.get_str("role")
    c.get("content")
    lazy = qjson.parse(b, lazy=True)
    lazy.get("model")
    lazy.get_all("messages[*].content")

    v = qjson.decode(b)
    v["model"], v.get("temperature"), "stream" in v
    for m in v["messages"]:
        m["role"], m.get("content")
    qjson.dumps(v)  # passthrough
    # A nested replacement alone (the flat splice; the passthrough above
    # no longer walks the cached views: the document was never edited).
    w = qjson.decode(b)
    w["messages"][0]["content"] = "Be brief."
    qjson.dumps(w)
    v["model"] = "gpt-4o-mini"
    v["temperature"] = 0.25
    v["metadata"] = {"tenant": "acme", "tags": ["a", "b"]}
    msgs = v["messages"]
    msgs.append({"role": "assistant", "content": "ok"})
    msgs[0]["content"] = "Be brief."
    if "stream" in v:
        del v["stream"]
    qjson.dumps(v)

    v = qjson.decode(b)
    qjson.patch(
        v,
        [
            {"op": "replace", "path": "/model", "value": "m"},
            {"op": "add", "path": "/messages/0", "value": {"role": "system", "content": "hi"}},
            {"op": "test", "path": "/model", "value": "m"},
            {"op": "copy", "from": "/model", "path": "/model2"},
            {"op": "move", "from": "/model2", "path": "/model3"},
            {"op": "remove", "path": "/model3"},
        ],
    )
    qjson.dumps(v)
    w = qjson.merge_patch(
        qjson.decode(b), {"metadata": {"t": 1}, "logprobs": None, "temperature": 0.2}
    )
    qjson.dumps(w)
    qjson.merge_patch(qjson.decode(b), b'{"model": "x", "n": 2}')
    w = qjson.decode(b)
    w["counter"] = 1
    qjson.incr(w, "counter", 2)
    qjson.mul(w, "temperature", 2) if isinstance(w.get("temperature"), (int, float)) else None


def _train_doc(qjson, b: bytes) -> None:
    """Any document: generic walks, eager and lazy, edits, dumps."""
    qjson.validate(b)
    obj = qjson.loads(b)
    qjson.dumps(obj)
    qjson.dumps(obj, sort_keys=True)
    qjson.dumps(obj, indent=2)
    doc = qjson.parse(b)
    t = doc.type()
    if t == "array":
        n = doc.len()
        for i in range(0, n, max(1, n // 64)):
            c = doc.open(f"[{i}]")
            c.type()
            c.raw()
            if c.type() == "object":
                c.get("id", None)
        doc.get_all("[*]")
    elif t == "object":
        v = doc.root
        for k in list(v)[:64]:
            x = v[k]
            doc.type(qjson_key(k))
            if hasattr(x, "raw"):
                len(x)
        doc.get_many([qjson_key(k) for k in list(v)[:8]], None)
    view = qjson.decode(b)
    qjson.materialize(view)
    qjson.dumps(view)
    if isinstance(obj, dict) and obj:
        view = qjson.decode(b)
        k = next(iter(obj))
        view[k] = [1, "two", 3.0, None, True, {"x": k}]
        view["added"] = {"nested": list(range(10))}
        qjson.dumps(view)
    elif isinstance(obj, list) and obj:
        view = qjson.decode(b)
        view.append({"x": 1})
        view[0] = "first"
        view.insert(1, 2.5)
        del view[-1]
        qjson.dumps(view)


def _train_eager(qjson, corpus: list[bytes]) -> None:
    """Eager loads / dumps over the corpus, by volume: each document about
    4 MB's worth (small ones more often; with ../shared/data, ~110 MB against
    the chat ladder's 19 MB of long strings in `_train_doc`). Without this the
    profile lays ``loads`` out for long-string documents only (loads twitter:
    I1 misses 761 -> 2,062 per op); with 1 MB per document it still did (3,220)."""
    for b in corpus:
        for _ in range(max(2, min(200, EAGER_BYTES // max(1, len(b))))):
            obj = qjson.loads(b)
            qjson.dumps(obj)


EAGER_BYTES = 4 * 1024 * 1024


def qjson_key(k: str) -> str:
    """A path for top-level key k: a name, or a JSON Pointer when it is not one."""
    return k if k.isidentifier() else "/" + k.replace("~", "~0").replace("/", "~1")


def _train_errors(qjson, bad: list[bytes], b: bytes) -> None:
    for x in bad:
        for f in (qjson.loads, qjson.validate, qjson.parse, qjson.decode):
            try:
                f(x)
            except (qjson.JSONDecodeError, ValueError, RecursionError):
                pass
    doc = qjson.parse(b)
    for path, getter in (
        ("nope.nope", doc.get_str),
        ("model", doc.get_int),
        ("messages[999]", doc.get),
        ("messages[", doc.get),
        ("messages[0].role.x", doc.get_float),
    ):
        try:
            getter(path)
        except (qjson.PathError, KeyError, TypeError, ValueError, IndexError):
            pass
    try:
        qjson.patch(qjson.decode(b), [{"op": "remove", "path": "/nope/nope"}])
    except qjson.PatchError:
        pass
    try:
        qjson.patch(qjson.decode(b), [{"op": "test", "path": "/model", "value": 0}])
    except qjson.PatchError:
        pass
    try:
        qjson.dumps({"x": object()})
    except (qjson.JSONEncodeError, TypeError):
        pass


def _train_many(qjson, nd: bytes, batch: bytes) -> None:
    for d in qjson.parse_many(batch):
        d.get_str("custom_id")
        d.get("body.model")
    for d in qjson.parse_many(nd, lazy=True):
        d.type()
    rows = qjson.loads_many(nd)
    qjson.dumps_many(rows[:500])
    for d in qjson.open_many(io.BytesIO(batch), chunk_size=64 * 1024):
        d.get("body.messages[0].content")
    bad = batch[:2000] + b"{oops\n" + batch[2000:4000]
    it = qjson.parse_many(bad, errors="skip")
    for _ in it:
        pass
    qjson.loads_many(bad, errors="skip")
    try:
        qjson.loads_many(bad)
    except qjson.JSONDecodeError:
        pass


def train_python(seconds_hint: float) -> None:
    import qjson

    t0 = time.perf_counter()
    ladder = dict(payloads.ladder())
    small = payloads.small_request()
    github = payloads.github_issues()
    corpus = _corpus()
    bad = _bad_inputs()
    nd = _ndjson(3000, 9)
    batch = _batch(2000)
    paths = {
        "scalars": [qjson.Path("model"), qjson.Path("temperature")],
        "contents": qjson.Path("messages[*].content"),
    }
    gh_paths = [qjson.Path(p) for p in ("[*].id", "[*].title", "[*].user.login")]
    # Small payloads dominate users' calls: many rounds of them, few of the big rungs.
    rounds = {
        "2k": 300,
        "60k": 40,
        "100k": 30,
        "200k": 15,
        "500k": 6,
        "1m": 4,
        "2m": 2,
        "5m": 1,
        "10m": 1,
    }
    for name, b in ladder.items():
        for _ in range(rounds[name]):
            _train_chat(qjson, b, paths)
        _train_doc(qjson, b)
    for _ in range(400):
        _train_chat(qjson, small, paths)
    for _ in range(20):
        _train_doc(qjson, small)
        doc = qjson.parse(github)
        [doc.get_all(p) for p in gh_paths]
        for i in range(doc.len()):
            c = doc.open(f"[{i}]")
            c.get_int("id"), c.get_str("title"), c.get_str("user.login")
        v = qjson.decode(github)
        [(it["id"], it["title"], it["user"]["login"]) for it in v]
        _train_doc(qjson, github)
    for b in corpus:
        _train_doc(qjson, b)
    _train_eager(qjson, corpus)
    for _ in range(3):
        _train_errors(qjson, bad, small)
    _train_many(qjson, nd, batch)
    print(f"pgo_train: Python part {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    if _lupa_ok():
        import qjson.luajit

        train_lua(qjson.luajit.runtime(encoding=None), ladder, small, github)
    print(f"pgo_train: done in {time.perf_counter() - t0:.1f} s", file=sys.stderr)


# ------------------------------------------------------------------ Lua

LUA_TRAIN = r"""
function(qjson, s, rounds)
    local ok_n = 0
    for r = 1, rounds do
        local d = qjson.parse(s)
        local t = d:typeof("")
        if t == "object" and d:typeof("messages") == "array" then
            d:get_str("model"); d:get_f64("temperature")
            local n = d:len("messages")
            for i = 0, n - 1 do
                d:get("messages[" .. i .. "].content")
                d:get_str("messages[" .. i .. "].role")
            end
            d:open("messages[0]"):get_str("role")
            d:raw("messages")
            d:get_str("nope.nope")
            local p = qjson.decode(s)
            local m, tt = p.model, p.temperature
            local msgs = p.messages
            for i = 1, qjson.len(msgs) do local c = msgs[i].content end
            qjson.encode(p)
            p.model = "gpt-4o-mini"
            p.temperature = 0.3
            p.metadata = { tenant = "acme", tags = { "a", "b" } }
            qjson.append(msgs, { role = "assistant", content = "ok" })
            msgs[1].content = "Be brief."
            qjson.encode(p)
            local q = qjson.decode(s)
            qjson.patch(q, {
                { op = "replace", path = "/model", value = "m" },
                { op = "add", path = "/messages/0", value = { role = "system", content = "hi" } },
                { op = "remove", path = "/model" },
            })
            qjson.encode(q)
            local w = qjson.merge_patch(qjson.decode(s), '{"metadata":{"t":1},"logprobs":null}')
            qjson.encode(w)
            pcall(qjson.patch, qjson.decode(s), { { op = "remove", path = "/nope/nope" } })
        elseif t == "array" then
            local n = d:len("")
            for i = 0, n - 1 do
                d:typeof("[" .. i .. "]")
                d:get("[" .. i .. "].id")
                d:get_str("[" .. i .. "].title")
            end
            local p = qjson.decode(s)
            for i = 1, qjson.len(p) do
                local it = p[i]
                if type(it) == "table" then local x = it.title end
            end
            if qjson.len(p) > 0 then p[1] = "first" end
            qjson.encode(p)
            qjson.encode(qjson.materialize(qjson.decode(s)))
        else
            local p = qjson.decode(s)
            if type(p) == "table" then
                for k, v in qjson.pairs(p) do local _ = v end
                p.added = { 1, 2, 3 }
                qjson.encode(p)
            end
            qjson.encode(qjson.materialize(qjson.decode(s)))
        end
        ok_n = ok_n + 1
    end
    return ok_n
end
"""

LUA_MANY = r"""
function(qjson, s, bad)
    for d in qjson.parse_many(s) do d:get_str("custom_id"); d:get("body.model") end
    local it = qjson.parse_many(bad, { errors = "skip" })
    for d in it do d:typeof("") end
    for _, x in ipairs({ "[1,", "{\"a\" 1}", "\"abc", "01", "tru", "[1 2]", "\255" }) do
        pcall(qjson.parse, x)
        pcall(qjson.decode, x)
    end
end
"""


def train_lua(lua, ladder: dict[str, bytes], small: bytes, github: bytes) -> None:
    t0 = time.perf_counter()
    q = lua.eval('require("qjson")')
    run = lua.eval(LUA_TRAIN)
    rounds = {
        "2k": 300,
        "60k": 30,
        "100k": 20,
        "200k": 10,
        "500k": 4,
        "1m": 2,
        "2m": 1,
        "5m": 1,
        "10m": 1,
    }
    for name, b in ladder.items():
        run(q, b, rounds[name])
    run(q, small, 400)
    run(q, github, 20)
    for b in _corpus():
        run(q, b, 1)
    batch = _batch(2000)
    lua.eval(LUA_MANY)(q, batch, batch[:2000] + b"{oops\n" + batch[2000:4000])
    print(f"pgo_train: Lua part {time.perf_counter() - t0:.1f} s", file=sys.stderr)


def _lupa_ok() -> bool:
    try:
        import lupa.luajit21  # noqa: F401
    except ImportError:
        print("pgo_train: lupa is absent, the Lua edge is not trained", file=sys.stderr)
        return False
    return True


def _capi_runtime(lib: str):
    """A LuaJIT runtime whose require("qjson") binds to the C-ABI library `lib`
    (qjson.luajit's setup, with another library path)."""
    import lupa.luajit21

    lua = lupa.luajit21.LuaRuntime(encoding=None)
    source = (ROOT / "python" / "qjson" / "qjson.lua").read_bytes()
    from lua_ab import LOADER  # type: ignore[import-not-found]  # qjson.luajit's, without the extension

    lua.eval(LOADER)(source, os.fsencode(lib))
    return lua


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--lua", metavar="LIB", help="train only the Lua edge, on the C-ABI library LIB"
    )
    a = ap.parse_args()
    if a.lua:
        train_lua(
            _capi_runtime(a.lua),
            dict(payloads.ladder()),
            payloads.small_request(),
            payloads.github_issues(),
        )
    else:
        train_python(60.0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
