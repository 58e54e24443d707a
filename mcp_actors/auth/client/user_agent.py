"""The user-agent step of the authorization code flow: send the user to the
authorization server, and get back what it redirects to the client.

The OAuth client builds the authorization URL; a :class:`UserAgent` takes the
user there (a browser) and returns the query parameters of the redirect to its
``redirect_uri`` (``code``, ``state``, maybe ``iss`` — or ``error``). Two come
with the package:

- :class:`HeadlessUserAgent` — no user: it GETs the authorization URL and reads
  the redirect's ``Location``. For tests, and for authorization servers that
  approve without a login page (the conformance suite's);
- :class:`~mcp_actors.auth.client.loopback.LoopbackUserAgent` — for a person at
  a terminal: opens the browser (or prints the URL) and listens on a loopback
  redirect URI for the answer (RFC 8252 §7.3).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol
from urllib.parse import parse_qsl, urlsplit

from .errors import AuthorizationFailed
from .http import oauth_http_client


class UserAgent(Protocol):
    """Takes the user to the authorization URL; returns the redirect's query parameters."""

    @property
    def redirect_uri(self) -> str:
        """Where the authorization server sends the user back (registered with the client)."""
        ...

    async def authorize(self, authorization_url: str) -> Mapping[str, str]: ...


def redirect_parameters(location: str, redirect_uri: str) -> dict[str, str]:
    """The query parameters of a redirect to ``redirect_uri`` (raises if it goes elsewhere)."""
    target, expected = urlsplit(location), urlsplit(redirect_uri)
    if (target.scheme, target.netloc, target.path) != (
        expected.scheme,
        expected.netloc,
        expected.path,
    ):
        raise AuthorizationFailed(f"the authorization server redirected to {location!r}")
    return dict(parse_qsl(target.query, keep_blank_values=True))


class HeadlessUserAgent:
    """Follows the authorization URL without a browser (see the module docstring)."""

    def __init__(
        self, redirect_uri: str = "http://127.0.0.1:33418/callback", timeout: float = 30.0
    ) -> None:
        self._redirect_uri = redirect_uri
        self.timeout = timeout

    @property
    def redirect_uri(self) -> str:
        return self._redirect_uri

    async def authorize(self, authorization_url: str) -> Mapping[str, str]:
        async with oauth_http_client(self.timeout) as http:
            response = await http.get(authorization_url)
        location = response.headers.get("location")
        if not response.is_redirect or not location:
            raise AuthorizationFailed(
                f"the authorization endpoint answered HTTP {response.status_code}, not a redirect"
            )
        return redirect_parameters(str(response.url.join(location)), self._redirect_uri)
