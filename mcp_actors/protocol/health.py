"""The body of an HTTP server's health endpoint (what load balancers poll; not an MCP message).

``{"status": "ok", "sessions": N}`` when the server takes work, else
``{"status": "unavailable", "reason": "..."}``. Encoded here, as every JSON body is,
so that transports encode nothing themselves.
"""

from __future__ import annotations

import msgspec


def health_document(*, reason: str | None, sessions: int) -> bytes:
    """The health body: ok (``reason`` None) with the open ``sessions``, or unavailable."""
    if reason is None:
        return msgspec.json.encode({"status": "ok", "sessions": sessions})
    return msgspec.json.encode({"status": "unavailable", "reason": reason})
