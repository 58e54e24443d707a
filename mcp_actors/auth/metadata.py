"""The discovery documents of OAuth for MCP, where to find them, and how to check them.

A client that gets ``401`` from an MCP server finds out whom to ask for a token in
two steps:

1. **Protected Resource Metadata** (RFC 9728), the server's own document: its
   ``resource`` identifier and its ``authorization_servers``. Its URL comes from the
   ``resource_metadata`` parameter of the ``WWW-Authenticate`` challenge, else from
   the well-known locations of :func:`protected_resource_metadata_urls`.
2. **Authorization Server Metadata** (RFC 8414, or OpenID Connect Discovery 1.0):
   the issuer's endpoints and what it supports, at the well-known locations of
   :func:`authorization_server_metadata_urls`.

The documents are decoded leniently — unknown members are ignored, a member of
the wrong type is a :class:`MetadataError` — and then checked against what the
client expected: :func:`check_protected_resource` (the document describes the
server we talk to) and :func:`check_authorization_server` (the ``issuer`` is the
one we asked; RFC 8414 §3.3 — a mismatch is an attack, not a typo).

Resource identifiers are compared in their canonical form (RFC 8707 §2,
:func:`canonical_uri`): lowercase scheme and host, default port dropped, no
fragment, no trailing slash on a bare host.
"""

from __future__ import annotations

from typing import TypeVar
from urllib.parse import SplitResult, urlsplit, urlunsplit

import msgspec

#: The well-known path suffixes (RFC 9728 §3, RFC 8414 §3, OpenID Connect Discovery §4).
PROTECTED_RESOURCE_SUFFIX = "oauth-protected-resource"
OAUTH_SERVER_SUFFIX = "oauth-authorization-server"
OPENID_SUFFIX = "openid-configuration"
#: Largest metadata document a client reads (bytes); a bigger one is refused.
MAX_METADATA_SIZE = 256 * 1024

_DEFAULT_PORTS = {"http": 80, "https": 443}


class MetadataError(ValueError):
    """A discovery document is malformed, or not the one that was asked for."""


class ProtectedResourceMetadata(msgspec.Struct, kw_only=True, omit_defaults=True):
    """RFC 9728 §2: what a protected resource (an MCP server) says about itself."""

    resource: str
    authorization_servers: list[str] = msgspec.field(default_factory=list)
    scopes_supported: list[str] | None = None
    bearer_methods_supported: list[str] | None = None
    resource_name: str | None = None
    resource_documentation: str | None = None
    jwks_uri: str | None = None
    resource_signing_alg_values_supported: list[str] | None = None
    dpop_signing_alg_values_supported: list[str] | None = None
    dpop_bound_access_tokens_required: bool | None = None


class AuthorizationServerMetadata(msgspec.Struct, kw_only=True, omit_defaults=True):
    """RFC 8414 §2 (and the OpenID Connect Discovery members MCP clients use)."""

    issuer: str
    authorization_endpoint: str | None = None
    token_endpoint: str | None = None
    registration_endpoint: str | None = None
    jwks_uri: str | None = None
    scopes_supported: list[str] | None = None
    response_types_supported: list[str] | None = None
    grant_types_supported: list[str] | None = None
    token_endpoint_auth_methods_supported: list[str] | None = None
    token_endpoint_auth_signing_alg_values_supported: list[str] | None = None
    code_challenge_methods_supported: list[str] | None = None
    introspection_endpoint: str | None = None
    revocation_endpoint: str | None = None
    #: RFC 9207: the authorization response carries ``iss``.
    authorization_response_iss_parameter_supported: bool | None = None
    #: OAuth Client ID Metadata Documents: a URL may serve as ``client_id``.
    client_id_metadata_document_supported: bool | None = None
    #: RFC 9449 (DPoP).
    dpop_signing_alg_values_supported: list[str] | None = None


_Document = TypeVar("_Document", ProtectedResourceMetadata, AuthorizationServerMetadata)


def decode_protected_resource(body: bytes) -> ProtectedResourceMetadata:
    """A Protected Resource Metadata document, decoded (raises :class:`MetadataError`)."""
    return _decode(body, ProtectedResourceMetadata, "protected resource metadata")


def decode_authorization_server(body: bytes) -> AuthorizationServerMetadata:
    """An Authorization Server Metadata document, decoded (raises :class:`MetadataError`)."""
    return _decode(body, AuthorizationServerMetadata, "authorization server metadata")


