"""Deterministic benchmark payloads for qjson (pure stdlib).

Every generator is seeded and returns the same bytes on every run, every
platform and every supported Python version (3.9+): the only randomness is
``random.Random(seed)`` with an integer seed, whose stream is stable across
versions, and JSON is produced with fixed separators.

    chat_request(size_bytes)  OpenAI-style chat-completion request; >99% base64 image data
    LADDER / ladder(names)    the chat ladder: 2k, 60k, 100k, 200k, 500k, 1m, 2m, 5m, 10m
    small_request()           ~2 KB dense chat request (short messages, tools, response_format)
    github_issues(size)       ~100 KB dense GitHub-REST-API-like issues array
    interleaved()             100k, 200k, 500k, 1m in turn (cache / predictor churn)

``python benchmarks/payloads.py`` prints name, size and a sha256 prefix of each
payload so determinism can be checked across machines.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
from collections.abc import Iterable, Iterator

__all__ = [
    "KiB",
    "MiB",
    "LADDER",
    "chat_request",
    "ladder",
    "small_request",
    "github_issues",
    "interleaved",
    "all_payloads",
]

KiB = 1024
MiB = 1024 * 1024

LADDER = {
    "2k": 2 * KiB,
    "60k": 60 * KiB,
    "100k": 100 * KiB,
    "200k": 200 * KiB,
    "500k": 500 * KiB,
    "1m": 1 * MiB,
    "2m": 2 * MiB,
    "5m": 5 * MiB,
    "10m": 10 * MiB,
}

_SEP = (",", ":")

_WORDS = (
    "the quick brown fox jumps over a lazy dog while model context window tokens "
    "stream response image describe chart table invoice receipt screenshot error "
    "please explain what this shows and summarize key numbers in detail carefully "
    "function call latency parse field value request payload service gateway proxy"
).split()

_PNG_MAGIC = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"


def _dumps(obj) -> bytes:
    return json.dumps(obj, separators=_SEP, ensure_ascii=False).encode("utf-8")


def _text(rng: random.Random, n_chars: int) -> str:
    """Deterministic prose of exactly n_chars characters (ASCII)."""
    out: list[str] = []
    total = 0
    while total < n_chars:
        w = rng.choice(_WORDS)
        out.append(w)
        total += len(w) + 1
    s = " ".join(out)[:n_chars]
    return s[:-1] + "." if n_chars > 1 else s


def _b64_stream(seed: int, n_b64_chars: int) -> str:
    """n_b64_chars (multiple of 4) of base64 over seeded random bytes.

    random.Random.randbytes is 3.9+ and stable for a given integer seed; it
    runs at several hundred MB/s, so 10 MB of payload takes a few ms.
    """
    n_raw = n_b64_chars // 4 * 3
    raw = random.Random(seed).randbytes(n_raw)
    return base64.b64encode(raw).decode("ascii")


def _chat_obj(n_images: int, b64_lens: list[int], seed: int) -> dict:
    rng = random.Random(seed)
    messages = [
        {
            "role": "system",
            "content": "You are a helpful assistant that describes images precisely "
            "and answers questions about their content.",
        }
    ]
    total_b64 = sum(b64_lens)
    blob = _b64_stream(seed + 1, total_b64 + 4 * n_images) if total_b64 else ""
    magic = base64.b64encode(_PNG_MAGIC).decode("ascii")  # 24 chars, looks like a PNG
    pos = 0
    for i in range(n_images):
        n = b64_lens[i]
        data = blob[pos : pos + n]
        pos += n
        if n >= len(magic):
            data = magic + data[len(magic) :]
        messages.append(
            {
                "role": "user" if i % 2 == 0 else "assistant",
                "content": [
                    {"type": "text", "text": _text(rng, 256)},
                    {
                        "type": "image_url",
                        "image_url": {"url": "data:image/png;base64," + data},
                    },
                ],
            }
        )
    return {
        "model": "gpt-4o",
        "temperature": 0.7,
        "max_tokens": 1024,
        "stream": False,
        "messages": messages,
    }


def chat_request(size_bytes: int, seed: int = 1) -> bytes:
    """An OpenAI-style chat-completion request of ~size_bytes (within 1%, usually to 4 bytes).

    One system message (string content), then one user/assistant message per
    MiB of payload (at least one), each with content
    ``[{"type": "text", ...}, {"type": "image_url", "image_url": {"url": "data:..."}}]``.
    """
    n_images = max(1, size_bytes // MiB)
    skeleton = len(_dumps(_chat_obj(n_images, [0] * n_images, seed)))
    budget = max(0, size_bytes - skeleton)
    per = budget // n_images // 4 * 4
    lens = [per] * n_images
    lens[-1] += (budget - per * n_images) // 4 * 4
    return _dumps(_chat_obj(n_images, lens, seed))


def ladder(names: Iterable[str] | None = None) -> Iterator[tuple[str, bytes]]:
    """Yield (name, payload) for the chat ladder (all rungs, or the given names)."""
    for name in LADDER if names is None else names:
        yield name, chat_request(LADDER[name])


def small_request() -> bytes:
    """A realistic ~2 KB chat request: short text messages, tools, response_format."""
    weather_params = {
        "type": "object",
        "properties": {
            "location": {"type": "string", "description": "City and country, e.g. Paris, France"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["location"],
        "additionalProperties": False,
    }
    search_params = {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "max_results": {"type": "integer", "minimum": 1, "maximum": 20},
        },
        "required": ["query"],
    }
    obj = {
        "model": "gpt-4o-mini",
        "temperature": 0.2,
        "top_p": 1.0,
        "max_tokens": 512,
        "n": 1,
        "stream": False,
        "user": "user-8f14e45f",
        "messages": [
            {
                "role": "system",
                "content": "You are a concise travel assistant. Use tools when helpful.",
            },
            {
                "role": "user",
                "content": "I'm flying to Lyon next Tuesday. What's the weather going to be like?",
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_9aXq2",
                        "type": "function",
                        "function": {
                            "name": "get_weather",
                            "arguments": '{"location":"Lyon, France","unit":"celsius"}',
                        },
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "call_9aXq2",
                "content": '{"temp":14,"condition":"light rain","wind_kph":12}',
            },
            {
                "role": "assistant",
                "content": "Expect about 14 °C with light rain and a light breeze. "
                "Pack a rain jacket.",
            },
            {"role": "user", "content": "Thanks! Any good cafés near Place Bellecour?"},
            {
                "role": "assistant",
                "content": "Try Café Mokxa for specialty coffee, "
                "or Les Fines Gueules for a classic bouchon lunch.",
            },
            {"role": "user", "content": "Great. Summarize my trip plan as JSON."},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "Get the current weather for a location",
                    "parameters": weather_params,
                },
            },
            {
                "type": "function",
                "function": {
                    "name": "web_search",
                    "description": "Search the web and return top results",
                    "parameters": search_params,
                },
            },
        ],
        "tool_choice": "auto",
        "response_format": {
            "type": "json_schema",
            "json_schema": {
                "name": "trip_plan",
                "strict": True,
                "schema": {
                    "type": "object",
                    "properties": {
                        "city": {"type": "string"},
                        "date": {"type": "string", "format": "date"},
                        "items": {"type": "array", "items": {"type": "string"}},
                    },
                    "required": ["city", "date", "items"],
                },
            },
        },
        "metadata": {"session": "s-20240611-0042", "trace": True, "retries": 0},
    }
    return _dumps(obj)


_LABELS = [
    ("bug", "d73a4a", "Something isn't working"),
    ("enhancement", "a2eeef", "New feature or request"),
    ("documentation", "0075ca", "Improvements or additions to documentation"),
    ("good first issue", "7057ff", "Good for newcomers"),
    ("help wanted", "008672", "Extra attention is needed"),
    ("performance", "fbca04", None),
    ("needs-triage", "ededed", "Not yet looked at"),
]
_LOGINS = [
    "octocat",
    "hubot",
    "mona",
    "défi-dev",
    "zoë-k",
    "ramírez",
    "li-wei",
    "ana_b",
    "torvalds-fan",
    "jsonista",
]
_TITLE_BITS = [
    "Parser panics on",
    "Slow decode of",
    "Support for",
    "Wrong error position for",
    "Memory grows when reading",
    "Docs: clarify",
    'Unicode escape "\\u00e9" mishandled in',
    "Segfault 💥 with",
    "Regression in",
    "Add option to skip",
]
_TITLE_OBJ = [
    "deeply nested arrays",
    "large base64 strings",
    "surrogate pairs",
    "NaN and Infinity",
    "JSON Pointer paths",
    "keys with dots",
    "empty objects",
    "numbers > 2^53",
    "BOM-prefixed input",
    "streaming responses",
]


def _iso(rng: random.Random) -> str:
    y, mo, d = rng.randint(18, 24), rng.randint(1, 12), rng.randint(1, 28)
    h, mi, sec = rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59)
    return f"20{y:02d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{sec:02d}Z"


def _user(rng: random.Random) -> dict:
    login = rng.choice(_LOGINS)
    uid = rng.randint(1, 9_999_999)
    api = "https://api.github.com/users/" + login
    return {
        "login": login,
        "id": uid,
        "node_id": "MDQ6VXNlcj" + str(uid),
        "avatar_url": f"https://avatars.githubusercontent.com/u/{uid}?v=4",
        "gravatar_id": "",
        "url": api,
        "html_url": "https://github.com/" + login,
        "followers_url": api + "/followers",
        "following_url": api + "/following{/other_user}",
        "gists_url": api + "/gists{/gist_id}",
        "starred_url": api + "/starred{/owner}{/repo}",
        "repos_url": api + "/repos",
        "events_url": api + "/events{/privacy}",
        "type": "User",
        "site_admin": rng.random() < 0.05,
    }


def _body(rng: random.Random) -> str | None:
    if rng.random() < 0.1:
        return None
    parts = [
        "### Describe the bug\n",
        _text(rng, rng.randint(60, 200)),
        "\n\n### To reproduce\n```python\nimport qjson\n"
        "doc = qjson.parse(b'{\"a\": [1, 2, 3]}')\n"
        f'print(doc.get("a[{rng.randint(0, 9)}]"))\n```\n',
        "\n### Expected\n",
        _text(rng, rng.randint(30, 120)),
        f"\n\n> Tested on café-build №{rng.randint(1, 99)} — works on 0.{rng.randint(1, 9)} ✅,"
        " fails on main ❌\t(see \\\\server\\share)\n",
    ]
    return "".join(parts)


def _issue(rng: random.Random, number: int) -> dict:
    repo = "https://api.github.com/repos/qjson-org/qjson"
    url = f"{repo}/issues/{number}"
    state = "closed" if rng.random() < 0.35 else "open"
    created = _iso(rng)
    labels = []
    for name, color, desc in rng.sample(_LABELS, rng.randint(0, 3)):
        lid = rng.randint(10**8, 10**9)
        labels.append(
            {
                "id": lid,
                "node_id": "LA_kwDO" + str(lid),
                "url": repo + "/labels/" + name.replace(" ", "%20"),
                "name": name,
                "color": color,
                "default": name in ("bug", "enhancement", "documentation"),
                "description": desc,
            }
        )
    assignees = [_user(rng) for _ in range(rng.randint(0, 2))]
    return {
        "url": url,
        "repository_url": repo,
        "labels_url": url + "/labels{/name}",
        "comments_url": url + "/comments",
        "events_url": url + "/events",
        "html_url": f"https://github.com/qjson-org/qjson/issues/{number}",
        "id": rng.randint(10**9, 3 * 10**9),
        "node_id": "I_kwDOHk" + format(rng.getrandbits(40), "x"),
        "number": number,
        "title": f"{rng.choice(_TITLE_BITS)} {rng.choice(_TITLE_OBJ)}",
        "user": _user(rng),
        "labels": labels,
        "state": state,
        "locked": rng.random() < 0.03,
        "assignee": assignees[0] if assignees else None,
        "assignees": assignees,
        "milestone": None,
        "comments": rng.randint(0, 42),
        "created_at": created,
        "updated_at": _iso(rng),
        "closed_at": _iso(rng) if state == "closed" else None,
        "author_association": rng.choice(["OWNER", "MEMBER", "CONTRIBUTOR", "NONE"]),
        "active_lock_reason": None,
        "draft": False if rng.random() < 0.5 else None,
        "body": _body(rng),
        "reactions": {
            "url": url + "/reactions",
            "total_count": rng.randint(0, 30),
            "+1": rng.randint(0, 20),
            "-1": rng.randint(0, 3),
            "laugh": 0,
            "hooray": rng.randint(0, 5),
            "confused": 0,
            "heart": rng.randint(0, 4),
            "rocket": rng.randint(0, 6),
            "eyes": 0,
        },
        "timeline_url": url + "/timeline",
        "performed_via_github_app": None,
        "state_reason": "completed" if state == "closed" else None,
        "score": round(rng.uniform(0.5, 99.5), 3),
    }


def github_issues(size: int = 100 * KiB, seed: int = 7) -> bytes:
    """A dense GitHub-issues-like JSON array of at most `size` bytes (close to it)."""
    rng = random.Random(seed)
    items: list[bytes] = []
    total = 2  # "[" and "]"
    number = 4200
    while True:
        item = _dumps(_issue(rng, number))
        extra = len(item) + (1 if items else 0)
        if items and total + extra > size:
            break
        items.append(item)
        total += extra
        number -= 1
    return b"[" + b",".join(items) + b"]"


def interleaved(repeat: int = 1) -> list[tuple[str, bytes]]:
    """100k, 200k, 500k, 1m chat requests in turn (`repeat` cycles)."""
    rungs = list(ladder(["100k", "200k", "500k", "1m"]))
    return rungs * repeat


def all_payloads() -> Iterator[tuple[str, bytes]]:
    yield from ladder()
    yield "small_request", small_request()
    yield "github_issues", github_issues()


# --------------------------------------------------------------- batch files

_BATCH_MODELS = ["gpt-4o", "gpt-4o-mini", "gpt-4.1", "o3-mini"]


def _batch_templates() -> list[bytes]:
    """Chat-request bodies with placeholders filled per line: text-only ones
    (the ~2 KB request, four models; `@@USER@@` and `@@ASK@@`) and two with
    a base64 image (`@@IMG@@`)."""
    small = json.loads(small_request())
    out = []
    for i, model in enumerate(_BATCH_MODELS):
        small["model"] = model
        small["temperature"] = round(0.1 * (i + 1), 1)
        small["user"] = "@@USER@@"
        small["messages"][-1]["content"] = "@@ASK@@"
        out.append(_dumps(small))
    img = _chat_obj(1, [0], seed=5)
    img["user"] = "@@USER@@"
    img["messages"][1]["content"][1]["image_url"]["url"] = "data:image/png;base64,@@IMG@@"
    out.append(_dumps(img))
    return out


def batch_lines(total_bytes: int, seed: int = 3) -> Iterator[bytes]:
    """Lines of an OpenAI batch-API input file (JSON Lines), ~total_bytes in all.

    Each line is ``{"custom_id", "method", "url", "body": <chat request>}``
    followed by ``\\n``. Bodies: the ~2 KB chat request (four models), and
    on every 7th line one with a base64 image of 6-40 KB; every line has
    its own user id, question and image bytes (no two lines alike).
    """
    templates = _batch_templates()
    rng = random.Random(seed)
    pool = _b64_stream(seed, 4 * MiB).encode("ascii")
    total = 0
    i = 0
    while total < total_bytes:
        user = b"user-%08x" % rng.getrandbits(32)
        if i % 7 == 6:
            n = rng.randrange(6 * KiB, 40 * KiB) // 4 * 4
            off = rng.randrange(0, len(pool) - n) // 4 * 4
            body = templates[4].replace(b"@@IMG@@", pool[off : off + n], 1)
        else:
            ask = _text(rng, rng.randrange(20, 200)).encode("ascii")
            body = templates[rng.randrange(4)].replace(b"@@ASK@@", ask, 1)
        body = body.replace(b"@@USER@@", user, 1)
        line = (
            b'{"custom_id":"request-%d","method":"POST","url":"/v1/chat/completions","body":' % i
            + body
            + b"}\n"
        )
        total += len(line)
        i += 1
        yield line


def batch_file(total_bytes: int, seed: int = 3) -> bytes:
    """A batch-API JSON Lines file of ~total_bytes, in memory."""
    return b"".join(batch_lines(total_bytes, seed))


def write_batch_file(path, total_bytes: int, seed: int = 3) -> int:
    """Write a batch-API JSON Lines file of ~total_bytes to `path` (streaming,
    little memory); returns its size."""
    n = 0
    with open(path, "wb") as f:
        buf: list[bytes] = []
        size = 0
        for line in batch_lines(total_bytes, seed):
            buf.append(line)
            size += len(line)
            if size >= MiB:
                f.write(b"".join(buf))
                n += size
                buf, size = [], 0
        f.write(b"".join(buf))
        n += size
    return n


def _main() -> None:
    import time

    t0 = time.perf_counter()
    rows = list(all_payloads())
    dt = time.perf_counter() - t0
    print(f"{'payload':<14} {'bytes':>10}  sha256[:16]")
    for name, b in rows:
        json.loads(b)  # well-formed
        print(f"{name:<14} {len(b):>10}  {hashlib.sha256(b).hexdigest()[:16]}")
    il = interleaved()
    total = sum(len(b) for _, b in il)
    print(f"{'interleaved':<14} {total:>10}  {' '.join(n for n, _ in il)}")
    print(f"generated in {dt:.3f} s")


if __name__ == "__main__":
    _main()
