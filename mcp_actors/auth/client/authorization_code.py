"""The authorization code grant with PKCE (OAuth 2.1 §4.1, RFC 7636), as MCP requires.

1. Refuse an authorization server that does not advertise PKCE ``S256``.
2. Make a code verifier (high-entropy, URL-safe) and its challenge
   ``BASE64URL(SHA-256(verifier))``, and a ``state``.
3. Send the user (the :class:`~.user_agent.UserAgent`) to the authorization
   endpoint with ``response_type=code``, the client id, the redirect URI, the
   challenge, the ``state``, the ``scope`` and the ``resource`` (RFC 8707).
4. Check the answer: an ``error`` fails; the ``state`` must match; the ``iss``
   (RFC 9207) must be exactly the issuer of the metadata when present, and must be
   present when the server advertises
   ``authorization_response_iss_parameter_supported`` — checked *before* the code
   is redeemed, so a code obtained by a mix-up attacker never reaches a token
   endpoint.
5. Redeem the code at the token endpoint with the verifier and the same resource.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Mapping
from urllib.parse import urlencode

from ..metadata import AuthorizationServerMetadata, supports_pkce_s256
from .errors import AuthorizationFailed, OAuthErrorResponse
from .token_endpoint import TokenRequests
from .tokens import Tokens
from .user_agent import UserAgent


def pkce_pair() -> tuple[str, str]:
    """A PKCE code verifier (86 URL-safe characters) and its S256 challenge."""
    verifier = secrets.token_urlsafe(64)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def check_issuer(answer: Mapping[str, str], metadata: AuthorizationServerMetadata) -> None:
    """RFC 9207 §2.4: compare the answer's ``iss`` to the issuer, by simple string
    comparison; required when the server says it sends one."""
    iss = answer.get("iss")
    if iss is None:
        if metadata.authorization_response_iss_parameter_supported:
            raise AuthorizationFailed(
                "the authorization response has no iss, though the server advertises it"
            )
        return
    if iss != metadata.issuer:
        raise AuthorizationFailed(
            f"the authorization response comes from issuer {iss!r}, not {metadata.issuer!r}"
        )


class AuthorizationCodeGrant:
    """Tokens through a user's authorization (the module docstring)."""

    grant_types = ("authorization_code", "refresh_token")

    def __init__(self, user_agent: UserAgent) -> None:
        self.user_agent = user_agent

    @property
    def redirect_uri(self) -> str:
        return self.user_agent.redirect_uri

    async def obtain(self, flow: TokenRequests, scope: str | None) -> Tokens:
        metadata = flow.metadata
        if not supports_pkce_s256(metadata):
            raise AuthorizationFailed(
                f"{metadata.issuer} does not advertise PKCE S256"
                " (code_challenge_methods_supported): refusing to authorize"
            )
        if not metadata.authorization_endpoint:
            raise AuthorizationFailed(f"{metadata.issuer} names no authorization endpoint")
        verifier, challenge = pkce_pair()
        state = secrets.token_urlsafe(24)
        query = {
            "response_type": "code",
            "client_id": flow.client.client_id,
            "redirect_uri": self.redirect_uri,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": state,
            "resource": flow.resource,
        }
        if scope is not None:
            query["scope"] = scope
        endpoint = metadata.authorization_endpoint
        separator = "&" if "?" in endpoint else "?"
        answer = await self.user_agent.authorize(f"{endpoint}{separator}{urlencode(query)}")
        if "error" in answer:
            raise OAuthErrorResponse(
                "the authorization request", answer["error"], answer.get("error_description")
            )
        if not secrets.compare_digest(answer.get("state", ""), state):
            raise AuthorizationFailed("the authorization response's state does not match")
        check_issuer(answer, metadata)
        code = answer.get("code")
        if not code:
            raise AuthorizationFailed("the authorization response has no code")
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self.redirect_uri,
            "code_verifier": verifier,
        }
        return await flow.request(form, requested_scope=scope)
