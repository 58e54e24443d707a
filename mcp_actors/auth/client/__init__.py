"""The client half of OAuth for MCP: :class:`OAuthClient`, an ``httpx.Auth``.

    from mcp_actors import open_client
    from mcp_actors.auth.client import OAuthClient

    async with open_client("https://mcp.example.com/mcp", auth=OAuthClient()) as client:
        ...

See :mod:`~mcp_actors.auth.client.oauth` for the flow, and the grants,
registrations, token stores and user agents it takes.
"""

from .assertions import DPoPKey, PrivateKeyJwt
from .authorization_code import AuthorizationCodeGrant
from .errors import AuthorizationFailed, AuthorizationNotCompleted, OAuthErrorResponse
from .grants import ClientCredentialsGrant, IdJagGrant, JwtBearerGrant
from .oauth import ClientRegistration, Grant, OAuthClient
from .token_endpoint import TokenRequests
from .tokens import (
    Authorization,
    FileTokenStore,
    MemoryTokenStore,
    RegisteredClient,
    Tokens,
    TokenStore,
)
from .user_agent import HeadlessUserAgent, UserAgent

__all__ = [
    "Authorization",
    "AuthorizationCodeGrant",
    "AuthorizationFailed",
    "AuthorizationNotCompleted",
    "ClientCredentialsGrant",
    "ClientRegistration",
    "DPoPKey",
    "FileTokenStore",
    "Grant",
    "HeadlessUserAgent",
    "IdJagGrant",
    "JwtBearerGrant",
    "MemoryTokenStore",
    "OAuthClient",
    "OAuthErrorResponse",
    "PrivateKeyJwt",
    "RegisteredClient",
    "TokenRequests",
    "TokenStore",
    "Tokens",
    "UserAgent",
]
