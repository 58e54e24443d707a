"""OAuth 2.1 for MCP: what a protected server and its client both need to agree on.

The modules here do no I/O and import nothing else of ours (like ``protocol/``):

- :mod:`~mcp_actors.auth.challenge` builds and parses ``WWW-Authenticate``
  challenges (RFC 9110 §11.6.1), e.g. ``Bearer resource_metadata="…", scope="…"``
  (RFC 6750 §3, RFC 9728 §5.1);
- :mod:`~mcp_actors.auth.metadata` holds the two discovery documents — Protected
  Resource Metadata (RFC 9728) and Authorization Server Metadata (RFC 8414 /
  OpenID Connect Discovery) — with their validation, the well-known URLs to look
  them up at in the order the MCP specification gives, and the canonical resource
  URI of RFC 8707;
- :mod:`~mcp_actors.auth.scopes` parses, formats and combines ``scope`` strings.

The client side of the flow lives in :mod:`mcp_actors.auth.client` (it does HTTP).
"""
