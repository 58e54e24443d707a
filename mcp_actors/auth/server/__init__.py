"""Protecting an MCP server with OAuth 2.1: the resource server and its token verifiers.

::

    auth = ResourceServer(
        verifier=JwtVerifier("https://auth.example.com"),
        authorization_servers=["https://auth.example.com"],
        scopes_supported=["notes:read"],
    )
    await serve_http(server, auth=auth)  # or server.run("http", auth=auth)

See :mod:`.resource_server` for what is checked and answered, :mod:`.jwt` and
:mod:`.introspection` for the verifiers, :mod:`.dev_key` for development-only tokens
signed with a local key (``DevKeyVerifier``; loopback addresses only).
"""

from ...transports.http.auth import HttpAnswer, HttpAuthHook, Principal
from .backoff import Backoff
from .dev_key import DevelopmentOnly, DevKeyError, DevKeyVerifier, dev_resource_server
from .introspection import IntrospectionVerifier
from .jwks import JwksCache, JwksStatistics
from .jwt import JwtVerifier
from .resource_server import ResourceServer
from .verifier import InvalidToken, TokenVerifier

__all__ = [
    "Backoff",
    "DevKeyError",
    "DevKeyVerifier",
    "DevelopmentOnly",
    "HttpAnswer",
    "HttpAuthHook",
    "IntrospectionVerifier",
    "InvalidToken",
    "JwksCache",
    "JwksStatistics",
    "JwtVerifier",
    "Principal",
    "ResourceServer",
    "TokenVerifier",
    "dev_resource_server",
]
