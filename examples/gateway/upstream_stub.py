"""A stand-in for the model server: records what it receives and answers at once.

    python examples/gateway/upstream_stub.py [--port 0] [--hash sha256|none]

``POST /v1/chat/completions`` answers a small chat completion whose
``received`` member gives the length and SHA-256 of the body it got (with
``--hash none`` only the length, for load tests that should not pay for the
hash). ``GET /records`` lists the length and hash of every body received so
far, ``DELETE /records`` forgets them, ``GET /last-body`` returns the last body
itself. A bare ASGI app on uvicorn, so that it costs little next to the
gateway under test.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import socket
import sys
from typing import Any

import uvicorn

Scope = dict[str, Any]


def make_app(hash_bodies: bool = True, keep: int = 100_000):
    records: collections.deque[dict[str, Any]] = collections.deque(maxlen=keep)
    last_body = [b""]

    async def send_json(send: Any, status: int, obj: Any) -> None:
        body = json.dumps(obj).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def app(scope: Scope, receive: Any, send: Any) -> None:
        method, path = scope["method"], scope["path"]
        if method == "POST" and path == "/v1/chat/completions":
            chunks, more = [], True
            while more:
                msg = await receive()
                chunks.append(msg.get("body", b""))
                more = msg.get("more_body", False)
            body = b"".join(chunks)
            rec = {
                "bytes": len(body),
                "sha256": hashlib.sha256(body).hexdigest() if hash_bodies else None,
            }
            records.append(rec)
            last_body[0] = body
            await send_json(
                send,
                200,
                {
                    "id": f"chatcmpl-{len(records)}",
                    "object": "chat.completion",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}],
                    "received": rec,
                },
            )
        elif method == "POST" and path.startswith("/moved/"):
            # A redirect (for the tests): the body is read and dropped, and the
            # client is sent to the same path without the prefix.
            more = True
            while more:
                more = (await receive()).get("more_body", False)
            location = path[len("/moved") :].encode()
            headers = [(b"location", location), (b"content-length", b"0")]
            await send({"type": "http.response.start", "status": 307, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
        elif path == "/records" and method in ("GET", "DELETE"):
            if method == "DELETE":
                records.clear()
            await send_json(send, 200, list(records))
        elif path == "/last-body" and method == "GET":
            headers = [(b"content-type", b"application/json")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": last_body[0]})
        elif path == "/health":
            await send_json(send, 200, {"ok": True})
        else:
            await send_json(send, 404, {"error": {"message": f"no route {method} {path}"}})

    return app


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--hash", choices=["sha256", "none"], default="sha256")
    args = ap.parse_args(argv)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.host, args.port))
    print(f"upstream stub on http://{args.host}:{sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(
        make_app(args.hash == "sha256"),
        lifespan="off",
        timeout_keep_alive=75,
        log_level="warning",
        access_log=False,
    )
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
