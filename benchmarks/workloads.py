"""The Python workloads every benchmark shares: (scenario, operation, library) -> a call.

``make(op, lib, scenario)`` returns a zero-argument callable doing ONE
iteration of that operation on that scenario's payload with that library,
after checking once (untimed) that it gives the same answer as ``json``. It
raises ``Skip(reason)`` when the library is missing, lacks the operation, or
when qjson does not have the feature yet (``qjson.decode``, editable views,
view passthrough in ``qjson.dumps``): such rows are reported as skipped with
that reason, never estimated.

Operations (chat scenarios read ``model``, ``temperature`` and every
``messages[i].content``; github_issues reads ``id``, ``title`` and
``user.login`` of every issue; twitter reads ``id`` and ``user.screen_name``
of every status):

    parse_get      qjson.parse + Doc / Cursor getters; pysimdjson Parser.parse + proxies;
                   fastsimdjson.parse + its lazy views; cysimdjson JSONParser.parse +
                   its element wrappers; orjson / ssrjson / msgspec / json: loads +
                   dict access; copy: bytearray(b)
    decode_access  qjson.decode (lazy view) + view indexing; the others as parse_get
    get_all        qjson.parse + one Doc.get_all / get_many call per field (skipped
                   until the build has them); peers: see parse_get
    decode_dumps   decode + dumps unmodified (qjson: view passthrough); copy: bytearray(b)
    edit_top       decode, set model and temperature, dumps
    edit_add       decode, add a top-level field, dumps
    edit_nested    decode, replace messages[0].content, dumps
    loads          eager decode to dict / list
    dumps          encode the plain object json.loads gives
    validate       qjson.validate; pysimdjson / cysimdjson Parser.parse (tape only, no
                   Python objects); fastsimdjson._parse_only (its private parse without
                   objects)

Every callable returns what it read or produced, so callers can hold it
(memory.py) or drop it (timing loops).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

try:  # python benchmarks/<script>.py
    import payloads  # type: ignore[import-not-found]
except ImportError:  # pytest (rootdir on sys.path) or python -m benchmarks.<script>
    from benchmarks import payloads  # type: ignore[no-redef]

__all__ = [
    "CHAT_OPS",
    "LIBS",
    "OPS",
    "SCENARIOS",
    "QUICK_SCENARIOS",
    "Scenario",
    "Skip",
    "make",
    "missing",
    "scenario",
    "ops_for",
]


class Skip(Exception):
    """This (operation, library, scenario) row cannot run; str(e) says why."""


_MISSING: dict[str, str] = {}


def _try_import(module: str, label: str) -> Any:
    try:
        return __import__(module)
    except Exception as e:  # ImportError, or a broken build
        _MISSING[label] = f"{label} is not installed ({type(e).__name__}: {e})"
        return None


qjson = _try_import("qjson", "qjson")
orjson = _try_import("orjson", "orjson")
simdjson = _try_import("simdjson", "pysimdjson")
msgspec = _try_import("msgspec", "msgspec")
if msgspec is not None:
    import msgspec.json
fastsimdjson = _try_import("fastsimdjson", "fastsimdjson")
cysimdjson = _try_import("cysimdjson", "cysimdjson")
ssrjson = _try_import("ssrjson", "ssrjson")

MODULES = {
    "qjson": qjson,
    "orjson": orjson,
    "pysimdjson": simdjson,
    "msgspec": msgspec,
    "fastsimdjson": fastsimdjson,
    "cysimdjson": cysimdjson,
    "ssrjson": ssrjson,
}

# The peers a "best peer" ratio is taken over (DESIGN.md, "Performance targets").
PEERS = ["orjson", "fastsimdjson", "pysimdjson", "cysimdjson", "ssrjson", "msgspec"]
LIBS = ["qjson", *PEERS, "json", "copy"]
OPS = [
    "parse_get",
    "decode_access",
    "get_all",
    "decode_dumps",
    "edit_top",
    "edit_add",
    "edit_nested",
    "loads",
    "dumps",
    "validate",
]
EDITS = ["edit_top", "edit_add", "edit_nested"]
CHAT_OPS = OPS  # github_issues has no edits (its root is an array)

# Which libraries have a row for each operation; the rest have no such operation.
# Peers have no separate decode_access / get_all code: their decode_access row
# is their parse_get row (their best read path) again, kept so each pytest
# table compares qjson with every peer; get_all is qjson's only.
# Libraries that can encode: loads + dumps is their passthrough.
WRITERS = ["orjson", "fastsimdjson", "ssrjson", "msgspec"]
_LIBS_FOR = {
    "parse_get": LIBS,
    "decode_access": ["qjson", *PEERS, "json"],
    "get_all": ["qjson"],
    "decode_dumps": ["qjson", *WRITERS, "json", "copy"],
    "edit_top": ["qjson", "orjson", "msgspec", "json"],
    "edit_add": ["qjson", "orjson", "msgspec", "json"],
    "edit_nested": ["qjson", "orjson", "msgspec", "json"],
    "loads": ["qjson", *PEERS, "json"],
    "dumps": ["qjson", *WRITERS, "json"],
    "validate": ["qjson", "pysimdjson", "cysimdjson", "fastsimdjson"],
}

STDLIB_MAX = 1024 * 1024  # json (stdlib) only on payloads <= 1 MiB: it is the slow reference


def missing(lib: str) -> str | None:
    """Why `lib` cannot run at all, or None."""
    if lib in ("json", "copy"):
        return None
    return _MISSING.get(lib)


# --------------------------------------------------------------------------- scenarios


@dataclass(frozen=True)
class Scenario:
    name: str
    kind: str  # "chat" or "github"
    parts: tuple[bytes, ...]  # one payload, or several run in turn (interleaved)

    @property
    def size(self) -> int:
        return sum(len(p) for p in self.parts)


SCENARIOS = [*payloads.LADDER, "small_request", "github_issues", "twitter", "interleaved"]
QUICK_SCENARIOS = ["2k", "100k", "1m", "small_request", "github_issues"]

# jsonexamples/twitter.json (the simdjson corpus), beside the project's checkout.
TWITTER = Path(__file__).resolve().parents[2] / "shared" / "data" / "jsonexamples" / "twitter.json"


@functools.cache
def scenario(name: str) -> Scenario:
    """The payload(s) of `name`; raises Skip when its data file is absent."""
    if name in payloads.LADDER:
        return Scenario(name, "chat", (payloads.chat_request(payloads.LADDER[name]),))
    if name == "small_request":
        return Scenario(name, "chat", (payloads.small_request(),))
    if name == "github_issues":
        return Scenario(name, "github", (payloads.github_issues(),))
    if name == "interleaved":
        return Scenario(name, "chat", tuple(b for _, b in payloads.interleaved()))
    if name == "twitter":
        if not TWITTER.is_file():
            raise Skip(f"{TWITTER} is absent (see ../shared/data/README.md)")
        return Scenario(name, "twitter", (TWITTER.read_bytes(),))
    raise ValueError(f"unknown scenario {name!r}; one of {', '.join(SCENARIOS)}")


def ops_for(scen: Scenario) -> list[str]:
    return OPS if scen.kind == "chat" else [op for op in OPS if op not in EDITS]


def libs_for(op: str) -> list[str]:
    return _LIBS_FOR[op]


# --------------------------------------------------------------------------- reads


def _plain(v: Any) -> Any:
    """A qjson view or a peer's proxy as plain Python, for comparisons only."""
    if v is None or isinstance(v, (str, int, float, bool)):
        return v
    if hasattr(v, "as_list"):  # pysimdjson / fastsimdjson Array
        return v.as_list()
    if hasattr(v, "as_dict"):  # pysimdjson / fastsimdjson Object
        return v.as_dict()
    if hasattr(v, "export"):  # cysimdjson JSONArray / JSONObject
        return v.export()
    if qjson is not None and type(v).__module__.startswith("qjson"):
        return qjson.materialize(v)
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def _expected_reads(kind: str, b: bytes) -> Any:
    d = json.loads(b)
    if kind == "github":
        return [(it["id"], it["title"], it["user"]["login"]) for it in d]
    if kind == "twitter":
        return [(st["id"], st["user"]["screen_name"]) for st in d["statuses"]]
    return [d["model"], d["temperature"], [m["content"] for m in d["messages"]]]


