"""What gives methods meaning: the dispatcher a session hands requests and notifications to.

A :class:`~.session.Session` moves messages; it does not know what ``tools/call``
means. Its dispatcher does — the server's (one per client session) or the client's.
The session hands it every request it may serve (:meth:`Dispatcher.handle_request`,
in the request's own actor) and every notification that concerns no call of ours
(:meth:`Dispatcher.handle_notification`, from the reader: it must not block).

A server's dispatcher is also a :class:`ServerDispatcher`: it says what the server
is, for the engine's ``initialize`` answer (:func:`is_server`).
"""

from __future__ import annotations

import functools
from typing import Any, Protocol, TypeGuard, runtime_checkable

from ..protocol.lifecycle import ServerDescription
from ..protocol.versions import Revision
from .request import InboundRequest


class Dispatcher(Protocol):
    """What gives methods meaning: implemented by the server and by the client."""

    async def handle_request(self, request: InboundRequest, params: Any) -> Any:
        """Serve one request; return the result Struct or raise :class:`McpError`."""

    def handle_notification(self, method: str, params: Any) -> None:
        """Take one notification. Must not block: hand slow work to ``Session.submit``."""

    def serves_inline(self, request: InboundRequest) -> bool:
        """Whether ``request``'s handler is declared never to wait (see :mod:`.inline`)."""

    def session_ended(self) -> None:
        """The session has ended: let go of it (a dispatcher and its session point at
        each other; the cycle must not outlive the session)."""


@runtime_checkable
class ServerDispatcher(Dispatcher, Protocol):
    """A server's dispatcher also says what the server is, for the ``initialize`` answer."""

    def describe_server(self, revision: Revision, *, stateless: bool) -> ServerDescription: ...


def is_server(dispatcher: Dispatcher) -> TypeGuard[ServerDispatcher]:
    """Whether ``dispatcher`` is a server's (a :class:`ServerDispatcher`)."""
    return _describes_server(type(dispatcher))


@functools.cache
def _describes_server(dispatcher_type: type) -> bool:
    """Whether dispatchers of this type are a :class:`ServerDispatcher` (asked once per
    type: a runtime protocol check walks the protocol's members every time)."""
    return issubclass(dispatcher_type, ServerDispatcher)
