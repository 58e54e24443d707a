"""The one place an HTTP front end asks whether a request may pass: the auth hook.

An MCP server protected by OAuth is a *resource server*: every HTTP request carries
an access token in its ``Authorization`` header, and the server decides, before the
request reaches a session, whether to serve it. That decision does not depend on the
HTTP server in front (hypercorn's ASGI, a lean h11 loop, the WebSocket handshake), so
it is written once, behind :class:`HttpAuthHook`, and each front end calls it at the
same two points:

1. :meth:`HttpAuthHook.check_request` for every request, before routing. It answers
   the protected-resource metadata documents itself, and refuses a request without a
   valid token (``401``). Otherwise it returns the :class:`Principal` the token stands
   for.
2. :meth:`HttpAuthHook.check_body` once a POST's body is read: a request whose method
   needs scopes the token lacks is refused with ``403 insufficient_scope``, before the
   session sees it.

The principal then rides on the transport (``MessageStream.principal``) so that a
handler can ask who called (``ctx.principal``). A connection lives no longer than the
token it was opened with: every long-lived exchange (a WebSocket session, an HTTP
event stream) runs under ``trio.move_on_at(token_deadline(principal))`` and ends when
the token expires; the client comes back with a fresh one. The implementation lives in
:mod:`mcp_actors.auth.server`; this module only names the contract, so that
transports need not import it.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any, Protocol

import attrs
import trio


@attrs.frozen
class Principal:
    """Who a request comes from, as its access token says.

    ``subject`` is the token's ``sub`` (the resource owner; for a client acting on its
    own behalf, usually the client id); ``client_id`` the OAuth client that holds the
    token; ``scopes`` what it was granted; ``claims`` the token's claims (a JWT's
    payload, or an introspection answer) for anything else a handler needs.
    ``authenticated`` is False only for the anonymous caller of a public method (see
    :class:`~mcp_actors.auth.server.ResourceServer`'s ``public_methods``).
    """

    subject: str | None
    scopes: frozenset[str] = frozenset()
    client_id: str | None = None
    claims: Mapping[str, Any] = attrs.field(factory=dict, eq=False)
    expires_at: float | None = None
    authenticated: bool = True

    @classmethod
    def anonymous(cls) -> Principal:
        return cls(None, authenticated=False)

    def has_scopes(self, needed: frozenset[str]) -> bool:
        return needed <= self.scopes

    def same_caller(self, other: Principal) -> bool:
        """Whether ``other`` is the same resource owner through the same client: what a
        session is bound to (a new token for the same caller may change the scopes)."""
        return (self.subject, self.client_id) == (other.subject, other.client_id)


def token_deadline(principal: Principal | None) -> float:
    """The trio time at which ``principal``'s token expires (inf: it does not, or no token):
    where a stream opened with that token ends (module docstring)."""
    if principal is None or principal.expires_at is None:
        return math.inf
    return trio.current_time() + (principal.expires_at - time.time())


def until_token_expires(principal: Principal | None) -> AbstractContextManager[object]:
    """A scope that ends what it wraps when ``principal``'s token expires (see
    :func:`token_deadline`); nothing at all when it does not expire, so that a request
    of a server without auth pays for no cancel scope."""
    deadline = token_deadline(principal)
    if deadline == math.inf:
        return contextlib.nullcontext()
    return trio.move_on_at(deadline)


@attrs.frozen
class HttpAnswer:
    """A complete HTTP response the hook wants written instead of serving the request."""

    status: int
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""


def same_caller(bound: Principal | None, caller: Principal | None) -> bool:
    """Whether a request from ``caller`` may use a session bound to ``bound``: the same
    caller, or neither authenticated. A session id alone does not let another caller in."""
    if bound is None or caller is None:
        return bound is caller
    return bound.same_caller(caller)


class HttpAuthHook(Protocol):
    """What an HTTP front end calls to admit requests (module docstring)."""

    async def check_request(
        self, method: str, path: str, headers: Mapping[str, str], query_string: str
    ) -> Principal | HttpAnswer:
        """Admit a request by its head: a :class:`Principal`, or the answer to write.

        ``headers`` have lower-cased names (repeated ones joined with ``", "``);
        ``query_string`` is the raw query (no ``?``; empty if none).
        """
        ...

    def check_body(self, principal: Principal, body: bytes) -> HttpAnswer | None:
        """Admit a POST body the principal sends: None, or the answer to write instead."""
        ...
