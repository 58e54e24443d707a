"""One inbound request = one actor with its own cancel scope.

:class:`InboundRequest` is created by the session's reader when a request
arrives, before the task that serves it starts, so that a
``notifications/cancelled`` arriving right behind it already finds its cancel
scope. Cancelling that scope is all cancellation is: the handler sees
``trio.Cancelled`` at its next checkpoint, and no response is sent. The reader that
cancelled it then lets it take that step before reading on
(:func:`let_cancelled_run`), so a cancellation never waits behind the messages that
came with it. A request that asked for progress carries a
:class:`~.progress.ProgressStream`.

A request points back at the session that received it (:attr:`InboundRequest.session`),
typed here by what a request's user needs of it (:class:`ReceivingSession`): the
session module builds requests, so this one cannot import it. Code that needs the
whole session gets it with :func:`.session.session_of`.
"""

from __future__ import annotations

from typing import Any, Protocol

import msgspec
import trio
from msgspec import UNSET, UnsetType

from ..protocol.engine import NOT_DECODED
from ..protocol.jsonrpc import UNDECODABLE, RequestId, invalid_payload
from ..protocol.methods import METHODS, MethodSpec
from ..protocol.modern import ModernRequest
from .actors import ActorHost
from .progress import ProgressStream


class ReceivingSession(ActorHost, Protocol):
    """The session that received a request, as the request knows it (it is a
    :class:`~.session.Session`): its actors end with it; ``host``, where actors that
    may outlive it run (None: nowhere but the session)."""

    @property
    def host(self) -> ActorHost | None: ...


class InboundRequest(msgspec.Struct, eq=False):
    """A request the peer sent us, while it is being served.

    ``modern`` is set for a request of the modern era (2026-07-28): its ``_meta`` and
    the state it is served with, of its own (None: a request of the session's legacy
    era, served with the session's state). ``scope`` is None for a request served
    inline by the session's reader (see :mod:`.inline`): it is over before
    the reader reads on, so nothing could cancel it.

    A Struct (never encoded), not an attrs class: one is made per request, and a
    Struct's constructor costs a fraction of a Python ``__init__``. Compared and hashed
    by identity (``eq=False``).
    """

    session: ReceivingSession
    id: RequestId
    method: str
    spec: MethodSpec | None
    raw_params: msgspec.Raw | UnsetType
    modern: ModernRequest | None
    #: The params decoded into the method's type, or NOT_DECODED (see decode_params).
    _params: Any = NOT_DECODED
    scope: trio.CancelScope | None = None
    #: The scope of work done for this request in another task (a 2026-07-28 handler's
    #: run, which lives in the supervisor so that it can wait between two requests):
    #: cancelled with it, at once, rather than once this request's task has noticed.
    linked: trio.CancelScope | None = None
    progress: ProgressStream | None = None
    cancel_reason: str | None = None

    @property
    def cancel_called(self) -> bool:
        """Whether the peer cancelled this request."""
        return self.scope is not None and self.scope.cancel_called

    def decode_params(self) -> Any:
        """Decode ``params`` into the method's type, once.

        Raises :class:`~mcp_actors.protocol.jsonrpc.InvalidPayload` (an McpError: -32602,
        or -32700 for bytes that are not JSON text) and nothing else.
        """
        params = self._params
        if params is NOT_DECODED:
            assert self.spec is not None
            raw = self.raw_params
            try:
                params = self.spec.params_decoder.decode(raw if raw is not UNSET else b"{}")
            except UNDECODABLE as error:  # inlined decode_payload: this is the hot path
                raise invalid_payload(error) from None
            self._params = params
        return params

    def passed_on(self, method: str, params: Any) -> InboundRequest:
        """This request serving ``method`` with ``params`` instead (middleware passed on
        another call: a tool search listing the tools while serving a ``tools/call``,
        ``call_tool`` naming the tool to call): a copy on the same connection, cancel
        scope and progress, whose ``raw_params`` are ``params`` encoded — what a task of
        it records to run again."""
        return msgspec.structs.replace(
            self,
            method=method,
            spec=METHODS.get(method),
            raw_params=msgspec.Raw(msgspec.json.encode(params)),
            _params=params,
        )

    def cancel(self, reason: str | None) -> None:
        """The peer cancelled this request: stop the handler; no response will be sent."""
        self.cancel_reason = reason
        self.close_progress()
        if self.progress is not None:
            self.progress.pending = None
        if self.scope is not None:
            self.scope.cancel()
        if self.linked is not None:
            self.linked.cancel()

    def close_progress(self) -> None:
        """No progress may be reported any more (the answer is on its way, or cancelled)."""
        if self.progress is not None:
            self.progress.closed = True


async def let_cancelled_run() -> None:
    """Yield until a handler just cancelled has taken its step (seen ``trio.Cancelled``).

    Cancelling a scope reschedules its blocked task at once, but the task runs only in
    the scheduler's next batch, and trio runs each batch in a random order (half the
    time reversed). One checkpoint puts the caller in the same batch as the handler,
    maybe first; the second one puts it in the batch after, so the handler has run by
    then. The session's reader calls this after each cancellation: two passes of the
    scheduler per ``notifications/cancelled``, none for any other message.
    """
    await trio.lowlevel.checkpoint()
    await trio.lowlevel.checkpoint()