def _reads_mapping(kind: str, decode: Callable[[bytes], Any]) -> Callable[[bytes], Callable]:
    """Reads through dict-like access on whatever `decode` returns."""

    def factory(b: bytes) -> Callable[[], Any]:
        if kind == "github":

            def run() -> Any:
                return [(it["id"], it["title"], it["user"]["login"]) for it in decode(b)]

        elif kind == "twitter":

            def run() -> Any:
                return [(st["id"], st["user"]["screen_name"]) for st in decode(b)["statuses"]]

        else:

            def run() -> Any:
                d = decode(b)
                return (d["model"], d["temperature"], [m["content"] for m in d["messages"]])

        return run

    return factory


def _reads_qjson_doc(kind: str) -> Callable[[bytes], Callable]:
    """Doc getters. Dense arrays: one cursor per element (``doc.open(f"[{i}]")``,
    then short relative paths), one walk from the root per element rather than
    one per field (``doc.get_int(f"[{i}].id")`` ...; within the noise of it on
    github_issues and twitter here). Chat reads: path getters."""
    parse = qjson.parse

    def factory(b: bytes) -> Callable[[], Any]:
        if kind == "github":

            def run() -> Any:
                doc = parse(b)
                op = doc.open
                out = []
                for i in range(doc.len()):
                    c = op(f"[{i}]")
                    out.append((c.get_int("id"), c.get_str("title"), c.get_str("user.login")))
                return out

        elif kind == "twitter":

            def run() -> Any:
                doc = parse(b)
                op = doc.open
                out = []
                for i in range(doc.len("statuses")):
                    c = op(f"statuses[{i}]")
                    out.append((c.get_int("id"), c.get_str("user.screen_name")))
                return out

        else:

            def run() -> Any:
                doc = parse(b)
                get = doc.get
                return (
                    doc.get_str("model"),
                    doc.get_float("temperature"),
                    [get(f"messages[{i}].content") for i in range(doc.len("messages"))],
                )

        return run

    return factory


