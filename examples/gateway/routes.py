"""The routing table: what the gateway changes in a request before forwarding it.

Each public model name maps to one upstream deployment. For a request the
gateway

- rewrites ``model`` to the upstream's own name,
- adds ``metadata.route`` and ``metadata.messages`` (creating ``metadata`` when
  the request has none; keeping the members it has),
- drops the top-level fields that upstream does not accept,
- applies the route's configured JSON Merge Patch (RFC 7396), if any: members
  set to ``null`` in it are removed, objects are merged, anything else replaces.

Everything else in the body is forwarded as the client sent it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Route:
    upstream_model: str  # the name the upstream knows the model by
    pool: str  # written to metadata.route, for the upstream's accounting
    drop: tuple[str, ...] = ()  # top-level fields the upstream rejects
    merge: dict[str, Any] = field(default_factory=dict)  # an RFC 7396 merge patch; {}: none


ROUTES: dict[str, Route] = {
    # The vision deployment runs at a fixed temperature and rejects the field.
    "gpt-4o": Route("gpt-4o-2024-08-06", pool="vision-eu", drop=("temperature",)),
    # The chat deployment must not receive end-user ids.
    # It also caps the answer length and takes no log probabilities (a merge patch).
    "gpt-4o-mini": Route(
        "gpt-4o-mini-2024-07-18",
        pool="chat-eu",
        drop=("user",),
        merge={"max_tokens": 1024, "logprobs": None},
    ),
}
