"""JWT access tokens (RFC 9068), verified against the authorization server's JWKS.

:class:`JwtVerifier` accepts a token when all of these hold, and names the first that
does not in the ``401``'s ``error_description``:

- it is a compact JWS whose header names an allowed algorithm (never ``none``, never a
  symmetric one by default) and, when ``typ`` is required, ``at+jwt`` — so an ID token
  cannot pass for an access token;
- its signature checks against the key its ``kid`` names in the issuer's JWKS (see
  :class:`~.jwks.JwksCache`; the JWKS URI is the one the issuer's metadata gives unless
  set);
- ``iss`` is the issuer; ``aud`` names our canonical resource URI (RFC 8707);
- ``exp`` has not passed and ``nbf``, if present, has, allowing ``leeway`` seconds of clock
  skew (at most :data:`~.verifier.MAX_LEEWAY`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from typing import Any

import attrs
import trio
from joserfc import jws, jwt
from joserfc.errors import BadSignatureError, JoseError

from ...transports.http_auth import Principal
from ..metadata import authorization_server_metadata_urls
from .fetch import FetchFailed, fetch_json
from .jwks import JwksCache, JwksStatistics
from .verifier import MAX_LEEWAY, InvalidToken, audience_matches, principal_from_claims

#: Asymmetric signature algorithms accepted by default.
DEFAULT_ALGORITHMS = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "EdDSA",
)
#: The ``typ`` values of a JWT access token (RFC 9068 §2.1), compared case-insensitively.
ACCESS_TOKEN_TYPES = frozenset({"at+jwt", "application/at+jwt"})
#: The longest token we parse, in characters.
MAX_TOKEN_LENGTH = 16 * 1024


def _check_leeway(instance: Any, attribute: Any, value: float) -> None:
    if not 0 <= value <= MAX_LEEWAY:
        raise ValueError(f"leeway must be between 0 and {MAX_LEEWAY} seconds, not {value}")


@attrs.define(eq=False)
class JwtVerifier:
    """Verifies JWT access tokens of ``issuer`` (module docstring)."""

    issuer: str
    #: The issuer's JWKS; None: the ``jwks_uri`` of its metadata, discovered once.
    jwks_url: str | None = None
    algorithms: Collection[str] = DEFAULT_ALGORITHMS
    #: Seconds of clock skew tolerated on ``exp`` / ``nbf``.
    leeway: float = attrs.field(default=30.0, validator=_check_leeway)
    #: Require ``typ: at+jwt`` in the header (RFC 9068). Turn off only for an
    #: authorization server that does not write it.
    require_typ: bool = True
    jwks_ttl: float = 300.0
    jwks_min_refetch_interval: float = 30.0
    #: The time now, in seconds since the epoch (a test may move it).
    clock: Callable[[], float] = time.time
    #: The cache of the issuer's keys; None: made at first use, for ``jwks_url`` (or the
    #: discovered ``jwks_uri``) with ``jwks_ttl`` and ``jwks_min_refetch_interval``.
    jwks: JwksCache | None = None
    _discovery: trio.Lock = attrs.field(init=False, factory=trio.Lock)

    async def verify(self, token: str, resource: str) -> Principal:
        if len(token) > MAX_TOKEN_LENGTH:
            raise InvalidToken("the token is too long")
        try:
            header = jws.extract_compact(token.encode("ascii")).headers()
        except (JoseError, ValueError, UnicodeError) as error:
            raise InvalidToken("the token is not a signed JWT") from error
        algorithm = header.get("alg")
        if algorithm not in self.algorithms:
            raise InvalidToken(f"the signature algorithm {algorithm!r} is not accepted")
        typ = header.get("typ")
        if self.require_typ and not (isinstance(typ, str) and typ.lower() in ACCESS_TOKEN_TYPES):
            raise InvalidToken(f"the token type {typ!r} is not an access token (at+jwt)")
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise InvalidToken("the token's kid is not a string")
        key = await (await self._keys()).key(kid)
        if key is None:
            raise InvalidToken(f"the token is signed with an unknown key (kid {kid!r})")
        try:
            decoded = jwt.decode(token, key, algorithms=list(self.algorithms))
        except BadSignatureError as error:
            raise InvalidToken("the token's signature is invalid") from error
        except (JoseError, ValueError) as error:
            raise InvalidToken(f"the token cannot be decoded: {error}") from error
        claims = decoded.claims
        self._check_claims(claims, resource)
        return principal_from_claims(claims)

    def _check_claims(self, claims: dict[str, Any], resource: str) -> None:
        if claims.get("iss") != self.issuer:
            raise InvalidToken("the token was issued by another authorization server")
        if not audience_matches(claims.get("aud"), resource):
            raise InvalidToken(f"the token is not meant for this resource ({resource})")
        now = self.clock()
        expires = claims.get("exp")
        if not isinstance(expires, int | float):
            raise InvalidToken("the token has no expiry (exp)")
        if now - self.leeway >= expires:
            raise InvalidToken("the token has expired")
        not_before = claims.get("nbf")
        if not_before is not None and (
            not isinstance(not_before, int | float) or now + self.leeway < not_before
        ):
            raise InvalidToken("the token is not valid yet (nbf)")

    async def _keys(self) -> JwksCache:
        async with self._discovery:
            if self.jwks is None:
                url = self.jwks_url or await self._discover_jwks_url()
                self.jwks = JwksCache(url, self.jwks_ttl, self.jwks_min_refetch_interval)
            return self.jwks

    async def _discover_jwks_url(self) -> str:
        """The ``jwks_uri`` of the issuer's metadata (RFC 8414, then OpenID discovery, at
        the well-known URLs in the order MCP gives)."""
        for url in authorization_server_metadata_urls(self.issuer):
            try:
                metadata = await fetch_json(url)
            except FetchFailed:
                continue
            jwks_uri = metadata.get("jwks_uri")
            if metadata.get("issuer") == self.issuer and isinstance(jwks_uri, str):
                return jwks_uri
        raise InvalidToken("the authorization server's signing keys cannot be found")

    def jwks_statistics(self) -> JwksStatistics | None:
        """The JWKS cache's figures (None before the first token)."""
        return None if self.jwks is None else self.jwks.statistics()