def _reads_qjson_get_all(kind: str) -> Callable[[bytes], Callable]:
    """One Doc.get_all call per field (chat: get_many for the scalars), with
    qjson.Path objects compiled once outside the timed call when the build has
    them (the use DESIGN.md's contract describes), else the path strings."""
    doc_type = type(qjson.parse(b"{}"))
    for name in ("get_all", "get_many") if kind == "chat" else ("get_all",):
        if not hasattr(doc_type, name):
            raise Skip(f"qjson Doc.{name} is not in this build yet")
    compile_path = getattr(qjson, "Path", str)
    parse = qjson.parse

    def factory(b: bytes) -> Callable[[], Any]:
        if kind == "github":
            p_id, p_title, p_login = map(compile_path, ["[*].id", "[*].title", "[*].user.login"])

            def run() -> Any:
                doc = parse(b)
                ga = doc.get_all
                return (ga(p_id), ga(p_title), ga(p_login))

        elif kind == "twitter":
            p_id, p_name = map(compile_path, ["statuses[*].id", "statuses[*].user.screen_name"])

            def run() -> Any:
                doc = parse(b)
                ga = doc.get_all
                return (ga(p_id), ga(p_name))

        else:
            scalars = [compile_path("model"), compile_path("temperature")]
            p_content = compile_path("messages[*].content")

            def run() -> Any:
                doc = parse(b)
                model, temperature = doc.get_many(scalars)
                return (model, temperature, doc.get_all(p_content))

        return run

    return factory


def _reads_simdjson(kind: str) -> Callable[[bytes], Callable]:
    def factory(b: bytes) -> Callable[[], Any]:
        parser = simdjson.Parser()  # reused; all proxies die when run() returns
        return _reads_mapping(kind, parser.parse)(b)

    return factory


def _reads_cysimdjson(kind: str) -> Callable[[bytes], Callable]:
    def factory(b: bytes) -> Callable[[], Any]:
        parser = cysimdjson.JSONParser()  # reused, as pysimdjson's
        return _reads_mapping(kind, parser.parse)(b)

    return factory


