"""The legacy HTTP+SSE transport (protocol revision 2024-11-05), server side.

Two endpoints make one session:

- ``GET /sse`` opens an event stream. Its first event, ``endpoint``, tells the
  client where to POST (``/messages?session_id=...``); every server message then
  follows as an event of type ``message``. The session lives as long as this
  stream: when the client disconnects, or the access token it was opened with expires
  (see :func:`~.auth.token_deadline`), the session ends.
- ``POST /messages?session_id=...`` delivers one client message (answered
  ``202 Accepted``); responses come back on the event stream.

Superseded by Streamable HTTP, but still spoken by older clients; it shares the
server's session table (and cap) and its Host/Origin checks.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from contextlib import suppress
from functools import partial
from urllib.parse import quote

import attrs
import trio

from ...protocol.jsonrpc import InvalidMessage
from ...protocol.received import read_message
from ..abc import Inbound, MessageStream, Outgoing, TransportClosed
from .asgi import (
    JSON,
    BodyTimeout,
    BodyTooLarge,
    ClientGone,
    Receive,
    Request,
    Send,
    end_body,
    media_types,
    read_body,
    respond,
    respond_answer,
    respond_body_timeout,
    respond_error,
    respond_too_many_sessions,
    send_chunk,
    start_event_stream,
    watch_disconnect,
)
from .auth import HttpAuthHook, same_caller, until_token_expires
from .config import HttpConfig
from .session_stream import Write
from .sessions import SessionRegistry, StartSession, mint_session_id
from .sse import encode_comment, encode_event

log = logging.getLogger("mcp_actors.http")


class LegacySseStream(MessageStream):
    """The session actor's end of one legacy SSE session: POST bodies in, stream events out.

    Both directions are bounded channels: a full inbox makes the POST wait, a full
    outbox makes the session's writer wait (the client not reading slows us down).
    """

    def __init__(self, config: HttpConfig) -> None:
        self._in_send, self._in_receive = trio.open_memory_channel[Inbound](
            config.inbound_queue_size
        )
        self._out_send, self.outbox = trio.open_memory_channel[bytes](config.outbound_queue_size)
        self.last_activity = trio.current_time()
        self.closed = trio.Event()

    @property
    def busy(self) -> bool:
        return not self.closed.is_set()  # the event stream is open for as long as we live

    @property
    def evictable(self) -> bool:
        return False  # the session is its open event stream

    def offer_rest(self) -> None:
        """Never idle (the session is its open event stream): never offered rest."""

    async def deliver(self, message: Inbound) -> None:
        try:
            await self._in_send.send(message)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            raise TransportClosed("the session has ended") from None

    def input_ready(self) -> bool:
        return self._in_receive.statistics().current_buffer_used > 0

    async def receive(self) -> Inbound:
        try:
            return await self._in_receive.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            raise TransportClosed("the SSE stream closed") from None

    async def send_all(self, messages: Sequence[Outgoing]) -> None:
        try:
            for message in messages:
                await self._out_send.send(message.payload)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            raise TransportClosed("the SSE stream closed") from None

    async def aclose(self) -> None:
        self.closed.set()
        self._in_send.close()
        self._in_receive.close()
        self._out_send.close()
        await trio.lowlevel.checkpoint()


@attrs.define(eq=False)
class LegacySseEndpoints:
    """``GET sse_path`` and ``POST messages_path`` for every legacy session of one server."""

    config: HttpConfig
    registry: SessionRegistry
    start_session: StartSession
    #: Admits each POSTed message by what it asks (scopes), see :mod:`.auth`.
    auth: HttpAuthHook | None = None

    async def stream(self, request: Request, receive: Receive, send: Send, root_path: str) -> None:
        """GET: a new session, its ``endpoint`` event, then its messages until disconnect,
        or until the access token the GET carried expires (the session ends with its
        stream; the client opens a new one with a fresh token)."""
        if request.method != "GET":
            await respond_error(send, 405, "Method Not Allowed", headers=[("allow", "GET")])
            return
        session_id = mint_session_id(self.config.session_id_prefix)
        transport = LegacySseStream(self.config)
        transport.principal = request.principal
        if not self.registry.admit(session_id, transport, request.client):
            await respond_too_many_sessions(send)
            return
        try:
            self.registry.started(session_id, await self.start_session(transport, None))
        except BaseException:
            self.registry.discard(session_id)
            raise
        endpoint = f"{root_path}{self.config.messages_path}?session_id={quote(session_id)}"
        try:
            await start_event_stream(send)
            await send_chunk(send, encode_event(endpoint.encode(), event="endpoint"))
            async with trio.open_nursery() as nursery:
                nursery.start_soon(watch_disconnect, receive, nursery.cancel_scope)
                with until_token_expires(request.principal):
                    await self._pump(transport, partial(send_chunk, send))
                nursery.cancel_scope.cancel()
            with suppress(Exception):  # the connection may be gone; nothing to tell anyone
                await end_body(send)
        finally:
            self.registry.close(session_id)  # the stream was the session

    async def _pump(self, transport: LegacySseStream, write: Write) -> None:
        keepalive = self.config.keepalive_interval
        outbox = transport.outbox
        while True:
            with trio.move_on_after(keepalive if keepalive else math.inf) as idle:
                try:
                    payload = await outbox.receive()
                except (trio.EndOfChannel, trio.ClosedResourceError):
                    return
            if idle.cancelled_caught:
                await write(encode_comment("keep-alive"))
                continue
            chunk = encode_event(payload, event="message")
            while True:  # coalesce what is already queued into one write
                try:
                    chunk += encode_event(outbox.receive_nowait(), event="message")
                except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
                    break
            await write(chunk)

    async def message(self, request: Request, receive: Receive, send: Send) -> None:
        """POST: one client message for the session named in the query string."""
        if request.method != "POST":
            await respond_error(send, 405, "Method Not Allowed", headers=[("allow", "POST")])
            return
        ids = request.query.get("session_id") or request.query.get("sessionId")
        if not ids:
            await respond_error(send, 400, "Bad Request: session_id is required")
            return
        entry = self.registry.get(ids[0])
        transport = None if entry is None else entry.transport
        if not isinstance(transport, LegacySseStream) or not same_caller(
            transport.principal, request.principal
        ):
            await respond_error(send, 404, "Not Found: unknown session")
            return
        if JSON not in media_types(request.header("content-type")):
            await respond_error(send, 415, "Unsupported Media Type: send application/json")
            return
        try:
            body = await read_body(
                request, receive, self.config.max_body_size, self.config.body_timeout
            )
        except BodyTooLarge:
            await respond_error(send, 413, "Payload Too Large")
            return
        except BodyTimeout:
            await respond_body_timeout(send)
            return
        except ClientGone:
            return
        if self.auth is not None and request.principal is not None:
            refused = self.auth.check_body(request.principal, body)
            if refused is not None:
                await respond_answer(send, refused)
                return
            transport.principal = request.principal  # a new token may carry new scopes
        try:
            message = read_message(body)
        except InvalidMessage as invalid:
            await respond_error(
                send, 400, invalid.message, code=invalid.code, request_id=invalid.request_id
            )
            return
        try:
            await transport.deliver(message)
        except TransportClosed:
            await respond_error(send, 404, "Not Found: the session has ended")
            return
        await respond(send, 202, b"Accepted", content_type="text/plain")
