"""Scopes on tools, resources and prompts: what a caller's access token must carry.

A tool, resource or prompt declared with ``scopes=[...]`` may be used only by a caller
whose token grants all of them. On a server protected by an OAuth resource server
(``serve_http(server, auth=ResourceServer(...))``) this is checked twice:

- at the HTTP front end, before the request reaches a session, through
  :func:`scopes_needed`: a missing scope is ``403 insufficient_scope`` with the ``scope``
  the client needs to step up (see :mod:`mcp_actors.auth.server.resource_server`);
- in the handler, through :func:`require_scopes`, for transports with no HTTP answer per
  message (WebSocket takes its token once, at the upgrade) and as a second line: a
  JSON-RPC error (-32000) whose ``data`` says ``insufficient_scope`` and the ``scope``.

A transport that authenticates nobody (stdio, memory, an HTTP server without ``auth``)
has no caller to check (``ctx.principal`` is None), and scopes are not enforced there:
on stdio the spec has the server take its credentials from the environment instead.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import TYPE_CHECKING

from ..protocol.errors import REQUEST_REJECTED, McpError
from ..transports.http.auth import Principal

if TYPE_CHECKING:
    from .protocols import ScopedServer


def scope_set(scopes: Iterable[str]) -> frozenset[str]:
    """Declared scopes as a set; ValueError for one that is not an OAuth scope token
    (RFC 6749 §3.3: printable ASCII without space, ``"`` or ``\\``), or a bare string
    (which would be taken letter by letter)."""
    if isinstance(scopes, str):
        raise ValueError(f"scopes must be a list of scope names, not the string {scopes!r}")
    result = frozenset(scopes)
    for scope in result:
        if not scope or any(not 0x21 <= ord(c) <= 0x7E or c in '"\\' for c in scope):
            raise ValueError(f"not an OAuth scope: {scope!r}")
    return result


def scopes_needed(server: ScopedServer, method: str, target: str | None) -> frozenset[str]:
    """The scopes a request ``method`` acting on ``target`` (a tool or prompt name, a
    resource URI) needs; empty for anything undeclared or unknown (its handler answers)."""
    if target is None:
        return frozenset()
    if method == "tools/call":
        tool = server.find_tool(target)
        return frozenset() if tool is None else tool.scopes
    if method == "prompts/get":
        prompt = server.find_prompt(target)
        return frozenset() if prompt is None else prompt.scopes
    if method in ("resources/read", "resources/subscribe"):
        return server.resource_scopes(target)
    return frozenset()


def require_scopes(principal: Principal | None, needed: frozenset[str], what: str) -> None:
    """Refuse (-32000, ``insufficient_scope``) a caller whose token lacks ``needed``."""
    if principal is None or not needed or principal.has_scopes(needed):
        return
    scope = " ".join(sorted(needed))
    raise McpError(
        REQUEST_REJECTED,
        f"Forbidden: {what} needs the scopes {scope!r}",
        {"error": "insufficient_scope", "scope": scope},
    )


def caller_key(principal: Principal | None) -> str:
    """Who a caller is, as a string to bind things to (an MRTR ``requestState``): the
    token's subject and client; "" for a transport that authenticates nobody."""
    if principal is None:
        return ""
    return f"{principal.subject or ''} {principal.client_id or ''}"


def client_identity(
    principal: Principal | None, address: str | None, connection: object
) -> Hashable:
    """Who a per-client bound counts against (listen streams, parked MRTR handlers).

    The authenticated caller when the transport authenticates (the token's subject and
    OAuth client: the same caller from several addresses is one client); else the
    peer's network address, when the transport has one (HTTP, WebSocket: every request
    or connection from one IP is one client, so clients behind one proxy share the
    bound); else the ``connection`` itself (stdio, in memory: one peer per connection).
    """
    if principal is not None and principal.authenticated:
        return ("caller", principal.subject, principal.client_id)
    if address is not None:
        return ("address", address)
    return ("connection", id(connection))