def _cysimdjson_loads() -> Callable[[bytes], Any]:
    """cysimdjson has no bytes -> objects call (its ``loads`` takes str and
    encodes it): parse with a reused parser, then ``export()`` the root."""
    parse = cysimdjson.JSONParser().parse

    def loads(b: bytes) -> Any:
        root = parse(b)
        return root.export() if hasattr(root, "export") else root

    return loads


def _decoder(lib: str) -> Callable[[bytes], Any]:
    if lib == "orjson":
        return orjson.loads
    if lib == "msgspec":
        return msgspec.json.Decoder().decode
    if lib == "json":
        return json.loads
    if lib == "pysimdjson":
        return simdjson.loads
    if lib == "qjson":
        return qjson.loads
    if lib == "fastsimdjson":
        return fastsimdjson.loads
    if lib == "ssrjson":
        return ssrjson.loads
    if lib == "cysimdjson":
        return _cysimdjson_loads()
    raise AssertionError(lib)


def _encoder(lib: str) -> Callable[[Any], Any]:
    if lib == "orjson":
        return orjson.dumps
    if lib == "msgspec":
        return msgspec.json.Encoder().encode
    if lib == "json":
        return functools.partial(json.dumps, separators=(",", ":"), ensure_ascii=False)
    if lib == "qjson":
        return qjson.dumps
    if lib == "fastsimdjson":
        return fastsimdjson.dumpb  # bytes, compact, orjson's output (its dumps is json's)
    if lib == "ssrjson":
        return ssrjson.dumps_to_bytes  # bytes, as orjson and qjson return
    raise AssertionError(lib)


# --------------------------------------------------------------------------- qjson features


def _need_decode() -> None:
    if not hasattr(qjson, "decode"):
        raise Skip("qjson.decode (lazy views with edits) is not in this build yet")


def _edit(op: str, d: Any) -> None:
    """The edit `op` (the timed closures of `_write_factory` inline the same
    statements; this one builds the reference answer)."""
    if op == "edit_top":
        d["model"] = "gpt-4o-mini"
        d["temperature"] = 0.2
    elif op == "edit_add":
        d["user"] = "user-8f14e45f"
    elif op == "edit_nested":
        d["messages"][0]["content"] = "You are a terse assistant."
    else:
        raise AssertionError(op)


def _write_factory(op: str, lib: str) -> Callable[[bytes], Callable[[], Any]]:
    if lib == "copy":
        return lambda b: lambda: bytearray(b)
    if lib == "qjson":
        _need_decode()
        decode, dumps = qjson.decode, qjson.dumps
    else:
        decode, dumps = _decoder(lib), _encoder(lib)
    if op == "decode_dumps":
        return lambda b: lambda: dumps(decode(b))

    # One closure per edit, so the timed call does the edit inline, as the
    # passthrough lambda does its work (no dispatch on `op` per iteration:
    # a Python call and string compares cost ~0.1 us, 5-10% of a 2 KB edit).
    def factory(b: bytes) -> Callable[[], Any]:
        if op == "edit_top":

            def run() -> Any:
                d = decode(b)
                d["model"] = "gpt-4o-mini"
                d["temperature"] = 0.2
                return dumps(d)

        elif op == "edit_add":

            def run() -> Any:
                d = decode(b)
                d["user"] = "user-8f14e45f"
                return dumps(d)

        elif op == "edit_nested":

            def run() -> Any:
                d = decode(b)
                d["messages"][0]["content"] = "You are a terse assistant."
                return dumps(d)

        else:
            raise AssertionError(op)
        return run

    return factory


# --------------------------------------------------------------------------- the registry


