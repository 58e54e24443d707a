"""Discovery: from an MCP server's ``401`` to the authorization server to ask.

:func:`discover` fetches the server's Protected Resource Metadata (the URL of the
challenge's ``resource_metadata``, else the well-known URLs in the spec's order),
checks that it describes this server, then the metadata of its first
authorization server (RFC 8414, then OpenID Connect Discovery, in the spec's
order), and checks that its ``issuer`` is the one asked for.

A server that publishes no resource metadata at all is treated as the
2025-03-26 revision did: its origin is the authorization server.
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit, urlunsplit

import attrs
import httpx

from ..challenge import Challenge
from ..metadata import (
    MAX_METADATA_SIZE,
    AuthorizationServerMetadata,
    MetadataError,
    ProtectedResourceMetadata,
    authorization_server_metadata_urls,
    canonical_uri,
    check_authorization_server,
    check_protected_resource,
    decode_authorization_server,
    decode_protected_resource,
    protected_resource_metadata_urls,
)
from .errors import AuthorizationFailed

log = logging.getLogger("mcp_actors.auth.client")


@attrs.frozen
class Discovery:
    """What discovery found for one MCP server."""

    #: The ``resource`` to name in authorization and token requests (RFC 8707).
    resource: str
    #: The server's resource metadata (None for a server that publishes none).
    resource_metadata: ProtectedResourceMetadata | None
    #: The authorization server's identifier, as the resource metadata names it.
    issuer: str
    metadata: AuthorizationServerMetadata


async def discover(
    http: httpx.AsyncClient, server_url: str, challenge: Challenge | None
) -> Discovery:
    """Find the authorization server of ``server_url`` (see the module docstring)."""
    hinted = challenge.get("resource_metadata") if challenge is not None else None
    candidates = list(
        dict.fromkeys(
            [*([hinted] if hinted else []), *protected_resource_metadata_urls(server_url)]
        )
    )
    resource_metadata = None
    for url in candidates:
        body = await _fetch(http, url)
        if body is None:
            continue
        try:
            resource_metadata = decode_protected_resource(body)
        except MetadataError as error:
            log.info("ignoring the resource metadata at %s: %s", url, error)
            continue
        break
    if resource_metadata is None:
        origin = _origin(server_url)
        log.info("%s publishes no resource metadata: asking %s", server_url, origin)
        return Discovery(
            canonical_uri(server_url),
            None,
            origin,
            await _server_metadata(http, origin, legacy=True),
        )
    try:
        check_protected_resource(resource_metadata, server_url)
    except MetadataError as error:
        raise AuthorizationFailed(str(error)) from None
    issuer = resource_metadata.authorization_servers[0]
    metadata = await _server_metadata(http, issuer, legacy=False)
    return Discovery(resource_metadata.resource, resource_metadata, issuer, metadata)


async def _server_metadata(
    http: httpx.AsyncClient, issuer: str, *, legacy: bool
) -> AuthorizationServerMetadata:
    for url in authorization_server_metadata_urls(issuer):
        body = await _fetch(http, url)
        if body is None:
            continue
        try:
            metadata = decode_authorization_server(body)
            check_authorization_server(metadata, issuer)
        except MetadataError as error:
            raise AuthorizationFailed(f"{url}: {error}") from None
        return metadata
    if legacy:  # 2025-03-26: the default endpoints at the server's origin
        return AuthorizationServerMetadata(
            issuer=issuer,
            authorization_endpoint=f"{issuer}/authorize",
            token_endpoint=f"{issuer}/token",
            registration_endpoint=f"{issuer}/register",
            code_challenge_methods_supported=["S256"],
        )
    raise AuthorizationFailed(f"no authorization server metadata found for {issuer}")


async def _fetch(http: httpx.AsyncClient, url: str) -> bytes | None:
    """The body of a 200 answer to GET ``url`` (at most the metadata size limit), else None."""
    try:
        async with http.stream("GET", url, headers={"accept": "application/json"}) as response:
            if response.status_code != 200:
                return None
            body = b""
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_METADATA_SIZE:
                    raise AuthorizationFailed(f"{url} is larger than {MAX_METADATA_SIZE} bytes")
            return body
    except httpx.TransportError as error:
        log.info("GET %s failed: %s", url, error)
        return None


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", ""))
