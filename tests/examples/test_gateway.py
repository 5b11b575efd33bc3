"""The LLM-gateway example (examples/gateway/) on a real server: uvicorn, loopback.

The upstream stub and the gateways run as child processes on free 127.0.0.1
ports; this process is the client (aiohttp). The stub answers each request
with the SHA-256 of the body it received, so every test checks the forwarded
bytes against a body computed here independently, with the stdlib json module
and the route table. Needs the `gateway` extra (starlette, uvicorn, aiohttp).
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

for _dep in ("starlette", "uvicorn", "aiohttp"):
    pytest.importorskip(_dep, reason=f"{_dep} is missing: pip install '.[gateway]'")

import aiohttp  # noqa: E402

# aiohttp advises against bytes bodies over 1 MiB (a ResourceWarning); handing the
# transport one bytes object is what the gateway does too, and what we test.
pytestmark = pytest.mark.filterwarnings("ignore:Sending a large body:ResourceWarning")

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "gateway"
MAX_BODY = 12 << 20  # the gateways' limit in these tests: 10 MB passes, more than 12 MiB is 413


def _load(name: str, path: Path) -> ModuleType:
    """Import a file under a private name (the example's modules are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


launch = _load("_gateway_launch", EXAMPLE / "launch.py")
ROUTES = _load("_gateway_routes", EXAMPLE / "routes.py").ROUTES
payloads = _load("_bench_payloads", ROOT / "benchmarks" / "payloads.py")

SIZES = {
    "small_request": payloads.small_request(),  # ~2 KB, model gpt-4o-mini, has metadata and user
    "2k": payloads.chat_request(2 << 10),
    "100k": payloads.chat_request(100 << 10),
    "1m": payloads.chat_request(1 << 20),
    "10m": payloads.chat_request(10 << 20),
}


def expected_body(body: bytes) -> bytes:
    """What the upstream should receive for `body`: the route applied with the stdlib json.

    The payloads are compact and written by json.dumps(ensure_ascii=False), so
    re-encoding them the same way reproduces their untouched parts byte for byte.
    """
    req = json.loads(body)
    route = ROUTES[req["model"]]
    req["model"] = route.upstream_model
    for field in route.drop:
        req.pop(field, None)
    meta = req.get("metadata")
    if isinstance(meta, dict):
        meta.update(route=route.pool, messages=len(req["messages"]))
    else:
        req["metadata"] = {"route": route.pool, "messages": len(req["messages"])}
    for key, value in route.merge.items():  # RFC 7396, flat: the routes' patches are flat
        assert not isinstance(value, dict)
        if value is None:
            req.pop(key, None)
        else:
            req[key] = value
    return json.dumps(req, ensure_ascii=False, separators=(",", ":")).encode()


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


# --------------------------------------------------------------------------- servers


class Servers:
    """The stub and one gateway per JSON library, started on first use, stopped at the end."""

    def __init__(self, stack: Any) -> None:
        self.stack = stack
        self.stub = stack.enter_context(launch.serve(["upstream_stub.py"]))
        self._gateways: dict[str, Any] = {}

    def gateway(self, library: str, instance: str = "", upstream_path: str = "") -> Any:
        """The gateway for `library`; another `instance` name gives a process of its own;
        `upstream_path` is put after the stub's address in the gateway's upstream URL."""
        key = f"{library}/{instance}/{upstream_path}"
        if key not in self._gateways:
            argv = ["app.py", "--upstream", self.stub.url + upstream_path, "--json", library]
            argv += ["--max-body", str(MAX_BODY)]
            self._gateways[key] = self.stack.enter_context(launch.serve(argv))
        return self._gateways[key]


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    import contextlib

    with contextlib.ExitStack() as stack:
        yield Servers(stack)


async def post(
    session: aiohttp.ClientSession, url: str, body: Any, **kw: Any
) -> tuple[int, dict[str, Any]]:
    async with session.post(
        url + "/v1/chat/completions",
        data=body,
        headers={"content-type": "application/json"},
        **kw,
    ) as r:
        return r.status, await r.json(content_type=None)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def _session_do(fn: Any, *args: Any) -> Any:
    async with aiohttp.ClientSession() as session:
        return await fn(session, *args)


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


# --------------------------------------------------------------------------- forwarding


@pytest.mark.parametrize("library", ["qjson", "orjson", "json"])
def test_forwarded_bytes_every_size(servers: Servers, library: str) -> None:
    gw = servers.gateway(library)

    async def go(session: aiohttp.ClientSession) -> None:
        for name, body in SIZES.items():
            status, resp = await post(session, gw.url, body)
            assert status == 200, (name, resp)
            want = expected_body(body)
            assert resp["received"] == {"bytes": len(want), "sha256": sha(want)}, name

    run(_session_do(go))


def test_untouched_parts_keep_their_bytes(servers: Servers) -> None:
    """A body with whitespace, escapes and number spellings that json.dumps would change:
    the qjson gateway forwards the untouched values exactly as written."""
    messages = b'[ {"role": "user", "content": "caf\\u00e9 \\/ \\ud83d\\ude00"} ,{"role":"tool"} ]'
    n = b"1.0E+2"
    body = (
        b'{ "model" : "gpt-4o-mini",\n  "messages": ' + messages + b',\n  "n": ' + n + b",\n"
        b'  "user": "u-1", "metadata": {"trace": true}, "top_p": -0.0 }'
    )
    gw = servers.gateway("qjson")

    async def go(session: aiohttp.ClientSession) -> bytes:
        status, resp = await post(session, gw.url, body)
        assert status == 200, resp
        async with session.get(servers.stub.url + "/last-body") as r:
            got = await r.read()
        assert resp["received"]["sha256"] == sha(got)
        return got

    got = run(_session_do(go))
    assert messages in got and b'"n": ' + n in got and b'"top_p": -0.0' in got
    assert b"u-1" not in got  # dropped
    want = json.loads(expected_body(body))
    assert json.loads(got) == want
    assert want["metadata"] == {"trace": True, "route": "chat-eu", "messages": 2}


def test_stream_request_is_streamed_through(servers: Servers) -> None:
    req = json.loads(SIZES["small_request"])
    req["stream"] = True
    body = json.dumps(req, ensure_ascii=False, separators=(",", ":")).encode()
    status, resp = run(_session_do(post, servers.gateway("qjson").url, body))
    assert status == 200
    assert resp["received"]["sha256"] == sha(expected_body(body))


@pytest.mark.parametrize("library", ["qjson", "orjson"])
def test_upstream_redirect_is_passed_back_not_followed(servers: Servers, library: str) -> None:
    """A 307 from the upstream goes back to the client with its Location, for a body sent
    whole (2 KB) and one sent in two parts (1 MB, which aiohttp could not replay)."""
    gw = servers.gateway(library, upstream_path="/moved")
    records = f"{servers.stub.url}/records"

    async def go(session: aiohttp.ClientSession) -> None:
        async with session.delete(records) as r:
            assert r.status == 200
        for name in ("2k", "1m"):
            async with session.post(
                gw.url + "/v1/chat/completions",
                data=SIZES[name],
                headers={"content-type": "application/json"},
                allow_redirects=False,
            ) as r:
                assert r.status == 307, (name, await r.text())
                assert r.headers["location"] == "/v1/chat/completions", name
        async with session.get(records) as r:
            assert await r.json() == []  # the gateway did not follow the redirect

    run(_session_do(go))


def test_unknown_model_is_404(servers: Servers) -> None:
    status, resp = run(
        _session_do(post, servers.gateway("qjson").url, b'{"model":"nope","messages":[]}')
    )
    assert status == 404 and "nope" in resp["error"]["message"]


# --------------------------------------------------------------------------- bad requests


def malformed() -> dict[str, tuple[bytes, int]]:
    """name -> (body, the byte offset of the error)."""
    big = SIZES["100k"]
    cut_in_string = big[: len(big) // 2]  # inside the base64 image string
    small = SIZES["small_request"]
    cut = small[: small.index(b',"messages"') + 1]  # after a comma: the input ends too soon
    at = small.index("é".encode())  # 0xC3 0xA9: break the continuation byte
    bad_utf8 = small[:at] + b"\xc3\x28" + small[at + 2 :]
    deep = b"[" * 10**6 + b"]" * 10**6
    return {
        "truncated": (cut, len(cut)),
        # The error is the string that never ends: its opening quote.
        "truncated_in_string": (cut_in_string, cut_in_string.rindex(b'"')),
        "invalid_utf8": (bad_utf8, at),
        "nested_1e6": (deep, 1024),  # the 1025th "[" passes qjson's max_depth of 1024
        "not_an_object": (b"[1, 2]", -1),
    }


@pytest.mark.parametrize("library", ["qjson", "orjson", "json"])
def test_malformed_bodies_get_400_without_disturbing_good_ones(
    servers: Servers, library: str
) -> None:
    gw = servers.gateway(library)
    bad = malformed()
    good = [SIZES["small_request"], SIZES["100k"], SIZES["1m"]] * 4

    async def go(session: aiohttp.ClientSession) -> tuple[list[Any], list[Any]]:
        tasks_bad = [post(session, gw.url, b) for b, _ in bad.values()]
        tasks_good = [post(session, gw.url, b) for b in good]
        results = await asyncio.gather(*tasks_bad, *tasks_good)
        return results[: len(bad)], results[len(bad) :]

    got_bad, got_good = run(_session_do(go))
    for (name, (_, offset)), (status, resp) in zip(bad.items(), got_bad):
        assert status == 400, (name, resp)
        err = resp["error"]
        assert err["type"] == "invalid_request_error" and err["message"], name
        if offset < 0:
            assert err["offset"] is None, name  # valid JSON of the wrong shape
        elif library == "qjson":
            assert err["offset"] == offset, (name, err)
        else:  # orjson says 0 for bad UTF-8; json names where a string began, or nothing
            assert err["offset"] is None or isinstance(err["offset"], int), (name, err)
    for body, (status, resp) in zip(good, got_good):
        assert status == 200, resp
        assert resp["received"]["sha256"] == sha(expected_body(body))


def test_oversize_body_is_413(servers: Servers) -> None:
    gw = servers.gateway("qjson")
    body = b" " * (MAX_BODY + 1)

    async def chunked() -> Any:  # no Content-Length: the limit is counted while reading
        for i in range(0, len(body), 1 << 20):
            yield body[i : i + (1 << 20)]

    async def go(session: aiohttp.ClientSession) -> None:
        status, resp = await post(session, gw.url, body)
        assert status == 413, resp
        status, resp = await post(session, gw.url, chunked())
        assert status == 413, resp
        status, resp = await post(session, gw.url, SIZES["10m"])  # just under: fine
        assert status == 200, resp

    run(_session_do(go))


# --------------------------------------------------------------------------- load


def test_32_clients_2000_requests_all_correct_and_rss_flat(servers: Servers) -> None:
    if not Path("/proc/self/status").is_file():
        pytest.skip("the RSS reading needs Linux's /proc")
    # A fresh process: after the 10 MB bodies of other tests, glibc's malloc serves
    # 1 MB buffers from its heap (its mmap threshold has grown) and RSS wanders more.
    gw = servers.gateway("qjson", instance="load")
    mix = [SIZES["small_request"], SIZES["2k"], SIZES["100k"]] * 6 + [SIZES["1m"]]
    want = [sha(expected_body(b)) for b in mix]
    total, clients, first = 2000, 32, 200

    async def client(session: aiohttp.ClientSession, jobs: asyncio.Queue[int]) -> list[str]:
        errors = []
        while not jobs.empty():
            i = jobs.get_nowait()
            status, resp = await post(session, gw.url, mix[i % len(mix)])
            if status != 200 or resp["received"]["sha256"] != want[i % len(mix)]:
                errors.append(f"request {i}: {status} {str(resp)[:200]}")
        return errors

    async def batch(session: aiohttp.ClientSession, lo: int, hi: int) -> list[str]:
        jobs: asyncio.Queue[int] = asyncio.Queue()
        for i in range(lo, hi):
            jobs.put_nowait(i)
        found = await asyncio.gather(*(client(session, jobs) for _ in range(clients)))
        return [e for errs in found for e in errs]

    async def go() -> tuple[list[str], int, int]:
        conn = aiohttp.TCPConnector(limit=clients)
        async with aiohttp.ClientSession(connector=conn) as session:
            errors = await batch(session, 0, first)
            rss_first = rss_kib(gw.pid)
            errors += await batch(session, first, total)
            return errors, rss_first, rss_kib(gw.pid)

    errors, rss_first, rss_end = run(go())
    assert errors == []
    # "A few MB": the allocator's own wandering in a fresh gateway is about +-3 MB here
    # (both JSON variants); a body kept per request would add 100+ MB.
    assert rss_end - rss_first <= 8192, f"RSS grew {rss_first} -> {rss_end} KiB"
