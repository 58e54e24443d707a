"""The one small interface between the actor runtime and every transport.

A transport carries JSON-RPC messages (one JSON value per message, a batch being
one JSON array). It knows nothing about MCP: it frames them. Inbound, it hands the
session each message's bytes, for the engine to decode — or, where it had to route
the message first (HTTP), the message as the protocol layer decoded it for that
(:mod:`~mcp_actors.protocol.received`): either way each message is decoded once.

Outbound, the runtime hands it :class:`Outgoing` records: the bytes the engine
encoded and what routing needs of them, so that no transport decodes them again.
``related_request`` names the inbound request a message belongs to, so that a
transport like Streamable HTTP can put it on that request's response stream, and
``closes_request`` marks the response that ends that stream; ``answers``,
``error_code``, ``version``, ``method``, ``request_id`` and ``params`` say what
else the runtime knew.

The same hint exists inbound, for a client: :meth:`MessageStream.receive_related`
also says on whose response stream a message arrived (Streamable HTTP: the POST of
one of our requests), so that the client's engine can hand a log message to the call
it belongs to. The transport knows the stream, not what the message means.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from ..protocol.events import Reply
from ..protocol.jsonrpc import Message, encode_received
from ..protocol.modern import AdmittedRequest

if TYPE_CHECKING:
    from ..protocol.routing_headers import ToolHeaders
    from .http.auth import Principal

RequestId = int | str
#: What a session reads: a message's bytes, or the message already decoded (see above),
#: or a modern request whose ``_meta`` the transport has read too.
Inbound = bytes | Message | AdmittedRequest


def encode_inbound(inbound: Inbound) -> bytes:
    """What a session read, as bytes (for what records the wire: see
    :func:`~mcp_actors.protocol.jsonrpc.encode_received`)."""
    if isinstance(inbound, AdmittedRequest):
        return encode_received(inbound.envelope)
    return encode_received(inbound)


class Outgoing(msgspec.Struct, frozen=True, gc=False):
    """One encoded message on its way out, with the facts transports route on.

    A Struct, not an attrs class: one is made per message sent, and a Struct's
    constructor (in C) costs a fraction of a frozen attrs ``__init__``. It holds only
    bytes, ids, codes and the params of a message of ours, never anything that refers
    back to it, so it cannot close a reference cycle (``gc=False``).
    """

    payload: bytes
    #: The inbound request this message belongs to (its answer, or sent while serving it).
    related_request: RequestId | None = None
    #: This is the answer to ``related_request``.
    closes_request: bool = False
    #: The requests a batch's answer (one array) closes.
    answers: tuple[RequestId, ...] = ()
    #: The code of an error answer (None: a result, or no answer).
    error_code: int | None = None
    #: The protocol version an ``initialize`` answer settles.
    version: str | None = None
    #: A request or notification of ours: its method; a request's id; and its params as
    #: the runtime handed them to the engine, not encoded (for a transport that mirrors
    #: some in headers: see ``protocol.routing_headers.sent``).
    method: str | None = None
    request_id: RequestId | None = None
    params: Any = None


def answer_of(reply: Reply) -> Outgoing:
    """The message that sends an answer the engine wrote itself (an ``initialize``'s or
    ``ping``'s, or an error for a message that cannot run)."""
    request_id = reply.request_id
    return Outgoing(
        reply.payload,
        request_id,
        request_id is not None,
        error_code=reply.error_code,
        version=reply.version,
    )


class TransportClosed(Exception):
    """The peer went away or the transport was closed; no more messages flow."""


class MessageTooLarge(Exception):
    """An inbound message exceeded the transport's size limit and was discarded.

    Raised from :meth:`MessageStream.receive`; the stream stays usable, so the
    session answers with a JSON-RPC error and goes on reading.
    """

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"message of at least {size} bytes exceeds the {limit}-byte limit")
        self.size = size
        self.limit = limit