def _decode(body: bytes, kind: type[_Document], what: str) -> _Document:
    if len(body) > MAX_METADATA_SIZE:
        raise MetadataError(f"the {what} is larger than {MAX_METADATA_SIZE} bytes")
    try:
        return msgspec.json.decode(body, type=kind)
    except msgspec.DecodeError as error:
        raise MetadataError(f"malformed {what}: {error}") from None


# -- where to look --------------------------------------------------------------------


def protected_resource_metadata_urls(server_url: str) -> list[str]:
    """Where an MCP server's Protected Resource Metadata may be, in the order to try:
    the path-inserted well-known URI, then the root one (MCP authorization §2.3.2)."""
    parts = urlsplit(server_url)
    path = parts.path.rstrip("/")
    urls = [_at(parts, f"/.well-known/{PROTECTED_RESOURCE_SUFFIX}{path}")]
    if path:
        urls.append(_at(parts, f"/.well-known/{PROTECTED_RESOURCE_SUFFIX}"))
    return urls


def authorization_server_metadata_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be, in the order MCP gives (authorization §2.3.3).

    With a path (``https://auth.example.com/tenant1``): OAuth with path insertion,
    OpenID Connect with path insertion, OpenID Connect with the path appended.
    Without: OAuth, then OpenID Connect.
    """
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    if not path:
        return [
            _at(parts, f"/.well-known/{OAUTH_SERVER_SUFFIX}"),
            _at(parts, f"/.well-known/{OPENID_SUFFIX}"),
        ]
    return [
        _at(parts, f"/.well-known/{OAUTH_SERVER_SUFFIX}{path}"),
        _at(parts, f"/.well-known/{OPENID_SUFFIX}{path}"),
        _at(parts, f"{path}/.well-known/{OPENID_SUFFIX}"),
    ]


def _at(parts: SplitResult, path: str) -> str:
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


# -- checking what was found ----------------------------------------------------------


def canonical_uri(uri: str) -> str:
    """The canonical form of a resource or issuer identifier (RFC 8707 §2, RFC 3986 §6):
    lowercase scheme and host, the default port dropped, no fragment, and no trailing
    slash on an empty path. Raises :class:`MetadataError` for a non-absolute URI."""
    parts = urlsplit(uri.strip())
    if not parts.scheme or not parts.hostname:
        raise MetadataError(f"not an absolute URI: {uri!r}")
    scheme = parts.scheme.lower()
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        raise MetadataError(f"bad port in {uri!r}") from None
    netloc = host if port is None or port == _DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    if parts.username is not None:
        raise MetadataError(f"credentials in a resource URI: {uri!r}")
    path = "" if parts.path == "/" else parts.path
    return urlunsplit((scheme, netloc, path, parts.query, ""))


def resource_covers(resource: str, server_url: str) -> bool:
    """Whether the identifier ``resource`` names ``server_url`` or a path above it
    (same origin, and ``resource``'s path a segment-wise prefix of the server's)."""
    try:
        outer, inner = urlsplit(canonical_uri(resource)), urlsplit(canonical_uri(server_url))
    except MetadataError:
        return False
    if (outer.scheme, outer.netloc) != (inner.scheme, inner.netloc):
        return False
    prefix = outer.path.rstrip("/")
    return inner.path == prefix or inner.path.startswith(prefix + "/") or not prefix


def check_protected_resource(metadata: ProtectedResourceMetadata, server_url: str) -> None:
    """The document must describe the server we talk to (RFC 9728 §3.3) and name at
    least one authorization server; raises :class:`MetadataError` otherwise."""
    if not resource_covers(metadata.resource, server_url):
        raise MetadataError(
            f"the protected resource metadata is for {metadata.resource!r},"
            f" not for the server at {server_url!r}"
        )
    if not metadata.authorization_servers:
        raise MetadataError("the protected resource metadata names no authorization server")


def same_issuer(one: str, other: str) -> bool:
    """Whether two issuer identifiers are the same (compared in canonical form)."""
    try:
        return canonical_uri(one).rstrip("/") == canonical_uri(other).rstrip("/")
    except MetadataError:
        return False


def check_authorization_server(metadata: AuthorizationServerMetadata, issuer: str) -> None:
    """The document's ``issuer`` must be the issuer we looked up (RFC 8414 §3.3); raises
    :class:`MetadataError` otherwise."""
    if not same_issuer(metadata.issuer, issuer):
        raise MetadataError(
            f"the authorization server metadata is for issuer {metadata.issuer!r}, not {issuer!r}"
        )


def supports_pkce_s256(metadata: AuthorizationServerMetadata) -> bool:
    """Whether the server advertises PKCE with ``S256`` (MCP clients refuse it otherwise)."""
    return "S256" in (metadata.code_challenge_methods_supported or ())
