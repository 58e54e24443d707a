"""Why an OAuth client could not authorize a request.

:class:`AuthorizationFailed` is an ``httpx.HTTPError``: raised inside the
``httpx.Auth`` flow, it reaches the transport like any other failed HTTP
exchange, and the request fails with its message (the session goes on).
"""

from __future__ import annotations

import httpx


class AuthorizationFailed(httpx.HTTPError):
    """The OAuth flow could not produce a token (the message says which step failed)."""


class AuthorizationNotCompleted(AuthorizationFailed):
    """The user did not complete the authorization (no answer from the browser in time)."""


class OAuthErrorResponse(AuthorizationFailed):
    """An authorization server answered with an OAuth error (RFC 6749 §5.2)."""

    def __init__(self, where: str, error: str, description: str | None = None) -> None:
        self.error = error
        self.description = description
        detail = f": {description}" if description else ""
        super().__init__(f"{where} refused: {error}{detail}")
