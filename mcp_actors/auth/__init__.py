"""OAuth 2.1 authorization for MCP over HTTP: the resource server (``auth.server``) and the
client side. Nothing here is imported by ``import mcp_actors``."""
