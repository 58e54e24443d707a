"""Opaque access tokens, asked of the authorization server (RFC 7662 token introspection).

:class:`IntrospectionVerifier` POSTs each token to the introspection endpoint,
authenticating as the resource server's own client (``client_secret_basic``), and accepts
it when the answer says ``active``, names the expected issuer (when one is configured),
names our canonical resource URI in ``aud`` (RFC 8707; an answer without ``aud`` is
refused unless ``require_audience`` is off), and its ``exp`` has not passed. The token
goes to the introspection endpoint and nowhere else.

Answers are cached by a digest of the token (never the token itself) for
``cache_ttl`` seconds — less when the token expires sooner — in a table of at most
``cache_size`` entries; when full, the entry closest to expiry goes first. A revoked token
may thus be accepted for up to ``cache_ttl`` seconds; set it to 0 to ask every time.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import Any

import attrs

from ...transports.http_auth import Principal
from .fetch import FetchFailed, fetch_json
from .verifier import InvalidToken, audience_matches, principal_from_claims


@attrs.define(eq=False)
class IntrospectionVerifier:
    """Verifies tokens through ``endpoint`` (module docstring)."""

    endpoint: str
    client_id: str
    client_secret: str
    #: The issuer the answers must name (None: not checked).
    issuer: str | None = None
    require_audience: bool = True
    leeway: float = 30.0
    cache_ttl: float = 30.0
    cache_size: int = 1024
    clock: Callable[[], float] = time.time
    _cache: dict[bytes, tuple[float, Principal]] = attrs.field(init=False, factory=dict)

    async def verify(self, token: str, resource: str) -> Principal:
        digest = hashlib.sha256(f"{resource} {token}".encode()).digest()
        now = self.clock()
        cached = self._cache.get(digest)
        if cached is not None and cached[0] > now:
            return cached[1]
        try:
            answer = await fetch_json(
                self.endpoint,
                form={"token": token, "token_type_hint": "access_token"},
                auth=(self.client_id, self.client_secret),
            )
        except FetchFailed as error:
            raise InvalidToken("the token could not be introspected") from error
        principal = self._check(answer, resource, now)
        self._remember(digest, principal, now)
        return principal

    def _check(self, answer: dict[str, Any], resource: str, now: float) -> Principal:
        if answer.get("active") is not True:
            raise InvalidToken("the token is not active")
        if self.issuer is not None and answer.get("iss") != self.issuer:
            raise InvalidToken("the token was issued by another authorization server")
        audience = answer.get("aud")
        if audience is None:
            if self.require_audience:
                raise InvalidToken("the introspection answer names no audience")
        elif not audience_matches(audience, resource):
            raise InvalidToken(f"the token is not meant for this resource ({resource})")
        expires = answer.get("exp")
        if isinstance(expires, int | float) and now - self.leeway >= expires:
            raise InvalidToken("the token has expired")
        return principal_from_claims(answer)

    def _remember(self, digest: bytes, principal: Principal, now: float) -> None:
        if self.cache_ttl <= 0 or self.cache_size <= 0:
            return
        until = now + self.cache_ttl
        if principal.expires_at is not None:
            until = min(until, principal.expires_at)
        for key in [key for key, (deadline, _) in self._cache.items() if deadline <= now]:
            del self._cache[key]
        if len(self._cache) >= self.cache_size:
            del self._cache[min(self._cache, key=lambda key: self._cache[key][0])]
        self._cache[digest] = (until, principal)
