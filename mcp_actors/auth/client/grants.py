"""The grants without a user at a browser: machine-to-machine and enterprise flows.

- :class:`ClientCredentialsGrant` — the client acts on its own behalf (OAuth 2.1
  §4.2; MCP extension ``io.modelcontextprotocol/oauth-client-credentials``),
  authenticated with a client secret or a ``private_key_jwt`` assertion;
- :class:`JwtBearerGrant` — a JWT the workload already holds (its platform's
  identity token) is the grant (RFC 7523 §2.1; workload identity federation). A
  refused assertion is final: no retry, no other grant;
- :class:`IdJagGrant` — enterprise-managed authorization (ID-JAG): the user's ID
  token from the enterprise identity provider is exchanged there (RFC 8693) for an
  Identity Assertion JWT Authorization Grant naming this authorization server and
  resource, which is then the JWT-bearer grant at the authorization server.

A JWT or ID token is given as a string or as an async function returning a fresh
one (an :data:`AssertionSource`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import msgspec

from .errors import AuthorizationFailed, OAuthErrorResponse
from .token_endpoint import MAX_RESPONSE_SIZE, TokenRequests, oauth_error
from .tokens import Tokens

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"

#: A JWT as a string, or an async function returning a fresh one.
AssertionSource = str | Callable[[], Awaitable[str]]


async def _resolve(source: AssertionSource) -> str:
    return source if isinstance(source, str) else await source()


def _with_scope(form: dict[str, str], scope: str | None) -> dict[str, str]:
    return form if scope is None else {**form, "scope": scope}


class ClientCredentialsGrant:
    """Tokens for the client itself (``grant_type=client_credentials``)."""

    grant_types: tuple[str, ...] = ("client_credentials",)

    async def obtain(self, flow: TokenRequests, scope: str | None) -> Tokens:
        return await flow.request(_with_scope({"grant_type": "client_credentials"}, scope), scope)


class JwtBearerGrant:
    """Tokens for a JWT assertion the workload holds (RFC 7523 §2.1)."""

    grant_types: tuple[str, ...] = (JWT_BEARER,)

    def __init__(self, assertion: AssertionSource) -> None:
        self.assertion = assertion

    async def obtain(self, flow: TokenRequests, scope: str | None) -> Tokens:
        form = {"grant_type": JWT_BEARER, "assertion": await _resolve(self.assertion)}
        return await flow.request(_with_scope(form, scope), scope)


class _ExchangeResponse(msgspec.Struct):
    access_token: str
    issued_token_type: str | None = None


class IdJagGrant:
    """Enterprise-managed authorization: ID token → ID-JAG → access token (module docstring)."""

    grant_types: tuple[str, ...] = (JWT_BEARER,)

    def __init__(
        self,
        *,
        idp_token_endpoint: str,
        id_token: AssertionSource,
        idp_client_id: str,
        idp_client_secret: str | None = None,
    ) -> None:
        self.idp_token_endpoint = idp_token_endpoint
        self.id_token = id_token
        self.idp_client_id = idp_client_id
        self.idp_client_secret = idp_client_secret

    async def obtain(self, flow: TokenRequests, scope: str | None) -> Tokens:
        id_jag = await self._exchange(flow, scope)
        return await flow.request(
            _with_scope({"grant_type": JWT_BEARER, "assertion": id_jag}, scope), scope
        )

    async def _exchange(self, flow: TokenRequests, scope: str | None) -> str:
        """RFC 8693 token exchange at the identity provider: the ID-JAG."""
        form = {
            "grant_type": TOKEN_EXCHANGE,
            "requested_token_type": ID_JAG_TYPE,
            "subject_token": await _resolve(self.id_token),
            "subject_token_type": ID_TOKEN_TYPE,
            "audience": flow.issuer,
            "resource": flow.resource,
            "client_id": self.idp_client_id,
        }
        if self.idp_client_secret is not None:
            form["client_secret"] = self.idp_client_secret
        response = await flow.http.post(
            self.idp_token_endpoint,
            data=_with_scope(form, scope),
            headers={"accept": "application/json"},
        )
        where = "the identity provider's token exchange"
        if response.status_code != 200:
            error = oauth_error(response)
            if error is not None:
                raise OAuthErrorResponse(where, error.error, error.error_description)
            raise AuthorizationFailed(f"{where} answered HTTP {response.status_code}")
        try:
            answer = msgspec.json.decode(
                response.content[:MAX_RESPONSE_SIZE], type=_ExchangeResponse
            )
        except msgspec.DecodeError as problem:
            raise AuthorizationFailed(f"{where} sent a malformed answer: {problem}") from None
        if answer.issued_token_type not in (None, ID_JAG_TYPE):
            raise AuthorizationFailed(f"{where} issued a {answer.issued_token_type}, not an ID-JAG")
        return answer.access_token