class MessageStream(abc.ABC):
    """A bidirectional stream of messages: what a session actor reads and writes.

    ``receive`` returns one message (its bytes, or decoded: :data:`Inbound`), raises
    :class:`MessageTooLarge` for a discarded oversized message (the stream stays
    open) and :class:`TransportClosed`
    once the peer is gone. ``send_all`` writes messages in order; the session's
    writer calls it with everything it has queued so that transports can coalesce
    writes (one syscall for many small messages).
    """

    #: Whether ``send_all`` normally returns without waiting (a pipe with room in it).
    #: The session then writes an answer straight from its reader when its writer has
    #: nothing queued and no other message is waiting to be read (see
    #: :meth:`input_ready`), saving a task switch per exchange; where sending may
    #: wait on something slower (a network stream), leave it False.
    direct_writes: bool = False

    #: Whether the stream carries one exchange: a message (or a batch) in, its answer out,
    #: then the input ends (one stateless or 2026-07-28 HTTP POST). The session then
    #: serves what needs no task (an inline request, an answer of its own) before it
    #: opens a nursery, and never opens one when nothing else is needed.
    one_exchange: bool = False

    #: Whether the session may serve a request of :attr:`one_exchange` in its reader's
    #: own task, reading no further until the stream asks (see :meth:`defer_reading`):
    #: most requests are answered before anything else happens on the stream, and a
    #: reader task beside the handler costs as much as a small request.
    defers_reading: bool = False

    def defer_reading(self, start_reader: Callable[[], None] | None) -> None:
        """The session serves a request without reading: call ``start_reader()`` (at
        most once) when something must be read after all — input arrived, or the peer
        must be watched (it may leave; a streaming reply needs keep-alives). ``None``:
        the session reads again itself; forget the callback. Only a stream that sets
        :attr:`defers_reading` is asked."""
        raise NotImplementedError("this stream does not defer reading")

    #: Whether the peer may still read what we write after it stopped sending (stdio:
    #: a client may write its requests, close its end, and read the answers). The
    #: session then lets the requests in flight finish, within
    #: ``SessionConfig.eof_grace``, instead of cancelling them at once.
    answers_after_input_ends: bool = False

    #: Whether every exchange stands alone (Streamable HTTP's stateless mode): the peer
    #: cannot answer our requests, nothing reaches it outside the reply to one of its
    #: requests, and nothing is remembered between them. The session then refuses,
    #: with the reason, what needs a back channel or a session.
    stateless: bool = False

    #: Whether the transport carries requests of the 2026-07-28 era only (one modern HTTP
    #: exchange): a server's session then takes each one straight to that era's ladder.
    modern_only: bool = False

    #: Whether the transport belongs to the legacy era only (HTTP+SSE, 2024-11-05): a
    #: client then opens its session with ``initialize`` without probing for the modern era.
    legacy_only: bool = False

    #: Set by a transport that mirrors tool arguments into headers (Streamable HTTP in
    #: the 2026-07-28 era, ``x-mcp-header``): the client teaches it each tool listing,
    #: and drops from the listing the tools whose annotations are invalid.
    tool_headers: ToolHeaders | None = None

    #: Who is calling, as the access token of the latest request on this stream says
    #: (set by an HTTP front end with an auth hook, see :mod:`.http.auth`; None: the
    #: transport does not authenticate). A session is bound to one caller: the front
    #: end refuses a request from another one, and a new token may change the scopes.
    principal: Principal | None = None

    #: The peer's network address (an IP), set by a transport that has one (HTTP,
    #: WebSocket): what per-client bounds count by. None: the stream is its own client.
    client_address: str | None = None

    #: Set when :meth:`receive` raised :class:`TransportClosed` only to offer the
    #: session rest (it has been idle; the stream can hold its input meanwhile), not
    #: because the peer went. Cleared by the next ``receive``. See :meth:`rest`.
    rest_offered: bool = False

    def rest(self, wake: Callable[[], None]) -> None:
        """Take the offered rest: the session gives up its tasks until ``wake()``.

        The stream calls ``wake()`` once, when input arrives or the stream closes;
        the session then reads again. Only a stream that sets :attr:`rest_offered`
        is asked; the default refuses.
        """
        raise NotImplementedError("this stream offers no rest")

    #: The id of the first request the session sends over this stream (then counting
    #: up). A stream whose peer may answer through another process serving the same
    #: session (a shared Streamable HTTP session) starts it where no other will.
    first_request_id: int = 1

    #: Whether :meth:`receive_related` can name the request of ours a received message
    #: belongs to (a client over Streamable HTTP: the POST whose response stream carried
    #: it). The session then reads with it; other transports carry no such relation.
    relates_messages: bool = False

    def input_ready(self) -> bool:
        """Whether :meth:`receive` has a message at hand, without waiting.

        Lets the session coalesce: while more input is at hand, its answers go to the
        writer, to be written together. The default (False) is always safe.
        """
        return False

    def input_ended(self) -> bool:
        """Whether :meth:`receive` would raise :class:`TransportClosed` now, without
        waiting: the session of :attr:`one_exchange` then ends without raising and
        catching it (about 7,000 instructions per exchange). The default (False: ask
        ``receive``) is always safe."""
        return False

    @abc.abstractmethod
    async def receive(self) -> Inbound: ...

    async def receive_related(self) -> tuple[Inbound, RequestId | None]:
        """:meth:`receive`, and the id of the request of ours on whose response stream
        the message arrived (None: the transport cannot tell, or it came on no such
        stream). Override it, with :attr:`relates_messages`, where the wire says so."""
        return await self.receive(), None

    @abc.abstractmethod
    async def send_all(self, messages: Sequence[Outgoing]) -> None: ...

    async def send(self, message: Outgoing) -> None:
        """Send one message (convenience for ``send_all([message])``)."""
        await self.send_all((message,))

    @abc.abstractmethod
    async def aclose(self) -> None:
        """Close the stream; idempotent. Pending ``receive`` calls raise TransportClosed."""

    async def __aenter__(self) -> MessageStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
