"""Development-only access tokens: a key pair on disk, tokens signed with it, and their verifier.

A real deployment verifies tokens issued by an authorization server (:class:`~.jwt.JwtVerifier`).
To try a protected server on your own machine, there is a shorter way — **for
development only**:

1. :func:`generate_key_pair` (``mcp-actors auth keygen DIR``) writes an ES256 key pair:
   ``DIR/private.jwk`` (readable by its owner only) and ``DIR/public.jwk``;
2. :func:`mint_token` (``mcp-actors auth token --key DIR --sub alice --scope notes:read``)
   signs a JWT access token (RFC 9068: ``typ: at+jwt``, ``iss`` :data:`DEV_ISSUER`,
   ``aud`` the server's URL, ``exp`` ``ttl`` seconds on, at most :data:`MAX_TTL`);
3. :class:`DevKeyVerifier` (``mcp-actors run --dev-auth DIR``) accepts exactly the tokens
   signed with that key, checked as :class:`~.jwt.JwtVerifier` checks any token (type,
   issuer, audience, expiry, signature), and :func:`dev_resource_server` protects a
   server with it.

Whoever holds ``private.jwk`` can mint any token, so a server using this verifier must be
reachable from this machine only: a :class:`DevKeyVerifier` refuses to protect (and
refuses every token for) a resource that is not on a loopback address
(:class:`DevelopmentOnly`), and ``mcp-actors run --dev-auth`` refuses to start on one.
"""

from __future__ import annotations

import ipaddress
import json
import os
import secrets
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

import attrs
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import ECKey

from ...transports.http.auth import Principal
from ..scopes import format_scope
from .jwks import JwksCache
from .jwt import JwtVerifier
from .resource_server import ResourceServer
from .verifier import InvalidToken

#: The issuer (``iss``) of development tokens; ``.invalid`` never resolves (RFC 2606).
DEV_ISSUER: Final = "https://mcp-actors.invalid/dev"
#: The audience a token is minted for by default: ``mcp-actors run --transport http``'s URL.
DEFAULT_AUDIENCE: Final = "http://127.0.0.1:8000/mcp"
PRIVATE_KEY_FILE: Final = "private.jwk"
PUBLIC_KEY_FILE: Final = "public.jwk"
#: A development token lives one hour by default, a week at most.
DEFAULT_TTL: Final = 3600.0
MAX_TTL: Final = 7 * 24 * 3600.0
#: The largest key file read.
_MAX_KEY_FILE = 64 * 1024
_ALGORITHM: Final = "ES256"


class DevKeyError(Exception):
    """A key directory that cannot be used (missing, unreadable, not a key); says why."""


class DevelopmentOnly(Exception):
    """A development key asked to protect a server reachable from other machines."""


def generate_key_pair(directory: Path) -> str:
    """Write a new ES256 key pair into ``directory`` (made, mode 0700, if missing) and
    return its key id; an existing key there is never overwritten (:class:`DevKeyError`)."""
    private_file, public_file = directory / PRIVATE_KEY_FILE, directory / PUBLIC_KEY_FILE
    for existing in (private_file, public_file):
        if existing.exists():
            raise DevKeyError(f"{existing} exists already: keep it, or choose another directory")
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as error:
        raise DevKeyError(f"cannot make {directory}: {error.strerror}") from None
    key = ECKey.generate_key("P-256", auto_kid=True)
    _write(private_file, key.as_dict(private=True), mode=0o600)
    _write(public_file, key.as_dict(private=False), mode=0o644)
    return str(key.kid)


def mint_token(
    directory: Path,
    *,
    subject: str,
    scopes: Iterable[str] = (),
    audience: str = DEFAULT_AUDIENCE,
    ttl: float = DEFAULT_TTL,
    clock: Callable[[], float] = time.time,
) -> str:
    """A JWT access token for ``subject`` with ``scopes``, meant for the server at
    ``audience``, valid ``ttl`` seconds (0 < ttl <= :data:`MAX_TTL`), signed with the
    private key in ``directory``."""
    if not subject:
        raise DevKeyError("a token needs a subject (--sub): who it stands for")
    if not 0 < ttl <= MAX_TTL:
        raise DevKeyError(f"the lifetime must be more than 0 and at most {MAX_TTL:g} seconds")
    parts = urlsplit(audience)
    if parts.scheme not in ("http", "https", "ws", "wss") or not parts.hostname:
        raise DevKeyError(f"the audience must be the server's URL, not {audience!r}")
    key = _read_key(directory / PRIVATE_KEY_FILE, private=True)
    now = int(clock())
    claims: dict[str, Any] = {
        "iss": DEV_ISSUER,
        "sub": subject,
        "aud": audience,
        "client_id": "mcp-actors-dev",
        "iat": now,
        "exp": now + int(ttl),
        "jti": secrets.token_urlsafe(16),
    }
    scope = format_scope(sorted(set(scopes)))
    if scope:
        claims["scope"] = scope
    header = {"alg": _ALGORITHM, "typ": "at+jwt", "kid": key.kid}
    return jwt.encode(header, claims, key, algorithms=[_ALGORITHM])


