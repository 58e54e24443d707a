"""One stateless HTTP exchange: a POST carrying one request, served by a session in its task.

A stateless request — any request of the 2026-07-28 era, and a single request to a
stateless legacy server — is the whole life of the session that serves it; so is a
stateless POST of notifications, which the endpoint answers 202 once its session has
ended (the exchange has no ``request_id``: nothing to answer, nothing written). Such a
session is not worth a task, a nursery and queues of its own: the endpoint runs it
in the POST's own task (supervised, see
:meth:`~mcp_actors.runtime.supervisor.Supervisor.serve_here`), over an
:class:`HttpExchange` that is both the session's stream and the writer of the HTTP
reply:

- the session's reader gets the request from :meth:`HttpExchange.receive` and
  serves it in its own task, reading nothing meanwhile
  (:meth:`HttpExchange.defer_reading`): most requests are answered at once. One still
  unanswered after about :data:`~.asgi.QUICK_REPLY` seconds (:mod:`.slow_replies`)
  gets a reader task, which waits in the next ``receive`` until the request is
  answered. Meanwhile it watches the client — one that leaves ends the input, which
  cancels the request — and, on a reply that may stream, writes a ``: keep-alive``
  comment every ``keepalive`` seconds of silence;
- the session's writes (:meth:`HttpExchange.send_all`) go straight into the HTTP
  response, committed as late as possible: an answer before anything else is one
  ``application/json`` body (its status chosen by ``status_of`` from the answer's
  error code, which the session hands over with it); a notification
  about the request first (progress, a log message), or a silence as long as the
  keep-alive interval, starts a ``text/event-stream`` that carries them and ends
  with the answer. A reply that must stream (``stream_only``) starts with its first
  message, or once the request has gone unanswered for ``QUICK_REPLY`` seconds.
  Events carry no ids: nothing of a stateless exchange can be resumed.

There is no queue between the session and the connection: a client that does not
read holds up the session's writer, and nothing else (the exchange carries one
request). A message unrelated to the request has nowhere to go and is dropped. A
request to the client (sampling, elicitation) cannot be answered over a stateless
exchange: with ``refuse_requests`` the session gets an error response at once (the
legacy era, where such a call would otherwise wait for its timeout); without, the
request is dropped (the 2026-07-28 era never sends one: it asks through MRTR).
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import Final

import trio

from ...protocol.errors import INTERNAL_ERROR, McpError
from ...protocol.jsonrpc import Envelope, RequestId, encode_error
from ...protocol.received import refusal_in_peers_stead
from ...protocol.versions import LATEST, REVISIONS
from ..abc import Inbound, MessageStream, Outgoing, TransportClosed
from . import slow_replies
from .asgi import (
    JSON,
    QUICK_REPLY,
    Receive,
    Send,
    respond,
    send_chunk,
    send_last,
    start_event_stream,
)
from .sse import encode_comment, encode_event

log = logging.getLogger("mcp_actors.http")

#: How errors of our own are written (they always name the request: no revision differs).
_ERRORS: Final = REVISIONS[LATEST]


def refusal_of(message: Outgoing) -> Envelope | None:
    """If ``message`` is a request to the client, the error answering it in the client's
    stead (as received, for the session): a stateless exchange has no back channel."""
    request_id, method = message.request_id, message.method
    if request_id is None or method is None:
        return None
    reason = "server-to-client requests are not available over stateless HTTP"
    return refusal_in_peers_stead(request_id, method, reason)


def _always_ok(error_code: int | None) -> int:
    """The HTTP status of a legacy-era JSON reply: 200, whatever it says."""
    return 200


class HttpExchange(MessageStream):
    """The stream of the session serving one stateless POST (see the module docstring)."""

    stateless = True
    #: The reader may write the answer itself: nothing else is in flight to overtake.
    direct_writes = True
    one_exchange = True
    defers_reading = True

    def __init__(
        self,
        message: Inbound,
        request_id: RequestId | None,
        http: tuple[Receive, Send],
        *,
        streaming: bool,
        stream_only: bool,
        keepalive: float | None,
        status_of: Callable[[int | None], int],
        refuse_requests: bool = False,
        modern: bool = False,
    ) -> None:
        #: What the session reads: the request, then refusals of its requests.
        self._input: deque[Inbound] = deque((message,))
        self.request_id = request_id
        self._receive, self._send = http
        #: Whether notifications are wanted (False: the reply is one JSON body).
        self.streaming = streaming
        #: Whether the reply must be an event stream, started at once.
        self._stream_only = stream_only
        self._keepalive = keepalive if streaming and keepalive is not None else math.inf
        self._status_of = status_of
        self._refuse_requests = refuse_requests
        #: A 2026-07-28 request (else a stateless legacy one).
        self.modern_only = modern
        #: Whether the answer has been handed over (it is the last message); from the
        #: start for a POST of notifications (``request_id`` None: nothing to answer).
        self.answered = request_id is None
        #: Whether the client closed the connection before the answer.
        self.client_gone = False
        #: Whether the reply began as an event stream (else nothing is written yet).
        self.streaming_started = False
        self._quick_wait_over = False
        self._last_write = 0.0
        self._waiting: trio.CancelScope | None = None
        self._writing = False
        self._keeping_alive: trio.Event | None = None
        #: The session's reader, not started yet (see :meth:`defer_reading`).
        self._start_reader: Callable[[], None] | None = None

    @classmethod
    def stateless_legacy(
        cls,
        message: Inbound,
        request_id: RequestId | None,
        http: tuple[Receive, Send],
        *,
        json_mode: bool,
        keepalive: float | None,
    ) -> HttpExchange:
        """The exchange of a stateless legacy POST: one JSON body if ``json_mode``, else an
        event stream; status 200 whatever the answer says (the legacy era's); requests
        to the client refused in its stead (there is no back channel)."""
        return cls(
            message,
            request_id,
            http,
            streaming=not json_mode,
            stream_only=not json_mode,
            keepalive=keepalive,
            status_of=_always_ok,
            refuse_requests=True,
        )

    def input_ready(self) -> bool:
        return bool(self._input)

    def defer_reading(self, start_reader: Callable[[], None] | None) -> None:
        """The session serves the request in this task, reading nothing: its reader
        starts when input arrives (a refusal), once the request has gone unanswered for
        about :data:`~.asgi.QUICK_REPLY` seconds (:mod:`.slow_replies`) — then it watches
        the client and keeps a streaming reply alive. A reply that must stream starts
        with the first message, or with the reader."""
        if start_reader is None:
            if self._start_reader is not None:
                self._start_reader = None
                slow_replies.forget(self)
        elif self._input:
            start_reader()
        else:
            self._start_reader = start_reader
            slow_replies.call_when_slow(self, self._slow)

    def _slow(self) -> None:
        """Unanswered for ``QUICK_REPLY``: the reader starts watching at once (and starts
        a reply that must stream)."""
        if not self._stream_only:
            self._quick_wait_over = True
            self._last_write = trio.current_time()
        self._read_now()

    def _read_now(self) -> None:
        start, self._start_reader = self._start_reader, None
        if start is not None:
            slow_replies.forget(self)
            start()

    def input_ended(self) -> bool:
        return not self._input and (self.answered or self.client_gone)

    async def receive(self) -> Inbound:
        while True:
            if self._input:
                return self._input.popleft()
            if self.answered or self.client_gone:
                raise TransportClosed("the exchange is over")
            with trio.CancelScope() as self._waiting:
                await self._watch()
            self._waiting = None

    async def _watch(self) -> None:
        """Wait until cancelled (by the answer, or by input for the session); meanwhile
        watch the client and keep a streaming reply alive. Returns if the client left."""
        if not self._quick_wait_over:
            if self._stream_only:
                if not await self._keep_alive(comment=False):
                    self.client_gone = True
                    return
            else:
                with trio.move_on_after(QUICK_REPLY):
                    await trio.sleep_forever()
            self._quick_wait_over = True
            self._last_write = trio.current_time()
        while True:
            message = None
            with trio.move_on_at(self._last_write + self._keepalive):
                message = await self._receive()
            if message is not None and message["type"] == "http.disconnect":
                self.client_gone = True
                return
            if message is None:  # silence
                if self._writing:  # not silent after all: a message is being written
                    self._last_write = trio.current_time()
                elif not await self._keep_alive():
                    self.client_gone = True
                    return

    async def _keep_alive(self, *, comment: bool = True) -> bool:
        """Start the event stream if need be, and write a keep-alive ``comment``; False
        if the connection failed under it. The session's writes wait until it is done;
        shielded: the answer waits for it to be written whole rather than cut it short."""
        if self._writing or self.answered:
            return True  # the session writes: not silent
        self._keeping_alive = done = trio.Event()
        try:
            with trio.CancelScope(shield=True):
                if not self.streaming_started:
                    await self._start_stream()
                if comment:
                    await send_chunk(self._send, encode_comment("keep-alive"))
        except Exception:  # the connection broke (how depends on the HTTP server)
            return False
        finally:
            self._keeping_alive = None
            done.set()
        self._last_write = trio.current_time()
        return True

    async def _start_stream(self) -> None:
        self.streaming_started = True
        await start_event_stream(self._send)

    async def send_all(self, messages: Sequence[Outgoing]) -> None:
        for message in messages:
            if self.answered or message.related_request != self.request_id:
                self._unrelated(message)
                continue
            if self.client_gone:
                raise TransportClosed("the client has gone")
            if message.closes_request:
                self.answered = True
                self._wake_reader()
                await self._write(message.payload, answer=True, error_code=message.error_code)
            elif self._refused(message):
                continue
            elif self.streaming:
                await self._write(message.payload, answer=False)

    def _unrelated(self, message: Outgoing) -> None:
        if not self._refused(message):
            log.debug("stateless HTTP: dropped a message unrelated to the request")

    def _refused(self, message: Outgoing) -> bool:
        """Whether ``message`` is a request to the client, refused or dropped here."""
        if not self._refuse_requests:
            if message.request_id is None:
                return False
            log.warning("stateless HTTP: dropped a server-to-client request")
            return True
        refusal = refusal_of(message)
        if refusal is None:
            return False
        self._input.append(refusal)
        self._wake_reader()
        self._read_now()
        return True

    def _wake_reader(self) -> None:
        if self._waiting is not None:
            self._waiting.cancel()

    async def _write(self, payload: bytes, *, answer: bool, error_code: int | None = None) -> None:
        """Write one message of the reply (``error_code``: an error answer's, for its status)."""
        while self._keeping_alive is not None:
            await self._keeping_alive.wait()
        self._writing = True
        try:
            if answer and not self.streaming_started and not self._stream_only:
                await respond(self._send, self._status_of(error_code), payload, content_type=JSON)
                return
            if not self.streaming_started:
                await self._start_stream()
            if answer:
                await send_last(self._send, encode_event(payload))
            else:
                await send_chunk(self._send, encode_event(payload))
                self._last_write = trio.current_time()
        finally:
            self._writing = False

    async def finish(self) -> None:
        """The session has ended: end a reply it left unfinished (it ended without
        answering, or failed), unless the client is gone."""
        if self.answered or self.client_gone:
            return
        self.answered = True
        with suppress(Exception):  # the connection may be gone
            if self.streaming_started:
                await send_last(self._send, b"")
                return
            failure = McpError(INTERNAL_ERROR, "Internal error: the request ended unanswered")
            payload = encode_error(self.request_id, failure, _ERRORS)
            await respond(self._send, self._status_of(failure.code), payload, content_type=JSON)

    async def aclose(self) -> None:
        """The session has ended (no schedule point: nothing is left to wait for)."""
        self._wake_reader()
