"""JWT access tokens (RFC 9068), verified against the authorization server's JWKS.

:class:`JwtVerifier` accepts a token when all of these hold, and names the first that
does not in the ``401``'s ``error_description``:

- it is a compact JWS whose header names an allowed algorithm (never ``none``, never a
  symmetric one by default) and, when ``typ`` is required, ``at+jwt`` — so an ID token
  cannot pass for an access token;
- ``iss`` is the issuer; ``aud`` names our canonical resource URI (RFC 8707);
- ``exp`` has not passed and ``nbf``, if present, has, allowing ``leeway`` seconds of clock
  skew (at most :data:`~.verifier.MAX_LEEWAY`);
- its signature checks against the key its ``kid`` names in the issuer's JWKS (see
  :class:`~.jwks.JwksCache`; the JWKS URI is the one the issuer's metadata gives unless
  set — looked up once, on the first token).

The claims are checked before the signature: a token that could not be valid here
whoever signed it (garbage, another issuer's, expired) is refused without asking the
authorization server for anything. A failed metadata lookup is tried again on a later
token, not before ``backoff`` allows (see :mod:`.backoff`), and one at a time; the same
``backoff`` governs the JWKS fetches.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from typing import Any

import attrs
import msgspec
import trio
from joserfc import jws, jwt
from joserfc.errors import BadSignatureError, JoseError

from ...transports.http.auth import Principal
from ..metadata import authorization_server_metadata_urls
from .backoff import Backoff, Retry
from .fetch import FetchFailed, fetch_json
from .jwks import JwksCache, JwksStatistics
from .verifier import (
    MAX_LEEWAY,
    MAX_TOKEN_LENGTH,
    InvalidToken,
    audience_matches,
    principal_from_claims,
)

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
    #: discovered ``jwks_uri``) with ``jwks_ttl``, ``jwks_min_refetch_interval`` and
    #: ``backoff``.
    jwks: JwksCache | None = None
    #: How long a failing authorization server is left alone (metadata and JWKS).
    backoff: Backoff = attrs.field(factory=Backoff)
    _discovery: trio.Lock = attrs.field(init=False, factory=trio.Lock)
    _discovery_retry: Retry = attrs.field(
        init=False, default=attrs.Factory(lambda self: Retry(self.backoff), takes_self=True)
    )

    async def verify(self, token: str, resource: str) -> Principal:
        if len(token) > MAX_TOKEN_LENGTH:
            raise InvalidToken("the token is too long")
        try:
            signed = jws.extract_compact(token.encode("ascii"))
        except (JoseError, ValueError, UnicodeError) as error:
            raise InvalidToken("the token is not a signed JWT") from error
        header = signed.headers()
        algorithm = header.get("alg")
        if algorithm not in self.algorithms:
            raise InvalidToken(f"the signature algorithm {algorithm!r} is not accepted")
        typ = header.get("typ")
        if self.require_typ and not (isinstance(typ, str) and typ.lower() in ACCESS_TOKEN_TYPES):
            raise InvalidToken(f"the token type {typ!r} is not an access token (at+jwt)")
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise InvalidToken("the token's kid is not a string")
        self._check_claims(_claims_of(signed.payload), resource)  # before any request
        key = await (await self._keys()).key(kid)
        if key is None:
            raise InvalidToken(f"the token is signed with an unknown key (kid {kid!r})")
        try:
            decoded = jwt.decode(token, key, algorithms=list(self.algorithms))
        except BadSignatureError as error:
            raise InvalidToken("the token's signature is invalid") from error
        except (JoseError, ValueError) as error:
            raise InvalidToken(f"the token cannot be decoded: {error}") from error
        return principal_from_claims(decoded.claims)  # the payload checked above

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
        """The JWKS cache, made at first use — after discovering the JWKS URI if not
        given: one lookup at a time, none within ``backoff`` of a failed one."""
        async with self._discovery:
            if self.jwks is None:
                url = self.jwks_url or await self._discover_with_backoff()
                self.jwks = JwksCache(
                    url, self.jwks_ttl, self.jwks_min_refetch_interval, backoff=self.backoff
                )
            return self.jwks

    async def _discover_with_backoff(self) -> str:
        """The discovered JWKS URI; refused at once within ``backoff`` of a failure."""
        retry = self._discovery_retry
        if not retry.ready():
            raise InvalidToken(
                "the authorization server's signing keys cannot be found"
                f" (next try in {retry.remaining():.0f} s)"
            )
        try:
            url = await self._discover_jwks_url()
        except InvalidToken:
            retry.failed()
            raise
        retry.succeeded()
        return url

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


def _claims_of(payload: bytes) -> dict[str, Any]:
    """A JWT's claims set, not yet verified: a JSON object."""
    try:
        claims = msgspec.json.decode(payload)
    except msgspec.DecodeError as error:
        raise InvalidToken("the token's claims are not JSON") from error
    if not isinstance(claims, dict):
        raise InvalidToken("the token's claims are not a JSON object")
    return claims