@attrs.define(eq=False)
class DevKeyVerifier:
    """Accepts the tokens signed with the development key in ``directory`` (module
    docstring) — **development only**: loopback resources only."""

    directory: Path = attrs.field(converter=Path)
    #: Seconds of clock skew tolerated on ``exp``.
    leeway: float = 0.0
    #: The time now, in seconds since the epoch (a test may move it).
    clock: Callable[[], float] = time.time
    _verifier: JwtVerifier = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        public = _read_key(self.directory / PUBLIC_KEY_FILE, private=False).as_dict(private=False)
        jwks = {"keys": [public]}

        async def fetch(url: str) -> dict[str, Any]:
            return jwks

        self._verifier = JwtVerifier(
            DEV_ISSUER,
            algorithms=(_ALGORITHM,),
            leeway=self.leeway,
            clock=self.clock,
            jwks=JwksCache(str(self.directory / PUBLIC_KEY_FILE), fetch=fetch),
        )

    def check_resource(self, resource: str) -> None:
        """Raise :class:`DevelopmentOnly` unless ``resource`` is on a loopback address."""
        self.check_host(urlsplit(resource).hostname or "")

    @staticmethod
    def check_host(host: str) -> None:
        """Raise :class:`DevelopmentOnly` unless ``host`` is ``localhost`` or a loopback
        address (where a server using this verifier may listen)."""
        if not _is_loopback(host):
            raise DevelopmentOnly(
                f"a development key protects loopback addresses only, not {host}: anyone"
                " holding its private key can mint tokens; bind to 127.0.0.1, or verify"
                " the tokens of an authorization server (JwtVerifier)"
            )

    async def verify(self, token: str, resource: str) -> Principal:
        try:
            self.check_resource(resource)
        except DevelopmentOnly as error:
            raise InvalidToken(str(error)) from None
        return await self._verifier.verify(token, resource)


def dev_resource_server(
    directory: Path, *, host: str | None = None, scopes_supported: Sequence[str] | None = None
) -> ResourceServer:
    """A resource server accepting the tokens of the development key in ``directory``
    (:class:`DevKeyVerifier`). ``host``: where it will listen, checked now (a
    non-loopback one raises :class:`DevelopmentOnly`) rather than once bound."""
    verifier = DevKeyVerifier(directory)
    if host is not None:
        verifier.check_host(host)
    return ResourceServer(
        verifier=verifier,
        authorization_servers=[DEV_ISSUER],
        scopes_supported=scopes_supported,
        resource_name="development server (tokens from mcp-actors auth token)",
    )


def _is_loopback(host: str) -> bool:
    host = host.strip("[]")
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _write(path: Path, key: dict[str, Any], *, mode: int) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(descriptor, "w") as file:
        json.dump(key, file, indent=2)
        file.write("\n")


def _read_key(path: Path, *, private: bool) -> ECKey:
    try:
        with path.open("rb") as file:
            text = file.read(_MAX_KEY_FILE + 1)
    except FileNotFoundError:
        raise DevKeyError(
            f"no key at {path}: make a key pair with mcp-actors auth keygen {path.parent}"
        ) from None
    except OSError as error:
        raise DevKeyError(f"cannot read {path}: {error.strerror}") from None
    try:
        if len(text) > _MAX_KEY_FILE:
            raise ValueError("the file is too large")
        key = ECKey.import_key(json.loads(text))
    except (JoseError, ValueError, TypeError) as error:
        raise DevKeyError(f"{path} is not an EC key written by keygen: {error}") from None
    if private and not key.is_private:
        raise DevKeyError(f"{path} holds no private key")
    return key
