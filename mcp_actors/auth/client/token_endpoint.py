"""Talking to the token endpoint: how the client authenticates, and what comes back.

A token request is a form POST (RFC 6749 §3.2). The client proves who it is with
the method it registered (``token_endpoint_auth_method``, RFC 7591 §2):

- ``none`` — a public client: only ``client_id`` in the form (PKCE protects the code);
- ``client_secret_basic`` — HTTP Basic with the form-urlencoded id and secret
  (RFC 6749 §2.3.1);
- ``client_secret_post`` — ``client_id`` and ``client_secret`` in the form;
- ``private_key_jwt`` — a signed assertion (RFC 7523 §2.2), see
  :mod:`~mcp_actors.auth.client.assertions`.

The answer is a JSON token response (RFC 6749 §5.1) or an error (§5.2), read by
:func:`parse_token_response`.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Sequence
from urllib.parse import quote_plus

import httpx
import msgspec

from ..metadata import AuthorizationServerMetadata
from ..scopes import format_scope
from .discovery import Discovery
from .errors import AuthorizationFailed, OAuthErrorResponse
from .tokens import RegisteredClient, Tokens

#: Largest token-endpoint answer read (bytes).
MAX_RESPONSE_SIZE = 64 * 1024

#: Builds a ``private_key_jwt`` client assertion for a token endpoint URL.
AssertionSigner = Callable[[str, str], str]


class _TokenResponse(msgspec.Struct):
    access_token: str
    token_type: str = "Bearer"
    expires_in: float | None = None
    refresh_token: str | None = None
    scope: str | None = None


class _ErrorResponse(msgspec.Struct):
    error: str
    error_description: str | None = None


def choose_auth_method(has_secret: bool, supported: Sequence[str] | None) -> str:
    """The method a client with (or without) a secret uses at a server supporting
    ``supported`` (RFC 8414's default when unsaid: ``client_secret_basic``)."""
    if not has_secret:
        return "none"
    offered = list(supported) if supported else ["client_secret_basic"]
    for method in ("client_secret_basic", "client_secret_post"):
        if method in offered:
            return method
    return "client_secret_basic"


def authenticate(
    client: RegisteredClient,
    form: dict[str, str],
    headers: dict[str, str],
    token_endpoint: str,
    signer: AssertionSigner | None = None,
) -> None:
    """Add the client's authentication to a token request's ``form`` and ``headers``."""
    method = client.token_endpoint_auth_method
    if method == "client_secret_basic":
        if client.client_secret is None:
            raise AuthorizationFailed("client_secret_basic needs a client secret")
        pair = f"{quote_plus(client.client_id)}:{quote_plus(client.client_secret)}"
        headers["authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    elif method == "client_secret_post":
        if client.client_secret is None:
            raise AuthorizationFailed("client_secret_post needs a client secret")
        form["client_id"] = client.client_id
        form["client_secret"] = client.client_secret
    elif method == "private_key_jwt":
        if signer is None:
            raise AuthorizationFailed("private_key_jwt needs a signing key")
        form["client_id"] = client.client_id
        form["client_assertion_type"] = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
        form["client_assertion"] = signer(client.client_id, token_endpoint)
    elif method == "none":
        form["client_id"] = client.client_id
    else:
        raise AuthorizationFailed(f"unsupported token endpoint auth method {method!r}")


def oauth_error(response: httpx.Response) -> _ErrorResponse | None:
    """The OAuth error (RFC 6749 §5.2) in a response body, if it holds one."""
    try:
        return msgspec.json.decode(response.content[:MAX_RESPONSE_SIZE], type=_ErrorResponse)
    except msgspec.DecodeError:
        return None


def parse_token_response(
    response: httpx.Response, requested_scope: str | None, where: str = "the token endpoint"
) -> Tokens:
    """The tokens of a successful answer; raises :class:`OAuthErrorResponse` or
    :class:`AuthorizationFailed` for an error or a malformed answer."""
    if len(response.content) > MAX_RESPONSE_SIZE:
        raise AuthorizationFailed(f"{where} answered more than {MAX_RESPONSE_SIZE} bytes")
    if response.status_code != 200:
        error = oauth_error(response)
        if error is not None:
            raise OAuthErrorResponse(where, error.error, error.error_description)
        raise AuthorizationFailed(f"{where} answered HTTP {response.status_code}")
    try:
        answer = msgspec.json.decode(response.content, type=_TokenResponse)
    except msgspec.DecodeError as problem:
        raise AuthorizationFailed(f"{where} sent a malformed token response: {problem}") from None
    expires_at = None if answer.expires_in is None else time.time() + answer.expires_in
    return Tokens(
        access_token=answer.access_token,
        token_type=answer.token_type,
        refresh_token=answer.refresh_token,
        expires_at=expires_at,
        scope=format_scope((answer.scope or requested_scope or "").split()),
    )


class TokenRequests:
    """The token requests of one authorization: authenticated, with the resource indicator."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        client: RegisteredClient,
        token_endpoint: str,
        resource: str,
        discovery: Discovery | None = None,
        *,
        signer: AssertionSigner | None = None,
    ) -> None:
        self.http = http
        self.signer = signer
        self.client = client
        self.token_endpoint = token_endpoint
        self.resource = resource
        self.discovery = discovery

    @property
    def metadata(self) -> AuthorizationServerMetadata:
        if self.discovery is None:
            raise AuthorizationFailed("this step needs the authorization server metadata")
        return self.discovery.metadata

    async def request(self, form: dict[str, str], requested_scope: str | None = None) -> Tokens:
        """POST ``form`` (plus the resource indicator) to the token endpoint, authenticated;
        the tokens of the answer (granted ``requested_scope`` when it says no ``scope``)."""
        form = {**form, "resource": self.resource}
        headers = {"accept": "application/json"}
        authenticate(self.client, form, headers, self.token_endpoint, self.signer)
        response = await self.http.post(self.token_endpoint, data=form, headers=headers)
        return parse_token_response(response, requested_scope)

    async def refresh(self, tokens: Tokens) -> Tokens:
        """New tokens for a refresh token (RFC 6749 §6); the old refresh token is kept
        when the answer brings none."""
        assert tokens.refresh_token is not None
        fresh = await self.request(
            {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token}
        )
        return msgspec.structs.replace(
            fresh,
            refresh_token=fresh.refresh_token or tokens.refresh_token,
            scope=fresh.scope or tokens.scope,
        )
