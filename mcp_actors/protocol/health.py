"""The body of an HTTP server's health endpoint (what load balancers poll; not an MCP message).

``{"status": "ok", "sessions": N, "sessionRequests": M}`` when the server takes work
(M: the legacy session requests it served so far: which worker served what), else
``{"status": "unavailable", "reason": "..."}``. Encoded here, as every JSON body is,
so that transports encode nothing themselves.
"""

from __future__ import annotations

import msgspec


def health_document(*, reason: str | None, sessions: int, session_requests: int = 0) -> bytes:
    """The health body: ok (``reason`` None) with the open ``sessions`` and the
    ``session_requests`` served, or unavailable."""
    if reason is None:
        document = {"status": "ok", "sessions": sessions, "sessionRequests": session_requests}
        return msgspec.json.encode(document)
    return msgspec.json.encode({"status": "unavailable", "reason": reason})
