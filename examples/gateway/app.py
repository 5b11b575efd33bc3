"""An LLM gateway: receive a chat-completion request, route it by model, forward it.

    python examples/gateway/app.py --upstream http://127.0.0.1:9000 [--json qjson|orjson|json]
                                   [--port 8000] [--max-body 33554432]

(or the environment: GATEWAY_UPSTREAM, GATEWAY_JSON, GATEWAY_MAX_BODY). The port
defaults to 0 (a free one); the first line on stdout names the address.

``POST /v1/chat/completions``:

1. read the body, answering 413 as soon as it is larger than the limit;
2. rewrite it (``rewrite.py``: read ``model``, ``stream`` and the number of
   messages, apply the route of ``routes.py``); malformed JSON gets 400 with
   the error message and its byte offset, an unknown model 404;
3. forward the new body to the upstream and return the upstream's response
   (streamed through when the request asked for ``"stream": true``).

Each forwarded response carries ``Server-Timing: json;dur=<ms>``: the CPU time
this request spent in JSON work (parse, reads, edits, dumps), measured with
``time.thread_time`` so that a busy machine does not inflate it; a load test
compares it with the process's CPU time per request to tell JSON from HTTP.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import uvicorn
from rewrite import BadRequest, UnknownModel, make_rewriter
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route


class TooLarge(Exception):
    """HTTP 413."""


def error(status: int, message: str, **extra: Any) -> JSONResponse:
    """An OpenAI-style error body."""
    return JSONResponse({"error": {"message": message, **extra}}, status_code=status)


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body, or TooLarge once it passes `limit` bytes (before reading it
    all when Content-Length says so)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise TooLarge
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise TooLarge
        chunks.append(chunk)
    return b"".join(chunks)  # one copy; qjson then indexes these bytes without copying


# A forwarded body of more than 2 * SPLIT_BODY bytes goes to aiohttp in two parts:
# aiohttp joins the request head with the first part it writes (one socket write on
# CPython < 3.12.9), so a single bytes body would be copied whole once more; this
# way only the first 64 KiB are, and the rest goes to the transport as a memoryview
# of the body (no copy). Smaller bodies go as one bytes object (one write).
SPLIT_BODY = 1 << 16


async def _body_parts(body: bytes) -> AsyncIterator[memoryview]:
    view = memoryview(body)
    yield view[:SPLIT_BODY]
    yield view[SPLIT_BODY:]


def forward_data(body: bytes) -> tuple[Any, dict[str, str]]:
    """The `data` and headers for aiohttp's post of `body`."""
    headers = {"content-type": "application/json"}
    if len(body) <= 2 * SPLIT_BODY:
        return body, headers
    headers["content-length"] = str(len(body))  # a fixed length, not chunked
    return _body_parts(body), headers


def passed(up: aiohttp.ClientResponse, headers: dict[str, str]) -> dict[str, str]:
    """`headers` plus the upstream's Location, if any (a redirect passed back)."""
    location = up.headers.get("location")
    return {**headers, "location": location} if location else headers


def create_app(upstream: str, library: str = "qjson", max_body: int = 32 << 20) -> Starlette:
    rewrite = make_rewriter(library)
    target = upstream.rstrip("/") + "/v1/chat/completions"
    state: dict[str, aiohttp.ClientSession] = {}

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # One connection pool for the whole process, kept alive between requests
        # (idle connections closed after 15 s, before the upstream closes them).
        connector = aiohttp.TCPConnector(limit=256, keepalive_timeout=15)
        async with aiohttp.ClientSession(connector=connector) as session:
            state["upstream"] = session
            yield

    async def chat_completions(request: Request) -> Response:
        try:
            body = await read_body(request, max_body)
        except TooLarge:
            return error(413, f"request body larger than {max_body} bytes")
        t0 = time.thread_time()
        try:
            fwd = rewrite(body)
        except BadRequest as e:
            return error(400, e.message, type="invalid_request_error", offset=e.offset)
        except UnknownModel as e:
            return error(404, f"no route for model {e}", type="model_not_found")
        timing = {"server-timing": f"json;dur={(time.thread_time() - t0) * 1000:.3f}"}
        session = state["upstream"]
        data, headers = forward_data(fwd.body)
        # An upstream's redirect goes back to the client as it came, as a reverse
        # proxy does: following it would resend the body, which a split body
        # (forward_data) cannot replay (aiohttp raises), and a gateway forwards
        # to the upstream it is configured with, not to wherever it points.
        try:
            if fwd.stream:  # pass the event stream through as it arrives
                up = await session.post(target, data=data, headers=headers, allow_redirects=False)
                return StreamingResponse(
                    up.content.iter_any(),
                    status_code=up.status,
                    media_type=up.content_type,
                    headers=passed(up, timing),
                    background=BackgroundTask(up.release),
                )
            async with session.post(
                target, data=data, headers=headers, allow_redirects=False
            ) as up:
                content = await up.read()
                return Response(
                    content, up.status, media_type=up.content_type, headers=passed(up, timing)
                )
        except aiohttp.ClientError as e:
            return error(502, f"upstream: {type(e).__name__}: {e}", type="upstream_error")

    async def health(request: Request) -> Response:
        return Response(library)

    return Starlette(
        routes=[
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
            Route("/health", health),
        ],
        lifespan=lifespan,
    )


def main(argv: list[str] | None = None) -> None:
    env = os.environ.get
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--upstream", default=env("GATEWAY_UPSTREAM", "http://127.0.0.1:9000"))
    ap.add_argument(
        "--json", default=env("GATEWAY_JSON", "qjson"), choices=["qjson", "orjson", "json"]
    )
    ap.add_argument("--max-body", type=int, default=int(env("GATEWAY_MAX_BODY", str(32 << 20))))
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args(argv)
    app = create_app(args.upstream, args.json, args.max_body)
    # Bind here, so that port 0 gives a free port we can announce before serving.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.host, args.port))
    print(f"gateway ({args.json}) on http://{args.host}:{sock.getsockname()[1]}", flush=True)
    # Keep idle connections open longer than a client's pool does (aiohttp: 15 s), so
    # a client never reuses one the server is closing (uvicorn's default is 5 s).
    config = uvicorn.Config(app, timeout_keep_alive=75, log_level="warning", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
