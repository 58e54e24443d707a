"""The token verifier interface, and the resource identifier a token must be meant for.

A resource server never makes sense of an access token itself: it hands the token to a
:class:`TokenVerifier`, which either vouches for it — who it stands for, which scopes it
carries — or raises :class:`InvalidToken` with a reason for the ``401``. Two ship:
:class:`~.jwt.JwtVerifier` (JWT access tokens, RFC 9068, checked against the authorization
server's published keys) and :class:`~.introspection.IntrospectionVerifier` (opaque tokens,
asked of the authorization server, RFC 7662).

Every verifier also checks that the token was issued *for this server*: its audience must be
our canonical URI (RFC 8707), so a token meant for another service is refused here even when
the same authorization server issued it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from ...transports.http.auth import Principal
from ..metadata import canonical_uri

#: The longest clock skew a verifier may tolerate (``leeway``), in seconds.
MAX_LEEWAY = 300.0
#: The longest token a verifier looks at, in characters.
MAX_TOKEN_LENGTH = 16 * 1024


class InvalidToken(Exception):
    """The token is not acceptable here; the message says why (sent as ``error_description``)."""


class TokenVerifier(Protocol):
    """Turns an access token into a :class:`Principal`, or raises :class:`InvalidToken`."""

    async def verify(self, token: str, resource: str) -> Principal:
        """Check ``token`` and that it is meant for ``resource`` (our canonical URI)."""
        ...


@runtime_checkable
class ResourceRestricted(Protocol):
    """A verifier that protects some resources only (e.g. loopback ones:
    :class:`~.dev_key.DevKeyVerifier`); the resource server asks it before serving."""

    def check_resource(self, resource: str) -> None:
        """Raise (saying why) unless this verifier may protect ``resource``."""
        ...


def audience_matches(audience: object, resource: str) -> bool:
    """Whether a token's ``aud`` (a string or a list of them) names ``resource`` (a
    canonical URI, see :func:`~mcp_actors.auth.metadata.canonical_uri`)."""
    values = [audience] if isinstance(audience, str) else audience
    if not isinstance(values, list):
        return False
    for value in values:
        if not isinstance(value, str):
            continue
        try:
            if canonical_uri(value) == resource:
                return True
        except ValueError:
            continue
    return False


def scopes_of(claims: Mapping[str, Any]) -> frozenset[str]:
    """The scopes a token grants: ``scope`` (space-separated, RFC 9068 / RFC 7662) or
    ``scp`` (a list, as some servers write it)."""
    scope = claims.get("scope")
    if isinstance(scope, str):
        return frozenset(scope.split())
    scp = claims.get("scp")
    if isinstance(scp, list):
        return frozenset(item for item in scp if isinstance(item, str))
    if isinstance(scp, str):
        return frozenset(scp.split())
    return frozenset()


def principal_from_claims(claims: Mapping[str, Any]) -> Principal:
    """The caller a verified token's claims describe."""
    subject = claims.get("sub")
    client_id = claims.get("client_id", claims.get("azp"))
    expires = claims.get("exp")
    return Principal(
        subject if isinstance(subject, str) else None,
        scopes_of(claims),
        client_id if isinstance(client_id, str) else None,
        dict(claims),
        float(expires) if isinstance(expires, int | float) else None,
    )