def _factory(op: str, lib: str, kind: str) -> Callable[[bytes], Callable[[], Any]]:
    if op in ("parse_get", "decode_access"):
        if lib == "copy":
            return lambda b: lambda: bytearray(b)
        if lib == "qjson":
            if op == "parse_get":
                return _reads_qjson_doc(kind)
            _need_decode()
            return _reads_mapping(kind, qjson.decode)
        if lib == "pysimdjson":
            return _reads_simdjson(kind)
        if lib == "cysimdjson":
            return _reads_cysimdjson(kind)
        if lib == "fastsimdjson":
            return _reads_mapping(kind, fastsimdjson.parse)  # lazy views
        return _reads_mapping(kind, _decoder(lib))
    if op == "get_all":
        return _reads_qjson_get_all(kind)
    if op == "decode_dumps" or op in EDITS:
        return _write_factory(op, lib)
    if op == "loads":
        dec = _decoder(lib)
        return lambda b: lambda: dec(b)
    if op == "dumps":
        enc = _encoder(lib)

        def dumps_factory(b: bytes) -> Callable[[], Any]:
            obj = json.loads(b)
            return lambda: enc(obj)

        return dumps_factory
    if op == "validate":
        if lib == "qjson":
            validate = qjson.validate
            return lambda b: lambda: validate(b)
        if lib == "pysimdjson":

            def validate_factory(b: bytes) -> Callable[[], Any]:
                parser = simdjson.Parser()

                def run() -> None:
                    doc = parser.parse(b)  # builds the tape only; no Python objects
                    del doc

                return run

            return validate_factory
        if lib == "cysimdjson":

            def cy_validate_factory(b: bytes) -> Callable[[], Any]:
                parse = cysimdjson.JSONParser().parse

                def run() -> None:
                    doc = parse(b)  # builds the tape; the root wrapper only
                    del doc

                return run

            return cy_validate_factory
        if lib == "fastsimdjson":
            parse_only = fastsimdjson._parse_only  # private; validates, builds nothing
            return lambda b: lambda: parse_only(b)
    raise AssertionError((op, lib))


def _check(op: str, lib: str, kind: str, b: bytes, got: Any) -> None:
    """Raise Skip when a library's answer differs from json's (never time wrong work)."""
    if lib == "copy":
        return
    if op in ("parse_get", "decode_access"):
        ok = _plain(got) == _plain(_expected_reads(kind, b))
    elif op == "get_all":
        want = _expected_reads(kind, b)
        if kind != "chat":  # one list per field: the columns of the rows
            want = [list(col) for col in zip(*want)] if want else []
        ok = _plain(got) == _plain(want)
    elif op == "decode_dumps":
        ok = json.loads(got) == json.loads(b)
    elif op in EDITS:
        want = json.loads(b)
        _edit(op, want)
        ok = json.loads(got) == want
    elif op == "loads":
        ok = got == json.loads(b)
    elif op == "dumps":
        ok = json.loads(got) == json.loads(b)
    else:  # validate returns nothing; it must simply not raise on valid input
        ok = True
    if not ok:
        raise Skip(f"{lib} {op}: result differs from json's")


_FATAL = (KeyboardInterrupt, SystemExit, MemoryError)


def make(op: str, lib: str, scen: Scenario) -> Callable[[], Any]:
    """One iteration of `op` with `lib` on `scen`, checked once; raises Skip."""
    if op not in _LIBS_FOR or lib not in _LIBS_FOR[op]:
        raise Skip(f"{lib} has no {op} operation")
    if op not in ops_for(scen):
        raise Skip(f"{op} does not apply to {scen.name}")
    why = missing(lib)
    if why:
        raise Skip(why)
    if lib == "json" and max(len(p) for p in scen.parts) > STDLIB_MAX:
        raise Skip("json (stdlib) runs on payloads <= 1 MiB only")
    try:
        factory = _factory(op, lib, scen.kind)
        fns = [factory(b) for b in scen.parts]
        for b, fn in zip(scen.parts, fns):
            got = fn()
            _check(op, lib, scen.kind, b, got)
            del got
    except Skip:
        raise
    except _FATAL:
        raise
    except BaseException as e:  # also pyo3's PanicException (a BaseException)
        msg = str(e).splitlines()[0] if str(e) else ""
        if lib == "qjson" and op in EDITS and isinstance(e, TypeError):
            raise Skip(f"qjson views are not editable in this build ({msg[:80]})") from None
        raise Skip(f"{lib} {op} failed: {type(e).__name__}: {msg[:100]}") from None
    if len(fns) == 1:
        return fns[0]

    def run_all() -> Any:  # interleaved: each payload in turn
        return [fn() for fn in fns]

    return run_all
